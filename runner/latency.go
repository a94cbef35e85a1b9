package runner

import (
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// Latency histograms hold every record's latency in microseconds, in
// rundoc's histogram layout (1 µs to one hour, 3 significant digits):
// percentiles are within 0.1% of the exact value of the same data (checked
// against a sort in the tests).
type latencyHist struct {
	// h is the measured window's histogram. While the run logs this
	// histogram's intervals (logged), values go to slot only, and each
	// slot is merged into h when the log takes it: one record per value,
	// not two.
	h *hdr.Histogram
	// slot holds the values since the interval log's last tick, and
	// spare the previous slot's, which the log encodes outside the
	// owner's lock (logIntervals).
	slot, spare *hdr.Histogram
	logged      bool
	// clamped counts values outside the histogram's range, which are
	// recorded at the nearest bound; a non-zero count is reported as a note.
	clamped int64
}

func newHist() *hdr.Histogram {
	return hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
}

func newLatencyHist() *latencyHist {
	return &latencyHist{h: newHist(), slot: newHist(), spare: newHist()}
}

// histValue is d as a histogram records it: microseconds within the
// layout's range, and whether it was above it.
func histValue(d time.Duration) (v int64, clamped bool) {
	v = d.Microseconds()
	switch {
	case v < rundoc.HistogramLowest:
		return rundoc.HistogramLowest, false // sub-microsecond: below the clock's useful resolution
	case v > rundoc.HistogramHighest:
		return rundoc.HistogramHighest, true
	}
	return v, false
}

func (l *latencyHist) record(d time.Duration) {
	v, clamped := histValue(d)
	if clamped {
		l.clamped++
	}
	// RecordValue only fails for values outside the range, excluded above.
	if l.logged {
		_ = l.slot.RecordValue(v)
	} else {
		_ = l.h.RecordValue(v)
	}
}

// takeSlot returns the values recorded since the last call and starts a
// new slot; the owner's lock is held. The histogram returned is read
// (and merged into h) before the next call, which reuses it.
func (l *latencyHist) takeSlot() *hdr.Histogram {
	l.spare.Reset()
	l.slot, l.spare = l.spare, l.slot
	return l.spare
}

func (l *latencyHist) count() int64 { return l.h.TotalCount() }

// quantileMs is the latency at quantile q (0..100) in milliseconds.
func (l *latencyHist) quantileMs(q float64) float64 {
	return float64(l.h.ValueAtQuantile(q)) / 1000
}

func (l *latencyHist) meanMs() float64 { return l.h.Mean() / 1000 }
func (l *latencyHist) maxMs() float64  { return float64(l.h.Max()) / 1000 }

// latencyQuantile is one percentile a latency metric reports: its name
// suffix and its quantile (0..100).
type latencyQuantile struct {
	suffix string
	q      float64
}

// latencyQuantiles are the percentiles metrics reports.
var latencyQuantiles = []latencyQuantile{{"p50", 50}, {"p95", 95}, {"p99", 99}, {"p999", 99.9}}

// windowHistogram is the histogram of the measured window (secs long) as
// result.json keeps it, of kind.
func (l *latencyHist) windowHistogram(kind string, secs float64) rundoc.Histogram {
	return rundoc.Histogram{Kind: kind, Scope: rundoc.HistogramWindow, EndS: secs, Count: l.count(), Data: l.h.Encode()}
}

// addLatency reports h of kind, when it holds any value: its metrics
// (kind-avg, the percentiles qs, kind-max) and its histogram of the
// measured window.
func (r *run) addLatency(h *latencyHist, kind, help string, qs []latencyQuantile) {
	if h.count() == 0 {
		return
	}
	r.res.Metrics = append(r.res.Metrics, h.metricsAt(kind, help, qs)...)
	r.res.Histograms = append(r.res.Histograms, h.windowHistogram(kind, r.win.seconds()))
}

// metricsAt reports the histogram as prefix-avg, the percentiles qs and
// prefix-max, in ms, lower being better, all with the same help.
func (l *latencyHist) metricsAt(prefix, help string, qs []latencyQuantile) []rundoc.Metric {
	m := func(suffix string, v float64) rundoc.Metric {
		return rundoc.Metric{Name: prefix + "-" + suffix, Value: v, Unit: "ms", Better: rundoc.LowerIsBetter, Help: help}
	}
	out := []rundoc.Metric{m("avg", l.meanMs())}
	for _, p := range qs {
		out = append(out, m(p.suffix, l.quantileMs(p.q)))
	}
	return append(out, m("max", l.maxMs()))
}
