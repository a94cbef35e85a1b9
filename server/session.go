// Browser sessions of a server with --token: the cookie the login form
// sets, its expiry and logout, the Secure flag behind a TLS proxy, and the
// slowing of wrong tokens.

package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultSessionMaxAge is how long a login lasts unless
// Config.SessionMaxAge says otherwise.
const DefaultSessionMaxAge = 30 * 24 * time.Hour

// sessionContext is what the session value authenticates: changing it
// logs every browser out (v1 cookies carried no issue time and never
// expired).
const sessionContext = "kbench session v2"

// sessionValue is what the login cookie holds for a login at issued:
// "ISSUED.NONCE.MAC", the issue time in Unix seconds, a random nonce (two
// logins in one second are two sessions, so logging out of one does not
// end the other) and HMAC-SHA256 keyed by the token over both, hex. A
// cookie that leaks (a backup of the browser profile, a proxy log) does
// not reveal the token, cannot be used as a Bearer token in scripts, and
// stops working when it expires whatever the browser does with Max-Age.
func sessionValue(token string, issued time.Time) string {
	payload := strconv.FormatInt(issued.Unix(), 10) + "." + randomID(8)
	return payload + "." + sessionMAC(token, payload)
}

func sessionMAC(token, payload string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(sessionContext))
	mac.Write([]byte{0})
	mac.Write([]byte(payload))
	return hex.EncodeToString(mac.Sum(nil))
}

// sessionExpiry is when session value v, issued by this server's token,
// expires; ok is false for a value the token did not sign, malformed, or
// issued in the future (a minute's clock skew allowed).
func (s *Server) sessionExpiry(v string, now time.Time) (expires time.Time, ok bool) {
	payload, mac, found := cutLast(v, ".")
	if !found || s.cfg.Token == "" || subtle.ConstantTimeCompare([]byte(mac), []byte(sessionMAC(s.cfg.Token, payload))) != 1 {
		return time.Time{}, false
	}
	sec, _, _ := strings.Cut(payload, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	issued := time.Unix(n, 0)
	if issued.After(now.Add(time.Minute)) {
		return time.Time{}, false
	}
	return issued.Add(s.cfg.SessionMaxAge), true
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// validSession reports whether v is a session this server issued that has
// neither expired nor been logged out.
func (s *Server) validSession(v string, now time.Time) bool {
	exp, ok := s.sessionExpiry(v, now)
	return ok && now.Before(exp) && !s.sessions.revoked(v)
}

// maxRevokedSessions bounds the logged-out sessions remembered. Only a
// valid session can be logged out, so only token holders add to it; the
// bound is a safeguard, not a limit anyone meets.
const maxRevokedSessions = 10000

// sessionStore remembers the sessions logged out, so a copy of a
// logged-out cookie is refused too: the most recent maxRevokedSessions of
// them (an expired one is refused anyway, whether remembered or not). It
// lives in memory: after a restart a copied cookie works again until its
// expiry.
type sessionStore struct {
	once sync.Once
	gone *lru.Cache[string, struct{}]
}

func (st *sessionStore) cache() *lru.Cache[string, struct{}] {
	st.once.Do(func() { st.gone = newLRU[string, struct{}](maxRevokedSessions) })
	return st.gone
}

func (st *sessionStore) revoked(v string) bool { return st.cache().Contains(v) }

func (st *sessionStore) revoke(v string) { st.cache().Add(v, struct{}{}) }

// sessionMarker stands in rendered pages (ui.SetSessionSlot, on servers
// with a token) for the visitor's session control, which withSession puts
// in its place: pages are cached for every visitor, logged in or not.
const sessionMarker = "<!--kbench:session-->"

// withSession puts the visitor's session control into page: a "Log out"
// button (a form posting to /logout with the visitor's CSRF token) when
// the request holds a valid session, else a "Log in" link.
func (s *Server) withSession(c *gin.Context, page []byte) []byte {
	if s.cfg.Token == "" || !bytes.Contains(page, []byte(sessionMarker)) {
		return page
	}
	control := `<a class="site-session" href="/login">Log in</a>`
	if ck, err := c.Cookie(tokenCookie); err == nil && s.validSession(ck, s.clock()) {
		control = `<form class="site-session" method="post" action="/logout"><input type="hidden" name="_csrf" value="` +
			html.EscapeString(s.csrfToken(c)) + `"><button type="submit" class="site-logout">Log out</button></form>`
	}
	return bytes.Replace(page, []byte(sessionMarker), []byte(control), 1)
}

// sessionCookie is the login cookie: value v (empty and MaxAge -1 to
// clear it), HttpOnly, SameSite=Strict, Secure when the browser reached
// the server over HTTPS.
func (s *Server) sessionCookie(r *http.Request, v string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: tokenCookie, Value: v, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secureRequest(r)}
}

// secureRequest reports whether the browser reached the server over
// HTTPS: the connection is TLS, or it comes from a trusted proxy
// (--trusted-proxy) whose X-Forwarded-Proto (its first value, the
// browser's side) is https. Cookies are then Secure: the browser never
// sends them over plain HTTP.
func (s *Server) secureRequest(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !s.fromTrustedProxy(r) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

// fromTrustedProxy reports whether the request's peer is a trusted proxy.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	if len(s.trustedProxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range s.trustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// parseTrustedProxies reads --trusted-proxy values: CIDRs (10.0.0.0/8) or
// single addresses.
func parseTrustedProxies(vs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range vs {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return nil, fmt.Errorf("--trusted-proxy %q: want an address or a CIDR such as 10.0.0.0/8", v)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Wrong tokens are slowed per client: after loginFreeFailures in a row,
// each further one locks the client's address out for twice as long as
// the previous one (1 s, 2 s, 4 s, … up to loginMaxLockout); a try while
// locked out is a 429 with Retry-After, whatever token it holds, so
// guessing goes no faster than the lockouts allow. A right token resets
// the count; so does an hour without a wrong one.
const (
	loginFreeFailures = 5
	loginMaxLockout   = 15 * time.Minute
	loginForgetAfter  = time.Hour
	// maxLoginClients bounds the addresses remembered (least recently
	// failed forgotten first).
	maxLoginClients = 4096
)

type loginFailures struct {
	count int
	last  time.Time
	until time.Time // locked out until
}

// loginLimiter counts wrong tokens per client address.
type loginLimiter struct {
	mu      sync.Mutex
	clients *lru.Cache[string, loginFailures]
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{clients: newLRU[string, loginFailures](maxLoginClients)}
}

// wait is how long client must wait before its next try (0: it may try).
func (l *loginLimiter) wait(client string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.clients.Peek(client); ok && now.Before(f.until) {
		return f.until.Sub(now)
	}
	return 0
}

// failed records a wrong token from client and returns the number of
// wrong tokens in a row and the lockout it starts (0: none yet).
func (l *loginLimiter) failed(client string, now time.Time) (int, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, _ := l.clients.Get(client)
	if now.Sub(f.last) > loginForgetAfter {
		f.count = 0
	}
	f.count++
	f.last = now
	var lock time.Duration
	if n := f.count - loginFreeFailures; n >= 0 {
		lock = min(time.Second<<min(n, 20), loginMaxLockout)
		f.until = now.Add(lock)
	}
	l.clients.Add(client, f)
	return f.count, lock
}

// succeeded forgets client's wrong tokens.
func (l *loginLimiter) succeeded(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clients.Remove(client)
}

// retryAfter is d as Retry-After's whole seconds, rounded up.
func retryAfter(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
