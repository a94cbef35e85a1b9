package ui

import (
	"html/template"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// The live section of a running run's page has two charts: records per
// second, and the latency once an interval reports one (the average, and
// the p99 when the intervals carry it). They are drawn here, by LineChart
// like every other chart, and not in the browser: the page embeds them,
// and run.js swaps in a fresh copy from LiveChartsURL when new intervals
// arrive. One implementation of axes, ticks and geometry for static
// pages, reports and the live page.

// LiveChartsURL is where a run's live charts are served (an HTML
// fragment, see LiveCharts).
func LiveChartsURL(id uint) string { return runURL(id) + "/live-charts" }

// Ids of the live chart boxes, which run.js swaps the content of.
const (
	liveRecordsID = "live-chart-records"
	liveLatencyID = "live-chart-latency"
)

// liveChartsEmpty is what the live charts say before the first interval.
const liveChartsEmpty = "waiting for the first interval"

// LiveCharts renders the live section's chart boxes from the intervals a
// run reported so far, in order: records per second, and the average
// latency of the intervals that report one (the box stays hidden until
// one does). A long series is merged down to maxChartPoints as on the
// finished run's page (rundoc.MergeSeries).
func LiveCharts(pts []rundoc.SeriesPoint) template.HTML {
	if len(pts) > maxChartPoints {
		pts = rundoc.MergeSeries(pts, (len(pts)+maxChartPoints-1)/maxChartPoints)
	}
	return liveCharts(pts)
}

// LiveChartsOf is LiveCharts of a stored run's series: what the run page
// embeds, and what a run the server is not running (still queued, or
// finished meanwhile) shows.
func LiveChartsOf(r *rundoc.Run) template.HTML {
	return liveCharts(chartSeries(r.Series))
}

// liveCharts draws pts: records per second, and the average latency of
// the points that report one with their p99 when they have it. A point
// that merges others (a long run's, or merged for the chart) has no p99
// of its own, only its parts' largest: the title says so when one is
// drawn.
func liveCharts(pts []rundoc.SeriesPoint) template.HTML {
	var t, rps, lt, lat, p99t, p99 []float64
	approx := false
	for _, p := range pts {
		t, rps = append(t, p.T), append(rps, p.RecordsPerSec)
		if p.LatencyAvgMs > 0 {
			lt, lat = append(lt, p.T), append(lat, p.LatencyAvgMs)
		}
		if p.LatencyP99Ms > 0 {
			p99t, p99 = append(p99t, p.T), append(p99, p.LatencyP99Ms)
			approx = approx || p.PercentilesApprox
		}
	}
	var b strings.Builder
	b.WriteString(`<div id="` + liveRecordsID + `" class="chart-box">`)
	b.WriteString(string(LineChart(Chart{Title: "Records per second (live)", XLabel: windowAxis, YLabel: "throughput",
		Unit: "records/s", Empty: liveChartsEmpty, Series: []ChartSeries{{Name: "records/s", X: t, Y: rps}}})))
	b.WriteString(`</div>`)
	if len(lat) == 0 {
		b.WriteString(`<div id="` + liveLatencyID + `" class="chart-box" hidden></div>`)
	} else {
		b.WriteString(`<div id="` + liveLatencyID + `" class="chart-box">`)
		title, lines := "Average latency (live)", []ChartSeries{{Name: "average", X: lt, Y: lat}}
		if len(p99) > 0 {
			title = "Latency (live)"
			if approx {
				title = "Latency (live; p99 of merged intervals is their parts' largest, approximate)"
			}
			lines = append(lines, ChartSeries{Name: "p99", X: p99t, Y: p99})
		}
		b.WriteString(string(LineChart(Chart{Title: title, XLabel: windowAxis, YLabel: "latency",
			Unit: "ms", Series: lines})))
		b.WriteString(`</div>`)
	}
	return template.HTML(b.String())
}
