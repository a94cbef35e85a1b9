package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// noWorker makes a test server that executes nothing: its runs stay
// queued until the test ends them through the store.
func noWorker(c *Config) { c.NoLocalWorker = true }

// finishStored ends queued run id as succeeded with record-send-rate rate
// (and latency percentiles, for a point), as a worker would.
func finishStored(t *testing.T, ts *testServer, id uint, rate float64) {
	t.Helper()
	if err := ts.st.StartRun(t.Context(), id, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ms := []rundoc.Metric{{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter},
		{Name: "record-latency-p50", Value: 1, Unit: "ms", Better: rundoc.LowerIsBetter},
		{Name: "record-latency-p99", Value: 2, Unit: "ms", Better: rundoc.LowerIsBetter},
		{Name: "record-latency-p999", Value: 3, Unit: "ms", Better: rundoc.LowerIsBetter}}
	if err := ts.st.FinishRun(t.Context(), id, store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Metrics: ms}); err != nil {
		t.Fatal(err)
	}
}

// phaseRuns are the ids of a sweep's runs of phase.
func phaseRuns(res sweepResult, phase int) []uint {
	var out []uint
	for _, r := range res.Runs {
		if r.Phase == phase {
			out = append(out, r.ID)
		}
	}
	return out
}

// TestSweepCancelQueued: canceling a sweep measuring its maximum rates
// cancels its queued runs, ends it canceled with a note, and the sweep loop
// never queues its second phase, even once its first phase's runs have
// all ended; a second cancel is a 409; the page offers Cancel only while
// the sweep runs.
func TestSweepCancelQueued(t *testing.T) {
	ts := newRunningTestServer(t, noWorker)
	id := ts.createSweep(t, `{"configs":[{"label":"a","params":`+tinySweepParams+`},{"label":"b","params":`+tinySweepParams+`}],"rates_pct":[50,100],"repetitions":2}`)
	if page := ts.do(t, "GET", "/sweeps/"+id, "").Body.String(); !strings.Contains(page, `action="/sweeps/`+id+`/cancel"`) {
		t.Fatal("a running sweep's page has no Cancel button")
	}
	rec := ts.do(t, "POST", "/api/sweeps/"+id+"/cancel", "")
	var resp struct {
		Sweep, Phase string
		Canceled     int `json:"canceled_runs"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); rec.Code != http.StatusAccepted || err != nil || resp.Sweep != id || resp.Phase != store.SweepCanceled || resp.Canceled != 4 {
		t.Fatalf("POST /api/sweeps/%s/cancel = %d %s, want 202 with 4 runs canceled", id, rec.Code, rec.Body)
	}
	res := ts.getSweep(t, id)
	if res.Phase != store.SweepCanceled || !strings.Contains(res.Note, "canceled") {
		t.Errorf("phase %s note %q, want canceled with a note", res.Phase, res.Note)
	}
	for _, r := range res.Runs {
		if r.Status != rundoc.StatusCanceled {
			t.Errorf("run %d: %s, want canceled", r.ID, r.Status)
		}
	}
	// Whatever the sweep loop does now, no second phase.
	if err := ts.launcher.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := ts.getSweep(t, id); res.Phase != store.SweepCanceled || len(res.Runs) != 4 {
		t.Errorf("after the sweep loop: phase %s, %d runs, want canceled with its 4", res.Phase, len(res.Runs))
	}
	if rec := ts.do(t, "POST", "/api/sweeps/"+id+"/cancel", ""); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "has ended (canceled)") {
		t.Errorf("second cancel = %d %s, want 409", rec.Code, rec.Body)
	}
	page := ts.do(t, "GET", "/sweeps/"+id, "").Body.String()
	if strings.Contains(page, `/cancel"`) || !strings.Contains(page, `id="sweep-note"`) || strings.Contains(page, `http-equiv="refresh"`) {
		t.Errorf("a canceled sweep's page: Cancel button, no note, or still reloading\n%s", page)
	}
	for _, path := range []string{"/api/sweeps/0123456789ab/cancel", "/api/sweeps/nope/cancel"} {
		if rec := ts.do(t, "POST", path, ""); rec.Code != http.StatusNotFound {
			t.Errorf("POST %s = %d, want 404", path, rec.Code)
		}
	}
}

// TestSweepCancelAfterFirstPhase: a sweep canceled once its first phase
// has ended but before the sweep loop queued the second gets none; the
// page's Cancel button does it (303 back to the page).
func TestSweepCancelAfterFirstPhase(t *testing.T) {
	ts := newTestServer(t, noWorker)
	ts.launcher.Close() // the test advances it
	id := ts.createSweep(t, `{"configs":[{"label":"a","params":`+tinySweepParams+`}],"rates_pct":[50,100],"repetitions":1}`)
	for _, rid := range phaseRuns(ts.getSweep(t, id), 1) {
		finishStored(t, ts, rid, 1000)
	}
	rec := ts.formPost(t, "/sweeps/"+id+"/cancel", url.Values{})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sweeps/"+id {
		t.Fatalf("cancel form = %d %s", rec.Code, rec.Header().Get("Location"))
	}
	if err := ts.launcher.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := ts.getSweep(t, id)
	if res.Phase != store.SweepCanceled || len(phaseRuns(res, 2)) != 0 {
		t.Errorf("phase %s with %d second-phase runs, want canceled with none", res.Phase, len(phaseRuns(res, 2)))
	}
}

// TestSweepCancelStopsRunningRun: a sweep's running run is stopped by the
// sweep's cancel (it ends canceled), its queued ones canceled.
func TestSweepCancelStopsRunningRun(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	long := `{"workload":"producer","duration":120,"record-size":100,"profile":["none"]}`
	id := ts.createSweep(t, `{"configs":[{"label":"a","params":`+long+`},{"label":"b","params":`+long+`}],"rates_pct":[50],"repetitions":1}`)
	res := ts.waitSweep(t, id, "a run started", func(r sweepResult) bool {
		for _, run := range r.Runs {
			if run.Status == rundoc.StatusRunning {
				return true
			}
		}
		return false
	})
	if rec := ts.do(t, "POST", "/api/sweeps/"+id+"/cancel", ""); rec.Code != http.StatusAccepted {
		t.Fatalf("cancel = %d %s", rec.Code, rec.Body)
	}
	res = ts.waitSweep(t, id, "every run ended", func(r sweepResult) bool { return allFinal(r, 1) })
	if res.Phase != store.SweepCanceled || len(res.Runs) != 2 {
		t.Fatalf("phase %s, %d runs", res.Phase, len(res.Runs))
	}
	for _, r := range res.Runs {
		if r.Status != rundoc.StatusCanceled {
			t.Errorf("run %d: %s, want canceled", r.ID, r.Status)
		}
	}
}

// TestSweepTooSmallRates: a rate under 0.1% is a 400 naming rates_pct; a
// valid one that gives under 1 record/s of a configuration's maximum is
// left out, and a sweep left with no run at a target rate ends done
// saying why it has no points.
func TestSweepTooSmallRates(t *testing.T) {
	ts := newTestServer(t, noWorker)
	ts.launcher.Close()
	for _, body := range []string{`{"configs":[{"label":"a","params":{}}],"rates_pct":[1e-300]}`, `{"configs":[{"label":"a","params":{}}],"rates_pct":[50,0.05]}`} {
		rec := ts.do(t, "POST", "/api/presets/sweep", body)
		var resp struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &resp)
		if rec.Code != 400 || resp.Field != "rates_pct" || !strings.Contains(resp.Error, "at least 0.1") {
			t.Errorf("%s: %d %s, want 400 on rates_pct", body, rec.Code, rec.Body)
		}
	}
	id := ts.createSweep(t, `{"configs":[{"label":"a","params":`+tinySweepParams+`}],"rates_pct":[0.5,1],"repetitions":1}`)
	for _, rid := range phaseRuns(ts.getSweep(t, id), 1) {
		finishStored(t, ts, rid, 80) // 0.5% and 1% of 80/s: 0.4 and 0.8 records/s
	}
	if err := ts.launcher.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := ts.getSweep(t, id)
	if res.Phase != store.SweepDone || len(res.Points) != 0 || len(phaseRuns(res, 2)) != 0 {
		t.Fatalf("phase %s, %d points, %d runs at target rates", res.Phase, len(res.Points), len(phaseRuns(res, 2)))
	}
	if !strings.Contains(res.Note, "no points") || !strings.Contains(res.Note, "below 1 record/s") {
		t.Errorf("note %q does not say why there are no points", res.Note)
	}
	if page := ts.do(t, "GET", "/sweeps/"+id, "").Body.String(); !strings.Contains(page, "below 1 record/s") {
		t.Error("the page does not say why there are no points")
	}
}

// TestSweepRunsDeleted: a sweep whose second phase's runs were all
// deleted ends failed, saying so, instead of staying in phase rates; one
// whose first phase's runs were all deleted too; one whose second phase
// ended is done.
func TestSweepRunsDeleted(t *testing.T) {
	ts := newTestServer(t, noWorker)
	ts.launcher.Close()
	ctx := t.Context()
	deleteAll := func(ids []uint) {
		t.Helper()
		for _, id := range ids {
			if err := ts.st.CancelQueued(ctx, id, "test"); err != nil {
				t.Fatal(err)
			}
			if rec := ts.do(t, "DELETE", "/api/runs/"+uintString(id), ""); rec.Code != http.StatusNoContent && rec.Code != http.StatusOK {
				t.Fatalf("DELETE run %d = %d %s", id, rec.Code, rec.Body)
			}
		}
	}
	body := `{"configs":[{"label":"a","params":` + tinySweepParams + `}],"rates_pct":[50,100],"repetitions":1}`

	id := ts.createSweep(t, body)
	for _, rid := range phaseRuns(ts.getSweep(t, id), 1) {
		finishStored(t, ts, rid, 1000)
	}
	if err := ts.launcher.AdvanceSweeps(ctx); err != nil {
		t.Fatal(err)
	}
	res := ts.getSweep(t, id)
	if res.Phase != store.SweepRates || len(phaseRuns(res, 2)) != 2 {
		t.Fatalf("phase %s with %d runs at target rates, want rates with 2", res.Phase, len(phaseRuns(res, 2)))
	}
	deleteAll(phaseRuns(res, 2))
	if err := ts.launcher.AdvanceSweeps(ctx); err != nil {
		t.Fatal(err)
	}
	if res := ts.getSweep(t, id); res.Phase != store.SweepFailed || !strings.Contains(res.Note, "runs were deleted (2 of 3)") {
		t.Errorf("second phase deleted: phase %s note %q, want failed saying its runs were deleted", res.Phase, res.Note)
	}

	first := ts.createSweep(t, body)
	deleteAll(phaseRuns(ts.getSweep(t, first), 1))
	if err := ts.launcher.AdvanceSweeps(ctx); err != nil {
		t.Fatal(err)
	}
	if res := ts.getSweep(t, first); res.Phase != store.SweepFailed || !strings.Contains(res.Note, "runs were deleted") {
		t.Errorf("first phase deleted: phase %s note %q, want failed", res.Phase, res.Note)
	}

	done := ts.createSweep(t, body)
	for _, rid := range phaseRuns(ts.getSweep(t, done), 1) {
		finishStored(t, ts, rid, 1000)
	}
	if err := ts.launcher.AdvanceSweeps(ctx); err != nil {
		t.Fatal(err)
	}
	for _, rid := range phaseRuns(ts.getSweep(t, done), 2) {
		finishStored(t, ts, rid, 500)
	}
	if err := ts.launcher.AdvanceSweeps(ctx); err != nil {
		t.Fatal(err)
	}
	if res := ts.getSweep(t, done); res.Phase != store.SweepDone || res.Note != "" || len(res.Points) != 2 {
		t.Errorf("finished sweep: phase %s note %q, %d points; want done with 2 points", res.Phase, res.Note, len(res.Points))
	}
}

// TestRunLimits: a request that would queue more runs than
// --max-runs-per-request is a 400 naming the field and stating the limit
// (single runs, A/B, added repetitions, sweeps with both phases); one
// that would take the queues past --max-queued-runs is a 429 stating
// that limit. Nothing refused is stored.
func TestRunLimits(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { noWorker(c); c.MaxRunsPerRequest, c.MaxQueuedRuns = 6, 9 })
	const params = `"params":{"num-records":1000,"profile":["none"]}`
	for _, tt := range []struct{ name, path, body, field string }{
		{"repetitions", "/api/runs", `{"workload":"producer","repetitions":5,"warmup_runs":2,` + params + `}`, "repetitions"},
		{"A/B", "/api/runs", `{"workload":"producer","repetitions":4,"configs":[{"label":"a",` + params + `},{"label":"b",` + params + `}]}`, "repetitions"},
		{"sweep", "/api/presets/sweep", `{"configs":[{"label":"a","params":` + tinySweepParams + `}],"rates_pct":[50,100],"repetitions":3}`, "repetitions"},
	} {
		rec := ts.do(t, "POST", tt.path, tt.body)
		var resp struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &resp)
		if rec.Code != 400 || resp.Field != tt.field || !strings.Contains(resp.Error, "at most 6 runs") {
			t.Errorf("%s: %d %s, want 400 on %s stating the limit", tt.name, rec.Code, rec.Body, tt.field)
		}
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 0 {
		t.Fatalf("%d runs stored by refused requests", n)
	}

	// 6 queued (at the per-request limit), 2 more for a sweep's first
	// phase: 8 of 9.
	if rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","repetitions":6,`+params+`}`); rec.Code != http.StatusCreated {
		t.Fatalf("6 repetitions = %d %s", rec.Code, rec.Body)
	}
	ts.createSweep(t, `{"configs":[{"label":"a","params":`+tinySweepParams+`}],"rates_pct":[50],"repetitions":2}`)
	for _, tt := range []struct{ name, path, body string }{
		{"run", "/api/runs", `{"workload":"producer","repetitions":2,` + params + `}`},
		{"sweep", "/api/presets/sweep", `{"configs":[{"label":"a","params":` + tinySweepParams + `}],"rates_pct":[50],"repetitions":2}`},
	} {
		rec := ts.do(t, "POST", tt.path, tt.body)
		if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "limit of 9 queued runs") {
			t.Errorf("%s past the queue's limit: %d %s, want 429 stating it", tt.name, rec.Code, rec.Body)
		}
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 8 {
		t.Errorf("%d runs stored, want the 8 admitted", n)
	}
	// One more fits.
	ts.createRun(t, `{"workload":"producer",`+params+`}`)

	// Added repetitions: 2 columns × 4 > 6.
	var ab struct{ Runs []apiRun }
	ts2 := newTestServer(t, func(c *Config) { noWorker(c); c.MaxRunsPerRequest = 6 })
	rec := ts2.do(t, "POST", "/api/runs", `{"workload":"producer","repetitions":1,"configs":[{"label":"a",`+params+`},{"label":"b",`+params+`}]}`)
	if err := json.Unmarshal(rec.Body.Bytes(), &ab); rec.Code != http.StatusCreated || err != nil || len(ab.Runs) != 2 {
		t.Fatalf("A/B = %d %s", rec.Code, rec.Body)
	}
	body, _ := json.Marshal(map[string]any{"runs": idsOf(ab.Runs), "by": "group", "n": 4})
	code, resp := ts2.addReps(t, string(body))
	if code != 400 || resp.Field != "n" || !strings.Contains(resp.Error, "at most 6 runs") {
		t.Errorf("added repetitions: %d %+v, want 400 on n", code, resp)
	}
}

func uintString(id uint) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// TestSweepChartsInChartGrid: the sweep page draws its charts in the
// grid every other page's charts are in (.charts, a figure.chart-box
// each), so they scale as those do; alone in a full-width figure they
// were drawn about twice as large (TestE2ELatencySweep measures it).
func TestSweepChartsInChartGrid(t *testing.T) {
	ts := newTestServer(t, noWorker)
	id := ts.createSweep(t, `{"configs":[{"label":"a","params":`+tinySweepParams+`}],"rates_pct":[50],"repetitions":1}`)
	body := ts.do(t, "GET", "/sweeps/"+id, "").Body.String()
	start := strings.Index(body, `id="sweep-charts"`)
	if start < 0 {
		t.Fatal("no chart section")
	}
	section := body[start:]
	section = section[:strings.Index(section, "</section>")]
	if !strings.Contains(section, `<div class="charts">`) || strings.Count(section, `<figure class="chart-box"><svg class="chart"`) != 3 {
		t.Errorf("the sweep's charts are not in the charts grid:\n%s", section)
	}
}

// TestSweepCancelNeedsToken: canceling is a change: without the token a
// server that has one refuses it, and the form needs its CSRF token.
func TestSweepCancelNeedsToken(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { noWorker(c); c.Token = "tok" })
	rec := ts.do(t, "POST", "/api/presets/sweep", `{"configs":[{"label":"a","params":`+tinySweepParams+`}],"rates_pct":[50],"repetitions":1}`, "Authorization", "Bearer tok")
	var resp struct{ Sweep string }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); rec.Code != http.StatusCreated || err != nil {
		t.Fatalf("create = %d %s", rec.Code, rec.Body)
	}
	if rec := ts.do(t, "POST", "/api/sweeps/"+resp.Sweep+"/cancel", ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("cancel without the token = %d, want 401", rec.Code)
	}
	if rec := ts.do(t, "POST", "/sweeps/"+resp.Sweep+"/cancel", "", "Authorization", "Bearer tok", "Content-Type", "application/x-www-form-urlencoded"); rec.Code != http.StatusForbidden {
		t.Errorf("cancel form without its CSRF token = %d, want 403", rec.Code)
	}
	if res := ts.getSweepAs(t, resp.Sweep, "tok"); res.Phase != store.SweepMaxRate {
		t.Errorf("phase %s after refused cancels, want max-rate", res.Phase)
	}
}

// getSweepAs reads GET /api/sweeps/{id} with a token.
func (ts *testServer) getSweepAs(t *testing.T, id, token string) sweepResult {
	t.Helper()
	rec := ts.do(t, "GET", "/api/sweeps/"+id, "", "Authorization", "Bearer "+token)
	var res sweepResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); rec.Code != 200 || err != nil {
		t.Fatalf("GET sweep = %d %s", rec.Code, rec.Body)
	}
	return res
}
