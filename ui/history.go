package ui

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"

	"github.com/kbench/kbench/changepoint"
	"github.com/kbench/kbench/compare"
	"github.com/kbench/kbench/history"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/rundoc"
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
}

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
}

// DetectFields are the detection parameters' fields of a form (the
// history and regressions pages share them), the values in use.
type DetectFields struct {
	// ID prefixes the fields' ids: "history" gives history-window.
	ID           string
	Window       string
	MaxPValue    string
	MinMagnitude string // a fraction, as Otava's min_magnitude
	// MaxWindow is the largest window the server accepts.
	MaxWindow int
}

// newDetectFields shows o, Otava's defaults filled in.
func newDetectFields(id string, o changepoint.Options) DetectFields {
	o = o.WithDefaults()
	return DetectFields{ID: id, Window: strconv.Itoa(o.Window), MaxWindow: changepoint.MaxWindow,
		MaxPValue:    strconv.FormatFloat(o.MaxPValue, 'g', -1, 64),
		MinMagnitude: strconv.FormatFloat(o.MinMagnitude, 'g', -1, 64)}
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
	points := ChartSeries{Name: h.Metric}
	for i, p := range h.Points {
		points.X = append(points.X, float64(i))
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
		medians.X = append(medians.X, max(float64(s.Start)-0.5, 0), min(float64(s.End)-0.5, float64(len(h.Points)-1)))
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
		v.Changes = append(v.Changes, ch)
		chart.Marks = append(chart.Marks, ChartMark{X: float64(c.Index) - 0.5, Href: ch.CompareURL,
			Label: ch.Change + " " + shortCommit(c.CommitBefore) + ".." + shortCommit(c.CommitAfter),
			Class: strings.TrimSpace("cp-mark cp-" + orNone(c.Direction)),
			Title: "change point at #" + uintStr(c.RunID) + ", commits " + ch.CommitRange + ": " + ch.Change + " (" +
				ch.Before + " → " + ch.After + "), p = " + ch.PValue + "; open the before/after comparison"})
	}
	for _, m := range h.Marks {
		v.Marks = append(v.Marks, HistoryMark{Run: runLink(m.RunID), Changes: m.Changes})
		chart.Marks = append(chart.Marks, ChartMark{X: float64(m.Index) - 0.5, Label: "Δ env", Href: "/runs/" + uintStr(m.RunID),
			Class: "env-mark", Title: "#" + uintStr(m.RunID) + ": " + strings.Join(m.Changes, "; ")})
	}
	v.Chart = LineChart(chart)
	return v
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
