package ui

import (
	"encoding/json"
	"html/template"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SeriesPath is the index of every series.
const SeriesPath = "/series"

// seriesNameIgnored are spec parameters that do not say what a series
// measures: names, what is printed or captured, and the target (the key
// tells series on different targets apart).
var seriesNameIgnored = map[string]bool{
	"topic": true, "group": true, "bootstrap-server": true, "profile": true, "print-metrics": true,
	"reporting-interval": true, "show-detailed-stats": true, "timeout": true, "config-file": true,
}

// maxNameSettings bounds the settings a series' name lists.
const maxNameSettings = 6

// SeriesName names a series by what it is: the label of its newest run
// (with the workload), or, without a label, the workload and the settings
// that define it (the spec's parameters but names, reporting and the
// target), and the branch its key names. The key itself stays what URLs
// use.
func SeriesName(key, label, workload, spec string) string {
	name := strings.TrimSpace(label)
	switch {
	case name != "" && workload != "":
		name += " (" + workload + ")"
	case name == "":
		name = strings.TrimSpace(workload + " " + specSettings(spec))
	}
	if name == "" {
		name = key
	}
	if i := strings.LastIndex(key, "@"); i >= 0 && i+1 < len(key) {
		branch := strings.NewReplacer("%40", "@", "%25", "%").Replace(key[i+1:])
		name += " on " + branch
	}
	return name
}

// specSettings is a spec's defining parameters as "k=v k=v", sorted,
// at most maxNameSettings of them.
func specSettings(spec string) string {
	var doc struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal([]byte(spec), &doc) != nil {
		return ""
	}
	var out []string
	for k, raw := range doc.Params {
		if seriesNameIgnored[k] {
			continue
		}
		if k == "props" {
			var props map[string]string
			if json.Unmarshal(raw, &props) == nil {
				for pk, pv := range props {
					if pk != "bootstrap.servers" && pv != "" {
						out = append(out, pk+"="+pv)
					}
				}
			}
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		switch v := v.(type) {
		case nil:
		case string:
			if v != "" {
				out = append(out, k+"="+v)
			}
		case float64:
			out = append(out, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
		case bool:
			if v {
				out = append(out, k)
			}
		default:
			b, _ := json.Marshal(v)
			out = append(out, k+"="+string(b))
		}
	}
	sort.Strings(out)
	if len(out) > maxNameSettings {
		out = append(slices.Clip(out[:maxNameSettings]), "…")
	}
	return strings.Join(out, " ")
}

// SeriesRow is one series on the index.
type SeriesRow struct {
	Key, Name, Workload string
	Runs                int
	// Metric is the headline metric shown, Last its newest value with
	// its unit ("" without a value).
	Metric, Last string
	// Sparkline is the metric's newest values, a small SVG.
	Sparkline template.HTML
	// Change is the newest change point ("−8.7% at #41"), ChangeClass
	// its direction's class, ChangeURL its before/after comparison;
	// Tentative when a side is below min_segment.
	Change, ChangeClass, ChangeURL string
	Tentative                      bool
	LastTime, LastTimeISO          string
	HistoryURL                     string
}

// SeriesView is the /series page.
type SeriesView struct {
	Page
	Rows []SeriesRow
}

// NewSeriesView is the index of rows, sorted by the time of their newest
// run, newest first.
func NewSeriesView(rows []SeriesRow) SeriesView {
	return SeriesView{Page: Page{Title: "Series"}, Rows: rows}
}

// Sparkline draws values as a small line (the newest last), with a dot on
// the newest value and a tick at each change point index in cps. It is
// an inline SVG without scripts or style attributes, like LineChart.
func Sparkline(values []float64, cps []int, title string) template.HTML {
	const w, h, pad = 120.0, 28.0, 3.0
	var b strings.Builder
	b.WriteString(`<svg class="sparkline" viewBox="0 0 120 28" width="120" height="28" role="img" aria-label="` + esc(title) + `"><title>` + esc(title) + `</title>`)
	var fin []float64
	for _, v := range values {
		if finite(v) {
			fin = append(fin, v)
		}
	}
	if len(fin) == 0 {
		b.WriteString(`</svg>`)
		return template.HTML(b.String())
	}
	lo, hi := slices.Min(fin), slices.Max(fin)
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	n := len(values)
	px := func(i int) float64 {
		if n == 1 {
			return w / 2
		}
		return pad + float64(i)/float64(n-1)*(w-2*pad)
	}
	py := func(v float64) float64 { return h - pad - (v-lo)/(hi-lo)*(h-2*pad) }
	for _, c := range cps {
		if c > 0 && c < n {
			x := ftoa((px(c-1) + px(c)) / 2)
			b.WriteString(`<line class="sparkline-cp" x1="` + x + `" y1="0" x2="` + x + `" y2="28" stroke="#b42318" stroke-width="1" stroke-dasharray="2 2"/>`)
		}
	}
	b.WriteString(`<polyline fill="none" stroke="#0072b2" stroke-width="1.5" points="`)
	first := true
	lastX, lastY := 0.0, 0.0
	for i, v := range values {
		if !finite(v) {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		lastX, lastY = px(i), py(v)
		b.WriteString(ftoa(lastX) + "," + ftoa(lastY))
	}
	b.WriteString(`"/>`)
	b.WriteString(`<circle cx="` + ftoa(lastX) + `" cy="` + ftoa(lastY) + `" r="2" fill="#0072b2"/></svg>`)
	return template.HTML(b.String())
}

// seriesTime formats t for the index, "" for the zero time.
func seriesTime(t time.Time) (string, string) {
	if t.IsZero() {
		return "", ""
	}
	return FormatTime(t), t.UTC().Format(time.RFC3339)
}

// SetLastTime fills r with the time's time of its newest run.
func (r *SeriesRow) SetLastTime(t time.Time) { r.LastTime, r.LastTimeISO = seriesTime(t) }
