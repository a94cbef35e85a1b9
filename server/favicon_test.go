package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/kbench/kbench/static"
)

// TestFavicon: /favicon.ico, which browsers ask for on pages that name no
// icon (the embedded pprof UI's), answers kbench's icon, the same file
// kbench's own pages link under /static/.
func TestFavicon(t *testing.T) {
	ts := newTestServer(t, nil)
	want, err := static.FS.ReadFile("favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 6 || !bytes.Equal(want[:4], []byte{0, 0, 1, 0}) {
		t.Fatal("static/favicon.ico is not an ICO file")
	}
	for _, path := range []string{"/favicon.ico", "/static/favicon.ico"} {
		rec := ts.do(t, "GET", path, "", "Accept-Encoding", "gzip, zstd")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "image/x-icon" && ct != "image/vnd.microsoft.icon" {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		if !strings.Contains(rec.Header().Get("Cache-Control"), "max-age=") {
			t.Errorf("GET %s: Cache-Control %q, want it cached", path, rec.Header().Get("Cache-Control"))
		}
		if !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("GET %s: %d bytes, not the icon's %d", path, rec.Body.Len(), len(want))
		}
	}
	// Every page links it.
	page := ts.do(t, "GET", "/", "").Body.String()
	if !strings.Contains(page, `<link rel="icon" href="/static/favicon.ico?v=`) {
		t.Error("the runs page does not link the icon")
	}
}
