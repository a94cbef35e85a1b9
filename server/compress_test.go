package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// foldedMany is a profile whose flame graph is a few KiB of JSON.
func foldedMany() string {
	var b strings.Builder
	for i := range 80 {
		fmt.Fprintf(&b, "main.main;github.com/kbench/kbench/runner.(*producer).run;main.step%02d;runtime.mallocgc %d\n", i, 10+i)
	}
	return b.String()
}

// decode undoes a Content-Encoding.
func decode(t *testing.T, enc string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("unexpected Content-Encoding %q", enc)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", enc, err)
	}
	return out
}

// fixedCSRF makes pages identical across requests: a page carries the
// visitor's CSRF token, new for a visitor without the cookie.
const fixedCSRF = "kbench_csrf=0123456789abcdef0123456789abcdef"

// TestCompressedAnswers: text and JSON answers are compressed as the
// client accepts (zstd preferred), say Vary: Accept-Encoding, and decode
// to exactly the uncompressed answer.
func TestCompressedAnswers(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "many", foldedMany())
	paths := []struct{ path, ctype string }{
		{"/", "text/html"},
		{fmt.Sprintf("/profiles/%d", id), "text/html"},
		{"/static/app.css", "text/css"},
		{"/static/flamegraph.js", "text/javascript"},
		{fmt.Sprintf("/api/diff?base=%d&target=%d", id, id), "application/json"},
		{fmt.Sprintf("/api/profiles/%d/flamegraph?format=compact", id), "application/json"},
		{fmt.Sprintf("/api/profiles/%d/flamegraph", id), "application/json"},
		{fmt.Sprintf("/profiles/%d/pprof/top", id), "text/html"},
		{fmt.Sprintf("/profiles/%d/pprof/flamegraph", id), "text/html"},
	}
	for _, p := range paths {
		plain := ts.do(t, "GET", p.path, "", "Cookie", fixedCSRF)
		if plain.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %.300s", p.path, plain.Code, plain.Body)
		}
		if ce := plain.Header().Get("Content-Encoding"); ce != "" {
			t.Errorf("GET %s without Accept-Encoding: Content-Encoding %q", p.path, ce)
		}
		if plain.Body.Len() < compressMinSize {
			t.Fatalf("GET %s: %d bytes, too small to test compression", p.path, plain.Body.Len())
		}
		for _, c := range []struct{ accept, want string }{
			{"gzip", "gzip"},
			{"zstd", "zstd"},
			{"gzip, deflate, br, zstd", "zstd"}, // Chromium's
			{"zstd;q=0.5, gzip", "gzip"},
			{"identity", ""},
			{"br", ""},
		} {
			rec := ts.do(t, "GET", p.path, "", "Cookie", fixedCSRF, "Accept-Encoding", c.accept)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s (%s) = %d", p.path, c.accept, rec.Code)
			}
			h := rec.Header()
			if got := h.Get("Content-Encoding"); got != c.want {
				t.Errorf("GET %s, Accept-Encoding %q: Content-Encoding %q, want %q", p.path, c.accept, got, c.want)
				continue
			}
			if !strings.HasPrefix(h.Get("Content-Type"), p.ctype) {
				t.Errorf("GET %s (%s): Content-Type %q, want %s", p.path, c.accept, h.Get("Content-Type"), p.ctype)
			}
			if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Accept-Encoding") {
				t.Errorf("GET %s (%s): Vary %q lacks Accept-Encoding", p.path, c.accept, h.Values("Vary"))
			}
			if c.want != "" && rec.Body.Len() >= plain.Body.Len() {
				t.Errorf("GET %s (%s): %d bytes compressed, %d plain", p.path, c.accept, rec.Body.Len(), plain.Body.Len())
			}
			if got := decode(t, c.want, rec.Body.Bytes()); !bytes.Equal(got, plain.Body.Bytes()) {
				t.Errorf("GET %s (%s): the decoded answer differs from the plain one (%d vs %d bytes)", p.path, c.accept, len(got), plain.Body.Len())
			}
		}
	}
}

// TestCompressKeepsStatusAndSmallAnswers: statuses set without a body,
// errors and redirects pass through the compressor unchanged; answers
// under compressMinSize are not compressed.
func TestCompressKeepsStatusAndSmallAnswers(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "small", foldedGather)
	small := 0
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/healthz", 200},
		{"GET", "/nope", 404},                // the error page
		{"GET", "/api/runs/999", 404},        // a JSON error
		{"GET", "/api/nope", 404},            // a JSON error
		{"GET", "/api/runs?limit=1", 200},    // small JSON
		{"GET", "/runs/999", 404},            // the error page
		{"GET", "/runs/abc", 404},            // the error page
		{"GET", "/runs/new?x=1", 200},        // a page
		{"GET", "/profiles/1/pprof", 301},    // a redirect
		{"POST", "/api/runs", 400},           // a JSON error
		{"DELETE", "/api/runs/999", 404},     // a JSON error
		{"DELETE", "/api/runs/REPLACE", 204}, // no body
		{"GET", fmt.Sprintf("/api/profiles/%d/flamegraph?sample=bogus", id), 400},
	} {
		path := c.path
		if strings.Contains(path, "REPLACE") {
			rec := ts.do(t, "GET", "/api/runs?limit=1", "")
			var list struct{ Runs []struct{ ID uint } }
			json.Unmarshal(rec.Body.Bytes(), &list)
			if len(list.Runs) != 1 {
				t.Fatalf("no run to delete: %s", rec.Body)
			}
			path = strings.ReplaceAll(path, "REPLACE", fmt.Sprint(list.Runs[0].ID))
		}
		plain := 0
		if c.method == "GET" {
			plain = ts.do(t, c.method, path, "", "Cookie", fixedCSRF).Body.Len()
		}
		rec := ts.do(t, c.method, path, "", "Cookie", fixedCSRF, "Accept-Encoding", "gzip, zstd")
		if rec.Code != c.status {
			t.Errorf("%s %s = %d, want %d: %.300s", c.method, path, rec.Code, c.status, rec.Body)
		}
		ce := rec.Header().Get("Content-Encoding")
		switch {
		case c.method != "GET" || plain < compressMinSize:
			small++
			if ce != "" {
				t.Errorf("%s %s (%d bytes): Content-Encoding %q, want none under %d bytes", c.method, path, rec.Body.Len(), ce, compressMinSize)
			}
		case ce != "zstd":
			t.Errorf("%s %s (%d bytes): Content-Encoding %q, want zstd", c.method, path, plain, ce)
		case len(decode(t, ce, rec.Body.Bytes())) != plain:
			t.Errorf("%s %s: decodes to %d bytes, want %d", c.method, path, len(decode(t, ce, rec.Body.Bytes())), plain)
		}
	}
	if small < 5 {
		t.Errorf("only %d small answers checked", small)
	}
}

// TestCompressNotForDownloads: a profile download is gzipped protobuf
// already; it goes out as stored, whatever the client accepts.
func TestCompressNotForDownloads(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "many", foldedMany())
	p, err := ts.st.GetProfile(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Data) < compressMinSize {
		t.Fatalf("the stored profile is %d bytes, too small to test", len(p.Data))
	}
	for _, path := range []string{fmt.Sprintf("/api/profiles/%d/download", id), fmt.Sprintf("/profiles/%d/pprof/download", id)} {
		for _, accept := range []string{"", "gzip", "zstd", "gzip, deflate, br, zstd"} {
			rec := ts.do(t, "GET", path, "", "Accept-Encoding", accept)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d", path, rec.Code)
			}
			if ce := rec.Header().Get("Content-Encoding"); ce != "" {
				t.Errorf("GET %s with Accept-Encoding %q: Content-Encoding %q", path, accept, ce)
			}
			if b := rec.Body.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				t.Errorf("GET %s with Accept-Encoding %q: not a gzipped profile", path, accept)
			}
			// kbench's own download is the stored file, byte for byte.
			if strings.HasPrefix(path, "/api/") && !bytes.Equal(rec.Body.Bytes(), p.Data) {
				t.Errorf("GET %s with Accept-Encoding %q: %d bytes, not the stored %d", path, accept, rec.Body.Len(), len(p.Data))
			}
		}
	}
}

// TestFlameGraphCompressedOnce: the flame-graph answer is kept with its
// compressed forms: the compressed bytes are made once and served again.
func TestFlameGraphCompressedOnce(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "many", foldedMany())
	path := fmt.Sprintf("/api/profiles/%d/flamegraph?format=compact", id)
	plain := ts.do(t, "GET", path, "")
	first := ts.do(t, "GET", path, "", "Accept-Encoding", "gzip")
	if first.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", first.Header().Get("Content-Encoding"))
	}
	var cached *encodedBody
	ok := false
	for idx := 0; idx < 4 && !ok; idx++ { // the default sample type's index
		cached, ok = ts.flames.Get(fmt.Sprintf("%d/%d/compact", id, idx))
	}
	if !ok {
		t.Fatal("the flame graph is not cached")
	}
	kept, err := cached.form("gzip")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, first.Body.Bytes()) {
		t.Error("the answer is not the kept gzip form")
	}
	second := ts.do(t, "GET", path, "", "Accept-Encoding", "gzip")
	if !bytes.Equal(second.Body.Bytes(), first.Body.Bytes()) {
		t.Error("the second answer was compressed again, differently")
	}
	if cl := second.Header().Get("Content-Length"); cl != fmt.Sprint(second.Body.Len()) {
		t.Errorf("Content-Length %q for %d bytes", cl, second.Body.Len())
	}
	if got := decode(t, "gzip", second.Body.Bytes()); !bytes.Equal(got, plain.Body.Bytes()) {
		t.Error("the kept form does not decode to the answer")
	}
	z := ts.do(t, "GET", path, "", "Accept-Encoding", "gzip, deflate, br, zstd")
	if z.Header().Get("Content-Encoding") != "zstd" || !bytes.Equal(decode(t, "zstd", z.Body.Bytes()), plain.Body.Bytes()) {
		t.Errorf("zstd answer: Content-Encoding %q", z.Header().Get("Content-Encoding"))
	}
}

// TestCompressNotForEventStreams: a live run's event stream is never
// compressed, whatever the client accepts, and every event reaches the
// client when it is sent, not when a buffer fills.
func TestCompressNotForEventStreams(t *testing.T) {
	ts := newTestServer(t, nil)
	hs := httptest.NewServer(ts)
	defer hs.Close()
	// A running run the queue does not execute: only the events below
	// are published for it.
	started := time.Now()
	run := &store.Run{Workload: "producer", Status: rundoc.StatusRunning, Spec: `{"workload":"producer"}`, StartedAt: &started}
	if err := ts.st.CreateRuns(context.Background(), []*store.Run{run}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, accept := range []string{"text/event-stream", "*/*"} {
		t.Run(accept, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/runs/%d/events", hs.URL, run.ID), nil)
			req.Header.Set("Accept", accept)
			req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Fatalf("event stream with Content-Encoding %q", ce)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q", ct)
			}
			events := make(chan string)
			go func() {
				defer close(events)
				sc := bufio.NewScanner(resp.Body)
				var ev []string
				for sc.Scan() {
					if sc.Text() == "" {
						events <- strings.Join(ev, "\n")
						ev = nil
						continue
					}
					ev = append(ev, sc.Text())
				}
			}()
			next := func(want string) {
				t.Helper()
				select {
				case ev, ok := <-events:
					if !ok || !strings.Contains(ev, want) {
						t.Fatalf("event %q (stream open: %v), want one holding %q", ev, ok, want)
					}
				case <-ctx.Done():
					t.Fatalf("no event holding %q: the stream is buffered", want)
				}
			}
			next("event: status")
			// Each event is small (far under compressMinSize) and is read
			// before the next is sent: it only arrives if it was flushed.
			for i := range 3 {
				text := fmt.Sprintf("line %d\n", i)
				ts.hub().Publish(run.ID, lifecycle.Event{Name: "output", Data: map[string]string{"text": text, "kind": "output"}})
				next(fmt.Sprintf(`"text":"line %d\n"`, i))
			}
		})
	}
	ts.hub().Publish(run.ID, lifecycle.Event{Name: "done", Data: map[string]string{"status": "succeeded"}})
}

func TestNegotiate(t *testing.T) {
	for _, c := range []struct{ header, want string }{
		{"", ""},
		{"identity", ""},
		{"gzip", "gzip"},
		{"GZIP", "gzip"},
		{"zstd", "zstd"},
		{"gzip, deflate, br, zstd", "zstd"},
		{"gzip;q=1.0, zstd;q=0.5", "gzip"},
		{"gzip;q=0.5, zstd;q=0.5", "zstd"},
		{"zstd;q=0, gzip", "gzip"},
		{"gzip;q=0", ""},
		{"*", "zstd"},
		{"*;q=0.2, gzip", "gzip"},
		{"*, zstd;q=0", "gzip"},
		{"gzip;q=abc", ""},
		{"gzip;q=2", ""},
		{" gzip ; q = 0.8 ", "gzip"},
		{",,;", ""},
	} {
		if got := negotiate(c.header); got != c.want {
			t.Errorf("negotiate(%q) = %q, want %q", c.header, got, c.want)
		}
	}
}

// FuzzNegotiate: any header gives a known encoding, one the header
// names (or allows through "*").
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"gzip, deflate, br, zstd", "gzip;q=0.5,zstd;q=0.5", "*;q=0", "zstd;q=1e400", ";;;,q=", "gzip;q=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got := negotiate(h)
		switch got {
		case "":
		case "gzip", "zstd":
			if !strings.Contains(strings.ToLower(h), got) && !strings.Contains(h, "*") {
				t.Errorf("negotiate(%q) = %q, which the header does not name", h, got)
			}
		default:
			t.Errorf("negotiate(%q) = %q", h, got)
		}
	})
}
