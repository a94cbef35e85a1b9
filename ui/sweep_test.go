package ui

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// sweepFixture is a finished sweep of two labels at two rates.
func sweepFixture() SweepView {
	points := []SweepPoint{
		{Label: "trunk", RatePct: 50, RunID: 3, URL: "/runs/3", Throughput: 50000, P50: 2.1, P99: 9.5, P999: 31},
		{Label: "trunk", RatePct: 100, RunID: 5, URL: "/runs/5", Throughput: 97000, P50: 26, P99: 429, P999: 612},
		{Label: "patch", RatePct: 50, RunID: 4, URL: "/runs/4", Throughput: 51000, P50: 1.8, P99: 6.2, P999: 20},
		{Label: "patch", RatePct: 100, RunID: 6, URL: "/runs/6", Throughput: 99000, P50: 14, P99: 162, P999: 240},
	}
	return SweepView{Page: Page{Title: "Sweep 0123456789ab"}, Result: true, ID: "0123456789ab", Phase: "rates", Done: 6, Total: 6,
		APIURL:   "/api/sweeps/0123456789ab",
		MaxRates: []SweepMaxRow{{Label: "trunk", Workload: "producer", Queue: "local", MaxRate: "98,000", Runs: 1}, {Label: "patch", Workload: "producer", Queue: "local", MaxRate: "100,000", Runs: 1}},
		Charts:   SweepCharts([]string{"trunk", "patch"}, points),
		Runs:     []SweepRunRow{{ID: 3, URL: "/runs/3", Label: "trunk", Phase: 2, Rate: "50%", TargetRate: "49,000", Status: "succeeded", Throughput: "50,000", P50: "2.1", P99: "9.5", P999: "31"}},
		Metrics:  "producer: record-send-rate; record-latency-p50, record-latency-p99, record-latency-p999"}
}

// TestSweepPage: the result page draws three charts (p50, p99, p99.9),
// each with one line per label whose points link to their runs.
func TestSweepPage(t *testing.T) {
	u := newTestUI(t)
	html := render(t, u, "sweeps", sweepFixture())
	if n := strings.Count(html, `<svg class="chart"`); n != 3 {
		t.Errorf("%d charts, want 3", n)
	}
	if n := strings.Count(html, "<polyline"); n != 6 {
		t.Errorf("%d lines, want 6", n)
	}
	for _, id := range []string{"3", "4", "5", "6"} {
		if n := strings.Count(html, `<a href="/runs/`+id+`"><circle`); n != 3 {
			t.Errorf("run %s linked from %d charts, want 3", id, n)
		}
	}
	golden.Check(t, "sweep.html", html)
}

// TestSweepFormErrors: errors of configuration rows sit beside their
// fields, and every error is listed in the summary.
func TestSweepFormErrors(t *testing.T) {
	v := NewSweepForm(url.Values{"label-1": {"b"}, "params-1": {`{"x":1}`}}, map[string]string{
		"configs[1].params.x": "unknown parameter", "rates_pct": "needs at least one target rate\nat most 20 target rates"}, nil)
	if strings.Join(v.Rows[1].ParamsErr, "|") != "params.x: unknown parameter" || v.Rows[1].Params != `{"x":1}` {
		t.Errorf("row 1: %+v", v.Rows[1])
	}
	if len(v.Errors) != 3 {
		t.Errorf("summary %+v, want every error, both of rates_pct's", v.Errors)
	}
	html := render(t, newTestUI(t), "sweeps", v)
	if !strings.Contains(html, "params.x: unknown parameter") || !strings.Contains(html, "needs at least one target rate") || !strings.Contains(html, "at most 20 target rates") {
		t.Error("the page does not show the errors")
	}
}

// TestGoldenReportSweep: a report that shows a sweep and compares no
// runs draws the sweep's three charts (a line per label, points linked
// to runs) and a table of its points by label and rate, and leaves out
// the comparison's table, runs and flame graphs.
func TestGoldenReportSweep(t *testing.T) {
	points := []SweepPoint{
		{Label: "trunk", RatePct: 100, TargetRate: 98000, RunID: 5, URL: "/runs/5", Throughput: 97000, P50: 26, P99: 429, P999: 612},
		{Label: "patch", RatePct: 50, TargetRate: 50000, RunID: 4, URL: "/runs/4", Throughput: 51000, P50: 1.8, P99: 6.2, P999: 20},
		{Label: "trunk", RatePct: 50, TargetRate: 49000, RunID: 3, URL: "/runs/3", Throughput: 50000, P50: 2.1, P99: 9.5, P999: 31},
		{Label: "patch", RatePct: 100, TargetRate: 100000, RunID: 6, URL: "/runs/6", Throughput: 99000, P50: 14, P99: 162, P999: 240},
	}
	rep := &rundoc.Report{Slug: "sweep2345672345672345672ab", Title: "Latency: trunk vs patch", Sweep: "0123456789ab",
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	v := NewReportView(rep, nil, nil, "## Latency: trunk vs patch")
	v.Sweep = NewReportSweep("0123456789ab", []string{"trunk", "patch"}, points, "producer: record-send-rate; record-latency-p50, record-latency-p99, record-latency-p999")
	html := render(t, newTestUI(t), "report", v)
	if n := strings.Count(html, `<svg class="chart"`); n != 3 {
		t.Errorf("%d charts, want 3", n)
	}
	if n := strings.Count(html, "<polyline"); n != 6 {
		t.Errorf("%d lines, want 6", n)
	}
	var order []string
	for _, m := range regexp.MustCompile(`<td><a href="/runs/(\d)">`).FindAllStringSubmatch(html, -1) {
		order = append(order, m[1])
	}
	if got := strings.Join(order, " "); got != "3 5 4 6" {
		t.Errorf("table rows run %s, want 3 5 4 6 (by label, then rate)", got)
	}
	for _, absent := range []string{"comparison-table", "diffs-heading", "open as a comparison"} {
		if strings.Contains(html, absent) {
			t.Errorf("a report of a sweep alone shows %q", absent)
		}
	}
	golden.Check(t, "report_sweep.html", html)
}
