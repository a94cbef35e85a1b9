package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/ui"
)

func (s *Server) loginPage(c *gin.Context) {
	v := ui.LoginView{Page: s.page(c, "Log in"), Next: safeNext(c.Query("next"))}
	s.render(c, http.StatusOK, "login", v)
}

// login checks the token from the form and sets the session cookie.
func (s *Server) login(c *gin.Context) {
	if !s.checkCSRF(c) {
		return
	}
	next := safeNext(c.PostForm("next"))
	tok := c.PostForm("token")
	if s.cfg.Token == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) != 1 {
		v := ui.LoginView{Page: s.page(c, "Log in"), Next: next, Error: "wrong token"}
		s.render(c, http.StatusUnauthorized, "login", v)
		return
	}
	// Secure when the request came over TLS: the browser then never sends
	// the session over plain HTTP.
	http.SetCookie(c.Writer, &http.Cookie{Name: tokenCookie, Value: sessionValue(s.cfg.Token), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.Request.TLS != nil})
	c.Redirect(http.StatusSeeOther, next)
}

// safeNext keeps redirects on this site: next must be a path that starts
// with exactly one slash and holds no control character or backslash,
// both as sent and percent-decoded. Browsers skip tabs and newlines and
// read a backslash as a slash, so "/\t/evil.example" or "/\\evil.example"
// would leave the site. Anything else redirects to /.
func safeNext(next string) string {
	unescaped, err := url.PathUnescape(next)
	if err != nil || !localPath(next) || !localPath(unescaped) {
		return "/"
	}
	return next
}

func localPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, `\`) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f {
			return false
		}
	}
	return true
}

// sessionContext is what the session value authenticates: changing it
// logs every browser out.
const sessionContext = "kbench session v1"

// sessionValue is what the login cookie holds: HMAC-SHA256 keyed by the
// token over a fixed context, hex. A cookie that leaks (a backup of the
// browser profile, a proxy log) does not reveal the token, and it cannot be
// used as a Bearer token in scripts.
func sessionValue(token string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(sessionContext))
	return hex.EncodeToString(mac.Sum(nil))
}
