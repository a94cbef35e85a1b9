package server

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/ui"
)

func (s *Server) loginPage(c *gin.Context) {
	v := ui.LoginView{Page: s.page(c, "Log in"), Next: safeNext(c.Query("next")), NoToken: s.cfg.Token == ""}
	s.render(c, http.StatusOK, "login", v)
}

// login checks the token from the form and sets the session cookie. Wrong
// tokens are slowed per client address (loginLimiter): a try while the
// address is locked out is a 429 with Retry-After, not checked.
func (s *Server) login(c *gin.Context) {
	if !s.checkCSRF(c) {
		return
	}
	next := safeNext(c.PostForm("next"))
	if s.cfg.Token == "" {
		// Nothing to log in to: every page and change is open.
		c.Redirect(http.StatusSeeOther, next)
		return
	}
	client, now, locked := s.lockedOut(c)
	if locked != nil {
		v := ui.LoginView{Page: s.page(c, "Log in"), Next: next, Error: locked.Error()}
		s.render(c, http.StatusTooManyRequests, "login", v)
		return
	}
	if subtle.ConstantTimeCompare([]byte(c.PostForm("token")), []byte(s.cfg.Token)) != 1 {
		s.loginFailed(c, client, now)
		v := ui.LoginView{Page: s.page(c, "Log in"), Next: next, Error: "wrong token"}
		s.render(c, http.StatusUnauthorized, "login", v)
		return
	}
	s.logins.succeeded(client)
	http.SetCookie(c.Writer, s.sessionCookie(c.Request, sessionValue(s.cfg.Token, now), int(s.cfg.SessionMaxAge/time.Second)))
	c.Redirect(http.StatusSeeOther, next)
}

// loginFailed counts a wrong token from client (the form's or a Bearer
// header's); once it locks the address out, the answer says until when
// and the log says who.
func (s *Server) loginFailed(c *gin.Context, client string, now time.Time) {
	n, lock := s.logins.failed(client, now)
	if lock > 0 {
		c.Header("Retry-After", retryAfter(lock))
		s.log.Warn("login: wrong tokens in a row", "client", client, "count", n, "locked_out", lock)
	}
}

// logout ends the browser's session: the cookie is cleared and its value
// refused from now on (until it would have expired), so a copy of it is
// of no use either. It needs no login, only the form's CSRF token.
func (s *Server) logout(c *gin.Context) {
	if !s.checkCSRF(c) {
		return
	}
	if ck, err := c.Cookie(tokenCookie); err == nil {
		now := s.clock()
		if exp, ok := s.sessionExpiry(ck, now); ok && now.Before(exp) {
			s.sessions.revoke(ck)
		}
	}
	http.SetCookie(c.Writer, s.sessionCookie(c.Request, "", -1))
	c.Redirect(http.StatusSeeOther, "/")
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

// lockedOut reads the client's address and the time, and when that
// address is locked out after wrong tokens sets Retry-After and says so
// (a 429 through fail).
func (s *Server) lockedOut(c *gin.Context) (client string, now time.Time, locked *retryLaterError) {
	client, now = c.ClientIP(), s.clock()
	if d := s.logins.wait(client, now); d > 0 {
		c.Header("Retry-After", retryAfter(d))
		return client, now, &retryLaterError{msg: fmt.Sprintf("too many wrong tokens from your address: try again in %s s", retryAfter(d))}
	}
	return client, now, nil
}
