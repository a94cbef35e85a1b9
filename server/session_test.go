package server

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// csrfFor GETs /login from remote and returns the CSRF cookie it sets.
func (ts *testServer) csrfFor(t *testing.T, remote string) *http.Cookie {
	t.Helper()
	req := httptest.NewRequest("GET", "/login", nil)
	req.RemoteAddr = remote
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Name == csrfCookie {
			return c
		}
	}
	t.Fatalf("GET /login from %s: no CSRF cookie (%d)", remote, rec.Code)
	return nil
}

// loginFrom posts the login form with token from remote (host:port),
// with the extra headers hdr (name, value, …).
func (ts *testServer) loginFrom(t *testing.T, remote, token string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	csrf := ts.csrfFor(t, remote)
	form := url.Values{"token": {token}, "next": {"/"}, csrfField: {csrf.Value}}
	req := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(csrf)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if strings.EqualFold(req.Header.Get("X-Test-TLS"), "on") {
		req.TLS = &tls.ConnectionState{}
	}
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	return rec
}

func cookieNamed(rec *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// authenticated reports whether a change with the session cookie value v
// gets past authentication (a 400 for the bad workload, not a 401).
func (ts *testServer) authenticated(t *testing.T, v string) bool {
	t.Helper()
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"sideways"}`, "Cookie", tokenCookie+"="+v)
	if rec.Code != http.StatusBadRequest && rec.Code != http.StatusUnauthorized {
		t.Fatalf("POST /api/runs with a session: %d %s", rec.Code, rec.Body)
	}
	return rec.Code == http.StatusBadRequest
}

// TestSessionCookieSecure: the session and CSRF cookies are Secure when
// the browser reached the server over HTTPS: a TLS connection, or
// X-Forwarded-Proto https from a --trusted-proxy; never for a forwarded
// proto from anyone else.
func TestSessionCookieSecure(t *testing.T) {
	const token = "tok-123"
	ts := newTestServer(t, func(c *Config) { c.Token = token; c.TrustedProxies = []string{"10.1.0.0/16", "192.0.2.7"} })
	for _, tt := range []struct {
		name   string
		remote string
		hdr    []string
		secure bool
	}{
		{"plain HTTP", "198.51.100.1:5000", nil, false},
		{"TLS", "198.51.100.1:5000", []string{"X-Test-TLS", "on"}, true},
		{"trusted proxy, https", "10.1.2.3:5000", []string{"X-Forwarded-Proto", "https"}, true},
		{"trusted proxy address, https", "192.0.2.7:5000", []string{"X-Forwarded-Proto", "HTTPS"}, true},
		{"trusted proxy, http", "10.1.2.3:5000", []string{"X-Forwarded-Proto", "http"}, false},
		{"trusted proxy, no header", "10.1.2.3:5000", nil, false},
		{"untrusted peer says https", "198.51.100.1:5000", []string{"X-Forwarded-Proto", "https"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.loginFrom(t, tt.remote, token, tt.hdr...)
			session := cookieNamed(rec, tokenCookie)
			if rec.Code != http.StatusSeeOther || session == nil {
				t.Fatalf("login: %d, cookie %v", rec.Code, session)
			}
			if session.Secure != tt.secure || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
				t.Errorf("session cookie %+v, want Secure=%v, HttpOnly, SameSite=Strict", session, tt.secure)
			}
			req := httptest.NewRequest("GET", "/login", nil)
			req.RemoteAddr = tt.remote
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				req.Header.Set(tt.hdr[i], tt.hdr[i+1])
			}
			if tt.name == "TLS" {
				req.TLS = &tls.ConnectionState{}
			}
			get := httptest.NewRecorder()
			ts.ServeHTTP(get, req)
			if csrf := cookieNamed(get, csrfCookie); csrf == nil || csrf.Secure != tt.secure {
				t.Errorf("CSRF cookie %+v, want Secure=%v", csrf, tt.secure)
			}
		})
	}
}

// TestSessionExpires: a login lasts SessionMaxAge (the cookie's Max-Age),
// and the server refuses the cookie after it whatever the browser keeps;
// a cookie whose issue time was changed is refused too.
func TestSessionExpires(t *testing.T) {
	const token = "tok-123"
	ts := newTestServer(t, func(c *Config) { c.Token = token; c.SessionMaxAge = 48 * time.Hour })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ts.clock = func() time.Time { return now }
	rec := ts.loginFrom(t, "198.51.100.1:5000", token)
	session := cookieNamed(rec, tokenCookie)
	if session == nil || session.MaxAge != 48*3600 {
		t.Fatalf("login: %d, cookie %+v, want Max-Age %d", rec.Code, session, 48*3600)
	}
	if !ts.authenticated(t, session.Value) {
		t.Fatal("a fresh session is refused")
	}
	now = now.Add(47 * time.Hour)
	if !ts.authenticated(t, session.Value) {
		t.Error("a session of 47 h (of 48) is refused")
	}
	now = now.Add(time.Hour)
	if ts.authenticated(t, session.Value) {
		t.Error("a session of 48 h (of 48) is still accepted")
	}
	// Moving the issue time forward breaks the MAC.
	_, rest, _ := strings.Cut(session.Value, ".")
	forged := strconv.FormatInt(now.Unix(), 10) + "." + rest
	if ts.authenticated(t, forged) {
		t.Error("a session with a forged issue time is accepted")
	}
	// A value issued in the future (a clock turned back, a forgery with
	// the token) is refused.
	if ts.authenticated(t, sessionValue(token, now.Add(time.Hour))) {
		t.Error("a session issued an hour from now is accepted")
	}
}

// TestLogout: a logged-in page offers "Log out"; POST /logout clears the
// cookie and the server refuses the old value from then on.
func TestLogout(t *testing.T) {
	const token = "tok-123"
	ts := newTestServer(t, func(c *Config) { c.Token = token })
	remote := "198.51.100.1:5000"
	session := cookieNamed(ts.loginFrom(t, remote, token), tokenCookie)
	if session == nil || !ts.authenticated(t, session.Value) {
		t.Fatalf("login: cookie %+v", session)
	}
	csrf := ts.csrfFor(t, remote)
	// Pages (also cached ones, served to every visitor) show each visitor
	// their own control.
	for range 2 {
		rec := ts.do(t, "GET", "/", "", "Cookie", tokenCookie+"="+session.Value+"; "+csrfCookie+"="+csrf.Value)
		if b := rec.Body.String(); !strings.Contains(b, `action="/logout"`) || !strings.Contains(b, `name="_csrf" value="`+csrf.Value+`"`) ||
			!strings.Contains(b, ">Log out</button>") || strings.Contains(b, sessionMarker) {
			t.Fatalf("logged-in runs page lacks the logout form:\n%s", b)
		}
		if b := ts.do(t, "GET", "/", "").Body.String(); strings.Contains(b, "Log out") || !strings.Contains(b, `href="/login">Log in</a>`) {
			t.Fatalf("a visitor without a session sees no login link, or a logout button:\n%s", b)
		}
	}
	form := url.Values{csrfField: {csrf.Value}}
	req := httptest.NewRequest("POST", "/logout", strings.NewReader(form.Encode()))
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(csrf)
	req.AddCookie(session)
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	cleared := cookieNamed(rec, tokenCookie)
	if rec.Code != http.StatusSeeOther || cleared == nil || cleared.Value != "" || cleared.MaxAge >= 0 {
		t.Fatalf("POST /logout: %d, cookie %+v; want 303 clearing %s", rec.Code, cleared, tokenCookie)
	}
	if ts.authenticated(t, session.Value) {
		t.Error("the logged-out session is still accepted")
	}
	// Without the form's CSRF token, no logout.
	other := cookieNamed(ts.loginFrom(t, remote, token), tokenCookie)
	req = httptest.NewRequest("POST", "/logout", nil)
	req.AddCookie(other)
	rec = httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || !ts.authenticated(t, other.Value) {
		t.Errorf("POST /logout without CSRF: %d, session still valid %v; want 403 and valid", rec.Code, ts.authenticated(t, other.Value))
	}
}

// TestLoginThrottled: wrong tokens in a row from one address lock it out
// (429 with Retry-After, the right token included) after
// loginFreeFailures, for longer each time; other addresses are not
// slowed; Bearer guesses at the API count the same; when the lockout is
// over the right token logs in and resets the count.
func TestLoginThrottled(t *testing.T) {
	const token = "tok-123"
	ts := newTestServer(t, func(c *Config) { c.Token = token; c.TrustedProxies = []string{"10.1.0.0/16"} })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ts.clock = func() time.Time { return now }
	attacker := "203.0.113.9:4000"
	var codes []int
	var lastRetry int
	for i := range 30 {
		rec := ts.loginFrom(t, attacker, "guess-"+strconv.Itoa(i))
		codes = append(codes, rec.Code)
		if rec.Code == http.StatusTooManyRequests {
			n, err := strconv.Atoi(rec.Header().Get("Retry-After"))
			if err != nil || n < 1 || !strings.Contains(rec.Body.String(), "too many wrong tokens") {
				t.Fatalf("attempt %d: 429 with Retry-After %q: %s", i+1, rec.Header().Get("Retry-After"), rec.Body)
			}
			lastRetry = n
		}
	}
	for i, code := range codes {
		want := http.StatusUnauthorized
		if i >= loginFreeFailures {
			want = http.StatusTooManyRequests
		}
		if code != want {
			t.Fatalf("attempt %d: %d, want %d (all: %v)", i+1, code, want, codes)
		}
	}
	// Locked out: even the right token is not checked.
	if rec := ts.loginFrom(t, attacker, token); rec.Code != http.StatusTooManyRequests || cookieNamed(rec, tokenCookie) != nil {
		t.Errorf("right token while locked out: %d", rec.Code)
	}
	// X-Forwarded-For from an untrusted peer does not make another client.
	if rec := ts.loginFrom(t, attacker, "guess", "X-Forwarded-For", "198.51.100.77"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("spoofed X-Forwarded-For: %d, want 429", rec.Code)
	}
	// Another address is not slowed, nor is a client behind the trusted proxy.
	if rec := ts.loginFrom(t, "198.51.100.1:5000", "wrong"); rec.Code != http.StatusUnauthorized {
		t.Errorf("another client's wrong token: %d, want 401", rec.Code)
	}
	if rec := ts.loginFrom(t, "10.1.0.5:5000", token, "X-Forwarded-For", "198.51.100.2"); rec.Code != http.StatusSeeOther {
		t.Errorf("a client behind the trusted proxy: %d, want 303", rec.Code)
	}
	// Bearer guesses at the API are counted per address too.
	api := "198.51.100.3:5000"
	bearer := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/api/runs", strings.NewReader(`{"workload":"sideways"}`))
		req.RemoteAddr = api
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		ts.ServeHTTP(rec, req)
		return rec
	}
	for i := range loginFreeFailures {
		if rec := bearer("guess" + strconv.Itoa(i)); rec.Code != http.StatusUnauthorized {
			t.Fatalf("bearer guess %d: %d, want 401", i+1, rec.Code)
		}
	}
	if rec := bearer(token); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "too many") {
		t.Errorf("bearer after %d guesses: %d Retry-After %q %s", loginFreeFailures, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	// Once the lockout is over, the right token logs in and the count
	// starts again.
	now = now.Add(time.Duration(lastRetry) * time.Second)
	if rec := ts.loginFrom(t, attacker, token); rec.Code != http.StatusSeeOther || cookieNamed(rec, tokenCookie) == nil {
		t.Fatalf("right token after the lockout: %d", rec.Code)
	}
	if rec := ts.loginFrom(t, attacker, "wrong"); rec.Code != http.StatusUnauthorized {
		t.Errorf("a wrong token after a login: %d, want 401 (the count reset)", rec.Code)
	}
}

// TestLoginLimiterBounded: the lockout doubles up to loginMaxLockout, and
// the addresses remembered are bounded.
func TestLoginLimiterBounded(t *testing.T) {
	l := newLoginLimiter()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var locks []time.Duration
	for range 40 {
		_, lock := l.failed("a", now)
		locks = append(locks, lock)
	}
	if locks[loginFreeFailures-2] != 0 || locks[loginFreeFailures-1] != time.Second || locks[loginFreeFailures] != 2*time.Second || locks[39] != loginMaxLockout {
		t.Errorf("lockouts %v", locks)
	}
	for i := range 2 * maxLoginClients {
		l.failed("client-"+strconv.Itoa(i), now)
	}
	// Full, the limiter forgets the least recent addresses first: the
	// newest are still counted, the oldest start afresh.
	last := "client-" + strconv.Itoa(2*maxLoginClients-1)
	if !l.clients.Contains(last) || l.clients.Contains("client-0") || l.clients.Contains("a") {
		t.Errorf("after %d addresses: newest kept %v, oldest forgotten %v, the locked one forgotten %v",
			2*maxLoginClients, l.clients.Contains(last), !l.clients.Contains("client-0"), !l.clients.Contains("a"))
	}
	if d := l.wait("a", now); d != 0 {
		t.Errorf("a forgotten address still waits %v", d)
	}
}

// TestLoginWithoutToken: on a server without a token, /login says no
// login is needed (no token field) and leads on; posting it goes on too.
func TestLoginWithoutToken(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Token = "" })
	rec := ts.do(t, "GET", "/login?next=/regressions", "")
	b := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(b, "No login needed") || !strings.Contains(b, `href="/regressions"`) ||
		strings.Contains(b, "needs its access token") || strings.Contains(b, `name="token"`) {
		t.Errorf("GET /login on a server without a token: %d\n%s", rec.Code, b)
	}
	if rec := ts.loginFrom(t, "127.0.0.1:5000", "anything"); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" || cookieNamed(rec, tokenCookie) != nil {
		t.Errorf("POST /login without a token: %d Location %q", rec.Code, rec.Header().Get("Location"))
	}
	// No session control in the header either.
	if b := ts.do(t, "GET", "/", "").Body.String(); strings.Contains(b, "Log in</a>") || strings.Contains(b, "Log out") {
		t.Errorf("the runs page of a server without a token offers a login or logout")
	}
}

// TestSessionStoreKeepsRecentLogouts: a full store forgets the oldest
// logouts first, never a recent one.
func TestSessionStoreKeepsRecentLogouts(t *testing.T) {
	var st sessionStore
	st.revoke("first")
	for i := range maxRevokedSessions - 1 {
		st.revoke(fmt.Sprint("s", i))
	}
	if !st.revoked("first") {
		t.Fatal("a full store forgot a logout it had room for")
	}
	st.revoke("one-more")
	if st.revoked("first") || !st.revoked("one-more") || !st.revoked("s0") {
		t.Errorf("past the bound: first %v (want forgotten), one-more %v, s0 %v (want kept)", st.revoked("first"), st.revoked("one-more"), st.revoked("s0"))
	}
}
