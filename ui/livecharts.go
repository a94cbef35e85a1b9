package ui

import (
	"html/template"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// The live section of a running run's page has two charts: records per
// second, and the average latency once an interval reports one. They are
// drawn here, by LineChart like every other chart, and not in the
// browser: the page embeds them, and run.js swaps in a fresh copy from
// LiveChartsURL when new intervals arrive. One implementation of axes,
// ticks and geometry for static pages, reports and the live page.

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
	return liveCharts(len(pts), func(i int) (float64, float64, float64) {
		return pts[i].T, pts[i].RecordsPerSec, pts[i].LatencyAvgMs
	})
}

// LiveChartsOf is LiveCharts of a stored run's series: what the run page
// embeds, and what a run the server is not running (still queued, or
// finished meanwhile) shows.
func LiveChartsOf(r *rundoc.Run) template.HTML {
	pts := chartSeries(r.Series)
	return liveCharts(len(pts), func(i int) (float64, float64, float64) {
		return pts[i].T, pts[i].RecordsPerSec, pts[i].LatencyAvgMs
	})
}

// liveCharts draws n points, at(i) giving the i-th point's time, records
// per second and average latency (0: not reported).
func liveCharts(n int, at func(i int) (t, rps, lat float64)) template.HTML {
	var t, rps, lt, lat []float64
	for i := range n {
		x, r, l := at(i)
		t, rps = append(t, x), append(rps, r)
		if l > 0 {
			lt, lat = append(lt, x), append(lat, l)
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
		b.WriteString(string(LineChart(Chart{Title: "Average latency (live)", XLabel: windowAxis, YLabel: "latency",
			Unit: "ms", Series: []ChartSeries{{Name: "average", X: lt, Y: lat}}})))
		b.WriteString(`</div>`)
	}
	return template.HTML(b.String())
}
