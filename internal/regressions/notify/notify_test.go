package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/regressions/notify"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/ui"
)

// notifyEnv is a store with a regressions cache over it (with the pages'
// links) and a notifier started on it, as kbench serve builds them.
type notifyEnv struct {
	st   *store.Store
	logs *syncBuffer
}

// newNotifyEnv opens a store (PostgreSQL under KBENCH_TEST_BACKEND=postgres,
// else SQLite) and starts a notifier on it that looks for writes every
// 10 ms, with cfg's URL and PublicURL.
func newNotifyEnv(t *testing.T, cfg notify.Config) *notifyEnv {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "kbench.db")
	if os.Getenv("KBENCH_TEST_BACKEND") == "postgres" {
		dsn = pgtest.URL(t)
	}
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cfg.Every, cfg.Logger = 10*time.Millisecond, slog.New(slog.NewTextHandler(logs, nil))
	n := notify.New(regressions.New(st, ui.RegressionLinks(), cfg.Logger), st, cfg)
	n.Start(context.Background())
	t.Cleanup(func() {
		n.Close()
		st.Close()
	})
	return &notifyEnv{st: st, logs: logs}
}

// syncBuffer is a bytes.Buffer safe for the notifier's logging and the
// test's reading at once.
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

// stepSeries stores n runs of series fp@trunk (producer), the first half
// with metric at from, the rest at to (±1% of alternating noise), a day
// apart from t0, commits s0…; it returns their ids in time order.
func stepSeries(t *testing.T, ts *notifyEnv, fp string, t0 time.Time, n int, metric, unit string, better rundoc.Better, from, to float64) []uint {
	t.Helper()
	values := make([]float64, n)
	for i := range values {
		v := from
		if i >= n/2 {
			v = to
		}
		values[i] = v * (1 + 0.01*float64(i%3-1))
	}
	return storeRuns(t, ts, fp, rundoc.Producer, t0, 24*time.Hour, "s", metric, unit, better, values...)
}

// storeValues stores one succeeded run of series fp@trunk per value, an
// hour apart from t0, commits w0…; it returns their ids in time order.
func storeValues(t *testing.T, ts *notifyEnv, fp string, workload rundoc.Workload, t0 time.Time, metric, unit string, better rundoc.Better, values ...float64) []uint {
	t.Helper()
	return storeRuns(t, ts, fp, workload, t0, time.Hour, "w", metric, unit, better, values...)
}

func storeRuns(t *testing.T, ts *notifyEnv, fp string, workload rundoc.Workload, t0 time.Time, apart time.Duration, commit, metric, unit string, better rundoc.Better, values ...float64) []uint {
	t.Helper()
	var runs []*store.Run
	for i, v := range values {
		at := t0.Add(time.Duration(i) * apart)
		runs = append(runs, &store.Run{Label: fp, Workload: workload, Status: rundoc.StatusSucceeded, Fingerprint: fp, FinishedAt: &at,
			Meta: store.Meta{"branch": "trunk", "commit": fmt.Sprintf("%s%d", commit, i)}, RunAt: at,
			Metrics: []store.Metric{{Name: metric, Value: v, Unit: unit, Better: better}}})
	}
	if err := ts.st.CreateRuns(t.Context(), runs); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// receiver is a webhook that hands each POST's body to bodies, answering
// status.
func receiver(t *testing.T, status int) (*httptest.Server, chan map[string]any) {
	bodies := make(chan map[string]any, 16)
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &m) != nil {
			t.Errorf("webhook got %s %s %q", r.Method, r.Header.Get("Content-Type"), b)
		}
		bodies <- m
		w.WriteHeader(status)
	}))
	t.Cleanup(rs.Close)
	return rs, bodies
}

func next(t *testing.T, bodies chan map[string]any) map[string]any {
	t.Helper()
	select {
	case m := <-bodies:
		return m
	case <-time.After(time.Minute): // a guard against hanging, not a timing assertion
		t.Fatal("no notification")
		return nil
	}
}

// TestNotifyRegressions: with --notify-url, each new regression is posted
// once as JSON (the API's fields, absolute links, a Slack text); a later
// write posts only the regression it brought.
func TestNotifyRegressions(t *testing.T) {
	rs, bodies := receiver(t, http.StatusOK)
	ts := newNotifyEnv(t, notify.Config{URL: rs.URL + "/hook", PublicURL: "http://kbench.example:8080"})
	ids := stepSeries(t, ts, "fp-a", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	m := next(t, bodies)
	if m["series"] != "fp-a@trunk" || m["metric"] != "record-send-rate" || m["run_id"] != float64(ids[20]) || m["index"] != float64(20) ||
		math.Abs(m["change_pct"].(float64)+8.7) > 1 || m["p_value"] == nil || m["before"] == nil || m["after"] == nil ||
		!strings.HasPrefix(m["compare_url"].(string), "http://kbench.example:8080/compare?") {
		t.Errorf("notification %v", m)
	}
	text, _ := m["text"].(string)
	if !strings.HasPrefix(text, "kbench: record-send-rate of fp-a (producer) on trunk −8.") || !strings.Contains(text, "% at s19..s20 (p ") ||
		!strings.HasSuffix(text, "): "+strings.ReplaceAll(m["compare_url"].(string), "&", "&amp;")) || strings.Contains(text, "\n") {
		t.Errorf("text %q", text)
	}
	stepSeries(t, ts, "fp-b", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-latency-p99", "ms", rundoc.LowerIsBetter, 10, 12)
	if m := next(t, bodies); m["series"] != "fp-b@trunk" || m["metric"] != "record-latency-p99" {
		t.Errorf("second notification %v (want fp-b's, fp-a's only once)", m)
	}
	select {
	case m := <-bodies:
		t.Errorf("a third notification %v", m)
	default:
	}
}

// TestNotifyFailureLogged: a webhook that fails is logged (by host, not
// its secret path) and the run is stored all the same.
func TestNotifyFailureLogged(t *testing.T) {
	rs, bodies := receiver(t, http.StatusInternalServerError)
	ts := newNotifyEnv(t, notify.Config{URL: rs.URL + "/secret-path"})
	ids := stepSeries(t, ts, "fp-a", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	next(t, bodies)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(ts.logs.String(), "notify: post regression") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "notify: post regression") || !strings.Contains(logs, "500 Internal Server Error") || strings.Contains(logs, "secret-path") {
		t.Errorf("logs:\n%s", logs)
	}
	if _, err := ts.st.GetRun(t.Context(), ids[39]); err != nil {
		t.Error(err)
	}
}

// TestNotifyUnreachableLogged: a post that cannot reach the webhook at
// all is logged naming only its scheme and host, never the secret path,
// query or user information the client's error quotes.
func TestNotifyUnreachableLogged(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(closed.URL, "http://")
	closed.Close() // nothing listens there any more: the post fails to connect
	ts := newNotifyEnv(t, notify.Config{
		URL: "http://hookuser:hookpass@" + host + "/services/T0/B0/secret-path?token=secret-query",
	})
	stepSeries(t, ts, "fp-a", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	deadline := time.Now().Add(time.Minute) // a guard against hanging, not a timing assertion
	for !strings.Contains(ts.logs.String(), "notify: post regression") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "notify: post regression") || !strings.Contains(logs, "http://"+host) {
		t.Fatalf("no failure naming http://%s logged:\n%s", host, logs)
	}
	for _, secret := range []string{"services", "secret-path", "token", "secret-query", "hookuser", "hookpass"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs hold %q:\n%s", secret, logs)
		}
	}
}

// TestNotificationTextEscaped: what users named (series, metric, commit
// tags) reaches Slack as text: <, > and & are escaped as Slack requires,
// so no mention (<!channel>) and no disguised link (<URL|text>) is made.
func TestNotificationTextEscaped(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    regressions.Regression
		link string
		want string
	}{
		{"plain", regressions.Regression{Series: "fp@trunk", Metric: "record-send-rate", ChangePct: -8.7, PValue: 2e-6, CommitBefore: "c19", CommitAfter: "c20"},
			"http://kbench.example/compare?at=21&by=change",
			"kbench: record-send-rate of fp@trunk −8.7% at c19..c20 (p 2.0e-6): http://kbench.example/compare?at=21&amp;by=change"},
		{"mention", regressions.Regression{Series: "<!channel>", Metric: "record-send-rate", ChangePct: -8.7, PValue: 2e-6, CommitBefore: "a", CommitAfter: "b"},
			"/history?series=%3C%21channel%3E",
			"kbench: record-send-rate of &lt;!channel&gt; −8.7% at a..b (p 2.0e-6): /history?series=%3C%21channel%3E"},
		{"named", regressions.Regression{Series: "047a5cd56ea7ff5f@trunk", Name: "perf <b> (producer) on trunk", Metric: "record-send-rate", ChangePct: -8.7, PValue: 2e-6, CommitBefore: "c19", CommitAfter: "c20"},
			"/history?series=047a5cd56ea7ff5f%40trunk",
			"kbench: record-send-rate of perf &lt;b&gt; (producer) on trunk −8.7% at c19..c20 (p 2.0e-6): /history?series=047a5cd56ea7ff5f%40trunk"},
		{"link", regressions.Regression{Series: "s", Metric: "m", ChangePct: 12, PValue: 1e-4, CommitBefore: "<https://evil.example|Fix here>", CommitAfter: "R&D <@U123>"},
			"/compare",
			"kbench: m of s +12.0% at &lt;https://evil.example|Fix here&gt;..R&amp;D &lt;@U123&gt; (p 1.0e-4): /compare"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := notify.NotificationText(tt.r, tt.link)
			if got != tt.want {
				t.Errorf("notificationText = %q\nwant              %q", got, tt.want)
			}
			if strings.ContainsAny(got, "<>") {
				t.Errorf("%q holds < or >", got)
			}
		})
	}
}

// writePathP99 is the write-path preset's request-latency-p99 over 4
// repetitions that put "+1,666.9 %, p 0" on /regressions: Otava splits it
// 1/2/1 with p = 0.
var writePathP99 = []float64{10.5, 185.5, 185.5, 186}

// TestNotifyNotTentative: a tentative change point is never posted to
// --notify-url; the next real regression is the first notification.
func TestNotifyNotTentative(t *testing.T) {
	rs, bodies := receiver(t, http.StatusOK)
	ts := newNotifyEnv(t, notify.Config{URL: rs.URL + "/hook"})
	storeValues(t, ts, "fp-wp", rundoc.Writepath, time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), "request-latency-p99", "ms", rundoc.LowerIsBetter, writePathP99...)
	stepSeries(t, ts, "fp-real", time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), 40, "record-latency-p99", "ms", rundoc.LowerIsBetter, 10, 12)
	if m := next(t, bodies); m["series"] != "fp-real@trunk" {
		t.Errorf("first notification %v, want fp-real's (the 1/2/1 series is tentative)", m)
	}
}

// fakeFunctions names the same functions for every regression, counting
// the regressions asked about.
type fakeFunctions struct {
	mu    sync.Mutex
	asked []uint
	f     wire.Functions
}

func (f *fakeFunctions) WaitRegression(_ context.Context, r regressions.Regression) (wire.Functions, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, r.RunID)
	return f.f, nil
}

// TestNotifyFunctions: a notification carries the regression's functions
// as /api/regressions does (functions, function_naming with an absolute
// diff link), and its text names the top three, escaped for Slack.
func TestNotifyFunctions(t *testing.T) {
	rs, bodies := receiver(t, http.StatusOK)
	fake := &fakeFunctions{f: wire.Functions{
		FunctionNaming: wire.FunctionNaming{Status: wire.FunctionsNamed, Kind: "cpu", Role: "client", RunsBase: []uint{1, 2, 3}, RunsTarget: []uint{4, 5, 6},
			Normalize: "work", Unit: "nanoseconds/record", RunsNeeded: 3, DiffURL: "/compare/profiles?base_runs=1,2,3&target_runs=4,5,6&kind=cpu&role=client"},
		Functions: []wire.MovedFunction{{Name: "send.encode", Delta: 612, DeltaPct: 30.7, Base: 1990, Target: 2602, QValue: 1e-20},
			{Name: "std::vector<int>::push_back", Delta: 100, DeltaPct: 12, QValue: 1e-3}}}}
	ts := newNotifyEnv(t, notify.Config{URL: rs.URL + "/hook", PublicURL: "http://kbench.example:8080", Functions: fake})
	ids := stepSeries(t, ts, "fp-a", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	m := next(t, bodies)
	fs, _ := m["functions"].([]any)
	naming, _ := m["function_naming"].(map[string]any)
	if len(fs) != 2 || fs[0].(map[string]any)["name"] != "send.encode" || fs[1].(map[string]any)["name"] != "std::vector<int>::push_back" ||
		naming["status"] != "named" || naming["normalize"] != "work" ||
		naming["diff_url"] != "http://kbench.example:8080/compare/profiles?base_runs=1,2,3&target_runs=4,5,6&kind=cpu&role=client" {
		t.Errorf("functions %v, naming %v", fs, naming)
	}
	text, _ := m["text"].(string)
	if !strings.HasSuffix(text, " · functions: send.encode +30.7%, std::vector&lt;int&gt;::push_back +12.0%") || strings.Contains(text, "\n") {
		t.Errorf("text %q", text)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.asked) != 1 || fake.asked[0] != ids[20] {
		t.Errorf("asked about %v, want run %d's regression", fake.asked, ids[20])
	}
}

// TestFunctionsTextEscaped: function names reach Slack as text.
func TestFunctionsTextEscaped(t *testing.T) {
	for _, tt := range []struct {
		fs   []wire.MovedFunction
		want string
	}{
		{nil, ""},
		{[]wire.MovedFunction{{Name: "a", DeltaPct: -5}}, " · functions: a −5.0%"},
		{[]wire.MovedFunction{{Name: "<!channel>", DeltaPct: 30}, {Name: "Foo.<init>", DeltaPct: 1}, {Name: "R&D", DeltaPct: 2}, {Name: "fourth", DeltaPct: 3}},
			" · functions: &lt;!channel&gt; +30.0%, Foo.&lt;init&gt; +1.0%, R&amp;D +2.0%"},
	} {
		if got := notify.FunctionsText(tt.fs); got != tt.want {
			t.Errorf("FunctionsText(%v) = %q, want %q", tt.fs, got, tt.want)
		}
	}
}
