package ui

import (
	"html/template"
	"sort"
	"strconv"
)

// ReportSweep is the latency-vs-throughput sweep a report shows: the
// sweep's three charts and a table of its points, rebuilt from its runs.
type ReportSweep struct {
	ID, URL string
	Charts  []template.HTML
	Rows    []ReportSweepRow
	// Metrics names the metrics plotted, as the sweep's page does.
	Metrics string
}

// ReportSweepRow is one point of a report's sweep.
type ReportSweepRow struct {
	Label      string
	Rate       string // "50%"
	TargetRate string
	Throughput string
	P50        string
	P99        string
	P999       string
	RunID      uint
	URL        string
}

// NewReportSweep builds the sweep section of a report: SweepCharts of
// points (one line per label, in labels' order), and one row per point
// by label, target rate and run.
func NewReportSweep(id string, labels []string, points []SweepPoint, metrics string) *ReportSweep {
	v := &ReportSweep{ID: id, URL: SweepURL(id), Charts: SweepCharts(labels, points), Metrics: metrics}
	rank := map[string]int{}
	for i, l := range labels {
		if _, ok := rank[l]; !ok {
			rank[l] = i
		}
	}
	pts := append([]SweepPoint(nil), points...)
	sort.SliceStable(pts, func(i, j int) bool {
		a, b := pts[i], pts[j]
		if rank[a.Label] != rank[b.Label] {
			return rank[a.Label] < rank[b.Label]
		}
		if a.RatePct != b.RatePct {
			return a.RatePct < b.RatePct
		}
		return a.RunID < b.RunID
	})
	for _, p := range pts {
		v.Rows = append(v.Rows, ReportSweepRow{Label: p.Label, Rate: strconv.FormatFloat(p.RatePct, 'f', -1, 64) + "%",
			TargetRate: FormatNumber(p.TargetRate), Throughput: FormatNumber(p.Throughput),
			P50: FormatNumber(p.P50), P99: FormatNumber(p.P99), P999: FormatNumber(p.P999), RunID: p.RunID, URL: p.URL})
	}
	return v
}
