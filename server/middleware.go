package server

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/ui"
)

const (
	csrfCookie  = "kbench_csrf"
	csrfField   = "_csrf"
	tokenCookie = "kbench_token"
)

// recoverer turns a panic in a handler into a clean 500.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.fail(c, fmt.Errorf("panic: %v", p))
		}
	}()
	c.Next()
}

// logRequests logs one line per request. Query strings and bodies are not
// logged: nothing that could carry a secret reaches the log.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	if c.Request.URL.Path == "/healthz" || strings.HasPrefix(c.Request.URL.Path, "/static/") {
		return
	}
	s.log.Info("http", "method", c.Request.Method, "path", c.Request.URL.Path,
		"status", c.Writer.Status(), "duration", time.Since(start).Round(time.Microsecond))
}

// securityHeaders: no inline scripts, no inline styles but kbench's own
// style sheets that pages carry inline (ui.InlineStyles, allowed by their
// hashes), no framing, no sniffing.
func (s *Server) securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	inline, styles := "", s.styleSources
	if isPprofPath(c.Request.URL.Path) {
		// pprof's own pages carry their scripts and styles inline; they are
		// pprof's code, not user input, so only they get 'unsafe-inline'
		// (which a hash source beside it would turn off).
		inline, styles = " 'unsafe-inline'", ""
	}
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'"+inline+"; style-src 'self'"+inline+styles+"; img-src 'self' data:; "+
		"object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	c.Next()
}

// limitBody bounds every request body; reading past the limit fails with
// *http.MaxBytesError, which fail maps to 413.
func (s *Server) limitBody(c *gin.Context) {
	limit := s.cfg.MaxBodyBytes
	if isUpload(c.Request.URL.Path) {
		limit = s.cfg.MaxUploadBytes
	}
	if c.Request.ContentLength > limit {
		s.fail(c, errTooLarge)
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	c.Next()
}

// isPprofPath reports whether a path belongs to an embedded pprof UI.
func isPprofPath(path string) bool {
	return (strings.HasPrefix(path, "/profiles/") || strings.HasPrefix(path, "/diff/")) &&
		(strings.HasSuffix(path, "/pprof") || strings.Contains(path, "/pprof/"))
}

// isUpload reports whether a path takes file uploads (a larger limit).
func isUpload(path string) bool {
	return path == "/api/import" || path == "/api/import/csv" || path == "/import" || path == "/import/csv" || strings.HasSuffix(path, "/profiles") && (strings.HasPrefix(path, "/api/runs/") || strings.HasPrefix(path, "/runs/"))
}

// authenticate enforces --token: state-changing requests need it, and with
// --private every request but the login page and static assets does.
// Wrong Bearer tokens are slowed per client as wrong logins are.
func (s *Server) authenticate(c *gin.Context) {
	if s.cfg.Token == "" {
		c.Next()
		return
	}
	p := c.Request.URL.Path
	// Logging out needs no login: it only ends a session (CSRF-checked).
	if p == "/login" || p == "/logout" || p == "/healthz" || strings.HasPrefix(p, "/static/") {
		c.Next()
		return
	}
	mutating := c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead
	if !mutating && !s.cfg.Private {
		c.Next()
		return
	}
	ok, bearer := s.credentials(c)
	if bearer {
		// A Bearer header may be a guess at the token: a locked-out
		// address is not told whether it is right.
		client, now, locked := s.lockedOut(c)
		if locked != nil {
			s.fail(c, locked)
			return
		}
		if !ok {
			s.loginFailed(c, client, now)
		}
	}
	if !ok {
		if isAPI(c) {
			c.Header("WWW-Authenticate", `Bearer realm="kbench"`)
			c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "this kbench server needs a token: Authorization: Bearer <token>"})
			return
		}
		c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request.URL.RequestURI()))
		c.Abort()
		return
	}
	c.Next()
}

// credentials reports whether the request carries the token (ok): as a
// Bearer header (scripts send the token itself) or as the session cookie
// the login form sets (a value derived from the token, see sessionValue),
// unexpired and not logged out. bearer says a Bearer header was sent.
func (s *Server) credentials(c *gin.Context) (ok, bearer bool) {
	if h := c.GetHeader("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got := strings.TrimPrefix(h, "Bearer ")
		return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1, true
	}
	if ck, err := c.Cookie(tokenCookie); err == nil {
		return s.validSession(ck, s.clock()), false
	}
	return false, false
}

// crossOrigin is net/http's cross-origin protection with no exceptions: it
// refuses state-changing requests a browser marks as coming from another
// origin (Sec-Fetch-Site), or, from browsers without Fetch metadata, whose
// Origin is not this Host. Scripts like curl send neither and pass. Forms
// additionally carry a CSRF token (checkCSRF).
var crossOrigin = http.NewCrossOriginProtection()

// checkOrigin applies crossOrigin, answering refusals as every other error
// (JSON for the API, the error page otherwise). Origin "null" (sandboxed
// frames, data: URLs) is never this site; crossOrigin refuses it too,
// except on a request without Host, where the empty host of "null" equals
// the empty Host.
func (s *Server) checkOrigin(c *gin.Context) {
	m := c.Request.Method
	safe := m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
	if crossOrigin.Check(c.Request) != nil || !safe && c.GetHeader("Origin") == "null" {
		s.forbid(c, "cross-origin request refused: kbench accepts changes only from its own pages, or from scripts that send no Origin")
		return
	}
	c.Next()
}

func (s *Server) forbid(c *gin.Context, msg string) {
	if isAPI(c) {
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": msg})
		return
	}
	v := ui.NewErrorView(http.StatusForbidden, msg)
	v.Page = s.page(c, v.Title)
	s.render(c, http.StatusForbidden, "error", v)
	c.Abort()
}

// csrfToken returns the browser's CSRF token, setting the cookie if new.
// The token is random per browser; forms echo it and checkCSRF compares
// (the double-submit pattern, with a SameSite=Strict cookie).
func (s *Server) csrfToken(c *gin.Context) string {
	if v, err := c.Cookie(csrfCookie); err == nil && len(v) == 32 {
		return v
	}
	if v, ok := c.Get(csrfCookie); ok {
		return v.(string)
	}
	v := randomID(16)
	c.Set(csrfCookie, v)
	http.SetCookie(c.Writer, &http.Cookie{Name: csrfCookie, Value: v, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.secureRequest(c.Request)})
	return v
}

// checkCSRF verifies a form's token against the cookie. It parses the form
// first, so a body that does not parse is answered as the client's error
// (gin's PostForm would read it as an empty form).
func (s *Server) checkCSRF(c *gin.Context) bool {
	if err := parseForm(c.Request); err != nil {
		s.fail(c, err)
		return false
	}
	ck, err := c.Cookie(csrfCookie)
	form := c.Request.PostForm.Get(csrfField)
	if err != nil || ck == "" || subtle.ConstantTimeCompare([]byte(ck), []byte(form)) != 1 {
		s.forbid(c, "the form expired or came from another site; reload the page and try again")
		return false
	}
	return true
}

// postedForm parses a browser form and checks its CSRF token; on failure
// the answer is already written and ok is false.
func (s *Server) postedForm(c *gin.Context) (form url.Values, ok bool) {
	if !s.checkCSRF(c) {
		return nil, false
	}
	return c.Request.PostForm, true
}

// maxFormMemory is how much of a multipart form is held in memory; larger
// files go to temporary files (as the upload handlers do).
const maxFormMemory = 8 << 20

// parseForm parses a request's form, URL-encoded or multipart (both calls
// do nothing the second time). A malformed body or query (a bad % escape,
// a broken multipart body, an unparsable Content-Type) is an input error
// naming it; a body over the limit stays *http.MaxBytesError (413).
func parseForm(r *http.Request) error {
	var err error
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		err = r.ParseMultipartForm(maxFormMemory)
	} else {
		err = r.ParseForm()
	}
	var mbe *http.MaxBytesError
	if err == nil || errors.As(err, &mbe) {
		return err
	}
	if _, qerr := url.ParseQuery(r.URL.RawQuery); qerr != nil {
		return badInput("query", "malformed URL query: %v", qerr)
	}
	return badInput("body", "malformed form data: %v", err)
}

// page fills the fields every page view carries.
func (s *Server) page(c *gin.Context, title string) ui.Page {
	return ui.Page{Title: title, CSRF: s.csrfToken(c)}
}

// render executes a template into a buffer first, so a template error
// becomes a clean 500 instead of half a page.
func (s *Server) render(c *gin.Context, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.ui.Render(&buf, name, data); err != nil {
		s.log.Error("render", "page", name, "err", err)
		c.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("internal error: page could not be rendered\n"))
		return
	}
	c.Data(status, "text/html; charset=utf-8", s.withSession(c, buf.Bytes()))
}
