package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/kbenchbin"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/internal/testutil/silentbroker"
	"github.com/kbench/kbench/internal/testutil/storetest"
	"github.com/kbench/kbench/runner"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, storetest.MigratePostgres))
}

// skipExecutingUnderShort skips t under -short: it executes runs as
// processes, which the fast tier never starts.
func skipExecutingUnderShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("executes runs as processes; skipped under -short")
	}
}

// kbenchBin returns the real kbench binary (kbenchbin: built once per
// checkout, without the race detector), when the first test that
// executes runs asks for it: runs execute as its child processes, exactly
// as in production. Under -short it skips t: the fast tier starts no
// kbench process, and its handler tests use fakeRuns.
func kbenchBin(t testing.TB) string {
	t.Helper()
	skipExecutingUnderShort(t)
	return kbenchbin.Path(t)
}

type testServer struct {
	*Server
	// local is the server's run lifecycle, for tests that execute runs,
	// act at a point of a run's life or look at its queue
	// (newRunningTestServer); nil with fake.
	local *lifecycle.Manager
	// fake is the server's stand-in Runs (newTestServer); nil with local.
	fake *fakeRuns
	dir  string
	logs *syncBuffer
	st   *store.Store
	// dsn is the database st opened: an SQLite file or a PostgreSQL URL.
	dsn string
}

// Close stops the server, then its lifecycle, as kbench serve stops: no
// run is left running, and the lifecycle's connections to the store are
// closed. The test's cleanup closes them again, which does nothing.
func (ts *testServer) Close() {
	ts.Server.Close()
	if ts.local != nil {
		ts.local.Close()
	}
}

// hub is where a test publishes a run's live events: the lifecycle's hub,
// or the fake's.
func (ts *testServer) hub() *lifecycle.Hub {
	if ts.local != nil {
		return ts.local.Hub()
	}
	return ts.fake.hub
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newTestServer starts a server on a fresh store with a fakeRuns, which
// executes nothing: for tests of handlers that need no run to execute.
// The store is an SQLite file in its data directory, or a fresh
// PostgreSQL database (pgtest.URL) when KBENCH_TEST_BACKEND=postgres,
// which runs the server's tests and benchmarks on PostgreSQL.
func newTestServer(t testing.TB, mod func(*Config)) *testServer {
	t.Helper()
	return newTestServerOn(t, testDSN(t), mod)
}

// newRunningTestServer is newTestServer with the real run lifecycle
// (lifecycle.Manager) executing its runs as kbench processes, as kbench
// serve does; it skips under -short (kbenchBin), unless the test's Config
// executes nothing (NoLocalWorker: the lifecycle only queues and cancels).
func newRunningTestServer(t testing.TB, mod func(*Config)) *testServer {
	t.Helper()
	return newRunningTestServerOn(t, testDSN(t), mod)
}

// testDSN is the database newTestServer opens: "" for an SQLite file in
// the data directory, or a fresh PostgreSQL database with
// KBENCH_TEST_BACKEND=postgres.
func testDSN(t testing.TB) string {
	if os.Getenv("KBENCH_TEST_BACKEND") == "postgres" {
		return pgtest.URL(t)
	}
	return ""
}

// newTestServerOn is newTestServer on the database dsn names ("": an
// SQLite file in the data directory).
func newTestServerOn(t testing.TB, dsn string, mod func(*Config)) *testServer {
	t.Helper()
	return newServerOn(t, dsn, mod, false)
}

// newRunningTestServerOn is newRunningTestServer on the database dsn
// names.
func newRunningTestServerOn(t testing.TB, dsn string, mod func(*Config)) *testServer {
	t.Helper()
	return newServerOn(t, dsn, mod, true)
}

// newServerOn builds a test server on dsn: with the real lifecycle when
// running, else with a fakeRuns.
func newServerOn(t testing.TB, dsn string, mod func(*Config), running bool) *testServer {
	t.Helper()
	dir := t.TempDir()
	if dsn == "" {
		dsn = filepath.Join(dir, "kbench.db")
	}
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cfg := Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	if mod != nil {
		mod(&cfg)
	}
	if running && !cfg.NoLocalWorker {
		skipExecutingUnderShort(t)
		if len(cfg.KbenchCommand) == 0 {
			cfg.KbenchCommand = []string{kbenchBin(t)}
		}
	}
	ts := &testServer{dir: dir, logs: logs, st: st, dsn: dsn}
	var runs Runs
	if running {
		ts.local = newLifecycle(t, cfg, st)
		runs = ts.local
	} else {
		ts.fake = newFakeRuns()
		runs = ts.fake
	}
	s, err := New(cfg, testDeps(st, runs))
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = s
	if ts.local != nil {
		if err := ts.local.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ts.Close()
		st.Close()
	})
	return ts
}

// newLifecycle builds the run lifecycle of cfg on st as the serve
// command does (its --allow-target recheck included), not started: the
// caller starts it after New and closes it after the server's Close.
func newLifecycle(t testing.TB, cfg Config, st *store.Store) *lifecycle.Manager {
	t.Helper()
	recheck := func(spec string) error { return targetInput(cfg.Targets.AllowsStored(spec, runner.Validate)) }
	return lifecycle.NewManager(st, lifecycle.Options{Command: cfg.KbenchCommand, DataDir: cfg.DataDir, Concurrency: cfg.Concurrency,
		RunTimeout: cfg.RunTimeout, Recheck: recheck, NoWorker: cfg.NoLocalWorker, Clusters: cfg.Clusters, Tools: cfg.Tools,
		AllowToolClassProps: cfg.AllowToolClassProps, Logger: cfg.Logger})
}

// testDeps are a server's Deps on st and runs, with the runner's checks
// as the serve command gives them.
func testDeps(st *store.Store, runs Runs) Deps {
	return Deps{Store: st, Runs: runs, Validate: runner.Validate, ImportMetrics: runner.ImportMetrics, E2EApplies: runner.E2ERateApplies}
}

func (ts *testServer) do(t *testing.T, method, target string, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" && strings.HasPrefix(body, "{") {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	return rec
}

// createRun posts a run and returns its id.
func (ts *testServer) createRun(t *testing.T, body string) uint {
	t.Helper()
	rec := ts.do(t, "POST", "/api/runs", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/runs = %d %s", rec.Code, rec.Body)
	}
	var resp struct{ ID uint }
	json.Unmarshal(rec.Body.Bytes(), &resp)
	if resp.ID == 0 {
		t.Fatalf("no id in %s", rec.Body)
	}
	return resp.ID
}

// waitFinal polls a run until it reaches a final status.
func (ts *testServer) waitFinal(t *testing.T, id uint) apiRun {
	t.Helper()
	ts.mustExecute(t)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), "")
		var r apiRun
		json.Unmarshal(rec.Body.Bytes(), &r)
		switch r.Status {
		case rundoc.StatusSucceeded, rundoc.StatusFailed, rundoc.StatusCanceled, rundoc.StatusInterrupted:
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %d did not finish", id)
	return apiRun{}
}

// mustExecute fails a test that waits for a run to execute on a server
// that executes none (newTestServer's fakeRuns).
func (ts *testServer) mustExecute(t *testing.T) {
	t.Helper()
	if ts.local == nil {
		t.Fatal("this test executes runs: it needs newRunningTestServer")
	}
}

// waitEvent reads a run's live event stream (GET /api/runs/:id/events)
// until an event called name arrives.
func (ts *testServer) waitEvent(t *testing.T, id uint, name string) {
	t.Helper()
	hs := httptest.NewServer(ts)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/runs/%d/events", hs.URL, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var seen []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev, ok := strings.CutPrefix(sc.Text(), "event: ")
		if !ok {
			continue
		}
		if ev == name {
			return
		}
		if seen = append(seen, ev); ev == "done" {
			break
		}
	}
	t.Fatalf("run %d: no %q event (saw %v; stream error: %v)", id, name, seen, sc.Err())
}

const smallProducer = `{"workload":"producer","label":"trunk","params":{"num-records":20000,"record-size":256,"throughput":-1,"profile":["cpu","heap"]}}`

func TestRunLifecycleThroughAPI(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	id := ts.createRun(t, smallProducer)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusSucceeded || !r.Complete {
		t.Fatalf("status %s complete %v error %q", r.Status, r.Complete, r.Error)
	}
	names := map[string]bool{}
	for _, m := range r.Metrics {
		names[m.Name] = true
		if m.Unit == "" {
			t.Errorf("metric %s has no unit", m.Name)
		}
	}
	for _, want := range []string{"record-send-rate", "record-latency-p99", "process-cpu-avg", "syscw"} {
		if !names[want] {
			t.Errorf("metric %s missing", want)
		}
	}
	if r.RecordsPerSec == nil || *r.RecordsPerSec <= 0 {
		t.Errorf("records_per_sec = %v, want the run's rate", r.RecordsPerSec)
	}
	if !regexp.MustCompile(`20000 records sent, `).MatchString(r.Output) {
		t.Errorf("output lacks Kafka's summary: %q", r.Output)
	}
	if len(r.Profiles) != 3 {
		t.Fatalf("profiles = %+v, want client cpu, client heap and broker cpu", r.Profiles)
	}
	for _, p := range r.Profiles {
		rec := ts.do(t, "GET", p.Download, "")
		if rec.Code != 200 {
			t.Fatalf("download %s = %d", p.Download, rec.Code)
		}
		if _, err := profile.Parse(rec.Body); err != nil {
			t.Errorf("profile %s/%s does not parse: %v", p.Role, p.Kind, err)
		}
		if int64(rec.Body.Len()) != 0 && p.Bytes == 0 {
			t.Errorf("profile size not recorded")
		}
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/profiles", id), "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"kind":"cpu"`) {
		t.Errorf("GET profiles = %d %s", rec.Code, rec.Body)
	}
	page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "")
	if page.Code != 200 || !strings.Contains(page.Body.String(), "record-send-rate") {
		t.Errorf("run page = %d, lacks metrics", page.Code)
	}
	list := ts.do(t, "GET", "/api/runs?label=trunk", "")
	if !strings.Contains(list.Body.String(), fmt.Sprintf(`"id":%d`, id)) {
		t.Errorf("list by label misses the run: %s", list.Body)
	}
}

// TestRoutesConcurrently fetches the route table from many goroutines at
// once; with -race it checks the handlers share no unsynchronized state.
func TestRoutesConcurrently(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	id := ts.createRun(t, `{"workload":"producer","params":{"num-records":2000,"profile":["cpu"]}}`)
	r := ts.waitFinal(t, id)
	routes := []struct {
		path string
		code int
	}{
		{"/", 200}, {"/runs/new", 200}, {fmt.Sprintf("/runs/%d", id), 200}, {"/runs/999999", 404},
		{"/api/runs", 200}, {fmt.Sprintf("/api/runs/%d", id), 200}, {"/api/runs/999999", 404},
		{fmt.Sprintf("/api/runs/%d/profiles", id), 200}, {r.Profiles[0].Download, 200},
		{fmt.Sprintf("/api/runs/%d/events", id), 200}, {"/static/app.css", 200}, {"/nope", 404}, {"/healthz", 200},
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		for _, rt := range routes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := httptest.NewRequest("GET", rt.path, nil)
				rec := httptest.NewRecorder()
				ts.ServeHTTP(rec, req)
				if rec.Code != rt.code {
					t.Errorf("GET %s = %d, want %d", rt.path, rec.Code, rt.code)
				}
			}()
		}
	}
	wg.Wait()
}

func TestAPIBadInput(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.MaxBodyBytes = 4096 })
	tests := []struct {
		name  string
		body  string
		code  int
		field string
	}{
		{"not json", `{"workload":`, 400, "body"},
		{"unknown field", `{"workload":"producer","colour":"red"}`, 400, "colour"},
		{"wrong type", `{"workload":"producer","repetitions":"three"}`, 400, "repetitions"},
		{"bad workload", `{"workload":"sideways"}`, 400, "workload"},
		{"bad param", `{"workload":"producer","params":{"num-records":-5}}`, 400, "num-records"},
		{"unknown param", `{"workload":"producer","params":{"turbo":true}}`, 400, "turbo"},
		{"bad property", `{"workload":"producer","params":{"producer-props":{"acks":"most"}}}`, 400, "producer-props"},
		{"server file", `{"workload":"producer","params":{"payload-file":"/etc/passwd"}}`, 400, "payload-file"},
		{"too many repetitions", `{"workload":"producer","repetitions":500}`, 400, "repetitions"},
		{"target not allowed", `{"workload":"producer","target":{"bootstrap_server":"10.1.2.3:9092"}}`, 400, "bootstrap-server"},
		{"target in params not allowed", `{"workload":"consumer","params":{"bootstrap-server":"evil:9092"}}`, 400, "bootstrap-server"},
		{"sasl without user", `{"workload":"producer","target":{"bootstrap_server":"127.0.0.1:1","security_protocol":"SASL_PLAINTEXT","sasl_mechanism":"PLAIN"}}`, 400, ""},
		{"too large", `{"workload":"producer","label":"` + strings.Repeat("x", 5000) + `"}`, 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tt.body)
			if rec.Code != tt.code {
				t.Fatalf("got %d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			var resp struct{ Error, Field string }
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Error == "" {
				t.Fatalf("body %q is not a JSON error", rec.Body)
			}
			if tt.field != "" && resp.Field != tt.field {
				t.Errorf("field = %q, want %q (%s)", resp.Field, tt.field, resp.Error)
			}
		})
	}
	if n, _ := ts.st.CountRuns(context.Background()); n != 0 {
		t.Errorf("bad requests created %d runs", n)
	}
	for _, p := range []string{"/api/runs/77", "/api/runs/x", "/api/runs/77/profiles", "/api/profiles/77/download"} {
		if rec := ts.do(t, "GET", p, ""); rec.Code != 404 {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
	if rec := ts.do(t, "POST", "/api/runs/77/cancel", ""); rec.Code != 404 {
		t.Errorf("cancel unknown = %d, want 404", rec.Code)
	}
}

// formPost submits the new-run form as a browser would: with the CSRF
// cookie from a GET and the token in the form.
func (ts *testServer) formPost(t *testing.T, target string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	get := ts.do(t, "GET", "/runs/new", "")
	var token string
	for _, c := range get.Result().Cookies() {
		if c.Name == csrfCookie {
			token = c.Value
		}
	}
	if token == "" {
		t.Fatal("no CSRF cookie on the form page")
	}
	form.Set(csrfField, token)
	return ts.do(t, "POST", target, form.Encode(), "Content-Type", "application/x-www-form-urlencoded",
		"Cookie", csrfCookie+"="+token, "Origin", "http://example.com")
}

func TestFormErrorsKeepValues(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	form := url.Values{"workload": {"producer"}, "label": {"my <branch>"}, "num-records": {"lots"},
		"target": {"embedded"}, "sasl-password": {"pw-should-vanish"}, "record-size": {"777"}}
	rec := ts.formPost(t, "/runs", form)
	if rec.Code != 400 {
		t.Fatalf("got %d, want 400", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{"num-records", `value="lots"`, `value="777"`, "my &lt;branch&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("re-rendered form lacks %q", want)
		}
	}
	if strings.Contains(body, "pw-should-vanish") {
		t.Error("the password was rendered back")
	}
	ok := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "num-records": {"1000"}, "profile": {"none"}, "label": {"form"}})
	if ok.Code != http.StatusSeeOther || !strings.HasPrefix(ok.Header().Get("Location"), "/runs/") {
		t.Fatalf("valid form: %d %s", ok.Code, ok.Header().Get("Location"))
	}
	var id uint
	fmt.Sscanf(ok.Header().Get("Location"), "/runs/%d", &id)
	if r := ts.waitFinal(t, id); r.Status != rundoc.StatusSucceeded || len(r.Profiles) != 0 {
		t.Errorf("form run: status %s, %d profiles (none were ticked)", r.Status, len(r.Profiles))
	}
}

func TestCrossSiteAndCSRF(t *testing.T) {
	ts := newTestServer(t, nil)
	if rec := ts.do(t, "POST", "/runs", "workload=producer", "Content-Type", "application/x-www-form-urlencoded"); rec.Code != 403 {
		t.Errorf("form without CSRF token = %d, want 403", rec.Code)
	}
	if rec := ts.do(t, "POST", "/api/runs", smallProducer, "Origin", "https://evil.example"); rec.Code != 403 {
		t.Errorf("cross-origin API post = %d, want 403", rec.Code)
	}
	if rec := ts.do(t, "POST", "/api/runs", smallProducer, "Sec-Fetch-Site", "cross-site"); rec.Code != 403 {
		t.Errorf("cross-site API post = %d, want 403", rec.Code)
	}
	rec := ts.do(t, "GET", "/", "")
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
}

func TestToken(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	ts := newTestServer(t, func(c *Config) { c.Token = "tok-123" })
	if rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer"}`); rec.Code != 401 {
		t.Errorf("POST without token = %d, want 401", rec.Code)
	}
	if rec := ts.do(t, "GET", "/api/runs", ""); rec.Code != 200 {
		t.Errorf("GET without token = %d, want 200 (reading is open without --private)", rec.Code)
	}
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","params":{"num-records":100,"profile":"none"}}`, "Authorization", "Bearer tok-123")
	if rec.Code != 201 {
		t.Errorf("POST with token = %d %s", rec.Code, rec.Body)
	}
	priv := newTestServer(t, func(c *Config) { c.Token = "tok-123"; c.Private = true })
	if rec := priv.do(t, "GET", "/api/runs", ""); rec.Code != 401 {
		t.Errorf("private GET without token = %d, want 401", rec.Code)
	}
	if rec := priv.do(t, "GET", "/", ""); rec.Code != http.StatusSeeOther {
		t.Errorf("private page without token = %d, want a redirect to /login", rec.Code)
	}
}

func TestCancel(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	slow := `{"workload":"producer","params":{"num-records":1000000,"throughput":2000,"profile":"none"}}`
	running := ts.createRun(t, slow)
	queued := ts.createRun(t, slow)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var r apiRun
		json.Unmarshal(ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", running), "").Body.Bytes(), &r)
		if r.Status == rundoc.StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("first run never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var q apiRun
	json.Unmarshal(ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", queued), "").Body.Bytes(), &q)
	if q.Status != rundoc.StatusQueued || q.QueuePosition != 1 {
		t.Errorf("second run: %s at position %d, want queued at 1", q.Status, q.QueuePosition)
	}
	if rec := ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", queued), ""); rec.Code != 202 {
		t.Fatalf("cancel queued = %d %s", rec.Code, rec.Body)
	}
	if r := ts.waitFinal(t, queued); r.Status != rundoc.StatusCanceled {
		t.Errorf("queued run after cancel: %s", r.Status)
	}
	// Cancel once the run has measured something: its first series point.
	ts.waitEvent(t, running, "interval")
	if rec := ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", running), ""); rec.Code != 202 {
		t.Fatalf("cancel running = %d %s", rec.Code, rec.Body)
	}
	r := ts.waitFinal(t, running)
	if r.Status != rundoc.StatusCanceled {
		t.Fatalf("running run after cancel: %s (%s)", r.Status, r.Error)
	}
	if r.RecordsPerSec == nil {
		t.Errorf("canceled run kept no partial figures")
	}
	if rec := ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", running), ""); rec.Code != 409 {
		t.Errorf("cancel of a finished run = %d, want 409", rec.Code)
	}
}

func TestCrashedChildFails(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	script := filepath.Join(t.TempDir(), "crash.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho 'panic: something broke' >&2\nkill -9 $$\n"), 0o755)
	ts := newRunningTestServer(t, func(c *Config) { c.KbenchCommand = []string{script} })
	id := ts.createRun(t, smallProducer)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusFailed || !strings.Contains(r.Error, "killed") || !strings.Contains(r.Error, "something broke") {
		t.Errorf("status %s error %q, want failed with the signal and the stderr tail", r.Status, r.Error)
	}
	// The server still serves and runs the next one.
	if rec := ts.do(t, "GET", "/", ""); rec.Code != 200 {
		t.Errorf("runs page after a crash = %d", rec.Code)
	}
}

func TestUnreachableTargetFails(t *testing.T) {
	ts := newRunningTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	id := ts.createRun(t, `{"workload":"producer","target":{"bootstrap_server":"127.0.0.1:1"},"params":{"num-records":100}}`)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusFailed || !strings.Contains(r.Error, "cannot reach broker") {
		t.Errorf("status %s error %q, want failed: cannot reach broker", r.Status, r.Error)
	}
}

func TestRepetitionGroup(t *testing.T) {
	ts := newRunningTestServer(t, func(c *Config) {})
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"consumer","label":"branch","repetitions":2,"warmup_runs":1,"params":{"messages":3000,"mode":"assign","profile":"none"}}`)
	if rec.Code != 201 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var resp struct {
		GroupID string `json:"group_id"`
		Runs    []apiRun
	}
	json.Unmarshal(rec.Body.Bytes(), &resp)
	if len(resp.Runs) != 3 || resp.GroupID == "" || !resp.Runs[0].Warmup || resp.Runs[1].GroupIndex != 1 || resp.Runs[2].GroupIndex != 2 {
		t.Fatalf("group = %+v", resp)
	}
	for _, r := range resp.Runs {
		if got := ts.waitFinal(t, r.ID); got.Status != rundoc.StatusSucceeded {
			t.Errorf("run %d: %s %s", r.ID, got.Status, got.Error)
		}
	}
	list := ts.do(t, "GET", "/api/runs?group="+resp.GroupID, "")
	if !strings.Contains(list.Body.String(), `"total":3`) {
		t.Errorf("group filter: %s", list.Body)
	}
}

func TestEventsStream(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	hs := httptest.NewServer(ts)
	defer hs.Close()
	id := ts.createRun(t, `{"workload":"producer","params":{"num-records":300000,"record-size":100,"reporting-interval":200,"profile":"none"}}`)
	resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d/events", hs.URL, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	data, _ := io.ReadAll(resp.Body) // the stream ends after "done"
	body := string(data)
	for _, want := range []string{"event: progress", "event: done", `"status":"succeeded"`, "records sent"} {
		if !strings.Contains(body, want) {
			t.Errorf("event stream lacks %q:\n%.2000s", want, body)
		}
	}
}

// TestRestartRecovery: a server that dies during a run leaves it running
// in the database; the next server marks it interrupted and keeps
// every other run intact.
func TestRestartRecovery(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "kbench.db")
	st, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	runs := []*store.Run{{Label: "done", Workload: "producer", Spec: `{}`}, {Label: "midway", Workload: "producer", Spec: `{}`}}
	if err := st.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	st.StartRun(ctx, runs[0].ID, time.Now())
	st.FinishRun(ctx, runs[0].ID, store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: time.Now(),
		Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: 42, Unit: "records/s"}}})
	st.StartRun(ctx, runs[1].ID, time.Now())
	st.Close() // the "killed" server

	st2, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	cfg := Config{DataDir: dir, KbenchCommand: []string{kbenchBin(t)}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	lc := newLifecycle(t, cfg, st2)
	s, err := New(cfg, testDeps(st2, lc))
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
	got, _ := st2.GetRun(ctx, runs[1].ID)
	if got.Status != rundoc.StatusInterrupted || !strings.Contains(got.Error, "server stopped") {
		t.Errorf("run left running: %s %q, want interrupted with the reason", got.Status, got.Error)
	}
	kept, _ := st2.GetRun(ctx, runs[0].ID)
	if kept.Status != rundoc.StatusSucceeded || len(kept.Metrics) != 1 {
		t.Errorf("finished run changed: %+v", kept)
	}
}

// TestSecretsNeverPersist runs against a SASL broker and then searches the
// database file, the logs, the run directory, the API and the pages for
// the password.
func TestSecretsNeverPersist(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	const password = "Pw-9f8e7d-never-shown"
	b, err := embeddedbroker.Start(embeddedbroker.Options{Users: []embeddedbroker.User{{Mechanism: "SCRAM-SHA-256", Name: "bench", Password: password}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ts := newRunningTestServer(t, func(c *Config) { c.Targets = allowTargets(t, b.Addr()) })
	body := fmt.Sprintf(`{"workload":"producer","label":"sasl","target":{"bootstrap_server":%q,"security_protocol":"SASL_PLAINTEXT","sasl_mechanism":"SCRAM-SHA-256","sasl_username":"bench","sasl_password":%q},"params":{"num-records":2000,"profile":["cpu"]}}`, b.Addr(), password)
	id := ts.createRun(t, body)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusSucceeded {
		t.Fatalf("SASL run: %s %s", r.Status, r.Error)
	}
	// A second run with a JAAS line in the props, and a wrong password.
	jaas := fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="bench" password="%s-wrong";`, password)
	body2 := fmt.Sprintf(`{"workload":"producer","params":{"bootstrap-server":%q,"num-records":100,"producer-props":{"security.protocol":"SASL_PLAINTEXT","sasl.mechanism":"SCRAM-SHA-256","sasl.jaas.config":%q}}}`, b.Addr(), jaas)
	id2 := ts.createRun(t, body2)
	if r2 := ts.waitFinal(t, id2); r2.Status != rundoc.StatusFailed || !strings.Contains(strings.ToLower(r2.Error), "authentication") {
		t.Errorf("wrong password: %s %q, want a failed run saying authentication failed", r2.Status, r2.Error)
	}

	var pages bytes.Buffer
	for _, p := range []string{"/", fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d", id2), "/api/runs",
		fmt.Sprintf("/api/runs/%d", id), fmt.Sprintf("/api/runs/%d", id2)} {
		pages.Write(ts.do(t, "GET", p, "").Body.Bytes())
	}
	ts.st.Close() // flush the WAL into the file
	var files bytes.Buffer
	filepath.Walk(ts.dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			files.Write(data)
		}
		return nil
	})
	for name, text := range map[string]string{"pages and API": pages.String(), "logs": ts.logs.String(), "data directory": files.String()} {
		if strings.Contains(text, password) {
			t.Errorf("the password appears in the %s", name)
		}
	}
	if !strings.Contains(pages.String(), "[redacted]") {
		t.Errorf("the spec does not show that a secret was given")
	}
}

// TestSilentBrokerRunFails: a target that accepts TCP and never answers
// fails the run with "no answer from ADDR within N s", N being the run's
// socket.connection.setup.timeout.ms.
func TestSilentBrokerRunFails(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	addr := silentbroker.Listen(t).Addr()
	ts := newRunningTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	id := ts.createRun(t, fmt.Sprintf(`{"workload":"producer","target":{"bootstrap_server":%q},"params":{"num-records":100,"profile":"none","producer-props":{"socket.connection.setup.timeout.ms":"500"}}}`, addr))
	r := ts.waitFinal(t, id)
	want := "no answer from " + addr + " within 0.5 s"
	if r.Status != rundoc.StatusFailed || !strings.Contains(r.Error, want) {
		t.Errorf("status %s error %q, want failed: %s", r.Status, r.Error, want)
	}
}
