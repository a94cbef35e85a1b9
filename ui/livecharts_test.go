package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// polylinePoints counts the points of each polyline in s, in order.
func polylinePoints(s string) []int {
	var out []int
	for _, m := range regexp.MustCompile(`<polyline [^>]*points="([^"]*)"`).FindAllStringSubmatch(s, -1) {
		out = append(out, len(strings.Fields(m[1])))
	}
	return out
}

// TestLiveCharts: the live charts are LineChart's charts of the intervals
// so far (records per second; the average latency of the intervals that
// report one), in boxes run.js can swap the content of.
func TestLiveCharts(t *testing.T) {
	pts := []rundoc.SeriesPoint{
		{T: 0.25, RecordsPerSec: 1000, LatencyAvgMs: 2},
		{T: 0.5, RecordsPerSec: 1200},
		{T: 0.75, RecordsPerSec: 1100, LatencyAvgMs: 3},
	}
	got := string(LiveCharts(pts))
	golden.Check(t, "live_charts.html", got)

	records := LineChart(Chart{Title: "Records per second (live)", XLabel: windowAxis, YLabel: "throughput", Unit: "records/s",
		Series: []ChartSeries{{Name: "records/s", X: []float64{0.25, 0.5, 0.75}, Y: []float64{1000, 1200, 1100}}}})
	latency := LineChart(Chart{Title: "Average latency (live)", XLabel: windowAxis, YLabel: "latency", Unit: "ms",
		Series: []ChartSeries{{Name: "average", X: []float64{0.25, 0.75}, Y: []float64{2, 3}}}})
	want := `<div id="live-chart-records" class="chart-box">` + string(records) + `</div>` +
		`<div id="live-chart-latency" class="chart-box">` + string(latency) + `</div>`
	if got != want {
		t.Errorf("LiveCharts =\n%s\nwant LineChart's charts in their boxes:\n%s", got, want)
	}

	empty := string(LiveCharts(nil))
	if !strings.Contains(empty, `>waiting for the first interval</text>`) ||
		!strings.Contains(empty, `<div id="live-chart-latency" class="chart-box" hidden></div>`) || strings.Contains(empty, "<polyline") {
		t.Errorf("no intervals yet: %s", empty)
	}
	// Latency appears with the first interval that reports one.
	if noLat := string(LiveCharts(pts[1:2])); !strings.Contains(noLat, `<div id="live-chart-latency" class="chart-box" hidden></div>`) {
		t.Errorf("an interval without latency shows a latency chart: %s", noLat)
	}
}

// TestLiveChartsBounded: a long run's live chart draws at most
// maxChartPoints points, merged as the finished page's charts are.
func TestLiveChartsBounded(t *testing.T) {
	pts := make([]rundoc.SeriesPoint, rundoc.MaxSeriesPoints)
	for i := range pts {
		pts[i] = rundoc.SeriesPoint{T: float64(i+1) * 0.25, Records: 250, RecordsPerSec: 1000 + float64(i%7), LatencyAvgMs: 1}
	}
	for _, n := range polylinePoints(string(LiveCharts(pts))) {
		if n > maxChartPoints || n < maxChartPoints/2 {
			t.Errorf("a live line of %d intervals draws %d points, want at most %d (and not far fewer)", len(pts), n, maxChartPoints)
		}
	}
}

// TestLiveChartsOfStoredRun: the page embeds the stored series' charts
// (a run's series is in time order: rundoc.Run.Series).
func TestLiveChartsOfStoredRun(t *testing.T) {
	r := &rundoc.Run{ID: 9, Status: rundoc.StatusRunning, Series: []rundoc.SeriesPoint{
		{T: 0.25, RecordsPerSec: 10},
		{T: 0.5, RecordsPerSec: 20},
	}}
	v, err := NewRunView(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := LiveCharts([]rundoc.SeriesPoint{{T: 0.25, RecordsPerSec: 10}, {T: 0.5, RecordsPerSec: 20}})
	if v.LiveCharts != want || v.LiveChartsURL != "/runs/9/live-charts" {
		t.Errorf("run page live charts %q at %q, want %q at /runs/9/live-charts", v.LiveCharts, v.LiveChartsURL, want)
	}
}

// TestLiveChartsPercentiles: intervals with percentiles add a p99 line
// to the live latency chart, whose title says when merged intervals
// make it approximate.
func TestLiveChartsPercentiles(t *testing.T) {
	pts := []rundoc.SeriesPoint{
		{T: 0.25, RecordsPerSec: 1000, LatencyAvgMs: 2, LatencyP99Ms: 5},
		{T: 0.5, RecordsPerSec: 1100, LatencyAvgMs: 3, LatencyP99Ms: 7},
	}
	got := string(LiveCharts(pts))
	if !strings.Contains(got, ">Latency (live)</text>") || !strings.Contains(got, "<title>p99</title>") {
		t.Errorf("live latency chart without its p99 line: %s", got)
	}
	pts[1].PercentilesApprox = true
	if got := string(LiveCharts(pts)); !strings.Contains(got, "approximate") {
		t.Errorf("merged intervals' p99 not said to be approximate: %s", got)
	}
}
