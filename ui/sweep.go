package ui

import (
	"html/template"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kbench/kbench/client/wire"
)

// SweepsPath is the latency-vs-throughput page: the sweep form and the
// recent sweeps; SweepURL is one sweep's result page.
const SweepsPath = "/sweeps"

// SweepURL is the result page of sweep id.
func SweepURL(id string) string { return SweepsPath + "/" + url.PathEscape(id) }

// Sweep form field names; configuration rows are suffixed with their
// index ("label-0", "params-0", "queue-0").
const (
	SweepFieldRates       = "rates_pct"
	SweepFieldRepetitions = "repetitions"
	SweepFormRows         = 4
)

// DefaultSweepRates are the target rates in percent of the maximum when
// a sweep names none.
var DefaultSweepRates = []float64{10, 25, 50, 75, 90, 100, 110}

// FormatRates writes rates as the form shows them: "10, 25, 50".
func FormatRates(rates []float64) string {
	parts := make([]string, len(rates))
	for i, r := range rates {
		parts[i] = strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// SweepPoint is one run of a sweep's second phase as the chart draws it
// and the API shows it (client's type): its achieved throughput and
// latency percentiles.
type SweepPoint = wire.SweepPoint

// SweepRunRow is one run of a sweep in the page's table.
type SweepRunRow struct {
	ID         uint
	URL        string
	Label      string
	Phase      int
	Rate       string // "max" or "50%"
	TargetRate string
	Status     string
	Throughput string
	P50        string
	P99        string
	P999       string
}

// SweepMaxRow is one configuration's maximum rate as the page shows it.
type SweepMaxRow struct {
	Label, Queue, Workload string
	MaxRate                string // "" until measured
	Runs                   int
	Note                   string
}

// SweepListRow is one sweep in the list on /sweeps.
type SweepListRow struct {
	ID, URL, Phase, Created, Labels string
}

// SweepFormRow is one configuration row of the form.
type SweepFormRow struct {
	Index                int
	Label, Params, Queue string
	// LabelErr, ParamsErr and QueueErr are every message of each field.
	LabelErr, ParamsErr, QueueErr []string
}

// SweepView is /sweeps (the form and the list) and /sweeps/<id>
// (Result: the phases, the maximum rates, the charts and the runs).
type SweepView struct {
	Page
	Result bool
	// Form.
	Rows        []SweepFormRow
	Rates       string
	Repetitions string
	Errors      []FormError
	Sweeps      []SweepListRow
	// Result.
	ID    string
	Phase string
	// Note says why the sweep ended as it did (canceled, its runs
	// deleted, no points), "" when there is nothing to say.
	Note string
	// CancelURL is where the Cancel button posts, "" once the sweep has
	// ended.
	CancelURL   string
	Refresh     bool
	Done, Total int
	APIURL      string
	MaxRates    []SweepMaxRow
	Charts      []template.HTML
	Runs        []SweepRunRow
	Metrics     string // the metrics plotted, named
}

// NewSweepForm is /sweeps with the form holding values (empty: one
// example row) and errs beside their fields.
func NewSweepForm(values url.Values, errs map[string]string, sweeps []SweepListRow) SweepView {
	v := SweepView{Page: Page{Title: "Latency vs throughput"}, Sweeps: sweeps,
		Rates: values.Get(SweepFieldRates), Repetitions: values.Get(SweepFieldRepetitions)}
	if len(values) == 0 {
		v.Rates, v.Repetitions = FormatRates(DefaultSweepRates), "3"
	}
	used := map[string]bool{}
	for i := 0; i < SweepFormRows; i++ {
		is := strconv.Itoa(i)
		r := SweepFormRow{Index: i, Label: values.Get("label-" + is), Params: values.Get("params-" + is), Queue: values.Get("queue-" + is)}
		if len(values) == 0 && i == 0 {
			r.Label, r.Params = "trunk", `{"workload": "producer", "num-records": 200000, "record-size": 100}`
		}
		prefix := "configs[" + is + "]."
		var fields []string
		for name := range errs {
			fields = append(fields, name)
		}
		sort.Strings(fields) // the params' messages in a stable order
		for _, name := range fields {
			msgs := ErrorLines(errs[name])
			switch {
			case name == prefix+"label":
				r.LabelErr = msgs
			case name == prefix+"queue":
				r.QueueErr = msgs
			case strings.HasPrefix(name, prefix+"params") || strings.HasPrefix(name, prefix+"target"):
				for _, m := range msgs {
					r.ParamsErr = append(r.ParamsErr, strings.TrimPrefix(name, prefix)+": "+m)
				}
			default:
				continue
			}
			used[name] = true
		}
		v.Rows = append(v.Rows, r)
	}
	var names []string
	for name := range errs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, m := range ErrorLines(errs[name]) {
			v.Errors = append(v.Errors, FormError{Field: name, Label: name, Message: m})
		}
	}
	return v
}

// SweepPercentiles are the three latency charts of a sweep: title and
// how a point's value is read.
var sweepPercentiles = []struct {
	name string
	get  func(SweepPoint) float64
}{
	{"p50", func(p SweepPoint) float64 { return p.P50 }},
	{"p99", func(p SweepPoint) float64 { return p.P99 }},
	{"p99.9", func(p SweepPoint) float64 { return p.P999 }},
}

// SweepCharts draws one chart per percentile (p50, p99, p99.9) of
// latency against achieved throughput, one line per label (in labels'
// order) through its points sorted by throughput, on a log latency axis;
// every point links to its run.
func SweepCharts(labels []string, points []SweepPoint) []template.HTML {
	out := make([]template.HTML, 0, len(sweepPercentiles))
	for _, pc := range sweepPercentiles {
		c := Chart{Title: pc.name + " latency vs throughput", XLabel: "achieved throughput (records/s)", YLabel: pc.name + " latency",
			Unit: "ms", LogY: true, Empty: "no run at a target rate has finished yet"}
		for _, label := range labels {
			var mine []SweepPoint
			for _, p := range points {
				if p.Label == label {
					mine = append(mine, p)
				}
			}
			sort.SliceStable(mine, func(i, j int) bool { return mine[i].Throughput < mine[j].Throughput })
			s := ChartSeries{Name: label}
			for _, p := range mine {
				s.X = append(s.X, p.Throughput)
				s.Y = append(s.Y, pc.get(p))
				s.Links = append(s.Links, p.URL)
				s.Tips = append(s.Tips, "run #"+strconv.FormatUint(uint64(p.RunID), 10)+": "+label+" at "+
					strconv.FormatFloat(p.RatePct, 'f', -1, 64)+"% of its maximum, "+FormatNumber(p.Throughput)+" records/s, "+
					pc.name+" "+FormatNumber(pc.get(p))+" ms")
			}
			if len(s.X) > 0 {
				c.Series = append(c.Series, s)
			}
		}
		out = append(out, LineChart(c))
	}
	return out
}

// RunURL is the page of run id.
func RunURL(id uint) string { return "/runs/" + uintStr(id) }
