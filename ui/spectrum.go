package ui

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
)

// Percentile spectra: a latency histogram drawn as HdrHistogram's
// plotter and OMB's charts draw it, the latency at each percentile
// against 1/(1−q) on a log axis, so that 90%, 99%, 99.9% … each take
// the same width and the tail gets as much room as the median.

// spectrumTicksPerHalf is how many points a spectrum line has per
// halving of the distance to 100% (HdrHistogram's default is 5).
const spectrumTicksPerHalf = 5

// SpectrumLine is one line of a spectrum chart: a run's histogram,
// several runs' merged, or a quantile curve (an OMB result's map,
// without counts: drawn as given, never merged).
type SpectrumLine struct {
	// Name is the line's tooltip and, without Group, its legend entry.
	Name  string
	Group string
	Hist  *hdr.Histogram
	// Curve, when Hist is nil, is the line's points in ms.
	Curve []rundoc.CurvePoint
}

// curveName names a quantile curve's line as what it is: a map of
// percentiles someone else computed, not a histogram of kbench's.
func curveName(prefix string, c rundoc.QuantileCurve) string {
	return prefix + "OMB's quantiles, no counts (" + strings.TrimPrefix(c.Source, "OMB ") + ")"
}

// spectrumX is where quantile q (0..100) sits on the chart's X axis:
// log10(1/(1−q)), so 90% is at 1, 99% at 2, 99.9% at 3.
func spectrumX(q float64) float64 { return -math.Log10(1 - q/100) }

// spectrumTicks label the X axis' decades up to top as percentiles.
func spectrumTicks(top float64) []ChartTick {
	var ticks []ChartTick
	for d := 0; float64(d) <= top+1e-9 && d <= 9; d++ {
		q := 100 * (1 - math.Pow(10, -float64(d)))
		ticks = append(ticks, ChartTick{X: float64(d), Label: strconv.FormatFloat(q, 'f', max(0, d-2), 64) + "%"})
	}
	return ticks
}

// SpectrumChart draws lines' percentile spectra in milliseconds. Each
// line ends at its max, placed at the quantile 1 − 1/count where its
// last value lies; a line of an empty histogram is left out.
func SpectrumChart(title string, lines []SpectrumLine) template.HTML {
	var series []ChartSeries
	top := 0.0
	for _, l := range lines {
		s := ChartSeries{Name: l.Name, Group: l.Group}
		if l.Hist != nil {
			for _, p := range l.Hist.Spectrum(spectrumTicksPerHalf) {
				s.X, s.Y = append(s.X, spectrumX(p.Q)), append(s.Y, float64(p.Value)/1000)
			}
		} else {
			for _, p := range l.Curve {
				// 100% (the max) lies at infinity on this axis: a curve
				// without counts cannot say at which quantile it belongs.
				if p.Q < 100 {
					s.X, s.Y = append(s.X, spectrumX(p.Q)), append(s.Y, p.Value)
				}
			}
		}
		if len(s.X) == 0 {
			continue
		}
		top = max(top, s.X[len(s.X)-1])
		series = append(series, s)
	}
	return LineChart(Chart{Title: title, XLabel: "percentile (log scale of 1/(1−q))", YLabel: "latency", Unit: "ms",
		Series: series, XTicks: spectrumTicks(top), Empty: "no latency histogram"})
}

// spectrumGroups splits the kinds of histogram a page draws into charts:
// the latencies on one, the publish delay (how late sends left, not a
// latency of the system under test) on its own.
func spectrumGroups(kinds []string) (latency, delay []string) {
	for _, k := range rundoc.HistogramKinds {
		if !slices.Contains(kinds, k) {
			continue
		}
		if k == rundoc.HistPublishDelay {
			delay = append(delay, k)
		} else {
			latency = append(latency, k)
		}
	}
	return latency, delay
}

// runSpectrumCharts draws a run's window histograms and quantile curves
// (an OMB import's): its latencies' spectrum, one line per kind, and its
// publish delay's beside it. A histogram that does not decode is named
// in the returned problems, not drawn.
func runSpectrumCharts(hs []rundoc.Histogram, curves []rundoc.QuantileCurve) (charts []template.HTML, problems []string) {
	byKind := map[string]*hdr.Histogram{}
	curveOf := map[string]rundoc.QuantileCurve{}
	var kinds []string
	for _, h := range hs {
		d, err := runhist.Check(h)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		byKind[h.Kind] = d
		kinds = append(kinds, h.Kind)
	}
	for _, c := range curves {
		if _, ok := curveOf[c.Kind]; !ok && c.Unit == "ms" && rundoc.ValidHistogramKind(c.Kind) {
			curveOf[c.Kind] = c
			kinds = append(kinds, c.Kind)
		}
	}
	latency, delay := spectrumGroups(kinds)
	lines := func(ks []string) []SpectrumLine {
		var out []SpectrumLine
		for _, k := range ks {
			if h := byKind[k]; h != nil {
				out = append(out, SpectrumLine{Name: fmt.Sprintf("%s (%s values)", k, FormatInt(h.TotalCount())), Hist: h})
			}
			if c, ok := curveOf[k]; ok {
				out = append(out, SpectrumLine{Name: curveName(k+": ", c), Curve: c.Points})
			}
		}
		return out
	}
	if len(latency) > 0 {
		charts = append(charts, SpectrumChart("Latency by percentile", lines(latency)))
	}
	if len(delay) > 0 {
		charts = append(charts, SpectrumChart("Publish delay by percentile", lines(delay)))
	}
	return charts, problems
}

// SpectraView is a comparison's or report's latency distribution: a
// chart per kind (mergedSpectra), and whether any line is a quantile
// curve, which the page then explains.
type SpectraView struct {
	Charts []template.HTML
	Curves bool
}

// mergedSpectra draws a comparison's merged histograms
// (compare.Table.Merged): a chart per kind, a line per column, each the
// column's runs' values together; and beside them, a line per run of
// each quantile curve its runs have (OMB imports'), never merged.
func mergedSpectra(t *compare.Table, runs []rundoc.Run) SpectraView {
	var v SpectraView
	byID := map[uint]*rundoc.Run{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	for _, kind := range rundoc.HistogramKinds {
		var lines []SpectrumLine
		for _, m := range t.Merged {
			if m.Kind != kind {
				continue
			}
			name := t.Columns[m.Column].Name
			switch n := len(m.Runs); {
			case n > 1:
				name += fmt.Sprintf(" (%d runs merged, %s values)", n, FormatInt(m.Hist.TotalCount()))
			default:
				name += fmt.Sprintf(" (%s values)", FormatInt(m.Hist.TotalCount()))
			}
			lines = append(lines, SpectrumLine{Name: name, Hist: m.Hist})
		}
		for _, col := range t.Columns {
			for _, id := range col.Runs {
				r := byID[id]
				if r == nil || r.Measurement == nil {
					continue
				}
				for _, c := range r.Measurement.Curves {
					if c.Kind == kind && c.Unit == "ms" {
						lines = append(lines, SpectrumLine{Name: curveName(fmt.Sprintf("%s run #%d: ", col.Name, id), c), Curve: c.Points})
						v.Curves = true
						break
					}
				}
			}
		}
		if len(lines) > 0 {
			v.Charts = append(v.Charts, SpectrumChart(kind+" by percentile", lines))
		}
	}
	return v
}

// windowCharts draw an import's window series (OMB's 10 s windows) over
// time: a chart per unit, each series a line; of the latencies, the
// median and p99 of each, which the chart has room for (every window
// series is in the measurement document and the run's omb.json).
func windowCharts(ws []rundoc.WindowSeries) []template.HTML {
	var units []string
	byUnit := map[string][]ChartSeries{}
	for _, w := range ws {
		if w.Unit == "ms" && !strings.HasSuffix(w.Name, "-p50") && !strings.HasSuffix(w.Name, "-p99") {
			continue
		}
		s := ChartSeries{Name: w.Name, X: make([]float64, len(w.Values)), Y: w.Values}
		for i := range w.Values {
			s.X[i] = float64(i+1) * w.StepS
		}
		if byUnit[w.Unit] == nil {
			units = append(units, w.Unit)
		}
		byUnit[w.Unit] = append(byUnit[w.Unit], s)
	}
	var charts []template.HTML
	for _, u := range units {
		title := "OMB's windows: " + u
		switch u {
		case "ms":
			title = "OMB's windows: latency (p50, p99)"
		case "records/s":
			title = "OMB's windows: rates"
		}
		charts = append(charts, LineChart(Chart{Title: title, XLabel: "seconds (end of each 10 s window)", YLabel: u, Unit: u, Series: byUnit[u]}))
	}
	return charts
}
