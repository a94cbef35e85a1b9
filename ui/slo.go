package ui

import (
	"html/template"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kbench/kbench/client/wire"
)

// SLOsPath is the latency-target search page: its form and the recent
// searches; SLOURL is one search's page.
const SLOsPath = "/slos"

// SLOURL is the page of search id.
func SLOURL(id string) string { return SLOsPath + "/" + url.PathEscape(id) }

// SLO form field names, as the API names them.
const (
	SLOFieldLabel       = "label"
	SLOFieldParams      = "params"
	SLOFieldQueue       = "queue"
	SLOFieldPercentile  = "percentile"
	SLOFieldLatency     = "latency_ms"
	SLOFieldPrecision   = "precision_pct"
	SLOFieldRepetitions = "repetitions"
	SLOFieldMinRate     = "min_rate"
	SLOFieldMaxRate     = "max_rate"
)

// SLOListRow is one search in the list on /slos.
type SLOListRow struct {
	ID, URL, Phase, Created, Label, Target, Answer string
}

// SLOProbeRow is one run of a probe in the search page's table.
type SLOProbeRow struct {
	Probe     int
	Rate      string // "max" or records/s
	RunID     uint
	RunURL    string
	Status    string
	Achieved  string
	LatencyMs string
	Samples   string
	// Verdict is "pass", "fail" or "" while the run has not ended;
	// Reason says why.
	Verdict, Reason string
}

// SLOView is /slos (the form and the list) and /slos/<id> (Result: the
// search's answer, its chart and its probes).
type SLOView struct {
	Page
	Result bool
	// Form: its fields in two groups, the configuration's and the
	// target's, and every message above it.
	ConfigFields, TargetFields []SLOFormField
	Errors                     []FormError
	SLOs                       []SLOListRow
	// Result. URL is the search's page (a report links it).
	ID, URL, Phase, Note string
	Label, Workload      string
	// Question says what is searched for: "highest rate with
	// record-latency-intended p99 under 10 ms, to 2 %".
	Question string
	// Answer is the search's answer in words once done, Bracket the
	// interval so far while searching.
	Answer, Bracket string
	// How says how each probe is judged (samples, achieved share).
	How       string
	CancelURL string
	APIURL    string
	Refresh   bool
	Chart     template.HTML
	Rows      []SLOProbeRow
}

// SLOFormField is one field of the search form: its name (the API's),
// label, value and messages; Number and Area say how it is entered.
type SLOFormField struct {
	Name, Label, Value string
	Errs               []string
	Number, Area       bool
}

// sloFormFields are the form's fields in order, with their labels and
// the example the empty form shows.
var sloFormFields = []struct {
	name, label, example string
	target               bool
}{
	{SLOFieldLabel, "Label", "trunk", false},
	{SLOFieldParams, "Params (JSON object)", `{"workload": "producer", "num-records": 50000, "record-size": 100}`, false},
	{SLOFieldQueue, "Queue", "", false},
	{SLOFieldPercentile, "Percentile", "99", true},
	{SLOFieldLatency, "Latency target (ms)", "10", true},
	{SLOFieldPrecision, "Precision (%: the answer's hi/lo is at most 1 + this)", "2", true},
	{SLOFieldRepetitions, "Repetitions (runs per rate)", "1", true},
	{SLOFieldMinRate, "Lowest rate (records/s, optional)", "", true},
	{SLOFieldMaxRate, "Highest rate (records/s, optional: measured when empty)", "", true},
}

// NewSLOForm is /slos with the form holding values (empty: an example)
// and errs beside their fields.
func NewSLOForm(values url.Values, errs map[string]string, list []SLOListRow) SLOView {
	v := SLOView{Page: Page{Title: "Latency target search"}, SLOs: list}
	fieldErrs := map[string][]string{}
	var names []string
	for name := range errs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		field := name
		if strings.HasPrefix(name, "config.") {
			field = strings.TrimPrefix(name, "config.")
			if strings.HasPrefix(field, "params") || strings.HasPrefix(field, "target") {
				field = SLOFieldParams
			}
		}
		for _, m := range ErrorLines(errs[name]) {
			v.Errors = append(v.Errors, FormError{Field: name, Label: name, Message: m})
			msg := m
			if field != name && field == SLOFieldParams {
				msg = strings.TrimPrefix(name, "config.") + ": " + m
			}
			fieldErrs[field] = append(fieldErrs[field], msg)
		}
	}
	for _, f := range sloFormFields {
		val := values.Get(f.name)
		if len(values) == 0 {
			val = f.example
		}
		ff := SLOFormField{Name: f.name, Label: f.label, Value: val, Errs: fieldErrs[f.name], Number: f.target, Area: f.name == SLOFieldParams}
		if f.target {
			v.TargetFields = append(v.TargetFields, ff)
		} else {
			v.ConfigFields = append(v.ConfigFields, ff)
		}
	}
	return v
}

// SLOChart draws a search's probes: the latency each run measured at the
// percentile against the rate it was asked for, passed and failed runs
// as two series of dots linking to their runs, the target as a line,
// and the answer's bracket as two marks.
func SLOChart(s wire.SLO) template.HTML {
	pct := FormatNumber(s.Percentile)
	c := Chart{Title: "p" + pct + " latency by probe rate", XLabel: "probe rate (records/s)", YLabel: "p" + pct + " latency",
		Unit: "ms", LogY: true, Empty: "no probe at a rate has finished yet"}
	passed, failed := ChartSeries{Name: "passed"}, ChartSeries{Name: "failed"}
	lo, hi := 0.0, 0.0
	for _, p := range s.Probes {
		if p.Max {
			continue
		}
		for _, r := range p.Runs {
			if r.LatencyMs <= 0 || r.Status != wire.StatusSucceeded {
				continue
			}
			series := &failed
			if r.Pass {
				series = &passed
			}
			series.X = append(series.X, p.Rate)
			series.Y = append(series.Y, r.LatencyMs)
			series.Links = append(series.Links, r.URL)
			series.Tips = append(series.Tips, "run #"+strconv.FormatUint(uint64(r.ID), 10)+" at "+FormatNumber(p.Rate)+" records/s: p"+pct+" "+
				FormatNumber(r.LatencyMs)+" ms, achieved "+FormatNumber(r.Achieved)+" records/s; "+r.Reason)
			if lo == 0 || p.Rate < lo {
				lo = p.Rate
			}
			hi = max(hi, p.Rate)
		}
	}
	sortSeries(&passed)
	sortSeries(&failed)
	c.Series = []ChartSeries{passed, failed}
	if hi > 0 {
		c.Series = append(c.Series, ChartSeries{Name: "target " + FormatNumber(s.LatencyMs) + " ms", X: []float64{lo, hi}, Y: []float64{s.LatencyMs, s.LatencyMs}})
	}
	if s.Lo > 0 {
		c.Marks = append(c.Marks, ChartMark{X: s.Lo, Label: "lo", Title: "highest rate that met the target: " + FormatNumber(s.Lo) + " records/s", Class: "cp-mark cp-better"})
	}
	if s.Hi > 0 && s.Hi != s.Lo {
		c.Marks = append(c.Marks, ChartMark{X: s.Hi, Label: "hi", Title: "lowest rate that missed it: " + FormatNumber(s.Hi) + " records/s", Class: "cp-mark cp-worse"})
	}
	return LineChart(c)
}

// sortSeries orders a series' points by X, keeping each point's link and
// tooltip with it.
func sortSeries(s *ChartSeries) {
	idx := make([]int, len(s.X))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
	out := ChartSeries{Name: s.Name}
	for _, i := range idx {
		out.X, out.Y = append(out.X, s.X[i]), append(out.Y, s.Y[i])
		out.Links, out.Tips = append(out.Links, s.Links[i]), append(out.Tips, s.Tips[i])
	}
	*s = out
}

// SLOAnswer says a finished search's answer in words, "" while it
// searches.
func SLOAnswer(s wire.SLO) string {
	rate := func(v float64) string { return FormatNumber(v) + " records/s" }
	switch s.Outcome {
	case "found":
		return "The highest rate that met the target lies between " + rate(s.Lo) + " (met it) and " + rate(s.Hi) + " (missed it)."
	case "at-maximum":
		return "The target held at the highest rate the search may try, " + rate(s.Hi) + ": the limit is at or above it."
	case "none":
		return "No rate the search may try met the target; the lowest tried missed it."
	case "gave-up":
		return "The search gave up after its most probes without narrowing the bracket to the precision asked."
	}
	return ""
}

// SLOQuestion says what search s looks for.
func SLOQuestion(s wire.SLO) string {
	q := "Highest rate at which " + s.Config.Latency + " p" + FormatNumber(s.Percentile) + " stays under " + FormatNumber(s.LatencyMs) +
		" ms, to within " + FormatNumber(s.PrecisionPct) + " %, " + strconv.Itoa(s.Repetitions) + " run"
	if s.Repetitions != 1 {
		q += "s"
	}
	q += " per rate"
	if s.MinRate > 0 {
		q += ", from " + FormatNumber(s.MinRate) + " records/s"
	}
	if s.MaxRate > 0 {
		q += ", up to " + FormatNumber(s.MaxRate) + " records/s"
	} else {
		q += ", up to the maximum an unthrottled run reaches"
	}
	return q + "."
}
