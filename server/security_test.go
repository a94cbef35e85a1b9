package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

func TestIsLoopbackAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"localhost:8080", true},
		{"[::1]:8080", true},
		{"[::ffff:127.0.0.1]:8080", true},
		{"127.evil.invalid:8080", false},
		{"127.0.0.1.nip.io:8080", false},
		{"localhost.evil.invalid:8080", false},
		{"localhost:8080:9090", false},
		{"[::1]", false},
		{"127.0.0.1", false},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"10.0.0.1:8080", false},
		{"[::ffff:10.0.0.1]:8080", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsLoopbackAddr(tt.addr); got != tt.want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestSafeNext(t *testing.T) {
	tests := []struct{ next, want string }{
		{"/runs/3", "/runs/3"},
		{"/compare?runs=1&runs=2", "/compare?runs=1&runs=2"},
		{"/runs?label=a%20b", "/runs?label=a%20b"},
		{"/", "/"},
		{"", "/"},
		{"runs", "/"},
		{"https://evil.example/x", "/"},
		{"//evil.example/x", "/"},
		{"/\\evil.example/x", "/"},
		{"/\t/evil.example/x", "/"},
		{"/\n/evil.example/x", "/"},
		{"/\r\nSet-Cookie: x=y", "/"},
		{"/\x00", "/"},
		{"/\x7f/evil.example", "/"},
		{"/%09/evil.example/x", "/"},
		{"/%0a/evil.example/x", "/"},
		{"/%7f", "/"},
		{"/%5Cevil.example/x", "/"},
		{"/%2F/evil.example/x", "/"},
		{"/%zz", "/"},
	}
	for _, tt := range tests {
		if got := safeNext(tt.next); got != tt.want {
			t.Errorf("safeNext(%q) = %q, want %q", tt.next, got, tt.want)
		}
	}
}

// TestLoginRedirectStaysOnSite posts the login form with hostile next
// values: the redirect after a good token always stays on this site.
func TestLoginRedirectStaysOnSite(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Token = "tok-123" })
	for _, tt := range []struct{ next, want string }{
		{"/runs/new", "/runs/new"},
		{"/\t/evil.example/x", "/"}, // next=%2F%09%2Fevil.example%2Fx in the body
		{"//evil.example/x", "/"},
		{"/%09/evil.example/x", "/"},
	} {
		rec := ts.formPost(t, "/login", url.Values{"token": {"tok-123"}, "next": {tt.next}})
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tt.want {
			t.Errorf("login with next=%q: %d Location %q, want 303 to %q", tt.next, rec.Code, rec.Header().Get("Location"), tt.want)
		}
	}
}

// TestAllowTargetRefusesCrossDotAndMalformed creates runs through every
// way a target is given (API target, API params, the Kafka property, the
// form) and checks that none outside --allow-target gets through.
func TestAllowTargetRefusesCrossDotAndMalformed(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "kafka-*:9092") })
	tests := []struct {
		name, body string
		malformed  bool
	}{
		{"crosses a dot", `{"workload":"producer","target":{"bootstrap_server":"kafka-evil.attacker.example:9092"}}`, false},
		{"nip.io", `{"workload":"producer","target":{"bootstrap_server":"kafka-169.254.169.254.nip.io:9092"}}`, false},
		{"second server", `{"workload":"producer","target":{"bootstrap_server":"kafka-1:9092,kafka-x.evil:9092"}}`, false},
		{"params", `{"workload":"consumer","params":{"bootstrap-server":"kafka-evil.attacker.example:9092"}}`, false},
		{"property", `{"workload":"producer","params":{"producer-props":["bootstrap.servers=kafka-a.evil:9092"]}}`, false},
		{"extra colon", `{"workload":"producer","target":{"bootstrap_server":"kafka-x:80:9092"}}`, true},
		{"no port", `{"workload":"producer","target":{"bootstrap_server":"kafka-x"}}`, true},
		{"empty host", `{"workload":"producer","target":{"bootstrap_server":":9092"}}`, true},
		{"bad port", `{"workload":"producer","target":{"bootstrap_server":"kafka-x:99999"}}`, true},
		{"bad name", `{"workload":"producer","target":{"bootstrap_server":"kafka-x/y:9092"}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tt.body)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != 400 || resp.Field != "bootstrap-server" {
				t.Fatalf("got %d %s, want 400 naming bootstrap-server", rec.Code, rec.Body)
			}
			if tt.malformed != strings.Contains(resp.Error, "not a valid host:port") {
				t.Errorf("error %q: malformed=%v expected", resp.Error, tt.malformed)
			}
		})
	}
	rec := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "target": {"bootstrap"}, "bootstrap-server": {"kafka-evil.attacker.example:9092"}})
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "not an allowed target") {
		t.Errorf("form with a cross-dot target: %d", rec.Code)
	}
	if n, _ := ts.st.CountRuns(context.Background()); n != 0 {
		t.Errorf("refused targets created %d runs", n)
	}
	// An allowed target passes validation.
	req := launch.Request{Workload: "producer", Target: &launch.Target{BootstrapServer: "kafka-1:9092"}}
	if _, err := ts.launcher.Prepare(&req); err != nil {
		t.Errorf("kafka-1:9092 refused: %v", err)
	}
}

// TestRestartCancelsQueuedRunsNoLongerAllowed: a queued run whose target
// the restarted server no longer allows is canceled, not executed.
func TestRestartCancelsQueuedRunsNoLongerAllowed(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	spec := `{"workload":"producer","params":{"bootstrap-server":"kafka-evil.attacker.example:9092","num-records":100}}`
	runs := []*store.Run{{Label: "old", Workload: "producer", Status: rundoc.StatusQueued, Spec: spec}}
	if err := st.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	cfg := Config{DataDir: dir, KbenchCommand: []string{kbenchBin(t)}, Targets: allowTargets(t, "kafka-*:9092"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	lc := newLifecycle(t, cfg, st)
	s, err := New(cfg, testDeps(st, lc))
	if err != nil {
		t.Fatal(err)
	}
	if err := lc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, _ := st.GetRun(ctx, runs[0].ID)
	if got.Status != rundoc.StatusCanceled || !strings.Contains(got.Error, "--allow-target") {
		t.Errorf("queued run with a target no longer allowed: %s %q, want canceled naming --allow-target", got.Status, got.Error)
	}
}

// TestHostCheckAgainstDNSRebinding: a loopback server without a token
// answers only requests addressed to a loopback name, on every route.
func TestHostCheckAgainstDNSRebinding(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Loopback = true; c.AllowHosts = []string{"kbench.test"} })
	routes := []struct{ method, path, body string }{
		{"GET", "/", ""},
		{"GET", "/runs/new", ""},
		{"GET", "/runs/1", ""},
		{"GET", "/api/runs", ""},
		{"POST", "/api/runs", smallProducer},
		{"GET", "/api/runs/999/events", ""},
		{"GET", "/profiles/999/pprof/", ""},
		{"GET", "/static/app.css", ""},
		{"GET", "/healthz", ""},
		{"GET", "/login", ""},
		{"GET", "/no/such/page", ""},
	}
	send := func(method, path, body, host string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = host
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", "http://"+host) // the attacker's page is same-origin with itself
		}
		rec := httptest.NewRecorder()
		ts.ServeHTTP(rec, req)
		return rec
	}
	for _, host := range []string{"rebind.attacker.example:8080", "rebind.attacker.example", "127.evil.invalid:8080",
		"localhost.attacker.example", "kbench.test.attacker.example", "0.0.0.0:8080", "10.0.0.1:8080", "[::]:8080", ""} {
		for _, r := range routes {
			rec := send(r.method, r.path, r.body, host)
			if rec.Code != http.StatusForbidden {
				t.Errorf("Host %q: %s %s = %d, want 403", host, r.method, r.path, rec.Code)
				continue
			}
			if host != "" && !strings.Contains(rec.Body.String(), "--allow-host") {
				t.Errorf("Host %q: %s %s: the refusal does not say how to allow the name: %s", host, r.method, r.path, rec.Body)
			}
			if strings.HasPrefix(r.path, "/api/") && !json.Valid(rec.Body.Bytes()) {
				t.Errorf("Host %q: %s %s: API refusal is not JSON: %s", host, r.method, r.path, rec.Body)
			}
		}
	}
	if n, _ := ts.st.CountRuns(context.Background()); n != 0 {
		t.Fatalf("requests with a foreign Host created %d runs", n)
	}
	for _, host := range []string{"127.0.0.1:8080", "127.9.9.9", "localhost:8080", "LOCALHOST", "[::1]:8080", "[::ffff:127.0.0.1]:80",
		"kbench.test:8080", "KBench.Test"} {
		for _, r := range routes {
			if r.method != "GET" {
				continue
			}
			if rec := send(r.method, r.path, r.body, host); rec.Code == http.StatusForbidden {
				t.Errorf("Host %q: %s %s = 403 %s", host, r.method, r.path, rec.Body)
			}
		}
	}
	// A token protects a server however it is addressed; a server that
	// does not listen on loopback is reached by other names anyway.
	for _, mod := range []func(*Config){
		func(c *Config) { c.Loopback = true; c.Token = "tok-123" },
		func(c *Config) { c.Loopback = false },
	} {
		other := newTestServer(t, mod)
		req := httptest.NewRequest("GET", "/api/runs", nil)
		req.Host = "kbench.example:8080"
		rec := httptest.NewRecorder()
		other.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Errorf("Host check applied where it does not belong: %d %s", rec.Code, rec.Body)
		}
	}
}

func TestAllowHostsValidated(t *testing.T) {
	for _, h := range []string{"", "kbench.test:8080", "*.test", "kb ench", "http://kbench.test", "kbench..test"} {
		cfg := Config{AllowHosts: []string{h}}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--allow-host") {
			t.Errorf("--allow-host %q: error %v, want one naming --allow-host", h, err)
		}
	}
	for _, h := range []string{"kbench.test", "KBench.Test", "devbox", "192.168.1.5", "[fe80::1]", "fe80::1"} {
		cfg := Config{AllowHosts: []string{h}}
		if err := cfg.Validate(); err != nil {
			t.Errorf("--allow-host %q: %v", h, err)
		}
	}
}

// TestCrossOriginProtection: state-changing requests from other origins
// are refused (JSON for the API, the error page for forms); scripts
// without Origin and same-origin browsers keep working.
func TestCrossOriginProtection(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	ts := newTestServer(t, nil)
	body := `{"workload":"producer","params":{"num-records":100,"profile":"none"}}`
	tests := []struct {
		name string
		hdr  []string
		want int
	}{
		{"curl, no Origin", nil, 201},
		{"same origin", []string{"Origin", "http://example.com"}, 201},
		{"fetch metadata same-origin", []string{"Sec-Fetch-Site", "same-origin", "Origin", "http://example.com"}, 201},
		{"typed by the user", []string{"Sec-Fetch-Site", "none"}, 201},
		{"other origin", []string{"Origin", "https://evil.example"}, 403},
		{"other port", []string{"Origin", "http://example.com:8081"}, 403},
		{"Origin null", []string{"Origin", "null"}, 403},
		{"cross-site", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"same-site", []string{"Sec-Fetch-Site", "same-site", "Origin", "http://sub.example.com"}, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", body, tt.hdr...)
			if rec.Code != tt.want {
				t.Fatalf("got %d %s, want %d", rec.Code, rec.Body, tt.want)
			}
			if tt.want == 403 {
				var resp struct{ Error string }
				if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || !strings.Contains(resp.Error, "cross-origin") {
					t.Errorf("API refusal %q, want a JSON error saying cross-origin", rec.Body)
				}
			}
		})
	}
	// Without a Host, net/http's check alone would take Origin null for
	// this (empty) origin.
	req := httptest.NewRequest("POST", "/api/runs", strings.NewReader(body))
	req.Host = ""
	req.Header.Set("Origin", "null")
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	if rec.Code != 403 {
		t.Errorf("Origin null without Host: %d, want 403", rec.Code)
	}
	// A form posted from another site (its CSRF token stolen or not) gets
	// the error page.
	get := ts.do(t, "GET", "/runs/new", "")
	var tok string
	for _, c := range get.Result().Cookies() {
		if c.Name == csrfCookie {
			tok = c.Value
		}
	}
	form := url.Values{"workload": {"producer"}, csrfField: {tok}}
	for _, origin := range []string{"null", "https://evil.example"} {
		rec := ts.do(t, "POST", "/runs", form.Encode(), "Content-Type", "application/x-www-form-urlencoded",
			"Cookie", csrfCookie+"="+tok, "Origin", origin)
		if rec.Code != 403 || !strings.Contains(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(rec.Body.String(), "cross-origin") {
			t.Errorf("form from Origin %s: %d %s, want the 403 error page", origin, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
}

// TestSessionCookie: the login cookie holds a value derived from the
// token, never the token; cookies are Secure when the request came over
// TLS.
func TestSessionCookie(t *testing.T) {
	const token = "tok-123"
	ts := newTestServer(t, func(c *Config) { c.Token = token })
	for _, overTLS := range []bool{false, true} {
		get := httptest.NewRequest("GET", "/login", nil)
		if overTLS {
			get.TLS = &tls.ConnectionState{}
		}
		rec := httptest.NewRecorder()
		ts.ServeHTTP(rec, get)
		var csrf *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == csrfCookie {
				csrf = c
			}
		}
		if csrf == nil || csrf.Secure != overTLS || !csrf.HttpOnly {
			t.Fatalf("TLS=%v: CSRF cookie %+v, want HttpOnly and Secure=%v", overTLS, csrf, overTLS)
		}
		form := url.Values{"token": {token}, "next": {"/"}, csrfField: {csrf.Value}}
		post := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		post.AddCookie(csrf)
		if overTLS {
			post.TLS = &tls.ConnectionState{}
		}
		rec = httptest.NewRecorder()
		ts.ServeHTTP(rec, post)
		var session *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == tokenCookie {
				session = c
			}
		}
		if rec.Code != http.StatusSeeOther || session == nil {
			t.Fatalf("TLS=%v: login %d, cookie %v", overTLS, rec.Code, session)
		}
		if session.Secure != overTLS || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
			t.Errorf("TLS=%v: session cookie %+v, want HttpOnly, SameSite=Strict, Secure=%v", overTLS, session, overTLS)
		}
		if strings.Contains(session.Value, token) || session.Value == "" {
			t.Errorf("the session cookie holds the token: %q", session.Value)
		}
		// ISSUED.NONCE.MAC: the issue time, and HMAC-SHA256 keyed by the
		// token over the context and both.
		parts := strings.Split(session.Value, ".")
		issued, err := strconv.ParseInt(parts[0], 10, 64)
		if len(parts) != 3 || err != nil || time.Since(time.Unix(issued, 0)).Abs() > time.Hour {
			t.Errorf("session cookie %q: want ISSUED.NONCE.MAC with the time of the login", session.Value)
		} else {
			mac := hmac.New(sha256.New, []byte(token))
			mac.Write([]byte(sessionContext + "\x00" + parts[0] + "." + parts[1]))
			if want := hex.EncodeToString(mac.Sum(nil)); parts[2] != want {
				t.Errorf("session cookie %q, want its MAC HMAC-SHA256(token, %q) = %q", session.Value, sessionContext, want)
			}
		}
		if session.MaxAge != int(DefaultSessionMaxAge/time.Second) {
			t.Errorf("session cookie Max-Age %d, want %d (30 days)", session.MaxAge, int(DefaultSessionMaxAge/time.Second))
		}
		// The session cookie authenticates.
		if rec := ts.do(t, "POST", "/api/runs", `{"workload":"sideways"}`, "Cookie", tokenCookie+"="+session.Value); rec.Code != 400 {
			t.Errorf("POST with the session cookie = %d, want 400 (authenticated, bad workload)", rec.Code)
		}
	}
	for _, tt := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"raw token as cookie", []string{"Cookie", tokenCookie + "=" + token}, 401},
		{"wrong cookie", []string{"Cookie", tokenCookie + "=0123abcd"}, 401},
		{"bearer token", []string{"Authorization", "Bearer " + token}, 400},
		{"bearer session value", []string{"Authorization", "Bearer " + sessionValue(token, time.Now())}, 401},
	} {
		if rec := ts.do(t, "POST", "/api/runs", `{"workload":"sideways"}`, tt.hdr...); rec.Code != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, rec.Code, tt.want)
		}
	}
}

// TestMalformedFormBody: a form body (or query) that does not parse is the
// client's error on every form route: 400 naming it, never a 500 and never
// silently read as an empty form.
func TestMalformedFormBody(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Token = "" })
	get := ts.do(t, "GET", "/runs/new", "")
	var tok string
	for _, c := range get.Result().Cookies() {
		if c.Name == csrfCookie {
			tok = c.Value
		}
	}
	const urlencoded = "application/x-www-form-urlencoded"
	const multipartCT = "multipart/form-data; boundary=XYZ"
	truncated := "--XYZ\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n" + tok + "\r\n--XYZ\r\nContent-Disposition: form-data; name=\"label\"\r\n\r\nunfinished"
	tests := []struct {
		path, ctype, body, field string
	}{
		{"/runs", urlencoded, "_csrf=" + tok + "&workload=producer&label=%zz", "body"},
		{"/runs?x=%zz", urlencoded, "_csrf=" + tok + "&workload=producer", "query"},
		{"/reports", urlencoded, "_csrf=" + tok + "&title=%4", "body"},
		{"/writepath", urlencoded, "_csrf=" + tok + "&requests=%G0", "body"},
		{"/login", urlencoded, "_csrf=" + tok + "&token=%zz&next=%2F", "body"},
		{"/runs/1/cancel", urlencoded, "_csrf=" + tok + "&x=%", "body"},
		{"/import", urlencoded, "_csrf=" + tok + "&label=%zz", "body"},
		{"/import", multipartCT, truncated, "body"},
		{"/runs/1/profiles", urlencoded, "_csrf=" + tok + "&role=%zz", "body"},
		{"/runs/1/profiles", multipartCT, truncated, "body"},
		{"/login", multipartCT, truncated, "body"},
		{"/runs", "text/plain; charset", "_csrf=" + tok, "body"},
	}
	for _, tt := range tests {
		rec := ts.do(t, "POST", tt.path, tt.body, "Content-Type", tt.ctype, "Cookie", csrfCookie+"="+tok)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("POST %s (%s) %q: %d, want 400", tt.path, tt.ctype, tt.body, rec.Code)
			continue
		}
		if !strings.Contains(rec.Body.String(), tt.field+": ") {
			t.Errorf("POST %s %q: the answer does not name the %s:\n%s", tt.path, tt.body, tt.field, rec.Body)
		}
	}
	if n, _ := ts.st.CountRuns(context.Background()); n != 0 {
		t.Errorf("malformed forms created %d runs", n)
	}
}
