package server

import (
	"net/http"
	"net/url"
	"testing"
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
