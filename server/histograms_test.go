package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
	"github.com/kbench/kbench/internal/store"
)

// testHist is a histogram of the run layout holding values (µs).
func testHist(t *testing.T, kind, scope string, start, end float64, values ...int64) rundoc.Histogram {
	t.Helper()
	h := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return rundoc.Histogram{Kind: kind, Scope: scope, StartS: start, EndS: end, Count: h.TotalCount(), Data: h.Encode()}
}

// seedHistogramRun stores a finished producer run with window histograms
// of record-latency and publish-delay and a log of two seconds of
// record-latency, as a run's result would bring them; it returns the run
// and what it stored.
func seedHistogramRun(t *testing.T, ts *testServer, label string) (uint, []rundoc.Histogram, []rundoc.Histogram) {
	t.Helper()
	window := []rundoc.Histogram{
		testHist(t, rundoc.HistRecordLatency, rundoc.HistogramWindow, 0, 2, 900, 1000, 1100, 5000),
		testHist(t, rundoc.HistPublishDelay, rundoc.HistogramWindow, 0, 2, 3, 4),
	}
	intervals := []rundoc.Histogram{
		testHist(t, rundoc.HistRecordLatency, rundoc.HistogramInterval, 0, 1, 900, 1000),
		testHist(t, rundoc.HistRecordLatency, rundoc.HistogramInterval, 1, 2, 1100, 5000),
	}
	var log bytes.Buffer
	if err := runhist.WriteLog(&log, time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC), intervals); err != nil {
		t.Fatal(err)
	}
	r := &store.Run{Label: label, Workload: rundoc.Producer, Spec: `{"workload":"producer","params":{"num-records":4}}`}
	if err := r.Record(store.Outcome{Status: rundoc.StatusSucceeded, Complete: true,
		Metrics:    []rundoc.Metric{{Name: "record-latency-p99", Value: 5, Unit: "ms", Better: rundoc.LowerIsBetter}},
		Histograms: window, HistogramLog: log.Bytes()}); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	return r.ID, window, intervals
}

// sameHistograms reports how got differs from want: kinds, scopes,
// times and decoded counts, never the encodings' text.
func sameHistograms(t *testing.T, what string, got, want []rundoc.Histogram) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d histograms, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Scope != w.Scope || g.Count != w.Count || g.StartS != w.StartS || g.EndS != w.EndS {
			t.Errorf("%s %d: %s/%s %v–%v s %d values, want %s/%s %v–%v s %d", what, i, g.Kind, g.Scope, g.StartS, g.EndS, g.Count,
				w.Kind, w.Scope, w.StartS, w.EndS, w.Count)
			continue
		}
		gh, err := runhist.Check(g)
		if err != nil {
			t.Fatalf("%s %d: %v", what, i, err)
		}
		wh, err := runhist.Check(w)
		if err != nil {
			t.Fatalf("%s %d (want): %v", what, i, err)
		}
		for _, q := range []float64{0, 50, 90, 99, 100} {
			if gh.ValueAtQuantile(q) != wh.ValueAtQuantile(q) {
				t.Errorf("%s %d: p%v %d, want %d", what, i, q, gh.ValueAtQuantile(q), wh.ValueAtQuantile(q))
			}
		}
	}
}

// checkHistogramsAPI checks GET /api/runs/:id/histograms against a
// run's window histograms and histogram log (nil: none): JSON, the
// scopes, and the log format.
func checkHistogramsAPI(t *testing.T, ts *testServer, id uint, window []rundoc.Histogram, log []byte) {
	t.Helper()
	get := func(query string) client.RunHistograms {
		t.Helper()
		rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/histograms%s", id, query), "")
		if rec.Code != http.StatusOK {
			t.Fatalf("histograms%s: %d %s", query, rec.Code, rec.Body)
		}
		var h client.RunHistograms
		if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil {
			t.Fatal(err)
		}
		if h.Run != id || h.Unit != "us" || h.Encoding != rundoc.HistogramEncoding || h.Lowest != 1 || h.Highest != 3_600_000_000 || h.Digits != 3 {
			t.Errorf("histograms%s: header %+v", query, h)
		}
		return h
	}
	sameHistograms(t, "window", get("?scope=window").Histograms, window)
	var intervals []rundoc.Histogram
	if log != nil {
		var err error
		if _, intervals, err = runhist.ReadLog(bytes.NewReader(log)); err != nil {
			t.Fatal(err)
		}
	}
	sameHistograms(t, "intervals", get("?scope=interval").Histograms, intervals)
	all := get("")
	sameHistograms(t, "all", all.Histograms, append(append([]rundoc.Histogram{}, window...), intervals...))
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/histograms?format=hlog", id), "")
	if len(intervals) == 0 {
		if rec.Code != http.StatusNotFound {
			t.Errorf("hlog of a run without intervals: %d, want 404", rec.Code)
		}
		return
	}
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("hlog: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	_, again, err := runhist.ReadLog(rec.Body)
	if err != nil {
		t.Fatalf("the API's hlog does not read back: %v", err)
	}
	sameHistograms(t, "hlog", again, intervals)
}

// TestRunHistogramsAPI: GET /api/runs/:id/histograms answers a run's
// stored histograms, filtered by kind and scope, as JSON or as an
// HdrHistogram log; bad parameters are a 400 naming them.
func TestRunHistogramsAPI(t *testing.T) {
	ts := newTestServer(t, nil)
	id, window, intervals := seedHistogramRun(t, ts, "hist")
	var log bytes.Buffer
	if err := runhist.WriteLog(&log, time.Time{}, intervals); err != nil {
		t.Fatal(err)
	}
	checkHistogramsAPI(t, ts, id, window, log.Bytes())

	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/histograms?kind=publish-delay", id), "")
	var one client.RunHistograms
	if err := json.Unmarshal(rec.Body.Bytes(), &one); err != nil || len(one.Histograms) != 1 || one.Histograms[0].Kind != rundoc.HistPublishDelay {
		t.Errorf("kind=publish-delay: %d %s", rec.Code, rec.Body)
	}
	rec = ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/histograms?kind=record-latency&scope=window&format=hlog", id), "")
	if _, hs, err := runhist.ReadLog(rec.Body); rec.Code != http.StatusOK || err != nil || len(hs) != 1 || hs[0].Count != 4 {
		t.Errorf("window hlog: %d %v %+v", rec.Code, err, hs)
	}

	for _, tc := range []struct{ query, field string }{
		{"?kind=latency", "kind"}, {"?kind=record-latency,nope", "kind"}, {"?scope=all", "scope"}, {"?format=csv", "format"},
	} {
		rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/histograms%s", id, tc.query), "")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.field) {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.query, rec.Code, rec.Body, tc.field)
		}
	}
	if rec := ts.do(t, "GET", "/api/runs/999999/histograms", ""); rec.Code != http.StatusNotFound {
		t.Errorf("unknown run: %d, want 404", rec.Code)
	}
	// A run from before histograms: none, and no log.
	plain := seedCompare(t, ts)[0]
	checkHistogramsAPI(t, ts, plain, nil, nil)

	// The run page draws the spectra and links the API.
	page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "").Body.String()
	for _, want := range []string{"Latency distribution", "Latency by percentile", "Publish delay by percentile", "percentile (log scale of 1/(1−q))", fmt.Sprintf("/api/runs/%d/histograms?format=hlog", id)} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
}

// TestCompareMergesHistograms: two runs of a label merge into the
// percentiles of all their values, shown as "(merged)" rows beside the
// medians, descriptive, and drawn as one spectrum line per label.
func TestCompareMergesHistograms(t *testing.T) {
	ts := newTestServer(t, nil)
	a1, _, _ := seedHistogramRun(t, ts, "a")
	a2, _, _ := seedHistogramRun(t, ts, "a")
	b, _, _ := seedHistogramRun(t, ts, "b")
	rec := ts.do(t, "GET", fmt.Sprintf("/api/compare?runs=%d,%d,%d&by=label", a1, a2, b), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("compare: %d %s", rec.Code, rec.Body)
	}
	var cmp client.Comparison
	if err := json.Unmarshal(rec.Body.Bytes(), &cmp); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range cmp.Rows {
		if row.Metric != "record-latency-p99 (merged)" {
			continue
		}
		found = true
		// Each run holds 900, 1000, 1100 and 5000 µs; merged, the p99 of
		// eight values is the largest, 5 ms (to HdrHistogram's precision).
		if c := row.Cells[0]; c.N != 2 || c.Value == nil || *c.Value < 4.99 || *c.Value > 5.01 {
			t.Errorf("merged p99 of a: %+v, want 5 ms from 2 runs", c)
		}
		if c := row.Cells[1]; c.Test != "descriptive" {
			t.Errorf("merged cell of b: test %q, want descriptive", c.Test)
		}
	}
	if !found {
		t.Errorf("no merged p99 row in %s", rec.Body)
	}
	page := ts.do(t, "GET", fmt.Sprintf("/compare?runs=%d,%d,%d&by=label", a1, a2, b), "").Body.String()
	for _, want := range []string{"Latency distribution", "record-latency by percentile", "2 runs merged, 8 values", "(merged)"} {
		if !strings.Contains(page, want) {
			t.Errorf("comparison page lacks %q", want)
		}
	}
	// A report of the same runs shows the same.
	rec = ts.do(t, "POST", "/api/reports", fmt.Sprintf(`{"title":"merged","runs":[%d,%d,%d],"by":"label"}`, a1, a2, b))
	var created struct{ Slug string }
	if err := json.Unmarshal(rec.Body.Bytes(), &created); rec.Code != http.StatusCreated || err != nil {
		t.Fatalf("POST /api/reports = %d %s", rec.Code, rec.Body)
	}
	report := ts.do(t, "GET", "/r/"+created.Slug, "").Body.String()
	for _, want := range []string{"Latency distribution", "2 runs merged, 8 values", "record-latency-p99 (merged)"} {
		if !strings.Contains(report, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
}
