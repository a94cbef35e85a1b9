package ui

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// Paths of the history page and its API.
const (
	HistoryPath    = "/history"
	APIHistoryPath = "/api/history"
)

// BeforeAfterPerSide is how many runs each side of a change point its
// before/after comparison takes at most: the runs of the segments either
// side nearest the change, half of the 50 runs a comparison holds.
const BeforeAfterPerSide = 25

// HistoryQuery is what a history shows: a series (named by a run of it,
// or by its key), a metric ("" for the workload's headline metric) and
// the detection's parameters (zero: Otava's defaults).
type HistoryQuery struct {
	Run     uint
	Series  string
	Metric  string
	Options changepoint.Options
	// X is what the page's x-axis shows: XIndex ("" too), XTime or
	// XCommit.
	X string
}

// The history chart's x-axes (the x parameter).
const (
	XIndex  = "index"  // the runs in time order, 0, 1, 2, …
	XTime   = "time"   // when each run ran
	XCommit = "commit" // the runs in time order, labelled by commit
)

// HistoryXAxes are the values x takes, in the order the page offers them.
var HistoryXAxes = []string{XIndex, XTime, XCommit}

// Values encodes the query as the page's and the API's URL take it: run
// (else series), metric when chosen, and the parameters when set.
func (q HistoryQuery) Values() url.Values {
	v := url.Values{}
	if q.Run != 0 {
		v.Set("run", uintStr(q.Run))
	} else {
		v.Set("series", q.Series)
	}
	if q.Metric != "" {
		v.Set("metric", q.Metric)
	}
	setDetectOptions(v, q.Options)
	if q.X != "" && q.X != XIndex {
		v.Set("x", q.X)
	}
	return v
}

// setDetectOptions puts the detection parameters that are set into v, as
// the history and regressions pages and APIs take them.
func setDetectOptions(v url.Values, o changepoint.Options) {
	if o.Window != 0 {
		v.Set("window", strconv.Itoa(o.Window))
	}
	if o.MaxPValue != 0 {
		v.Set("max_pvalue", strconv.FormatFloat(o.MaxPValue, 'g', -1, 64))
	}
	if o.MinMagnitude != 0 {
		v.Set("min_magnitude", strconv.FormatFloat(o.MinMagnitude, 'g', -1, 64))
	}
	if o.MinSegment != 0 {
		v.Set("min_segment", strconv.Itoa(o.MinSegment))
	}
}

// HistoryURL is the history page of q.
func HistoryURL(q HistoryQuery) string { return HistoryPath + "?" + q.Values().Encode() }

// RunHistoryURL is the history of the series run id belongs to, in its
// headline metric.
func RunHistoryURL(id uint) string { return HistoryURL(HistoryQuery{Run: id}) }

// BeforeAfterURL is the comparison of change point k of h: the runs
// before it against the runs from it on (history.BeforeAfter), split at
// its first run after.
func BeforeAfterURL(h history.History, k int) string {
	before, after := h.BeforeAfter(k, BeforeAfterPerSide)
	if len(before) == 0 || len(after) == 0 {
		return ""
	}
	return CompareURL(CompareQuery{Runs: append(before, after...), By: compare.ByChange, At: h.ChangePoints[k].RunID})
}

// HistoryView is the history page.
type HistoryView struct {
	Page
	Query  HistoryQuery
	Series string
	Metric string
	Unit   string
	// Better says the metric's direction in words ("higher is better"),
	// "" when it has none.
	Better string
	Points int
	Chart  template.HTML
	// Changes are the change points, oldest first; Marks the runs where
	// kbench, kafka-go, Go, the configuration or the machine changed.
	Changes []HistoryChange
	Marks   []HistoryMark
	// Form is the detection form's state: the metrics to choose from and
	// the parameters in use.
	Metrics []HistoryMetric
	Detect  DetectFields
	JSONURL string
	// XAxes are the x-axis select's options.
	XAxes []HistoryMetric
	// Name is what the series is (its label, or its workload and defining
	// settings); Series stays its key, for URLs.
	Name string
	// Computing is set while a change's functions are being named: the
	// page is then not cached, so that reloading it shows them.
	Computing bool
}

// Volatile reports whether the page must not be cached: it shows
// "computing…" for some change's functions.
func (v HistoryView) Volatile() bool { return v.Computing }

// DetectFields are the detection parameters' fields of a form (the
// history and regressions pages share them), the values in use.
type DetectFields struct {
	// ID prefixes the fields' ids: "history" gives history-window.
	ID           string
	Window       string
	MaxPValue    string
	MinMagnitude string // a fraction, as Otava's min_magnitude
	// MinSegment is the fewest runs each side of a change point must
	// hold for it to count (smaller ones are tentative).
	MinSegment string
	// MaxWindow is the largest window the server accepts.
	MaxWindow int
}

// newDetectFields shows o, Otava's defaults filled in.
func newDetectFields(id string, o changepoint.Options) DetectFields {
	o = o.WithDefaults()
	return DetectFields{ID: id, Window: strconv.Itoa(o.Window), MaxWindow: changepoint.MaxWindow,
		MaxPValue:    strconv.FormatFloat(o.MaxPValue, 'g', -1, 64),
		MinMagnitude: strconv.FormatFloat(o.MinMagnitude, 'g', -1, 64), MinSegment: strconv.Itoa(o.MinSegment)}
}

// HistoryChange is one change point as the page's table shows it.
type HistoryChange struct {
	Index       int
	Run         RunLink
	Time        string
	CommitRange string
	Before      string
	After       string
	Change      string
	Class       string // delta-better, delta-worse, or "" without a direction
	Direction   string
	PValue      string
	CompareURL  string
	// Tentative is set when a side holds fewer than min_segment runs;
	// TentativeNote says so.
	Tentative     bool
	TentativeNote string
	// Functions are the functions that moved at it (the server fills
	// them in; empty for tentative change points).
	Functions FunctionsCell
}

// HistoryMark is a run where what measured the metric changed.
type HistoryMark struct {
	Run     RunLink
	Changes []string
}

// HistoryMetric is an option of the metric select.
type HistoryMetric struct {
	Name     string
	Label    string
	Selected bool
}

// NewHistoryView builds the history page of h, the series' metrics
// (for the select) and q (the URL's query).
func NewHistoryView(h history.History, series string, metrics []rundoc.Metric, q HistoryQuery) HistoryView {
	v := HistoryView{Page: Page{Title: "History of " + h.Metric}, Query: q, Series: series, Metric: h.Metric, Unit: h.Unit,
		Points: len(h.Points), JSONURL: APIHistoryPath + "?" + q.Values().Encode(), Detect: newDetectFields("history", h.Options)}
	switch h.Better {
	case rundoc.HigherIsBetter:
		v.Better = "higher is better"
	case rundoc.LowerIsBetter:
		v.Better = "lower is better"
	}
	for _, m := range metrics {
		label := m.Name
		if m.Unit != "" {
			label += " (" + m.Unit + ")"
		}
		v.Metrics = append(v.Metrics, HistoryMetric{Name: m.Name, Label: label, Selected: m.Name == h.Metric})
	}
	runLink := func(id uint) RunLink {
		return RunLink{ID: id, URL: "/runs/" + uintStr(id), Text: "#" + uintStr(id)}
	}

	chart := Chart{Title: h.Metric + " across runs", XLabel: "runs in time order (index)", YLabel: h.Metric, Unit: h.Unit,
		Width: 960, Height: 360, Empty: "no succeeded run of this series has " + h.Metric}
	xs, ticks, xlabel := historyX(h, q.X)
	if xlabel != "" {
		chart.XLabel, chart.XTicks = xlabel, ticks
	}
	// at is where the boundary before point i lies: half-way between it
	// and the point before, the first and last points' own positions at
	// the ends.
	at := func(i int) float64 {
		switch {
		case len(xs) == 0:
			return 0
		case i <= 0:
			return xs[0]
		case i >= len(xs):
			return xs[len(xs)-1]
		}
		return (xs[i-1] + xs[i]) / 2
	}
	for _, x := range HistoryXAxes {
		label := map[string]string{XIndex: "Run index", XTime: "Time", XCommit: "Commit"}[x]
		v.XAxes = append(v.XAxes, HistoryMetric{Name: x, Label: label, Selected: x == q.X || (q.X == "" && x == XIndex)})
	}
	points := ChartSeries{Name: h.Metric}
	for i, p := range h.Points {
		points.X = append(points.X, xs[i])
		points.Y = append(points.Y, p.Value)
		points.Links = append(points.Links, "/runs/"+uintStr(p.RunID))
		tip := "#" + uintStr(p.RunID) + " " + FormatTime(p.Time) + ": " + numfmt.Value(p.Value, h.Unit)
		if c := p.Meta[rundoc.MetaCommit]; c != "" {
			tip += " (commit " + c + ")"
		}
		points.Tips = append(points.Tips, tip)
	}
	medians := ChartSeries{Name: "segment median"}
	for _, s := range h.Segments {
		// A step: flat over the segment's runs, changing half-way between
		// the last run of one segment and the first of the next.
		medians.X = append(medians.X, at(s.Start), at(s.End))
		medians.Y = append(medians.Y, s.Median, s.Median)
	}
	chart.Series = []ChartSeries{points, medians}

	for k, c := range h.ChangePoints {
		ch := HistoryChange{Index: c.Index, Run: runLink(c.RunID), Time: FormatTime(h.Points[c.Index].Time),
			CommitRange: c.CommitRange(), Before: numfmt.Value(c.Before, h.Unit), After: numfmt.Value(c.After, h.Unit),
			Change: numfmt.SignedPercent(c.ChangePct), Direction: c.Direction, PValue: numfmt.PValue(c.PValue),
			CompareURL: BeforeAfterURL(h, k)}
		if c.Direction != "" {
			ch.Class = "delta-" + c.Direction
		}
		mark := ChartMark{X: at(c.Index), Href: ch.CompareURL,
			Label: ch.Change + " " + shortCommit(c.CommitBefore) + ".." + shortCommit(c.CommitAfter),
			Class: strings.TrimSpace("cp-mark cp-" + orNone(c.Direction)),
			Title: "change point at #" + uintStr(c.RunID) + ", commits " + ch.CommitRange + ": " + ch.Change + " (" +
				ch.Before + " → " + ch.After + "), p = " + ch.PValue + "; open the before/after comparison"}
		if c.Tentative {
			ch.Tentative = true
			ch.TentativeNote = "Tentative: " + c.TentativeReason(h.Options.MinSegment) +
				". It is not listed on Regressions, badged, notified or decided on by kbench check until more runs confirm it."
			mark.Label = "tentative " + ch.Change
			mark.Class += " cp-tentative"
			mark.Title = "tentative " + mark.Title + " (" + c.TentativeReason(h.Options.MinSegment) + ")"
		}
		v.Changes = append(v.Changes, ch)
		chart.Marks = append(chart.Marks, mark)
	}
	for _, m := range h.Marks {
		v.Marks = append(v.Marks, HistoryMark{Run: runLink(m.RunID), Changes: m.Changes})
		chart.Marks = append(chart.Marks, ChartMark{X: at(m.Index), Label: "Δ env", Href: "/runs/" + uintStr(m.RunID),
			Class: "env-mark", Title: "#" + uintStr(m.RunID) + ": " + strings.Join(m.Changes, "; ")})
	}
	v.Chart = LineChart(chart)
	return v
}

// historyX places h's points on the x-axis x: their index (XIndex, ""),
// their time in seconds after the first (XTime, with date ticks), or
// their index labelled by commit (XCommit). The ticks and axis title are
// nil and "" for the index axis, which the chart numbers itself.
func historyX(h history.History, x string) (xs []float64, ticks []ChartTick, label string) {
	n := len(h.Points)
	for i, p := range h.Points {
		if x == XTime {
			xs = append(xs, p.Time.Sub(h.Points[0].Time).Seconds())
		} else {
			xs = append(xs, float64(i))
		}
	}
	switch x {
	case XTime:
		if n == 0 {
			return xs, nil, "time (UTC)"
		}
		return xs, timeTicks(h.Points[0].Time, h.Points[n-1].Time), "time (UTC)"
	case XCommit:
		// At most 8 commits named, evenly spaced: more would overprint.
		step := max(1, (n+7)/8)
		for i := 0; i < n; i += step {
			ticks = append(ticks, ChartTick{X: float64(i), Label: shortCommit(history.Commit(h.Points[i].Meta))})
		}
		return xs, ticks, "commit (runs in time order)"
	}
	return xs, nil, ""
}

// timeTicks are ticks from first to last at the smallest of a few
// calendar-like steps that gives at most 6, placed at multiples of the
// step (midnight UTC for days), as seconds after first.
func timeTicks(first, last time.Time) []ChartTick {
	span := last.Sub(first)
	steps := []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
		30 * 24 * time.Hour, 91 * 24 * time.Hour, 365 * 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 5 {
			step = s
			break
		}
	}
	layout := "2006-01-02"
	if step < 24*time.Hour {
		layout = "01-02 15:04"
	}
	var out []ChartTick
	add := func(t time.Time) {
		if !t.Before(first) && !t.After(last) {
			out = append(out, ChartTick{X: t.Sub(first).Seconds(), Label: t.UTC().Format(layout)})
		}
	}
	if months := int(step / (30 * 24 * time.Hour)); months > 0 {
		// Months and years start on the 1st, whatever their length.
		f := first.UTC()
		for t := time.Date(f.Year(), f.Month(), 1, 0, 0, 0, 0, time.UTC); !t.After(last); t = t.AddDate(0, months, 0) {
			add(t)
		}
	} else {
		for t := first.UTC().Truncate(step); !t.After(last); t = t.Add(step) {
			add(t)
		}
	}
	if len(out) == 0 {
		out = append(out, ChartTick{X: 0, Label: first.UTC().Format(layout)})
	}
	return out
}

func orNone(direction string) string {
	if direction == "" {
		return "neutral"
	}
	return direction
}

// shortCommit abbreviates a long commit id as git does (7 characters), so
// that a chart label holds a range; tables and tooltips show it whole.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:7]
	}
	return c
}
