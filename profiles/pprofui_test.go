package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/pprof/profile"
)

// pprofTestHot and pprofTestWarm exist so that the test profile points at
// real source lines, which the source view then shows. They are never
// called; the profile only names them.
var _ = pprofTestWarm

func pprofTestHot(n int) int {
	s := 0
	for i := range n {
		s += i * i // pprofTestHotLine
	}
	return s
}

func pprofTestWarm(n int) int {
	return pprofTestHot(n) + 1 // pprofTestWarmLine
}

// pprofTestLine returns this file's path and the line holding marker.
func pprofTestLine(t testing.TB, marker string) (string, int64) {
	t.Helper()
	file, err := filepath.Abs("pprofui_test.go") // tests run in the package directory
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "// "+marker) && !strings.Contains(line, "marker") {
			return file, int64(i + 1)
		}
	}
	t.Fatalf("marker %q not found in %s", marker, file)
	return "", 0
}

// pprofTestProfile builds a small CPU profile:
// main.main → pprofTestWarm → pprofTestHot (hot samples), main.main →
// pprofTestWarm, and main.main → main.pprofTestCold. Each call returns a
// fresh profile (the UI owns what load returns).
func pprofTestProfile(t testing.TB, hot, cold int64) *profile.Profile {
	t.Helper()
	file, hotLine := pprofTestLine(t, "pprofTestHotLine")
	_, warmLine := pprofTestLine(t, "pprofTestWarmLine")
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x800000, File: "/nonexistent/kbench-pprofui-test", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	fns := []*profile.Function{
		{ID: 1, Name: "main.main", SystemName: "main.main", Filename: "/nonexistent/main.go", StartLine: 1},
		{ID: 2, Name: "github.com/kbench/kbench/profiles.pprofTestWarm", SystemName: "github.com/kbench/kbench/profiles.pprofTestWarm", Filename: file, StartLine: warmLine - 1},
		{ID: 3, Name: "github.com/kbench/kbench/profiles.pprofTestHot", SystemName: "github.com/kbench/kbench/profiles.pprofTestHot", Filename: file, StartLine: hotLine - 3},
		{ID: 4, Name: "main.pprofTestCold", SystemName: "main.pprofTestCold", Filename: "/nonexistent/main.go", StartLine: 20},
	}
	locs := []*profile.Location{
		{ID: 1, Mapping: m, Address: 0x401000, Line: []profile.Line{{Function: fns[0], Line: 5}}},
		{ID: 2, Mapping: m, Address: 0x402000, Line: []profile.Line{{Function: fns[1], Line: warmLine}}},
		{ID: 3, Mapping: m, Address: 0x403000, Line: []profile.Line{{Function: fns[2], Line: hotLine}}},
		{ID: 4, Mapping: m, Address: 0x404000, Line: []profile.Line{{Function: fns[3], Line: 21}}},
	}
	const period = 10_000_000
	sample := func(n int64, stack ...*profile.Location) *profile.Sample {
		return &profile.Sample{Location: stack, Value: []int64{n, n * period}}
	}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        period,
		DurationNanos: 2e9,
		TimeNanos:     1_700_000_000_000_000_000,
		Mapping:       []*profile.Mapping{m},
		Function:      fns,
		Location:      locs,
		Sample: []*profile.Sample{
			sample(hot, locs[2], locs[1], locs[0]),
			sample(20, locs[1], locs[0]),
			sample(cold, locs[3], locs[0]),
		},
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

// pprofTestLoad returns a load function that counts its calls.
func pprofTestLoad(t testing.TB, calls *atomic.Int32) func() (*profile.Profile, error) {
	return func() (*profile.Profile, error) {
		calls.Add(1)
		return pprofTestProfile(t, 70, 10), nil
	}
}

func pprofTestGet(t testing.TB, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

func TestUIServesPprofViews(t *testing.T) {
	u := NewUI(4, t.Logf)
	var calls atomic.Int32
	h, err := u.Handler("profile/1", pprofTestLoad(t, &calls))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/profiles/1/pprof", http.StripPrefix("/profiles/1/pprof", h))
	mux.Handle("/profiles/1/pprof/", http.StripPrefix("/profiles/1/pprof", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	_, haveDot := exec.LookPath("dot")
	graphStatus := http.StatusNotImplemented
	if haveDot == nil {
		graphStatus = http.StatusOK
	}

	tests := []struct {
		path     string
		status   int
		location string   // resolved against the request URL
		want     []string // substrings of the body
	}{
		{path: "/profiles/1/pprof", status: http.StatusMovedPermanently, location: "/profiles/1/pprof/"},
		{path: "/profiles/1/pprof?si=cpu", status: http.StatusMovedPermanently, location: "/profiles/1/pprof/?si=cpu"},
		{path: "/profiles/1/pprof/", status: http.StatusMovedPermanently, location: "/profiles/1/pprof/flamegraph"},
		{path: "/profiles/1/pprof/?si=samples", status: http.StatusMovedPermanently, location: "/profiles/1/pprof/flamegraph?si=samples"},
		{path: "/profiles/1/pprof/flamegraph", status: http.StatusOK, want: []string{"stackViewer(", "pprofTestHot", "pprofTestCold", `href="./top"`}},
		{path: "/profiles/1/pprof/top", status: http.StatusOK, want: []string{"makeTopTable", "profiles.pprofTestHot", "main.pprofTestCold"}},
		{path: "/profiles/1/pprof/top?si=samples", status: http.StatusOK, want: []string{"profiles.pprofTestHot"}},
		{path: "/profiles/1/pprof/peek?f=pprofTestWarm", status: http.StatusOK, want: []string{"pprofTestWarm", "pprofTestHot", "main.main"}},
		// The views that would read the files a profile names (here this
		// test's own source, and the test binary) are not served.
		{path: "/profiles/1/pprof/source?f=pprofTestHot", status: http.StatusNotFound},
		{path: "/profiles/1/pprof/disasm?f=pprofTestHot", status: http.StatusNotFound},
		{path: "/profiles/1/pprof/top?f=%28", status: http.StatusBadRequest, want: []string{"regexp"}},
		{path: "/profiles/1/pprof/graph", status: graphStatus},
		{path: "/profiles/1/pprof/no-such-view", status: http.StatusNotFound},
	}
	for _, tt := range tests {
		resp, err := client.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("GET %s: got status %d, want %d; body %.300s", tt.path, resp.StatusCode, tt.status, body)
			continue
		}
		if tt.location != "" {
			loc, err := resp.Location()
			if err != nil {
				t.Errorf("GET %s: %v", tt.path, err)
			} else if got := loc.RequestURI(); got != tt.location {
				t.Errorf("GET %s: got redirect to %s, want %s (Location %q)", tt.path, got, tt.location, resp.Header.Get("Location"))
			}
		}
		for _, w := range tt.want {
			if !bytes.Contains(body, []byte(w)) {
				t.Errorf("GET %s: body lacks %q", tt.path, w)
			}
		}
		if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			// Pages are self-contained (inline script and style, no
			// /ui/ assets) and every link is relative to the mount
			// point.
			for _, bad := range []string{`src="`, `href="/`, `src='`, `href='/`} {
				if bytes.Contains(body, []byte(bad)) {
					t.Errorf("GET %s: body contains %s: an asset or absolute link escapes the mount point", tt.path, bad)
				}
			}
		}
	}

	// Download is the profile itself, gzipped protobuf.
	resp, err := client.Get(srv.URL + "/profiles/1/pprof/download")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET download: got status %d, want 200", resp.StatusCode)
	}
	if got, want := resp.Header.Get("Content-Type"), "application/vnd.google.protobuf+gzip"; got != want {
		t.Errorf("GET download: got Content-Type %q, want %q", got, want)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatalf("GET download: parse: %v", err)
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
	}
	if total != 100 {
		t.Errorf("downloaded profile: got %d samples in total, want 100", total)
	}

	if got := calls.Load(); got != 1 {
		t.Errorf("load called %d times, want 1", got)
	}
	if got := u.Len(); got != 1 {
		t.Errorf("Len: got %d, want 1", got)
	}
}

// TestUIConcurrentPprof builds three UIs from 16 goroutines at once and
// serves them concurrently; run it with -race.
func TestUIConcurrentPprof(t *testing.T) {
	u := NewUI(0, t.Logf)
	keys := []string{"profile/1", "profile/2", "diff/1/2/work"}
	calls := make([]atomic.Int32, len(keys))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range 3 {
				k := (g + i) % len(keys)
				h, err := u.Handler(keys[k], pprofTestLoad(t, &calls[k]))
				if err != nil {
					t.Error(err)
					return
				}
				for _, path := range []string{"/top", "/flamegraph", "/download"} {
					w := pprofTestGet(t, h, path)
					if w.Code != http.StatusOK {
						t.Errorf("%s %s: got status %d, want 200", keys[k], path, w.Code)
					}
					if path == "/top" && !strings.Contains(w.Body.String(), "pprofTestHot") {
						t.Errorf("%s %s: body lacks pprofTestHot", keys[k], path)
					}
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	for k := range keys {
		if got := calls[k].Load(); got != 1 {
			t.Errorf("%s: load called %d times, want 1", keys[k], got)
		}
	}
	if got := u.Len(); got != len(keys) {
		t.Errorf("Len: got %d, want %d", got, len(keys))
	}
}

func TestUIEvictsLeastRecentlyUsedPprof(t *testing.T) {
	u := NewUI(2, t.Logf)
	var a, b, c atomic.Int32
	get := func(key string, calls *atomic.Int32) {
		t.Helper()
		h, err := u.Handler(key, pprofTestLoad(t, calls))
		if err != nil {
			t.Fatal(err)
		}
		if w := pprofTestGet(t, h, "/top"); w.Code != http.StatusOK {
			t.Fatalf("%s /top: got status %d, want 200", key, w.Code)
		}
	}
	get("a", &a)
	get("b", &b)
	get("a", &a) // a is now more recent than b
	get("c", &c) // evicts b
	if got := u.Len(); got != 2 {
		t.Errorf("Len after three keys with capacity 2: got %d, want 2", got)
	}
	get("a", &a)
	if got := a.Load(); got != 1 {
		t.Errorf("a (recently used) loaded %d times, want 1", got)
	}
	get("b", &b) // rebuilt; evicts c
	if got := b.Load(); got != 2 {
		t.Errorf("b (evicted) loaded %d times, want 2", got)
	}
	get("c", &c)
	if got := c.Load(); got != 2 {
		t.Errorf("c (evicted) loaded %d times, want 2", got)
	}
	if got := u.Len(); got != 2 {
		t.Errorf("Len: got %d, want 2", got)
	}
}

// TestUIBoundedByBytesPprof: the cache also holds at most maxBytes of
// handler sets by estimate, evicting the least recently used, and keeps
// its count of bytes right through both kinds of eviction.
func TestUIBoundedByBytesPprof(t *testing.T) {
	one := pprofUICost(pprofTestProfile(t, 70, 10))
	if one <= 64<<10 {
		t.Fatalf("cost of a set %d: no more than the fixed part", one)
	}
	u := NewUI(16, t.Logf)
	if u.maxBytes != UIMaxBytes {
		t.Errorf("default byte bound %d, want UIMaxBytes", u.maxBytes)
	}
	u.maxBytes = 2*one + one/2 // room for two sets
	calls := map[string]*atomic.Int32{}
	get := func(key string) {
		t.Helper()
		if calls[key] == nil {
			calls[key] = new(atomic.Int32)
		}
		h, err := u.Handler(key, pprofTestLoad(t, calls[key]))
		if err != nil {
			t.Fatal(err)
		}
		if w := pprofTestGet(t, h, "/top"); w.Code != http.StatusOK {
			t.Fatalf("%s /top: got status %d, want 200", key, w.Code)
		}
	}
	get("a")
	get("b")
	get("a") // b is now the least recently used
	get("c") // evicts b
	if u.Len() != 2 || u.Bytes() != 2*one {
		t.Errorf("after three sets with room for two: %d sets, %d bytes; want 2 and %d", u.Len(), u.Bytes(), 2*one)
	}
	get("a")
	get("c")
	if calls["a"].Load() != 1 || calls["c"].Load() != 1 {
		t.Errorf("the two most recent sets were rebuilt: a %d, c %d loads", calls["a"].Load(), calls["c"].Load())
	}
	get("b")
	if calls["b"].Load() != 2 {
		t.Errorf("b (evicted) loaded %d times, want 2", calls["b"].Load())
	}

	// One set above the bound is still kept, until the next one comes.
	u.maxBytes = one / 2
	get("d")
	if u.Len() != 1 || u.Bytes() != one {
		t.Errorf("one set above the bound: %d sets, %d bytes; want 1 and %d", u.Len(), u.Bytes(), one)
	}

	// Evictions by count give their bytes back too.
	u2 := NewUI(2, t.Logf)
	for _, k := range []string{"x", "y", "z"} {
		if _, err := u2.Handler(k, pprofTestLoad(t, new(atomic.Int32))); err != nil {
			t.Fatal(err)
		}
	}
	if u2.Len() != 2 || u2.Bytes() != 2*one {
		t.Errorf("count-bounded cache: %d sets, %d bytes; want 2 and %d", u2.Len(), u2.Bytes(), 2*one)
	}
}

// pprofTestDiff builds a diff the way `go tool pprof -diff_base` does.
func pprofTestDiff(base, target *profile.Profile) (*profile.Profile, error) {
	base = base.Copy()
	base.SetLabel("pprof::base", []string{"true"})
	base.Scale(-1)
	return profile.Merge([]*profile.Profile{target, base})
}

func TestUIDiffPprof(t *testing.T) {
	u := NewUI(4, t.Logf)
	h, err := u.Handler("diff/1/2/work", func() (*profile.Profile, error) {
		// Target: hot 40 (was 70), cold 50 (was 10).
		return pprofTestDiff(pprofTestProfile(t, 70, 10), pprofTestProfile(t, 40, 50))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/top", "/flamegraph", "/peek?f=pprofTestWarm", "/download"} {
		w := pprofTestGet(t, h, path)
		if w.Code != http.StatusOK {
			t.Fatalf("diff %s: got status %d, want 200; body %.300s", path, w.Code, w.Body)
		}
		if path == "/top" {
			for _, want := range []string{"pprofTestHot", "pprofTestCold"} {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("diff %s: body lacks %q", path, want)
				}
			}
		}
	}

	// The diff must not leak into a UI built afterwards: the plain
	// profile's download still holds 100 positive samples.
	h2, err := u.Handler("profile/3", func() (*profile.Profile, error) { return pprofTestProfile(t, 70, 10), nil })
	if err != nil {
		t.Fatal(err)
	}
	w := pprofTestGet(t, h2, "/download")
	p, err := profile.ParseData(w.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
		if s.DiffBaseSample() {
			t.Errorf("plain profile built after a diff has a pprof::base sample")
		}
	}
	if total != 100 {
		t.Errorf("plain profile after a diff: got %d samples, want 100", total)
	}
}

func TestUILoadErrorIsNotCachedPprof(t *testing.T) {
	u := NewUI(4, t.Logf)
	errBoom := errors.New("boom")
	if _, err := u.Handler("profile/9", func() (*profile.Profile, error) { return nil, errBoom }); !errors.Is(err, errBoom) {
		t.Fatalf("got error %v, want one wrapping %v", err, errBoom)
	}
	if _, err := u.Handler("profile/9", func() (*profile.Profile, error) { return nil, nil }); err == nil {
		t.Fatal("load returning (nil, nil): got no error")
	}
	if got := u.Len(); got != 0 {
		t.Errorf("Len after failed loads: got %d, want 0", got)
	}
	var calls atomic.Int32
	h, err := u.Handler("profile/9", pprofTestLoad(t, &calls))
	if err != nil {
		t.Fatalf("after a failed load: %v", err)
	}
	if w := pprofTestGet(t, h, "/top"); w.Code != http.StatusOK {
		t.Errorf("/top: got status %d, want 200", w.Code)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("load called %d times, want 1", got)
	}

	// An invalid profile is the driver's error, also not cached.
	if _, err := u.Handler("profile/10", func() (*profile.Profile, error) {
		p := pprofTestProfile(t, 1, 1)
		p.Sample[0].Value = []int64{1} // wrong number of values
		return p, nil
	}); err == nil {
		t.Error("invalid profile: got no error")
	}
	if got := u.Len(); got != 1 {
		t.Errorf("Len: got %d, want 1", got)
	}
}

// TestUIConfigDirPprof checks, in a child process without $HOME and
// $XDG_CONFIG_HOME, that NewUI provides a configuration directory and that
// saving a pprof configuration lands there.
func TestUIConfigDirPprof(t *testing.T) {
	if os.Getenv("KBENCH_PPROFUI_CHILD") == "1" {
		pprofTestConfigDirChild(t)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUIConfigDirPprof$", "-test.v")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "KBENCH_PPROFUI_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestUIConfigDirPprof")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func pprofTestConfigDirChild(t *testing.T) {
	if os.Getenv("HOME") != "" || os.Getenv("XDG_CONFIG_HOME") != "" {
		t.Fatal("child started with HOME or XDG_CONFIG_HOME")
	}
	u := NewUI(1, t.Logf)
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		t.Fatal("NewUI did not set XDG_CONFIG_HOME")
	}
	defer os.RemoveAll(dir)
	var calls atomic.Int32
	h, err := u.Handler("profile/1", pprofTestLoad(t, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if w := pprofTestGet(t, h, "/top"); w.Code != http.StatusOK {
		t.Fatalf("/top: got status %d, want 200", w.Code)
	}
	q := url.Values{"config": {"mine"}, "si": {"samples"}}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/saveconfig?"+q.Encode(), nil))
	if w.Code != http.StatusOK {
		t.Fatalf("/saveconfig: got status %d, want 200: %s", w.Code, w.Body)
	}
	data, err := os.ReadFile(filepath.Join(dir, "pprof", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"mine"`)) {
		t.Errorf("settings.json lacks the saved config: %s", data)
	}
	// The saved configuration shows in the menu of every page.
	if w := pprofTestGet(t, h, "/top"); !strings.Contains(w.Body.String(), "mine") {
		t.Errorf("/top does not list the saved config")
	}
}

// BenchmarkUIBuildPprof measures building one handler set and the heap it
// retains, for the profile named by $KBENCH_PPROF_PROFILE (for example
// pprof-large-cpu.pb.gz from the shared public data).
func BenchmarkUIBuildPprof(b *testing.B) {
	name := os.Getenv("KBENCH_PPROF_PROFILE")
	if name == "" {
		b.Skip("set KBENCH_PPROF_PROFILE to a profile file")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	u := NewUI(b.N+1, b.Logf)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := u.Handler(fmt.Sprint(i), func() (*profile.Profile, error) { return profile.ParseData(data) }); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc-before)/float64(b.N), "heap-B/set")
	runtime.KeepAlive(u)
}
