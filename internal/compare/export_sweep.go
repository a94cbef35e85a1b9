package compare

import (
	"bytes"
	"encoding/csv"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/rundoc"
)

// Sweep is a latency-vs-throughput sweep as a report's exports show it:
// its points, one per run at a target rate that succeeded with every
// figure. The figures are read from the runs each time, as a table's are.
type Sweep struct {
	ID string
	// URL is the sweep's page, absolute.
	URL string
	// Labels are the configurations in the sweep's order: rows follow it,
	// then the target rate, then the run.
	Labels []string
	Points []SweepPoint
}

// SweepPoint is one run of a sweep's second phase.
type SweepPoint struct {
	Label string
	// RatePct is the target in percent of the configuration's maximum
	// rate, TargetRate the throttle the run was given (records/s).
	RatePct    float64
	TargetRate float64
	RunID      uint
	// RunURL is the run's page, absolute.
	RunURL string
	// Achieved is the rate the run reached; P50, P99 and P999 its
	// latency percentiles: each the run's stored metric, with its unit.
	Achieved, P50, P99, P999 SweepFigure
}

// SweepFigure is one stored metric of a sweep's run.
type SweepFigure struct {
	Metric string
	Unit   string
	Better rundoc.Better
	Value  float64
}

// sweepTargetUnit is the unit of a sweep's target rates: the throttle a
// run is given is in records per second.
const sweepTargetUnit = "records/s"

// sorted returns the points by label (in Labels' order), target rate and
// run.
func (sw *Sweep) sorted() []SweepPoint {
	rank := map[string]int{}
	for i, l := range sw.Labels {
		if _, ok := rank[l]; !ok {
			rank[l] = i
		}
	}
	pts := append([]SweepPoint(nil), sw.Points...)
	sort.SliceStable(pts, func(i, j int) bool {
		a, b := pts[i], pts[j]
		ra, oka := rank[a.Label]
		rb, okb := rank[b.Label]
		switch {
		case oka != okb:
			return oka
		case ra != rb:
			return ra < rb
		case a.Label != b.Label:
			return a.Label < b.Label
		case a.RatePct != b.RatePct:
			return a.RatePct < b.RatePct
		}
		return a.RunID < b.RunID
	})
	return pts
}

// sameUnit returns the unit every point's figure has, "" when they
// differ (or there are no points).
func sameUnit(pts []SweepPoint, fig func(SweepPoint) SweepFigure) string {
	unit := ""
	for i, p := range pts {
		u := fig(p).Unit
		if i == 0 {
			unit = u
		} else if u != unit {
			return ""
		}
	}
	return unit
}

// sweepColumns are the figures of a point, in the order the exports
// write them, with the name Markdown gives their column.
var sweepColumns = []struct {
	name string
	get  func(SweepPoint) SweepFigure
}{
	{"Achieved", func(p SweepPoint) SweepFigure { return p.Achieved }},
	{"p50", func(p SweepPoint) SweepFigure { return p.P50 }},
	{"p99", func(p SweepPoint) SweepFigure { return p.P99 }},
	{"p99.9", func(p SweepPoint) SweepFigure { return p.P999 }},
}

// markdownSweep writes sw as a section: a heading linking the sweep's
// page, then one row per point: label, target (percent of the maximum
// and records/s), the achieved rate and the latency percentiles, each
// with its unit (in the header when every point's is the same, else in
// the cell), and the run's link.
func markdownSweep(b *strings.Builder, sw *Sweep) {
	b.WriteString("### Latency vs throughput: sweep ")
	if sw.URL != "" {
		b.WriteString("[" + escapeInline(sw.ID) + "](" + escapeURL(sw.URL) + ")")
	} else {
		b.WriteString(escapeInline(sw.ID))
	}
	b.WriteString("\n\n")
	pts := sw.sorted()
	if len(pts) == 0 {
		b.WriteString("No run at a target rate has succeeded.\n\n")
		return
	}
	b.WriteString("One row per run at a target rate (a percentage of its configuration's maximum rate, the median of its unthrottled runs).\n\n")
	units := make([]string, len(sweepColumns))
	b.WriteString("| Label | Target (% of max) | Target rate (" + sweepTargetUnit + ") |")
	for i, c := range sweepColumns {
		units[i] = sameUnit(pts, c.get)
		b.WriteString(" " + c.name)
		if units[i] != "" {
			b.WriteString(" (" + escapeInline(units[i]) + ")")
		}
		b.WriteString(" |")
	}
	b.WriteString(" Run |\n| :--- | ---: | ---: |")
	for range sweepColumns {
		b.WriteString(" ---: |")
	}
	b.WriteString(" :--- |\n")
	for _, p := range pts {
		b.WriteString("| " + escapeInline(p.Label) + " | " + trimFloat(p.RatePct) + "% | " + FormatNumber(p.TargetRate) + " |")
		for i, c := range sweepColumns {
			f := c.get(p)
			b.WriteString(" " + FormatNumber(f.Value))
			if units[i] == "" && f.Unit != "" {
				b.WriteString(" " + escapeInline(f.Unit))
			}
			b.WriteString(" |")
		}
		run := "#" + strconv.FormatUint(uint64(p.RunID), 10)
		if p.RunURL != "" {
			run = "[" + run + "](" + escapeURL(p.RunURL) + ")"
		}
		b.WriteString(" " + run + " |\n")
	}
	b.WriteString("\n")
}

// ReportMarkdown renders a report as [Markdown] does, with, after the
// notes, the section of the sweep it shows (sw; nil for none): a table of
// its points, and that of the latency-target search it shows
// (meta.SLO). t is nil for a report that shows a sweep or a search only.
func ReportMarkdown(t *Table, sw *Sweep, meta Meta) string {
	var b strings.Builder
	b.Grow(256)
	markdownHead(&b, meta)
	if sw != nil {
		markdownSweep(&b, sw)
	}
	if meta.SLO != nil {
		markdownSLO(&b, meta.SLO)
	}
	if t != nil {
		markdownTable(&b, t, meta.Profiles)
	}
	return b.String()
}

// csvSweep appends sw's records after the table's: section "sweep",
// for each point (in the Markdown table's order) one record per figure:
// "target-rate-pct" (%), "target-rate" (records/s), then the achieved
// rate's and the latency percentiles' metrics with their units and
// directions; column "LABEL · P% · run #ID"; n 1; value the raw number.
func csvSweep(w *csv.Writer, sw *Sweep) {
	rec := make([]string, len(csvHeader))
	for _, p := range sw.sorted() {
		col := csvText(p.Label + " · " + trimFloat(p.RatePct) + "% · run #" + strconv.FormatUint(uint64(p.RunID), 10))
		figs := []SweepFigure{{Metric: "target-rate-pct", Unit: "%", Value: p.RatePct}, {Metric: "target-rate", Unit: sweepTargetUnit, Value: p.TargetRate}}
		for _, c := range sweepColumns {
			figs = append(figs, c.get(p))
		}
		for _, f := range figs {
			clear(rec)
			rec[0], rec[1], rec[2], rec[3], rec[4] = "sweep", csvText(f.Metric), csvText(f.Unit), string(f.Better), col
			rec[5], rec[6] = "1", rawFloat(f.Value)
			_ = w.Write(rec)
		}
	}
}

// ReportCSV renders a report as [CSV] does (t nil: a report that shows
// a sweep or a search only, whose CSV is the header and their records),
// followed by the records of the sweep it shows (sw; nil for none; see
// csvSweep) and of the latency-target search (slo; nil for none; see
// csvSLO).
func ReportCSV(t *Table, sw *Sweep, slo *wire.SLO) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(csvHeader)
	if t != nil {
		csvTable(w, t)
	}
	if sw != nil {
		csvSweep(w, sw)
	}
	if slo != nil {
		csvSLO(w, slo)
	}
	w.Flush()
	return buf.Bytes()
}

// The sweep part of the JSON document of [ReportJSON], as the API
// declares it (client). jsonSweepReport is the document of a report that
// shows a sweep and compares no runs.
type (
	jsonSweep       = wire.ReportSweep
	jsonSweepPoint  = wire.ReportSweepPoint
	jsonSweepFigure = wire.SweepFigure
	jsonSweepReport = wire.SweepReport
)

func sweepJSON(sw *Sweep) *jsonSweep {
	fig := func(f SweepFigure) jsonSweepFigure { return jsonSweepFigure(f) }
	out := &jsonSweep{ID: sw.ID, URL: sw.URL, Labels: sw.Labels, Points: []jsonSweepPoint{}}
	if out.Labels == nil {
		out.Labels = []string{}
	}
	for _, p := range sw.sorted() {
		out.Points = append(out.Points, jsonSweepPoint{Label: p.Label, RatePct: p.RatePct, TargetRate: p.TargetRate, TargetUnit: sweepTargetUnit,
			Run: p.RunID, URL: p.RunURL, Achieved: fig(p.Achieved), P50: fig(p.P50), P99: fig(p.P99), P999: fig(p.P999)})
	}
	return out
}

// ReportJSON renders a report as [JSON] does, with "sweep" (when sw is
// not nil): {id, url, labels, points: [{label, rate_pct, target_rate,
// target_unit, run, url, achieved, p50, p99, p999}]}, each figure
// {metric, unit, better, value}; and with "slo", the latency-target
// search (meta.SLO) as GET /api/slos/{id} answers it. A report that shows
// a sweep or a search only (t nil) is {title, notes, url, created, sweep,
// slo}.
func ReportJSON(t *Table, sw *Sweep, meta Meta) ([]byte, error) {
	if t == nil {
		doc := jsonSweepReport{Title: meta.Title, Notes: meta.Notes, URL: meta.URL, SLO: meta.SLO}
		if !meta.Created.IsZero() {
			doc.Created = meta.Created.UTC().Format(time.RFC3339)
		}
		if sw != nil {
			doc.Sweep = sweepJSON(sw)
		}
		return encodeJSON(doc)
	}
	doc := jsonTableDoc(t, meta)
	if sw != nil {
		doc.Sweep = sweepJSON(sw)
	}
	doc.SLO = meta.SLO
	return encodeJSON(doc)
}
