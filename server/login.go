package server

import (
	"crypto/subtle"
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

// login checks the token from the form and sets it as an HttpOnly cookie.
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
	http.SetCookie(c.Writer, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
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
