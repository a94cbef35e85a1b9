package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/check"
	"github.com/kbench/kbench/internal/rundoc"
)

// fakeRun is a run as the server's JSON API shows it (server/api_run.go).
type fakeRun struct {
	ID          uint              `json:"id"`
	URL         string            `json:"url"`
	Label       string            `json:"label"`
	Workload    string            `json:"workload"`
	Status      string            `json:"status"`
	Source      string            `json:"source"`
	Error       string            `json:"error"`
	Complete    bool              `json:"complete"`
	Fingerprint string            `json:"fingerprint"`
	CreatedAt   time.Time         `json:"created_at"`
	Meta        map[string]string `json:"meta"`
	Time        time.Time         `json:"time"`
	SeriesKey   string            `json:"series_key"`
	Metrics     []fakeMetric      `json:"metrics,omitempty"`

	// pollsLeft: the run reads as running this many more times.
	pollsLeft int
}

type fakeMetric struct {
	Name   string        `json:"name"`
	Value  float64       `json:"value"`
	Unit   string        `json:"unit"`
	Better rundoc.Better `json:"better"`
}

// fakeServer answers GET /api/runs, /api/runs/{id}, /api/history (as
// issue 13 specifies it, change points from the real detector) and
// /r/{slug}.json over a list of runs.
type fakeServer struct {
	mu        sync.Mutex
	runs      []*fakeRun
	noHistory bool
	token     string
	reports   map[string][]uint
	// historyQueries are the queries /api/history was asked.
	historyQueries []url.Values
	// functions are /api/functions' answers in turn, the last repeated
	// (none: 404, a server that names no functions); functionQueries
	// the queries it was asked.
	functions       []wire.Functions
	functionQueries []url.Values
}

func (f *fakeServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/runs", f.list)
	mux.HandleFunc("GET /api/runs/{id}", f.get)
	mux.HandleFunc("GET /api/history", f.history)
	mux.HandleFunc("GET /r/{file}", f.report)
	mux.HandleFunc("GET /api/functions", func(w http.ResponseWriter, r *http.Request) {
		if len(f.functions) == 0 {
			http.NotFound(w, r)
			return
		}
		f.functionQueries = append(f.functionQueries, r.URL.Query())
		ans := f.functions[0]
		if len(f.functions) > 1 {
			f.functions = f.functions[1:]
		}
		writeJSON(w, http.StatusOK, ans)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "token required"})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeServer) status(r *fakeRun) string {
	if r.pollsLeft > 0 {
		return "running"
	}
	return r.Status
}

func (f *fakeServer) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset := 50, 0
	if v := q.Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
		limit = min(limit, 500)
	}
	if v := q.Get("offset"); v != "" {
		offset, _ = strconv.Atoi(v)
	}
	var sel []fakeRun
	for i := len(f.runs) - 1; i >= 0; i-- { // newest first
		run := *f.runs[i]
		run.Status = f.status(f.runs[i])
		if (q.Get("label") != "" && run.Label != q.Get("label")) || (q.Get("status") != "" && run.Status != q.Get("status")) ||
			(q.Get("workload") != "" && run.Workload != q.Get("workload")) {
			continue
		}
		run.Metrics = nil // the list carries no metrics
		sel = append(sel, run)
	}
	page := sel[min(offset, len(sel)):min(offset+limit, len(sel))]
	writeJSON(w, http.StatusOK, map[string]any{"runs": page, "total": len(sel), "offset": offset, "limit": limit})
}

func (f *fakeServer) find(id uint) *fakeRun {
	for _, r := range f.runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func (f *fakeServer) get(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	run := f.find(uint(id))
	if run == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "server: store: not found"})
		return
	}
	out := *run
	out.Status = f.status(run)
	if run.pollsLeft > 0 {
		run.pollsLeft--
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *fakeServer) history(w http.ResponseWriter, r *http.Request) {
	if f.noHistory {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "server: store: not found"})
		return
	}
	q := r.URL.Query()
	f.historyQueries = append(f.historyQueries, q)
	var series string
	if id, err := strconv.Atoi(q.Get("run")); err == nil {
		run := f.find(uint(id))
		if run == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "server: store: not found"})
			return
		}
		series = run.SeriesKey
	} else {
		series = rundoc.SeriesKey(q.Get("fingerprint"), q.Get("branch"))
	}
	window, _ := strconv.Atoi(q.Get("window"))
	maxP, _ := strconv.ParseFloat(q.Get("max_pvalue"), 64)
	minMag, _ := strconv.ParseFloat(q.Get("min_magnitude"), 64)
	type point struct {
		RunID uint              `json:"run_id"`
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Meta  map[string]string `json:"meta"`
	}
	points := []point{}
	var values []float64
	var better rundoc.Better
	for _, run := range f.runs { // in time order
		if run.SeriesKey != series || f.status(run) != "succeeded" {
			continue
		}
		for _, m := range run.Metrics {
			if m.Name == q.Get("metric") {
				points = append(points, point{run.ID, run.Time, m.Value, run.Meta})
				values = append(values, m.Value)
				better = m.Better
			}
		}
	}
	cps := []map[string]any{}
	for _, c := range changepoint.Detect(values, changepoint.Options{Window: window, MaxPValue: maxP, MinMagnitude: minMag}) {
		dir := "better"
		if (better == rundoc.HigherIsBetter) == (c.After < c.Before) {
			dir = "worse"
		}
		cps = append(cps, map[string]any{"index": c.Index, "run_id": points[c.Index].RunID, "before": c.Before, "after": c.After,
			"change_pct": c.ChangePercent(), "p_value": c.PValue, "direction": dir})
	}
	writeJSON(w, http.StatusOK, map[string]any{"points": points, "change_points": cps,
		"params": map[string]any{"window": window, "max_pvalue": maxP, "min_magnitude": minMag}})
}

func (f *fakeServer) report(w http.ResponseWriter, r *http.Request) {
	slug, ok := strings.CutSuffix(r.PathValue("file"), ".json")
	ids, found := f.reports[slug]
	if !ok || !found {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "server: store: not found"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"title": "r", "columns": []map[string]any{
		{"name": "base", "baseline": true, "runs": ids}, {"name": "new", "baseline": false, "runs": []uint{999}}}})
}

var t0 = time.Date(2022, 6, 1, 10, 0, 0, 0, time.UTC)

// add stores a producer run of series "fp@trunk" doing rate records/s.
func (f *fakeServer) add(rate float64, meta map[string]string) *fakeRun {
	id := uint(len(f.runs) + 1)
	if meta == nil {
		meta = map[string]string{}
	}
	meta["branch"] = "trunk"
	if meta["commit"] == "" {
		meta["commit"] = fmt.Sprintf("c%03d", id)
	}
	run := &fakeRun{ID: id, URL: fmt.Sprintf("/runs/%d", id), Label: "java-trunk", Workload: "producer", Status: "succeeded", Source: "imported",
		Complete: true, Fingerprint: "fp", CreatedAt: t0, Meta: meta, Time: t0.Add(time.Duration(id) * time.Hour), SeriesKey: "fp@trunk",
		Metrics: []fakeMetric{
			{"record-send-rate", rate, "records/s", rundoc.HigherIsBetter},
			{"mb-per-sec", rate * 100 / (1 << 20), "MB/s", rundoc.HigherIsBetter},
			{"record-latency-p99", 42, "ms", rundoc.LowerIsBetter},
		}}
	f.runs = append(f.runs, run)
	return run
}

// kafka14020 is a server holding 20 runs at ~115k records/s (±2%).
func kafka14020(t *testing.T) (*fakeServer, string) {
	f := &fakeServer{reports: map[string][]uint{}}
	rng := rand.New(rand.NewPCG(14020, 1))
	for range 20 {
		f.add(115000*(1+0.02*(2*rng.Float64()-1)), nil)
	}
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func runCheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(append([]string{"check"}, args...), &out, &errb)
	t.Logf("kbench check %s → %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	return code, out.String(), errb.String()
}

func TestCheckKafka14020(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rate    float64
		code    int
		verdict string
	}{
		{"a new run at 105k regresses", 105000, 1, "regression"},
		{"a new run at 115k passes", 115000, 0, "no change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, url := kafka14020(t)
			cand := f.add(tc.rate, map[string]string{"commit": "abc123"})
			code, out, _ := runCheck(t, "--server", url, "--run", strconv.Itoa(int(cand.ID)), "--min-segment", "1")
			if code != tc.code {
				t.Fatalf("exit %d, want %d", code, tc.code)
			}
			row := tableRow(t, out, "record-send-rate")
			if !strings.Contains(row, "| records/s |") || !strings.Contains(row, "(mean of 20)") || !strings.Contains(row, "change point") ||
				!strings.Contains(row, tc.verdict) {
				t.Errorf("row %q: want records/s, the mean of 20 baseline runs, the change-point method and %q", row, tc.verdict)
			}
			for _, m := range []string{"mb-per-sec", "record-latency-p99"} {
				tableRow(t, out, m)
			}
			if !strings.Contains(out, "| metric | unit | baseline | candidate | change | p-value | method | verdict |") {
				t.Error("no table header")
			}

			// --json: the same decision as data.
			code, js, _ := runCheck(t, "--server", url, "--run", strconv.Itoa(int(cand.ID)), "--json", "--min-segment", "1")
			if code != tc.code {
				t.Fatalf("--json: exit %d, want %d", code, tc.code)
			}
			var rep check.Report
			if err := json.Unmarshal([]byte(js), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.ExitCode != tc.code || len(rep.Series) != 1 || rep.Series[0].SeriesKey != "fp@trunk" {
				t.Fatalf("report %+v", rep)
			}
			r := rep.Series[0].Results[0]
			if r.Metric != "record-send-rate" || r.Verdict != tc.verdict || r.Baseline.N != 20 || r.Candidate.N != 1 || r.Method != "change-point" {
				t.Errorf("result %+v", r)
			}
			if tc.code == 1 && (r.ChangePct == nil || math.Abs(*r.ChangePct+8.7) > 1 || r.PValue == nil || *r.PValue > 0.001) {
				t.Errorf("change %v, p %v: want about −8.7%% with p ≤ 0.001", r.ChangePct, r.PValue)
			}
			// The detection parameters reach the history API.
			q := f.historyQueries[len(f.historyQueries)-1]
			if q.Get("run") != strconv.Itoa(int(cand.ID)) || q.Get("window") != "50" || q.Get("max_pvalue") != "0.001" || q.Get("min_magnitude") != "0" {
				t.Errorf("history query %v", q)
			}
		})
	}
}

// tableRow returns the Markdown table row of metric.
func tableRow(t *testing.T, out, metric string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| "+metric+" |") {
			return line
		}
	}
	t.Errorf("no row for %s in\n%s", metric, out)
	return ""
}

// TestCheckBaselineSinceLastChangePoint: 20 runs at 130k, then 20 at
// 115k, then the candidate: the baseline is the 20 after the change
// point, not all 40.
func TestCheckBaselineSinceLastChangePoint(t *testing.T) {
	f := &fakeServer{}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 20 {
		f.add(130000*(1+0.02*(2*rng.Float64()-1)), nil)
	}
	for range 20 {
		f.add(115000*(1+0.02*(2*rng.Float64()-1)), nil)
	}
	cand := f.add(115000, nil)
	srv := httptest.NewServer(f.handler())
	defer srv.Close()
	code, out, _ := runCheck(t, "--server", srv.URL, "--run", strconv.Itoa(int(cand.ID)))
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if row := tableRow(t, out, "record-send-rate"); !strings.Contains(row, "(mean of 20)") {
		t.Errorf("row %q: want a baseline of the 20 runs since the change point", row)
	}
}

func TestCheckSelectsByMetaAndLabel(t *testing.T) {
	f, url := kafka14020(t)
	f.add(105000, map[string]string{"commit": "abc123"})
	if code, out, _ := runCheck(t, "--server", url, "--meta", "commit=abc123", "--min-segment", "1"); code != 1 || !strings.Contains(out, "[#21]") {
		t.Errorf("--meta commit=abc123: exit %d, want 1 for run #21", code)
	}
	if code, _, errs := runCheck(t, "--server", url, "--meta", "commit=nothere"); code != 3 || !strings.Contains(errs, "no runs with commit=nothere") {
		t.Errorf("--meta commit=nothere: exit %d, want 3 naming the selection", code)
	}
	f, url = kafka14020(t)
	f.add(104000, map[string]string{"commit": "def456"}).Label = "pr-7"
	if code, out, _ := runCheck(t, "--server", url, "--label", "pr-7", "--min-segment", "1"); code != 1 || !strings.Contains(out, "[#21]") {
		t.Errorf("--label pr-7: exit %d, want 1 for run #21", code)
	}
}

// TestCheckRepetitions: five candidates against the history are tested
// as comparison tables test them.
func TestCheckRepetitions(t *testing.T) {
	f, url := kafka14020(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, strconv.Itoa(int(f.add(105000+float64(i)*300, map[string]string{"commit": "abc123"}).ID)))
	}
	code, out, _ := runCheck(t, "--server", url, "--run", strings.Join(ids, ","), "--json")
	var rep check.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Series[0].Results[0]
	if code != 1 || r.Method != "mann-whitney" || r.Verdict != "regression" || r.Candidate.N != 5 || r.Baseline.Stat != "median" {
		t.Errorf("exit %d, %+v: want a Mann-Whitney regression of 5 against the median of 20", code, r)
	}
}

func TestCheckExplicitBaselines(t *testing.T) {
	f, url := kafka14020(t)
	cand := f.add(105000, nil)
	id := strconv.Itoa(int(cand.ID))
	f.reports["slug1"] = []uint{1, 2, 3, 4, 5, 6}
	for _, tc := range []struct {
		baseline string
		code     int
		n        int
	}{
		{"runs=1,2,3,4,5,6,7,8", 1, 8},
		{"1,2,3,4,5,6,7,8", 1, 8},
		{"runs=1,2,3", 3, 3}, // too little baseline
		{"label=java-trunk", 1, 20},
		{"report=slug1", 1, 6},
		{"branch=trunk", 1, 20},
	} {
		code, out, _ := runCheck(t, "--server", url, "--run", id, "--baseline", tc.baseline, "--json", "--min-segment", "1")
		var rep check.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v", tc.baseline, err)
		}
		if r := rep.Series[0].Results[0]; code != tc.code || r.Baseline.N != tc.n {
			t.Errorf("--baseline %s: exit %d with %d baseline runs, want %d with %d", tc.baseline, code, r.Baseline.N, tc.code, tc.n)
		}
	}
}

// TestCheckBranchBaseline: the first run of a feature branch has no
// history of its own (undecided), but --baseline branch=trunk compares it
// with trunk's.
func TestCheckBranchBaseline(t *testing.T) {
	f, url := kafka14020(t)
	feat := f.add(105000, map[string]string{"branch": "feat"})
	feat.Meta["branch"], feat.SeriesKey = "feat", "fp@feat"
	id := strconv.Itoa(int(feat.ID))
	if code, _, _ := runCheck(t, "--server", url, "--run", id); code != 3 {
		t.Errorf("against its own empty history: exit %d, want 3", code)
	}
	code, out, _ := runCheck(t, "--server", url, "--run", id, "--baseline", "branch=trunk", "--min-segment", "1")
	if code != 1 || !strings.Contains(tableRow(t, out, "record-send-rate"), "(mean of 20)") {
		t.Errorf("--baseline branch=trunk: exit %d, want 1 against 20 trunk runs", code)
	}
	q := f.historyQueries[len(f.historyQueries)-1]
	if q.Get("fingerprint") != "fp" || q.Get("branch") != "trunk" || q.Has("run") {
		t.Errorf("history query %v: want fingerprint=fp&branch=trunk", q)
	}
}

func TestCheckCannotDecide(t *testing.T) {
	t.Run("server down", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		if code, _, errs := runCheck(t, "--server", url, "--run", "1"); code != 3 || !strings.Contains(errs, "cannot reach") {
			t.Errorf("exit %d, want 3 saying the server cannot be reached", code)
		}
	})
	t.Run("no history API", func(t *testing.T) {
		f, url := kafka14020(t)
		f.noHistory = true
		f.add(105000, nil)
		if code, _, errs := runCheck(t, "--server", url, "--run", "21"); code != 3 || !strings.Contains(errs, "history API") {
			t.Errorf("exit %d, want 3 naming the history API", code)
		}
	})
	t.Run("no such run", func(t *testing.T) {
		_, url := kafka14020(t)
		if code, _, errs := runCheck(t, "--server", url, "--run", "99"); code != 3 || !strings.Contains(errs, "run #99: no such run") {
			t.Errorf("exit %d, want 3", code)
		}
	})
	t.Run("too little baseline", func(t *testing.T) {
		f := &fakeServer{}
		for range 3 {
			f.add(115000, nil)
		}
		f.add(105000, nil)
		srv := httptest.NewServer(f.handler())
		defer srv.Close()
		code, out, _ := runCheck(t, "--server", srv.URL, "--run", "4")
		if code != 3 || !strings.Contains(tableRow(t, out, "record-send-rate"), "undecided") || !strings.Contains(out, "too little baseline") {
			t.Errorf("exit %d, want 3 with the metric undecided", code)
		}
	})
	t.Run("failed run", func(t *testing.T) {
		f, url := kafka14020(t)
		r := f.add(105000, nil)
		r.Status, r.Error = "failed", "broker gone"
		if code, _, errs := runCheck(t, "--server", url, "--run", "21"); code != 3 || !strings.Contains(errs, "run #21 failed: broker gone") {
			t.Errorf("exit %d, want 3 naming the failure", code)
		}
	})
	t.Run("token refused", func(t *testing.T) {
		f, url := kafka14020(t)
		f.token = "s3cret"
		f.add(105000, nil)
		if code, _, _ := runCheck(t, "--server", url, "--run", "21"); code != 3 {
			t.Errorf("without the token: exit %d, want 3", code)
		}
		if code, _, _ := runCheck(t, "--server", url, "--run", "21", "--token", "s3cret", "--min-segment", "1"); code != 1 {
			t.Errorf("with the token: exit %d, want 1", code)
		}
	})
}

func TestCheckWait(t *testing.T) {
	defer func(d time.Duration) { checkPollInterval = d }(checkPollInterval)
	checkPollInterval = time.Millisecond
	f, url := kafka14020(t)
	f.add(105000, nil).pollsLeft = 3
	if code, _, errs := runCheck(t, "--server", url, "--run", "21"); code != 3 || !strings.Contains(errs, "run #21 is running") {
		t.Errorf("without --wait: exit %d, want 3 saying the run is running", code)
	}
	if code, _, _ := runCheck(t, "--server", url, "--run", "21", "--wait", "1m", "--min-segment", "1"); code != 1 {
		t.Errorf("--wait 1m: exit %d, want 1 once the run finished", code)
	}
	f.runs[20].pollsLeft = math.MaxInt
	if code, _, errs := runCheck(t, "--server", url, "--run", "21", "--wait", "20ms"); code != 3 || !strings.Contains(errs, "after waiting 20ms") {
		t.Errorf("--wait 20ms on a run that never ends: exit %d, want 3", code)
	}
	// A run not stored yet: --meta waits for it to appear.
	go func() {
		time.Sleep(10 * time.Millisecond)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.add(115000, map[string]string{"commit": "late"})
	}()
	if code, _, _ := runCheck(t, "--server", url, "--meta", "commit=late", "--wait", "1m"); code != 0 {
		t.Errorf("--wait for a run stored later: exit %d, want 0", code)
	}
}

func TestCheckBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--run", "abc"},
		{"--run", "0"},
		{"--run", "1", "--label", "x"},
		{"--run", "1", "--threshold", "0"},
		{"--run", "1", "--threshold", "100"},
		{"--run", "1", "--window", "1"},
		{"--run", "1", "--window", "501"}, // above changepoint.MaxWindow, as the server refuses it
		{"--run", "1", "--max-pvalue", "2"},
		{"--run", "1", "--min-magnitude", "-1"},
		{"--run", "1", "--baseline", "foo=bar"},
		{"--run", "1", "--baseline", "runs="},
		{"--run", "1", "--baseline", "report=a/b"},
		{"--run", "1", "--wait", "-1s"},
		{"--run", "1", "--server", "ftp://x"},
		{"--meta", "nokey"},
		{"--run", "1", "extra"},
		{"--bogus"},
	} {
		var out, errb bytes.Buffer
		if code := Main(append([]string{"check"}, args...), &out, &errb); code != 2 {
			t.Errorf("kbench check %s: exit %d, want 2\n%s", strings.Join(args, " "), code, errb.String())
		}
	}
}

// TestCheckNamesFunctions: kbench check asks the server for the
// functions that moved from the baseline to the candidates, again while
// it answers "computing", and reports them: functions in --json, a line
// in the Markdown.
func TestCheckNamesFunctions(t *testing.T) {
	defer func(d time.Duration) { checkPollInterval = d }(checkPollInterval)
	checkPollInterval = time.Millisecond
	f, url := kafka14020(t)
	cand := f.add(105000, nil)
	naming := wire.FunctionNaming{Kind: "cpu", Role: "client", RunsBase: []uint{18, 19, 20}, RunsTarget: []uint{cand.ID}, RunsNeeded: 3,
		Normalize: "work", Unit: "nanoseconds/record", DiffURL: "/compare/profiles?base_runs=18,19,20&target_runs=21&kind=cpu&role=client"}
	computing, named := naming, naming
	computing.Status, named.Status = wire.FunctionsComputing, wire.FunctionsNamed
	f.functions = []wire.Functions{{FunctionNaming: computing, Functions: []wire.MovedFunction{}},
		{FunctionNaming: named, Functions: []wire.MovedFunction{{Name: "send.encode", Delta: 612, DeltaPct: 30.7, Base: 1990, Target: 2602, QValue: 1e-9}}}}
	_, js, _ := runCheck(t, "--server", url, "--run", strconv.Itoa(int(cand.ID)), "--min-segment", "1", "--json")
	var rep check.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Series) != 1 || len(rep.Series[0].Functions) != 1 || rep.Series[0].Functions[0].Name != "send.encode" ||
		rep.Series[0].FunctionNaming == nil || rep.Series[0].FunctionNaming.Status != wire.FunctionsNamed {
		t.Errorf("--json series %+v", rep.Series)
	}
	if len(f.functionQueries) != 2 || f.functionQueries[0].Get("target_runs") != strconv.Itoa(int(cand.ID)) ||
		!strings.HasSuffix(f.functionQueries[0].Get("base_runs"), ",20") {
		t.Errorf("asked %v", f.functionQueries)
	}
	_, md, _ := runCheck(t, "--server", url, "--run", strconv.Itoa(int(cand.ID)), "--min-segment", "1")
	if !strings.Contains(md, "Functions that moved (3 baseline runs against 1 candidates with CPU profiles, per record): `send.encode` +30.7%") ||
		!strings.Contains(md, "[differential flame graph]("+url+"/compare/profiles?base_runs=18,19,20&target_runs=21&kind=cpu&role=client)") {
		t.Errorf("Markdown lacks the functions line:\n%s", md)
	}
}
