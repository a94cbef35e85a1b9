package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// tinySweepParams is a producer configuration that runs in about a second
// on the embedded broker.
const tinySweepParams = `{"workload":"producer","num-records":3000,"record-size":100,"profile":["none"]}`

func TestSweepAPIBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	cases := []struct{ name, body, field string }{
		{"no configs", `{"configs":[]}`, "configs"},
		{"no label", `{"configs":[{"label":"","params":{}}]}`, "configs[0].label"},
		{"same label", `{"configs":[{"label":"a","params":{}},{"label":"a","params":{}}]}`, "configs[1].label"},
		{"bad param", `{"configs":[{"label":"a","params":{"num-records":-4}}]}`, "configs[0].params.num-records"},
		{"unknown param", `{"configs":[{"label":"a","params":{"fetch-size":4}}]}`, "configs[0].params.fetch-size"},
		{"throughput is the sweep's", `{"configs":[{"label":"a","params":{"throughput":100}}]}`, "configs[0].params.throughput"},
		{"workload not sweepable", `{"configs":[{"label":"a","params":{"workload":"consumer"}}]}`, "configs[0].params.workload"},
		{"workload not a string", `{"configs":[{"label":"a","params":{"workload":3}}]}`, "configs[0].params.workload"},
		{"target not allowed", `{"configs":[{"label":"a","params":{"bootstrap-server":"10.1.2.3:9092"}}]}`, "configs[0].params.bootstrap-server"},
		{"bad queue name", `{"configs":[{"label":"a","params":{},"queue":"Lab A"}]}`, "configs[0].queue"},
		{"no rates", `{"configs":[{"label":"a","params":{}}],"rates_pct":[]}`, "rates_pct"},
		{"rate zero", `{"configs":[{"label":"a","params":{}}],"rates_pct":[50,0]}`, "rates_pct"},
		{"rate too small to run", `{"configs":[{"label":"a","params":{}}],"rates_pct":[1e-300]}`, "rates_pct"},
		{"rate twice", `{"configs":[{"label":"a","params":{}}],"rates_pct":[50,50]}`, "rates_pct"},
		{"rate not a number", `{"configs":[{"label":"a","params":{}}],"rates_pct":["x"]}`, "rates_pct"},
		{"repetitions", `{"configs":[{"label":"a","params":{}}],"repetitions":0}`, "repetitions"},
		{"too many runs", `{"configs":[{"label":"a","params":{}},{"label":"b","params":{}},{"label":"c","params":{}}],"repetitions":10,"rates_pct":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}`, "repetitions"},
		{"unknown field", `{"configs":[{"label":"a","params":{}}],"rate":[1]}`, "rate"},
		{"workers", `{"configs":[{"label":"a","params":{}}],"workers":2}`, "workers"},
	}
	if !ts.st.Postgres() {
		// One machine's store has no queue but the server's own.
		cases = append(cases, struct{ name, body, field string }{"queue on SQLite", `{"configs":[{"label":"a","params":{},"queue":"lab-a"}]}`, "configs[0].queue"})
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/presets/sweep", tt.body)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != 400 || !strings.HasPrefix(resp.Field, tt.field) {
				t.Errorf("got %d field %q (%s), want 400 %q", rec.Code, resp.Field, resp.Error, tt.field)
			}
		})
	}
	if n, err := ts.st.CountRuns(t.Context()); err != nil || n != 0 {
		t.Errorf("%d runs stored by refused sweeps (%v), want none", n, err)
	}
	for _, path := range []string{"/api/sweeps/0123456789ab", "/api/sweeps/nope", "/sweeps/0123456789ab"} {
		if rec := ts.do(t, "GET", path, ""); rec.Code != 404 {
			t.Errorf("GET %s = %d, want 404", path, rec.Code)
		}
	}
}

// createSweep posts a sweep and returns its id.
func (ts *testServer) createSweep(t *testing.T, body string) string {
	t.Helper()
	rec := ts.do(t, "POST", "/api/presets/sweep", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/presets/sweep = %d %s", rec.Code, rec.Body)
	}
	var resp struct{ Sweep, URL string }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Sweep == "" || resp.URL != "/sweeps/"+resp.Sweep {
		t.Fatalf("answer %s (%v)", rec.Body, err)
	}
	return resp.Sweep
}

// getSweep reads GET /api/sweeps/{id}.
func (ts *testServer) getSweep(t *testing.T, id string) sweepResult {
	t.Helper()
	rec := ts.do(t, "GET", "/api/sweeps/"+id, "")
	if rec.Code != 200 {
		t.Fatalf("GET /api/sweeps/%s = %d %s", id, rec.Code, rec.Body)
	}
	var res sweepResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// waitSweep polls a sweep until done says so.
func (ts *testServer) waitSweep(t *testing.T, id string, what string, done func(sweepResult) bool) sweepResult {
	t.Helper()
	ts.mustExecute(t)
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if res := ts.getSweep(t, id); done(res) {
			return res
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("sweep %s: %s never happened: %+v", id, what, ts.getSweep(t, id))
	return sweepResult{}
}

func allFinal(res sweepResult, phase int) bool {
	n := 0
	for _, r := range res.Runs {
		if r.Phase == phase {
			n++
			if !r.Status.Final() {
				return false
			}
		}
	}
	return n > 0
}

// TestSweepPhases: a sweep of two configurations runs their unthrottled
// runs first, then, once those have ended, queues each at every target
// rate of its own median maximum, interleaved; the points are the
// second phase's runs with their achieved rate and latency percentiles,
// and the page draws one line per label in each of its three charts.
func TestSweepPhases(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	id := ts.createSweep(t, `{"configs":[{"label":"small","params":`+tinySweepParams+`},{"label":"linger","params":{"workload":"producer","num-records":3000,"record-size":100,"profile":["none"],"producer-props":["linger.ms=5"]}}],"rates_pct":[30,60],"repetitions":1}`)
	first := ts.getSweep(t, id)
	if first.Phase != store.SweepMaxRate || len(first.Runs) != 2 {
		t.Fatalf("new sweep: phase %s, %d runs, want max-rate with 2", first.Phase, len(first.Runs))
	}
	for _, r := range first.Runs {
		if r.Phase != 1 || r.TargetRate != -1 {
			t.Errorf("run %d: phase %d target %v, want the unthrottled phase 1", r.ID, r.Phase, r.TargetRate)
		}
		var spec rundoc.SpecFile
		stored, err := ts.st.GetRun(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(stored.Spec), &spec); err != nil || string(spec.Params["throughput"]) != "-1" {
			t.Errorf("run %d: spec %s, want throughput -1", r.ID, stored.Spec)
		}
	}

	res := ts.waitSweep(t, id, "second phase ended", func(r sweepResult) bool { return r.Phase == store.SweepDone && allFinal(r, 2) })
	maxOf := map[int]float64{}
	for _, c := range res.Configs {
		if c.MaxRate == nil || c.MaxRate.RecordsPerSec <= 0 || c.MaxRate.Runs != 1 {
			t.Fatalf("config %s: max rate %+v, want one run's rate", c.Label, c.MaxRate)
		}
		maxOf[c.MaxRate.Config] = c.MaxRate.RecordsPerSec
	}
	// The maximum is the phase-1 run's record-send-rate.
	phase2 := 0
	var order []string
	for _, r := range res.Runs {
		if r.Phase == 1 {
			if got := r.Metrics["record-send-rate"]; got != maxOf[r.Config] {
				t.Errorf("config %d: max %v, its one unthrottled run sent %v/s", r.Config, maxOf[r.Config], got)
			}
			continue
		}
		phase2++
		order = append(order, fmt.Sprintf("%s@%v", r.Label, r.RatePct))
		if want := maxOf[r.Config] * r.RatePct / 100; r.TargetRate != want {
			t.Errorf("run %d: target %v, want %v%% of %v", r.ID, r.TargetRate, r.RatePct, maxOf[r.Config])
		}
		stored, err := ts.st.GetRun(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var spec rundoc.SpecFile
		json.Unmarshal([]byte(stored.Spec), &spec)
		var thr float64
		if err := json.Unmarshal(spec.Params["throughput"], &thr); err != nil || thr != r.TargetRate {
			t.Errorf("run %d: throughput param %s, want %v", r.ID, spec.Params["throughput"], r.TargetRate)
		}
		if r.Status != rundoc.StatusSucceeded {
			t.Errorf("run %d: %s", r.ID, r.Status)
		}
	}
	if phase2 != 4 || len(res.Points) != 4 {
		t.Fatalf("%d phase-2 runs and %d points, want 4 (2 configurations × 2 rates)", phase2, len(res.Points))
	}
	// Interleaved: configurations and rates alternate within the round.
	if want := "small@30 small@60 linger@30 linger@60"; strings.Join(order, " ") != want {
		t.Errorf("phase-2 order %q, want %q", strings.Join(order, " "), want)
	}
	for _, p := range res.Points {
		if p.Throughput <= 0 || p.P50 <= 0 || p.P99 < p.P50 || p.P999 < p.P99 || p.URL != fmt.Sprintf("/runs/%d", p.RunID) {
			t.Errorf("point %+v", p)
		}
	}

	page := ts.do(t, "GET", "/sweeps/"+id, "")
	body := page.Body.String()
	if page.Code != 200 || strings.Count(body, "<svg class=\"chart\"") != 3 {
		t.Fatalf("sweep page = %d with %d charts, want 3", page.Code, strings.Count(body, "<svg class=\"chart\""))
	}
	for _, p := range res.Points {
		if strings.Count(body, fmt.Sprintf(`<a href="/runs/%d"><circle`, p.RunID)) != 3 {
			t.Errorf("run %d is not a linked point on each chart", p.RunID)
		}
	}
	if n := strings.Count(body, "<polyline"); n != 6 {
		t.Errorf("%d lines, want 6 (2 labels × 3 charts)", n)
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("a finished sweep's page still reloads itself")
	}
	if list := ts.do(t, "GET", "/sweeps", ""); !strings.Contains(list.Body.String(), `href="/sweeps/`+id+`"`) {
		t.Error("/sweeps does not list the sweep")
	}
}

// TestSweepContinuesAfterRestart: a sweep whose first phase ended while
// no server advanced it gets its second phase from the next server's
// start.
func TestSweepContinuesAfterRestart(t *testing.T) {
	a := newRunningTestServer(t, nil)
	a.launcher.Close() // this server runs phase 1 but never advances a sweep
	id := a.createSweep(t, `{"configs":[{"label":"solo","params":`+tinySweepParams+`}],"rates_pct":[50],"repetitions":1}`)
	res := a.waitSweep(t, id, "first phase ended", func(r sweepResult) bool { return allFinal(r, 1) })
	if res.Phase != store.SweepMaxRate {
		t.Fatalf("phase %s, want max-rate: nothing advanced it", res.Phase)
	}
	a.local.Close()

	b := newRunningTestServerOn(t, a.dsn, nil)
	res = b.waitSweep(t, id, "second phase ended", func(r sweepResult) bool { return r.Phase == store.SweepDone && allFinal(r, 2) })
	if len(res.Points) != 1 || res.Runs[1].Status != rundoc.StatusSucceeded {
		t.Fatalf("after restart: %d points, runs %+v", len(res.Points), res.Runs)
	}
}

// TestSweepForm: the form's errors name the fields and keep the values;
// a good form redirects to the sweep's page, which reloads itself while
// runs are unfinished.
func TestSweepForm(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	bad := ts.formPost(t, "/sweeps", url.Values{"label-0": {"x"}, "params-0": {`{"num-records": -1}`}, "rates_pct": {"10, abc"}, "repetitions": {"2"}})
	body := bad.Body.String()
	if bad.Code != 400 || !strings.Contains(body, "configs[0].params.num-records") || !strings.Contains(body, "rates_pct") || !strings.Contains(body, `value="10, abc"`) {
		t.Fatalf("bad form = %d\n%s", bad.Code, body)
	}
	ok := ts.formPost(t, "/sweeps", url.Values{"label-0": {"x"}, "params-0": {tinySweepParams}, "rates_pct": {"50"}, "repetitions": {"1"}})
	if ok.Code != http.StatusSeeOther || !strings.HasPrefix(ok.Header().Get("Location"), "/sweeps/") {
		t.Fatalf("good form = %d %s", ok.Code, ok.Body)
	}
	page := ts.do(t, "GET", ok.Header().Get("Location"), "")
	if page.Code != 200 || !strings.Contains(page.Body.String(), `http-equiv="refresh"`) {
		t.Errorf("new sweep's page = %d, want it reloading itself", page.Code)
	}
	id := strings.TrimPrefix(ok.Header().Get("Location"), "/sweeps/")
	ts.waitSweep(t, id, "second phase ended", func(r sweepResult) bool { return r.Phase == store.SweepDone && allFinal(r, 2) })
}
