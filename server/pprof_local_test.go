package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// TestPprofSourceViewsReadNoFiles: pprof's Source and Disassemble views
// of any profile (a run's own, not only an upload) and of a diff answer a
// page saying they need the program's source and binary, with the
// commands to run pprof there; the server never opens the source file or
// binary the profile names (the file's text never shows), and the rest of
// pprof's UI still works.
func TestPprofSourceViewsReadNoFiles(t *testing.T) {
	ts := newTestServer(t, nil)
	dir := t.TempDir()
	const marker = "KBENCH-SECRET-MARKER"
	src := filepath.Join(dir, "main.go")
	bin := filepath.Join(dir, "prog")
	var text strings.Builder
	for i := range 40 {
		fmt.Fprintf(&text, "func line%d() {} // %s\n", i, marker)
	}
	for _, f := range []string{src, bin} {
		if err := os.WriteFile(f, []byte(text.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A profile as a run of this host would record it: its function's
	// file and its mapping's binary are real paths of this machine.
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, File: bin, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	fn := &profile.Function{ID: 1, Name: "main.work", SystemName: "main.work", Filename: src, StartLine: 1}
	loc := &profile.Location{ID: 1, Mapping: m, Address: 0x401000, Line: []profile.Line{{Function: fn, Line: 3}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000,
		Mapping: []*profile.Mapping{m}, Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{5, 50_000_000}}},
	}
	var gz bytes.Buffer
	if err := p.Write(&gz); err != nil {
		t.Fatal(err)
	}
	runID := ts.importedRunID(t)
	added, err := ts.st.AddProfiles(context.Background(), runID, []store.Profile{
		{Role: rundoc.RoleClient, Kind: rundoc.KindCPU, Data: gz.Bytes(), Samples: 1}, // not uploaded: a run's own
	})
	if err != nil || len(added) != 1 {
		t.Fatalf("add profile: %v", err)
	}
	id := added[0].ID
	other := ts.importRun(t, "other", foldedGather)

	for _, c := range []struct {
		path string
		want []string
	}{
		{fmt.Sprintf("/profiles/%d/pprof/source?f=main.work", id), []string{"source files", "-list=main.work",
			fmt.Sprintf("/api/profiles/%d/download", id), fmt.Sprintf("run%d-client-cpu.pb.gz", runID), `-source_path=&#34;$PWD&#34;`}},
		{fmt.Sprintf("/profiles/%d/pprof/disasm?f=main.work", id), []string{"binary", "-disasm=main.work", "PATH/TO/BINARY"}},
		{fmt.Sprintf("/diff/%d/%d/pprof/source?f=main", other, id), []string{"-diff_base=", fmt.Sprintf("/api/profiles/%d/download", other)}},
		{fmt.Sprintf("/diff/%d/%d/pprof/disasm", other, id), []string{"-diff_base=", "-disasm=FUNCTION_REGEXP"}},
		{fmt.Sprintf("/profiles/%d/pprof/source?f=%s", other, "x%27%3Brm"), []string{`-list=&#39;x&#39;\&#39;&#39;;rm&#39;`}}, // an upload, quoted for the shell
	} {
		rec := ts.do(t, "GET", c.path, "")
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d %.300s, want the page", c.path, rec.Code, body)
			continue
		}
		if strings.Contains(body, marker) {
			t.Errorf("GET %s served the file the profile names", c.path)
		}
		for _, w := range append(c.want, "go tool pprof", "not on this server", "kbench never opens a file a profile names") {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", c.path, w)
			}
		}
	}
	// The other views work, and read nothing either.
	for _, path := range []string{fmt.Sprintf("/profiles/%d/pprof/top", id), fmt.Sprintf("/profiles/%d/pprof/peek?f=main", id)} {
		rec := ts.do(t, "GET", path, "")
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "main.work") || strings.Contains(rec.Body.String(), marker) {
			t.Errorf("GET %s = %d, want pprof's view of main.work without the file", path, rec.Code)
		}
	}
}

// TestPprofLocalPageBehindProxy: behind a trusted proxy that terminates
// TLS, the page's download commands name https, as the proxy's clients
// must use; an untrusted peer's X-Forwarded-Proto changes nothing.
func TestPprofLocalPageBehindProxy(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.TrustedProxies = []string{"10.1.0.0/16"} })
	id := ts.importRun(t, "one", foldedGather)
	for _, tt := range []struct {
		remote, want string
	}{
		{"10.1.2.3:5000", "https://kbench.example/api/profiles/"},
		{"198.51.100.1:5000", "http://kbench.example/api/profiles/"},
	} {
		req := httptest.NewRequest("GET", fmt.Sprintf("/profiles/%d/pprof/source?f=main", id), nil)
		req.Host = "kbench.example"
		req.RemoteAddr = tt.remote
		req.Header.Set("X-Forwarded-Proto", "https")
		rec := httptest.NewRecorder()
		ts.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("from %s: %d, want a page naming %s", tt.remote, rec.Code, tt.want)
		}
	}
}
