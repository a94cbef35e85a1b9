package server

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzSafeNext: whatever next a client sends, the redirect stays a local
// path.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/", "/runs/3", "//evil.example", "/\t/evil.example/x", "/%09/x", `/\evil`, "/%5c", "/%2F/x", "/%zz", "https://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got != "/" && got != next {
			t.Fatalf("safeNext(%q) = %q: neither / nor the input", next, got)
		}
		un, err := url.PathUnescape(got)
		if err != nil {
			t.Fatalf("safeNext(%q) = %q does not unescape: %v", next, got, err)
		}
		for _, p := range []string{got, un} {
			if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\x7f") {
				t.Fatalf("safeNext(%q) = %q leaves the site", next, got)
			}
			for _, c := range []byte(p) {
				if c < 0x20 {
					t.Fatalf("safeNext(%q) = %q holds a control character", next, got)
				}
			}
		}
	})
}
