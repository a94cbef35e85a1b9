package ui

import (
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

// Paths of the comparison and report pages.
const (
	APIComparePath   = "/api/compare"
	CreateReportPath = "/reports"
	ReportPathPrefix = "/r/"
	DefaultCompareBy = compare.ByRun
	compareTitle     = "Compare runs"
	MaxReportTitle   = 200 // characters
)

// CompareQuery is what a comparison shows: the runs in column order (the
// first is the baseline), how columns are formed and whether rows that
// did not change are hidden.
type CompareQuery struct {
	Runs []uint
	By   string // run, label, group or change
	// At is the first run after the change point of a comparison by
	// change: the runs before it are the baseline column, it and the runs
	// after it the other.
	At            uint
	HideUnchanged bool
}

// RunsParam is the runs as the runs query parameter writes them: "1,2,3".
func (q CompareQuery) RunsParam() string {
	parts := make([]string, len(q.Runs))
	for i, id := range q.Runs {
		parts[i] = uintStr(id)
	}
	return strings.Join(parts, ",")
}

// Values encodes the query: runs, by (when not the default), at (by
// change) and hide_unchanged (when set).
func (q CompareQuery) Values() url.Values {
	v := url.Values{"runs": {q.RunsParam()}}
	if q.By != "" && q.By != DefaultCompareBy {
		v.Set("by", q.By)
	}
	if q.By == compare.ByChange && q.At != 0 {
		v.Set("at", uintStr(q.At))
	}
	if q.HideUnchanged {
		v.Set("hide_unchanged", "1")
	}
	return v
}

// CompareURL is the comparison page of q.
func CompareURL(q CompareQuery) string { return ComparePath + "?" + q.Values().Encode() }

// ReportURL is a report's page; ext ("", ".md", ".csv", ".json") picks
// the page or an export.
func ReportURL(slug, ext string) string { return ReportPathPrefix + slug + ext }

// ComparisonTable is a comparison table as a page shows it: sections of
// rows, one cell per column, changes classed by verdict.
type ComparisonTable struct {
	Columns  []CompareColumn
	Sections []CompareSection
	Notes    []string // the table's notes: baseline, samples, method
	Legend   string
	// Hidden are the metrics "hide unchanged" dropped.
	Hidden []string
	// ColSpan is the number of columns with the metric's: section rows
	// span them all.
	ColSpan int
	// Suggestion is the table's advice on its undecided headline changes
	// ("Inconclusive: run 7 more repetitions per side …"), "" when all
	// are decided; MoreRepetitions its number of runs per side, for a
	// button that queues them (data-more-repetitions on the page).
	Suggestion      string
	MoreRepetitions int
	// Undecided lists the undecided headline changes: "record-latency-p99
	// in branch: inconclusive, about 7 more per side".
	Undecided []string
	// Tested is how many changes the Benjamini-Hochberg adjustment
	// covers; FDRQ its level (the table's α).
	Tested int
	FDRQ   string

	// Comparability lists the settings that differ between the columns
	// (compare.Table.Comparability), one value per column ("unknown"
	// where no run recorded it); Warnings the runs' warnings, each
	// naming its run. Both show above the table.
	Comparability []Difference
	Warnings      []string
	// ComparabilityRule says what the check compares.
	ComparabilityRule string
	// EmbeddedNote says which runs ran on the embedded broker and what
	// they cannot show (compare.Table.EmbeddedText); "" for none.
	EmbeddedNote string
}

// Difference is one setting that differs between the columns.
type Difference struct {
	Setting string
	Values  []string
}

// CompareColumn is one column: a run, or the runs of a group or label.
type CompareColumn struct {
	Name     string
	Baseline bool
	Runs     []RunLink
	Excluded []RunLink // warm-up runs left out of the figures
	// MoreRepetitions is how many more runs this column and the baseline
	// each need to decide the column's headline changes; 0 when decided.
	MoreRepetitions int
	// RunsSummary stands for Runs in the header of a column of more than
	// maxListedRuns runs: "20 runs, #5 … #24", linking to RunsListURL
	// (the runs list narrowed to them), so that a header never grows
	// with its runs (issue 23: 20 + 20 run ids made a table 2,523 px
	// wide); "" when the runs are listed.
	RunsSummary string
	RunsListURL string
	// HL: the column has tested changes, and a Hodges-Lehmann column
	// beside it headed HLHeading.
	HL        bool
	HLHeading string
	// Reordering links (the comparison page only; "" on a report and
	// where the move is impossible): the same comparison with this
	// column first (the baseline), or swapped with its left or right
	// neighbour.
	BaselineURL, LeftURL, RightURL string
}

// maxListedRuns is the most runs a column header lists one by one.
const maxListedRuns = 3

// RunLink links to a run: "#12 trunk".
type RunLink struct {
	ID   uint
	URL  string
	Text string
}

// CompareSection is a group of rows: throughput, latency, …
type CompareSection struct {
	Name string
	Rows []CompareRow
}

// CompareRow is one metric across the columns.
type CompareRow struct {
	Metric    string
	Unit      string
	Help      string
	Direction string // "↑", "↓" or ""
	DirText   string // "higher is better", …
	Notes     []string
	Cells     []CompareCell
	// CellsHTML is Cells rendered, each "\n      <td …>…</td>": a wide
	// comparison has thousands of cells, and writing them here costs a
	// tenth of evaluating ten template fields for each (cellsHTML).
	CellsHTML template.HTML
	// Headline: the row is tested; Class is "headline" or "descriptive".
	Headline bool
	Class    string
}

// CompareCell is one figure and, off the baseline, its change.
type CompareCell struct {
	Value   string // "1,234,567", "4.12 ±2.3%", "—" when missing
	Unit    string // "" when missing
	Missing bool
	N       int    // samples (runs with the metric)
	Change  string // "+3.4% [+1.1%, +5.9%] ✓", "−0.8% [−2.0%, +0.4%] ~ adj. p=0.382", "" on the baseline
	Class   string // CSS classes of the change, by verdict and state
	Note    string // the cell's notes joined, for a tooltip
	// State is the headline change's state (compare.State*: significant,
	// borderline, inconclusive, unchanged, too few samples), "" else.
	State string
	// More is how many more runs per side the change needs; 0 when
	// decided.
	More int
	// HasHL: the column has a Hodges-Lehmann column, where HL goes
	// ("−4.1% [−5.0%, −3.2%] adj. p=0.002"; "" for a change not tested).
	HasHL bool
	HL    string
}

// Change classes: green for better, red for worse; a change from single
// runs is better or worse by direction only, and also "delta-untested";
// borderline and inconclusive changes stand out as undecided; the changes
// of descriptive rows carry no verdict colour.
const (
	classBetter       = "delta delta-better"
	classWorse        = "delta delta-worse"
	classSame         = "delta delta-same"
	classChanged      = "delta delta-changed"
	classTooFew       = "delta delta-toofew"
	classUntested     = " delta-untested"
	classBorderline   = "delta delta-borderline"
	classInconclusive = "delta delta-inconclusive"
	classDescriptive  = "delta delta-descriptive"
)

// changeClass classes a cell's change by its test, verdict and state.
func changeClass(c compare.Cell) string {
	switch c.State {
	case compare.StateBorderline:
		return classBorderline
	case compare.StateInconclusive:
		return classInconclusive
	}
	switch c.Test {
	case compare.TestDescriptive:
		return classDescriptive
	case compare.TestSignificant:
		switch c.Verdict {
		case compare.VerdictBetter:
			return classBetter
		case compare.VerdictWorse:
			return classWorse
		}
		return classChanged
	case compare.TestNotSignificant:
		return classSame
	case compare.TestTooFew:
		return classTooFew
	case compare.TestSingleRuns:
		switch c.Verdict {
		case compare.VerdictBetter:
			return classBetter + classUntested
		case compare.VerdictWorse:
			return classWorse + classUntested
		}
		return classSame + classUntested
	}
	return ""
}

// NewComparisonTable builds the page's table from a compare.Table; runs
// name the columns' run links.
func NewComparisonTable(t *compare.Table, runs []rundoc.Run) ComparisonTable {
	byID := make(map[uint]*rundoc.Run, len(runs))
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	link := func(id uint) RunLink {
		l := RunLink{ID: id, URL: runURL(id), Text: "run #" + uintStr(id)}
		if r := byID[id]; r != nil && r.Label != "" {
			l.Text += " " + r.Label
		}
		return l
	}
	out := ComparisonTable{Notes: t.Notes, Legend: t.Legend(), Hidden: t.Hidden,
		Suggestion: t.Suggestion(), MoreRepetitions: t.MoreRepetitions, Tested: t.Tested,
		FDRQ: strconv.FormatFloat(t.Alpha, 'f', -1, 64)}
	for _, u := range t.Undecided() {
		more := "about " + strconv.Itoa(u.Cell.More)
		if u.Cell.More > compare.MaxMoreRepetitions {
			more = "more than " + strconv.Itoa(compare.MaxMoreRepetitions)
		}
		out.Undecided = append(out.Undecided, u.Metric+" in "+u.Column+": "+u.Cell.State+", "+more+" more per side")
	}
	out.ColSpan = 1
	for i, c := range t.Columns {
		col := CompareColumn{Name: c.Name, Baseline: c.Baseline, MoreRepetitions: c.MoreRepetitions, HL: t.HasHL(i)}
		for _, id := range c.Runs {
			col.Runs = append(col.Runs, link(id))
		}
		for _, id := range c.WarmupsExcluded {
			col.Excluded = append(col.Excluded, link(id))
		}
		if n := len(c.Runs); n > maxListedRuns {
			ids := make([]string, n)
			for j, id := range c.Runs {
				ids[j] = uintStr(id)
			}
			col.RunsSummary = strconv.Itoa(n) + " runs, #" + ids[0] + " … #" + ids[n-1]
			col.RunsListURL = RunsQuery{IDs: strings.Join(ids, ",")}.URL()
		}
		if col.HL {
			col.HLHeading = t.HLHeading("")
			out.ColSpan++
		}
		out.Columns = append(out.Columns, col)
		out.ColSpan++
	}
	out.ComparabilityRule = compare.ComparabilityRule
	out.EmbeddedNote = t.EmbeddedText()
	for _, d := range t.Comparability {
		vs := make([]string, len(d.Values))
		for i, v := range d.Values {
			if v == "" {
				v = "unknown"
			}
			vs[i] = v
		}
		out.Comparability = append(out.Comparability, Difference{Setting: d.Setting, Values: vs})
	}
	for _, w := range t.Warnings {
		out.Warnings = append(out.Warnings, w.FullText())
	}
	for _, row := range t.Rows {
		if len(out.Sections) == 0 || out.Sections[len(out.Sections)-1].Name != row.Section {
			out.Sections = append(out.Sections, CompareSection{Name: row.Section})
		}
		r := CompareRow{Metric: row.Metric, Unit: row.Unit, Help: row.Help, Notes: row.Notes, Headline: row.Headline, Class: "descriptive"}
		if row.Headline {
			r.Class = "headline"
		}
		switch row.Better {
		case compare.HigherIsBetter:
			r.Direction, r.DirText = "↑", "higher is better"
		case compare.LowerIsBetter:
			r.Direction, r.DirText = "↓", "lower is better"
		}
		for i, c := range row.Cells {
			cell := CompareCell{Value: row.ValueText(i), N: c.N, Missing: c.N == 0, Note: strings.Join(c.Notes, "; ")}
			if !cell.Missing {
				cell.Unit = row.Unit
			}
			if i > 0 {
				cell.Change = t.ChangeText(c)
				cell.Class = changeClass(c)
				cell.State, cell.More = c.State, c.More
				cell.HasHL, cell.HL = out.Columns[i].HL, t.HLText(c)
			}
			r.Cells = append(r.Cells, cell)
		}
		r.CellsHTML = cellsHTML(r.Cells)
		s := &out.Sections[len(out.Sections)-1]
		s.Rows = append(s.Rows, r)
	}
	return out
}

// ByOption is one choice of the column naming switch.
type ByOption struct {
	Value   string
	Label   string
	URL     string
	Current bool
}

var byLabels = []struct{ value, label string }{
	{compare.ByRun, "run"},
	{compare.ByLabel, "label"},
	{compare.ByGroup, "repetition group"},
}

// CompareView is the comparison page: the table, the naming switch, the
// "hide unchanged" toggle, the Markdown to copy and the "Save as report"
// form.
type CompareView struct {
	Page
	Query      CompareQuery
	Table      ComparisonTable
	ByOptions  []ByOption
	ToggleURL  string // the page with "hide unchanged" flipped
	ToggleText string
	Markdown   string
	JSONURL    string // the same comparison from the API
	SaveAction string
	// DefaultTitle fills the report title field.
	DefaultTitle string
	// Progress and AddRuns are the runs not finished yet and the offer to
	// add interleaved repetitions (abtest.go).
	Progress CompareProgress
	AddRuns  AddRepetitionsView
	// Profiles is the Profiles section (the server fills it).
	Profiles ProfilesSection
	// Spectra draw the columns' merged latency histograms by percentile,
	// and their runs' quantile curves.
	Spectra SpectraView
	// Histories link the history of each series the compared runs belong
	// to, in the order the runs come.
	Histories []HistoryLink
	// Baselines are the choices of the baseline selector, one per
	// column: the runs parameter that puts the column first. Empty when
	// the columns cannot be reordered (one column, or before/after a
	// change point, whose split is fixed).
	Baselines []BaselineChoice
	// ComparePath is where the baseline selector submits.
	ComparePath string
}

// BaselineChoice is one option of the baseline selector: the comparison
// with column Label first, as the runs parameter (Runs) and its URL.
type BaselineChoice struct {
	Label   string
	Runs    string
	URL     string
	Current bool
}

// setColumnOrder fills in the baseline selector and the columns'
// reordering links. Columns are formed from the runs in the order they
// come (compare.Columns), so a new order of the columns is the runs of
// each column, column after column, in that order: the links rewrite
// the runs parameter and nothing else. A comparison by change splits
// its runs at a fixed run and is not reordered.
func (v *CompareView) setColumnOrder(runs []rundoc.Run, q CompareQuery) {
	if q.By == compare.ByChange || len(v.Table.Columns) < 2 {
		return
	}
	cols := compare.Columns(runs, q.By)
	if len(cols) != len(v.Table.Columns) {
		return // not the table's columns: offer nothing rather than wrong links
	}
	order := func(idx []int) CompareQuery {
		q2 := q
		q2.Runs = nil
		for _, i := range idx {
			for _, r := range cols[i].Runs {
				q2.Runs = append(q2.Runs, r.ID)
			}
		}
		return q2
	}
	n := len(cols)
	moved := func(i, to int) []int {
		idx := make([]int, 0, n)
		for j := range n {
			if j != i {
				idx = append(idx, j)
			}
		}
		return slices.Insert(idx, to, i)
	}
	for i := range n {
		first := order(moved(i, 0))
		v.Baselines = append(v.Baselines, BaselineChoice{Label: v.Table.Columns[i].Name, Runs: first.RunsParam(), URL: CompareURL(first), Current: i == 0})
		c := &v.Table.Columns[i]
		if i > 0 {
			c.BaselineURL = CompareURL(first)
			c.LeftURL = CompareURL(order(moved(i, i-1)))
		}
		if i < n-1 {
			c.RightURL = CompareURL(order(moved(i, i+1)))
		}
	}
}

// HistoryLink links a series' history.
type HistoryLink struct {
	Series string
	URL    string
}

// historyLinks are the histories of the series runs belong to, each once,
// named by its first run in runs.
func historyLinks(runs []rundoc.Run) []HistoryLink {
	var out []HistoryLink
	seen := map[string]bool{}
	for _, r := range runs {
		if r.SeriesKey == "" || seen[r.SeriesKey] {
			continue
		}
		seen[r.SeriesKey] = true
		out = append(out, HistoryLink{Series: r.SeriesKey, URL: RunHistoryURL(r.ID)})
	}
	return out
}

// NewCompareView builds the comparison page of q from its table, runs
// and Markdown export.
func NewCompareView(t *compare.Table, runs []rundoc.Run, q CompareQuery, markdown string) CompareView {
	v := CompareView{Page: Page{Title: compareTitle}, Query: q, Table: NewComparisonTable(t, runs), Markdown: markdown,
		JSONURL: APIComparePath + "?" + q.Values().Encode(), SaveAction: CreateReportPath, Progress: NewCompareProgress(runs),
		Histories: historyLinks(runs), ComparePath: ComparePath}
	if v.Query.By == "" {
		v.Query.By = DefaultCompareBy
	}
	options := byLabels
	if q.At != 0 {
		options = append(slices.Clip(options), struct{ value, label string }{compare.ByChange, "before/after #" + uintStr(q.At)})
	}
	for _, o := range options {
		q2 := q
		q2.By = o.value
		v.ByOptions = append(v.ByOptions, ByOption{Value: o.value, Label: o.label, URL: CompareURL(q2), Current: o.value == v.Query.By})
	}
	v.setColumnOrder(runs, v.Query)
	v.Spectra = mergedSpectra(t, runs)
	flip := q
	flip.HideUnchanged = !q.HideUnchanged
	v.ToggleURL = CompareURL(flip)
	if q.HideUnchanged {
		v.ToggleText = "Show all metrics"
	} else {
		v.ToggleText = "Hide unchanged metrics"
	}
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	v.DefaultTitle = strings.Join(names, " vs ")
	if r := []rune(v.DefaultTitle); len(r) > MaxReportTitle {
		v.DefaultTitle = string(r[:MaxReportTitle])
	}
	return v
}

// ExportLink links to an export of a report.
type ExportLink struct {
	Label string
	URL   string
	Type  string
}

// ReportView is a report's read-only page.
type ReportView struct {
	Page
	Slug    string
	Heading string
	// Notes are the report's notes, Markdown rendered safely (see
	// RenderMarkdown); the exports keep the Markdown text.
	Notes      template.HTML
	Created    string
	CreatedISO string
	Table      ComparisonTable
	Runs       []RunLink
	Charts     []template.HTML
	// Spectra draw the columns' merged latency histograms by percentile,
	// and their runs' quantile curves.
	Spectra SpectraView
	// Profiles is the Profiles section (the server fills it: its inline
	// diff is computed from the runs' profiles).
	Profiles   ProfilesSection
	Markdown   string
	Exports    []ExportLink
	CompareURL string // the live comparison of the same runs
	// Compared is false for a report that shows a sweep and compares no
	// runs: the table, runs, charts and flame graphs are left out.
	Compared bool
	// Sweep is the sweep the report shows, nil for none.
	Sweep *ReportSweep
	// SLO is the latency-target search the report shows (its answer,
	// chart and runs, as its page has them; URL its page), nil for none.
	SLO *SLOView
}

// NewReportView builds a report's page from its table (computed from the
// report's runs, in the report's order; nil for a report that compares no
// runs) and Markdown export.
func NewReportView(rep *rundoc.Report, t *compare.Table, runs []rundoc.Run, markdown string) ReportView {
	v := ReportView{Page: Page{Title: rep.Title}, Slug: rep.Slug, Heading: rep.Title, Notes: RenderMarkdown(rep.Notes),
		Created: FormatTime(rep.CreatedAt), CreatedISO: rep.CreatedAt.UTC().Format(time.RFC3339),
		Markdown: markdown, Compared: t != nil}
	for _, e := range []ExportLink{{"Markdown", ".md", "text/markdown"}, {"CSV", ".csv", "text/csv"}, {"JSON", ".json", "application/json"}} {
		v.Exports = append(v.Exports, ExportLink{Label: e.Label, URL: ReportURL(rep.Slug, e.URL), Type: e.Type})
	}
	if t == nil {
		return v
	}
	v.Table, v.CompareURL = NewComparisonTable(t, runs), CompareURL(CompareQuery{Runs: rep.RunIDs, By: rep.By})
	byID := map[uint]*rundoc.Run{}
	for i := range runs {
		r := &runs[i]
		byID[r.ID] = r
		v.Runs = append(v.Runs, runLink(r))
	}
	v.Charts = overlayCharts(runs, reportConfigs(t, rep.By, byID))
	v.Spectra = mergedSpectra(t, runs)
	return v
}

func runLink(r *rundoc.Run) RunLink {
	l := RunLink{ID: r.ID, URL: runURL(r.ID), Text: "run #" + uintStr(r.ID)}
	if r.Label != "" {
		l.Text += " " + r.Label
	}
	return l
}

// clientCPU is the ID of a run's client CPU profile, 0 without one.
func clientCPU(r *rundoc.Run) uint {
	if r == nil {
		return 0
	}
	for _, p := range r.Profiles {
		if p.Role == "client" && p.Kind == "cpu" {
			return p.ID
		}
	}
	return 0
}

// reportConfigs names the configuration of each of a report's runs, by
// run id: what its charts colour and label a line by. It is the run's
// column (a label, a repetition group, before or after a change point),
// except in a comparison by run, where every run is a column of its own
// and the configuration is the run's label (its name when it has none):
// three runs of trunk and three of branch are two configurations.
func reportConfigs(t *compare.Table, by string, byID map[uint]*rundoc.Run) map[uint]string {
	cfg := map[uint]string{}
	for _, c := range t.Columns {
		for _, ids := range [][]uint{c.Runs, c.WarmupsExcluded} {
			for _, id := range ids {
				cfg[id] = c.Name
				if r := byID[id]; r != nil && (by == "" || by == compare.ByRun) && r.Label != "" {
					cfg[id] = r.Label
				}
			}
		}
	}
	return cfg
}

// overlayCharts draws the runs' interval series on shared axes:
// throughput, and latency when any run recorded it. Lines are coloured
// and listed in the legend by configuration (configs, by run id; a run
// without one has a line and entry of its own); each keeps its run's
// name as its tooltip.
func overlayCharts(runs []rundoc.Run, configs map[uint]string) []template.HTML {
	var rps, lat []ChartSeries
	for i := range runs {
		r := &runs[i]
		pts := chartSeries(r.Series)
		if len(pts) == 0 {
			continue
		}
		name := runLink(r).Text
		t, y, l := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
		hasLatency := false
		for j, p := range pts {
			t[j], y[j], l[j] = p.T, p.RecordsPerSec, p.LatencyAvgMs
			hasLatency = hasLatency || p.LatencyAvgMs > 0
		}
		group := configs[r.ID]
		rps = append(rps, ChartSeries{Name: name, Group: group, X: t, Y: y})
		if hasLatency {
			lat = append(lat, ChartSeries{Name: name, Group: group, X: t, Y: l})
		}
	}
	if len(rps) == 0 {
		return nil
	}
	charts := []template.HTML{LineChart(Chart{Title: "Throughput", XLabel: windowAxis, YLabel: "throughput", Unit: "records/s", Series: rps})}
	if len(lat) > 0 {
		charts = append(charts, LineChart(Chart{Title: "Average latency", XLabel: windowAxis, YLabel: "latency", Unit: "ms", Series: lat}))
	}
	return charts
}
