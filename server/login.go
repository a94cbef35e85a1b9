package server

import (
	"crypto/subtle"
	"net/http"
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

// safeNext keeps redirects on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) {
		return "/"
	}
	return next
}
