package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// storedSweep stores sweep id as the sweep loop leaves one that has ended:
// phase 1 (one unthrottled run per label), then phase 2 at 50% and 100%
// of each maximum, every run succeeded with the metrics a producer run
// stores. finished false leaves it measuring its maximum rates, its
// phase-1 runs queued. It returns the runs, phase 1's first.
func storedSweep(t *testing.T, ts *testServer, id string, finished bool) []*store.Run {
	t.Helper()
	ctx := t.Context()
	labels := []string{"trunk", "patch"}
	configs := make([]launch.SweepConfig, len(labels))
	for i, l := range labels {
		configs[i] = launch.SweepConfig{Label: l, Queue: "local", Workload: rundoc.Producer, Spec: json.RawMessage(`{"workload":"producer","params":{}}`)}
	}
	cj, _ := json.Marshal(configs)
	maxRate := []float64{98000, 100000}
	metric := func(name, unit string, better rundoc.Better, v float64) store.Metric {
		return store.Metric{Name: name, Value: v, Unit: unit, Better: better}
	}
	run := func(c int, rate string, metrics ...store.Metric) *store.Run {
		r := &store.Run{Label: labels[c], Workload: rundoc.Producer, GroupID: launch.SweepGroup(id, c, rate), Metrics: metrics}
		if finished {
			r.Status = rundoc.StatusSucceeded
		}
		return r
	}
	var runs []*store.Run
	var links []store.SweepRun
	for c := range labels {
		runs = append(runs, run(c, "max", metric("record-send-rate", "records/s", rundoc.HigherIsBetter, maxRate[c])))
		links = append(links, store.SweepRun{Config: c, Phase: 1, TargetRate: -1})
	}
	sw := &store.Sweep{ID: id, Phase: store.SweepMaxRate, Configs: string(cj), RatesPct: "[50,100]", Repetitions: 1}
	if err := ts.st.CreateSweep(ctx, sw, runs, links); err != nil {
		t.Fatal(err)
	}
	if !finished {
		return runs
	}
	// p50, p99, p99.9 (ms) per label and rate: latency grows with load.
	lat := map[string][3]float64{"trunk@50": {2.1, 9.5, 31}, "trunk@100": {26, 429, 612}, "patch@50": {1.8, 6.2, 20}, "patch@100": {14, 162, 240}}
	var rates []*store.Run
	var rateLinks []store.SweepRun
	for _, pct := range []float64{50, 100} {
		for c, l := range labels {
			key := fmt.Sprintf("%s@%v", l, pct)
			p := lat[key]
			rates = append(rates, run(c, fmt.Sprint(pct),
				metric("record-send-rate", "records/s", rundoc.HigherIsBetter, maxRate[c]*pct/100*1.01),
				metric("record-latency-p50", "ms", rundoc.LowerIsBetter, p[0]),
				metric("record-latency-p99", "ms", rundoc.LowerIsBetter, p[1]),
				metric("record-latency-p999", "ms", rundoc.LowerIsBetter, p[2])))
			rateLinks = append(rateLinks, store.SweepRun{Config: c, Phase: 2, RatePct: pct, TargetRate: maxRate[c] * pct / 100})
		}
	}
	maxes, _ := json.Marshal([]launch.SweepMax{{Config: 0, RecordsPerSec: maxRate[0], Runs: 1}, {Config: 1, RecordsPerSec: maxRate[1], Runs: 1}})
	if err := ts.st.AdvanceSweep(ctx, id, store.SweepRates, string(maxes), rates, rateLinks); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.EndSweep(ctx, id, store.SweepDone, store.SweepRates); err != nil {
		t.Fatal(err)
	}
	return append(runs, rates...)
}

// normalizeReport replaces what changes from run to run in a report's
// export: its slug and times.
func normalizeReport(s, slug string) string {
	s = strings.ReplaceAll(s, slug, "SLUG")
	return regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\dZ)?`).ReplaceAllString(s, "TIME")
}

// TestReportOfSweep: a finished sweep saved as a report (API and the
// sweep page's form) shows the sweep's three charts, one line per label
// whose points link to their runs, and a table of its points; the
// exports hold the sweep (golden files); the sweep's runs cannot be
// deleted while the report shows it.
func TestReportOfSweep(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.launcher.Close() // the sweeps here are stored as they end; nothing advances them
	const id = "0123456789ab"
	runs := storedSweep(t, ts, id, true)
	points := runs[2:]

	rec := ts.do(t, "POST", "/api/reports", `{"title":"Latency: trunk vs patch","sweep":"`+id+`","notes":"At 100% the patch halves p99."}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/reports with a sweep = %d %s", rec.Code, rec.Body)
	}
	var created struct{ Slug, URL string }
	json.Unmarshal(rec.Body.Bytes(), &created)
	slug := created.Slug
	if created.URL != "/r/"+slug || slug == "" {
		t.Fatalf("created %+v", created)
	}

	page := ts.do(t, "GET", "/r/"+slug, "")
	body := page.Body.String()
	if page.Code != http.StatusOK {
		t.Fatalf("GET /r/%s = %d %s", slug, page.Code, body)
	}
	if n := strings.Count(body, `<svg class="chart"`); n != 3 {
		t.Errorf("report page has %d charts, want the sweep's 3", n)
	}
	if n := strings.Count(body, "<polyline"); n != 6 {
		t.Errorf("%d lines, want 6 (2 labels × 3 charts)", n)
	}
	for _, r := range points {
		if n := strings.Count(body, fmt.Sprintf(`<a href="/runs/%d"><circle`, r.ID)); n != 3 {
			t.Errorf("run %d is a linked point on %d charts, want 3", r.ID, n)
		}
		if !strings.Contains(body, fmt.Sprintf(`<td><a href="/runs/%d">#%d</a></td>`, r.ID, r.ID)) {
			t.Errorf("the points' table does not link run %d", r.ID)
		}
	}
	for _, want := range []string{`id="report-sweep-points"`, `href="/sweeps/` + id + `"`, "At 100% the patch halves p99.", "### Latency vs throughput: sweep"} {
		if !strings.Contains(body, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	if strings.Contains(body, "comparison-table") {
		t.Error("a report of a sweep alone shows a comparison table")
	}

	for _, c := range []struct{ ext, ctype string }{
		{".md", "text/markdown; charset=utf-8"}, {".csv", "text/csv; charset=utf-8"}, {".json", "application/json; charset=utf-8"},
	} {
		rec := ts.do(t, "GET", "/r/"+slug+c.ext, "")
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != c.ctype {
			t.Errorf("GET /r/%s%s = %d %q", slug, c.ext, rec.Code, rec.Header().Get("Content-Type"))
		}
		golden.Check(t, "report_sweep"+c.ext, normalizeReport(rec.Body.String(), slug))
	}

	// The sweep's runs, both phases, are held back by the report.
	for _, r := range []*store.Run{runs[0], points[3]} {
		rec := ts.do(t, "DELETE", fmt.Sprintf("/api/runs/%d", r.ID), "")
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), slug) {
			t.Errorf("DELETE run %d of the report's sweep = %d %s, want 409 naming the report", r.ID, rec.Code, rec.Body)
		}
		if p := ts.do(t, "GET", fmt.Sprintf("/runs/%d", r.ID), "").Body.String(); !strings.Contains(p, `href="/r/`+slug+`"`) {
			t.Errorf("run %d's page does not name the report that holds it", r.ID)
		}
	}

	// The finished sweep's page offers the form; it saves the sweep too.
	sweepPage := ts.do(t, "GET", "/sweeps/"+id, "").Body.String()
	if !strings.Contains(sweepPage, `id="save-report-form"`) || !strings.Contains(sweepPage, `name="sweep" value="`+id+`"`) {
		t.Fatal("the finished sweep's page has no save-as-report form for it")
	}
	rec = ts.formPost(t, "/reports", url.Values{"title": {"From the form"}, "sweep": {id}})
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/r/") {
		t.Fatalf("POST /reports with a sweep = %d (Location %q) %s", rec.Code, loc, rec.Body)
	}
	if p := ts.do(t, "GET", loc, ""); p.Code != 200 || strings.Count(p.Body.String(), `<svg class="chart"`) != 3 {
		t.Errorf("the form's report %s = %d without the sweep's charts", loc, p.Code)
	}
}

// TestReportOfSweepBadInput: a report's sweep must be a stored sweep
// that has ended: anything else is a 400 naming "sweep" (and nothing is
// stored), on the API and the form; a sweep still running offers no
// save form.
func TestReportOfSweepBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.launcher.Close()
	storedSweep(t, ts, "aaaaaaaaaaaa", false)

	for _, c := range []struct{ body, fields, says string }{
		{`{"title":"x","sweep":"ffffffffffff"}`, "sweep", "no sweep ffffffffffff"},
		{`{"title":"x","sweep":"../../etc"}`, "sweep", "not a sweep id"},
		{`{"title":"x","sweep":"aaaaaaaaaaaa"}`, "sweep", "has not ended (0 of 2 runs finished, its target rates not yet queued)"},
		{`{"title":"","sweep":"ffffffffffff"}`, "title sweep", "is required"},
		{`{"title":"x","sweep":"ffffffffffff","runs":[1]}`, "sweep runs", "no sweep"},
		{`{"title":"x"}`, "runs", "at least two runs"},
	} {
		rec := ts.do(t, "POST", "/api/reports", c.body)
		var e apiError
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != http.StatusBadRequest || e.fields() != c.fields || !strings.Contains(rec.Body.String(), c.says) {
			t.Errorf("POST /api/reports %s = %d %s, want 400 naming %s saying %q", c.body, rec.Code, rec.Body, c.fields, c.says)
		}
	}
	rec := ts.formPost(t, "/reports", url.Values{"title": {"x"}, "sweep": {"ffffffffffff"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "sweep:") {
		t.Errorf("form with an unknown sweep = %d, want a 400 page naming sweep", rec.Code)
	}
	// Runs 1 and 2 are the unfinished sweep's: no report holds them.
	for _, id := range []uint{1, 2} {
		if reps, err := ts.st.ReportsUsingRun(t.Context(), id); err != nil || len(reps) != 0 {
			t.Errorf("run %d of the unfinished sweep is held by %+v (%v)", id, reps, err)
		}
	}
	if p := ts.do(t, "GET", "/sweeps/aaaaaaaaaaaa", "").Body.String(); strings.Contains(p, `id="save-report-form"`) {
		t.Error("a sweep still measuring offers to save it as a report")
	}
}
