package ui

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"

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

// SpectrumLine is one line of a spectrum chart: a run's histogram, or
// several runs' merged.
type SpectrumLine struct {
	// Name is the line's tooltip and, without Group, its legend entry.
	Name  string
	Group string
	Hist  *hdr.Histogram
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
		sp := l.Hist.Spectrum(spectrumTicksPerHalf)
		if len(sp) == 0 {
			continue
		}
		s := ChartSeries{Name: l.Name, Group: l.Group, X: make([]float64, len(sp)), Y: make([]float64, len(sp))}
		for i, p := range sp {
			s.X[i], s.Y[i] = spectrumX(p.Q), float64(p.Value)/1000
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

// runSpectrumCharts draws a run's window histograms: its latencies'
// spectrum, one line per kind, and its publish delay's beside it. A
// histogram that does not decode is named in the returned problems,
// not drawn.
func runSpectrumCharts(hs []rundoc.Histogram) (charts []template.HTML, problems []string) {
	byKind := map[string]*hdr.Histogram{}
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
	latency, delay := spectrumGroups(kinds)
	line := func(k string) SpectrumLine {
		h := byKind[k]
		return SpectrumLine{Name: fmt.Sprintf("%s (%s values)", k, FormatInt(h.TotalCount())), Hist: h}
	}
	if len(latency) > 0 {
		var lines []SpectrumLine
		for _, k := range latency {
			lines = append(lines, line(k))
		}
		charts = append(charts, SpectrumChart("Latency by percentile", lines))
	}
	if len(delay) > 0 {
		charts = append(charts, SpectrumChart("Publish delay by percentile", []SpectrumLine{line(delay[0])}))
	}
	return charts, problems
}

// mergedSpectra draws a comparison's merged histograms
// (compare.Table.Merged): a chart per kind, a line per column, each the
// column's runs' values together.
func mergedSpectra(t *compare.Table) []template.HTML {
	var charts []template.HTML
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
		if len(lines) > 0 {
			charts = append(charts, SpectrumChart(kind+" by percentile", lines))
		}
	}
	return charts
}
