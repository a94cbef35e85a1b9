package omb

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// Source is what Export reads of a run.
type Source struct {
	// Run is the run, with its metrics, series and documents.
	Run *rundoc.Run
	// Window are its window histograms; Intervals its interval
	// histograms (1 s, from its histogram log). Either may be empty: a
	// run from before kbench kept them, an import of figures.
	Window, Intervals []rundoc.Histogram
	// Workload is the name to write as OMB's workload, "" for the
	// run's own (see Export).
	Workload string
}

// quantileTicks is how many entries the quantile maps have per halving
// of the distance to 100%: OMB's (HdrHistogram's percentiles(100)).
const quantileTicks = 100

// Export writes a run as OMB's result: every key OMB writes (and
// bin/create_charts.py reads), in OMB's units, driver being the run's
// label ("run-ID" without one).
//
// The workload is s.Workload, else an OMB import's own, else a name
// made of the run's workload and spec ("kbench-e2e-1-topic-4-partitions-1024b"):
// create_charts.py charts together the results of one workload.
//
// Windows are 10 s from the measured window's start; the last one may
// be shorter, its rates over its own length. A run imported from OMB
// gives back its own windows (Measurement.Windows). Otherwise:
//
//   - publishRate is the producer's send rate from the run's series, or
//     an e2e run's acknowledged sends from its publish-latency interval
//     histograms; consumeRate the consumer's or e2e run's receipts from
//     its series. Rates are averaged over each window by time.
//   - backlog is, at each window's end, the records sent (times the
//     subscriptions) less those received, as OMB counts it, when both
//     rates are known.
//   - publishErrorRate is 0 in every window when the run counted no
//     error (record-error-total 0).
//   - Each window's latencies are those of the 1 s interval histograms
//     it holds, merged: exact, at kbench's 3 significant digits. Publish
//     latency is e2e rate mode's publish-latency, else the producer's
//     record-latency; publish delay is in whole µs, as OMB's.
//   - The aggregated figures and quantile maps come from the run's
//     window histograms, else from its metrics and (for an OMB import)
//     its curves.
//
// What a run lacks is left as OMB leaves a figure it never filled: an
// empty list (a window list: no interval histograms of that latency, no
// such rate, a run that counted errors it did not time), an empty map,
// or 0 (an aggregated figure without a histogram or metric). Note that
// create_charts.py's charts of a list that every result leaves empty
// fail (it takes the max of nothing); its other charts are drawn.
func Export(s Source) (*Result, error) {
	run := s.Run
	if run == nil {
		return nil, fmt.Errorf("omb: export: no run")
	}
	e := exporter{run: run, params: specParams(run.Spec), windows: map[string]rundoc.WindowSeries{}}
	if m := run.Measurement; m != nil {
		for _, w := range m.Windows {
			if w.StepS == WindowSeconds {
				e.windows[w.Name] = w
			}
		}
		e.curves = m.Curves
	}
	window := map[string]*hdr.Histogram{}
	for _, h := range s.Window {
		d, err := hdr.Decode(h.Data)
		if err != nil {
			return nil, fmt.Errorf("omb: export run %d: %s window histogram: %w", run.ID, h.Kind, err)
		}
		window[h.Kind] = d
	}
	e.bounds = e.windowBounds(s.Intervals)
	intervals, err := e.byWindow(s.Intervals)
	if err != nil {
		return nil, err
	}

	r := &Result{Driver: run.Label}
	if r.Driver == "" {
		r.Driver = "run-" + strconv.FormatUint(uint64(run.ID), 10)
	}
	r.Workload = s.Workload
	if r.Workload == "" {
		r.Workload = e.workloadName()
	}
	e.describe(r)

	pubKind := rundoc.HistRecordLatency
	if window[rundoc.HistPublishLatency] != nil || intervals[rundoc.HistPublishLatency] != nil || hasMetric(run, rundoc.HistPublishLatency+"-p99") {
		pubKind = rundoc.HistPublishLatency
	}
	r.PublishRate = e.publishRate(intervals[pubKind])
	r.ConsumeRate = e.consumeRate()
	r.PublishErrorRate = e.errorRate()
	r.Backlog = e.backlog(r.PublishRate, r.ConsumeRate)

	for _, f := range families {
		kind := f.kind
		if kind == rundoc.HistPublishLatency {
			kind = pubKind
		}
		lists := e.latencyLists(f, intervals[kind])
		agg, qs := e.aggregates(f, kind, window[kind])
		switch f.kind {
		case rundoc.HistPublishLatency:
			r.PublishLatencyAvg, r.PublishLatency50pct, r.PublishLatency75pct, r.PublishLatency95pct = lists[0], lists[1], lists[2], lists[3]
			r.PublishLatency99pct, r.PublishLatency999pct, r.PublishLatency9999pct, r.PublishLatencyMax = lists[4], lists[5], lists[6], lists[7]
			r.AggregatedPublishLatencyAvg, r.AggregatedPublishLatency50pct, r.AggregatedPublishLatency75pct, r.AggregatedPublishLatency95pct = agg[0], agg[1], agg[2], agg[3]
			r.AggregatedPublishLatency99pct, r.AggregatedPublishLatency999pct, r.AggregatedPublishLatency9999pct, r.AggregatedPublishLatencyMax = agg[4], agg[5], agg[6], agg[7]
			r.AggregatedPublishLatencyQuantiles = qs
		case rundoc.HistPublishDelay:
			r.PublishDelayLatencyAvg = lists[0]
			r.PublishDelayLatency50pct, r.PublishDelayLatency75pct, r.PublishDelayLatency95pct = longs(lists[1]), longs(lists[2]), longs(lists[3])
			r.PublishDelayLatency99pct, r.PublishDelayLatency999pct, r.PublishDelayLatency9999pct = longs(lists[4]), longs(lists[5]), longs(lists[6])
			r.PublishDelayLatencyMax = longs(lists[7])
			r.AggregatedPublishDelayLatencyAvg = agg[0]
			r.AggregatedPublishDelayLatency50pct, r.AggregatedPublishDelayLatency75pct = long(agg[1]), long(agg[2])
			r.AggregatedPublishDelayLatency95pct, r.AggregatedPublishDelayLatency99pct = long(agg[3]), long(agg[4])
			r.AggregatedPublishDelayLatency999pct, r.AggregatedPublishDelayLatency9999pct = long(agg[5]), long(agg[6])
			r.AggregatedPublishDelayLatencyMax = long(agg[7])
			r.AggregatedPublishDelayLatencyQuantiles = qs
		case rundoc.HistE2ELatency:
			r.EndToEndLatencyAvg, r.EndToEndLatency50pct, r.EndToEndLatency75pct, r.EndToEndLatency95pct = lists[0], lists[1], lists[2], lists[3]
			r.EndToEndLatency99pct, r.EndToEndLatency999pct, r.EndToEndLatency9999pct, r.EndToEndLatencyMax = lists[4], lists[5], lists[6], lists[7]
			r.AggregatedEndToEndLatencyAvg, r.AggregatedEndToEndLatency50pct, r.AggregatedEndToEndLatency75pct, r.AggregatedEndToEndLatency95pct = agg[0], agg[1], agg[2], agg[3]
			r.AggregatedEndToEndLatency99pct, r.AggregatedEndToEndLatency999pct, r.AggregatedEndToEndLatency9999pct, r.AggregatedEndToEndLatencyMax = agg[4], agg[5], agg[6], agg[7]
			r.AggregatedEndToEndLatencyQuantiles = qs
		}
	}
	fillEmpty(r)
	return r, nil
}

// exporter holds what Export reads of a run.
type exporter struct {
	run    *rundoc.Run
	params map[string]any
	// windows are an OMB import's own window series, by name; curves
	// its quantile maps.
	windows map[string]rundoc.WindowSeries
	curves  []rundoc.QuantileCurve
	// bounds are the 10 s windows' ends (their starts are the previous
	// ends, the first's 0).
	bounds []float64
}

// windowBounds are the ends of the run's 10 s windows: an OMB import's
// own count of windows, else the measured window cut in 10 s pieces (the
// last one what is left).
func (e *exporter) windowBounds(intervals []rundoc.Histogram) []float64 {
	n := 0
	for _, w := range e.windows {
		n = max(n, len(w.Values))
	}
	if n > 0 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64((i + 1) * WindowSeconds)
		}
		return out
	}
	length := 0.0
	if m := e.run.Measurement; m != nil {
		length = m.WindowSeconds
	}
	if length <= 0 && len(e.run.Series) > 0 {
		length = e.run.Series[len(e.run.Series)-1].T
	}
	if length <= 0 {
		for _, h := range intervals {
			length = max(length, h.EndS)
		}
	}
	if !(length > 0) || math.IsInf(length, 0) {
		return nil
	}
	// A stored document may claim any length (an imported result.json):
	// the windows stop where Parse would stop reading them.
	length = min(length, MaxWindows*WindowSeconds)
	var out []float64
	for end := float64(WindowSeconds); ; end += WindowSeconds {
		if end >= length-1e-9 {
			return append(out, length)
		}
		out = append(out, end)
	}
}

// start is window i's start.
func (e *exporter) start(i int) float64 {
	if i == 0 {
		return 0
	}
	return e.bounds[i-1]
}

// byWindow merges the interval histograms of each kind into the
// window their interval starts in; a kind without intervals has no
// entry.
func (e *exporter) byWindow(intervals []rundoc.Histogram) (map[string][]*hdr.Histogram, error) {
	out := map[string][]*hdr.Histogram{}
	if len(e.bounds) == 0 {
		return out, nil
	}
	for _, h := range intervals {
		d, err := hdr.Decode(h.Data)
		if err != nil {
			return nil, fmt.Errorf("omb: export run %d: %s interval histogram at %v s: %w", e.run.ID, h.Kind, h.StartS, err)
		}
		ws := out[h.Kind]
		if ws == nil {
			ws = make([]*hdr.Histogram, len(e.bounds))
			out[h.Kind] = ws
		}
		// The first window whose end lies past the interval's start; one
		// starting after the last window's end (a measured window cut
		// short of its last second) joins the last.
		i, _ := slices.BinarySearchFunc(e.bounds, h.StartS, func(end, t float64) int {
			if end <= t+1e-9 {
				return -1
			}
			return 1
		})
		i = min(i, len(e.bounds)-1)
		if ws[i] == nil {
			ws[i] = d
		} else if err := ws[i].Merge(d); err != nil {
			return nil, fmt.Errorf("omb: export run %d: %s interval histogram at %v s: %w", e.run.ID, h.Kind, h.StartS, err)
		}
	}
	return out, nil
}

// own is an OMB import's window series of that name, in OMB's unit
// (scale: the factor from kbench's unit to OMB's); ok false when the
// run has none.
func (e *exporter) own(name string, scale float64) ([]float64, bool) {
	w, ok := e.windows[name]
	if !ok {
		return nil, false
	}
	out := make([]float64, len(w.Values))
	for i, v := range w.Values {
		out[i] = v * scale
	}
	return out, true
}

// seriesRates are the run's series' rates averaged over each window by
// time: each point's rate holds over its interval (the previous point's
// end to its own).
func (e *exporter) seriesRates() []float64 {
	out := make([]float64, len(e.bounds))
	prev := 0.0
	for _, p := range e.run.Series {
		from, to := prev, p.T
		prev = p.T
		if !(to > from) {
			continue
		}
		for i := range e.bounds {
			lo, hi := max(from, e.start(i)), min(to, e.bounds[i])
			if hi > lo {
				// float64() keeps the product from being fused into an
				// FMA on some machines: exports stay the same everywhere.
				out[i] += float64(p.RecordsPerSec * (hi - lo))
			}
		}
	}
	for i := range out {
		if d := e.bounds[i] - e.start(i); d > 0 {
			out[i] /= d
		}
	}
	return out
}

// publishRate is the run's publish rate per window (see Export).
func (e *exporter) publishRate(pub []*hdr.Histogram) []float64 {
	if xs, ok := e.own("record-send-rate", 1); ok {
		return xs
	}
	switch {
	case e.run.Workload == rundoc.Producer && len(e.run.Series) > 0:
		return e.seriesRates()
	case e.run.Workload == rundoc.E2E && pub != nil:
		out := make([]float64, len(e.bounds))
		for i, h := range pub {
			if d := e.bounds[i] - e.start(i); h != nil && d > 0 {
				out[i] = float64(h.TotalCount()) / d
			}
		}
		return out
	}
	return nil
}

// consumeRate is the run's consume rate per window (see Export).
func (e *exporter) consumeRate() []float64 {
	if xs, ok := e.own("consume-rate", 1); ok {
		return xs
	}
	if (e.run.Workload == rundoc.Consumer || e.run.Workload == rundoc.E2E) && len(e.run.Series) > 0 {
		return e.seriesRates()
	}
	return nil
}

// errorRate is the run's publish errors per second in each window: an
// OMB import's own, else 0 throughout for a run that counted none.
func (e *exporter) errorRate() []float64 {
	if xs, ok := e.own("publish-error-rate", 1); ok {
		return xs
	}
	if m, ok := e.run.Metric("record-error-total"); ok && m.Value == 0 {
		return make([]float64, len(e.bounds))
	}
	return nil
}

// backlog is the records not yet received at each window's end, as OMB
// counts them (sent × subscriptions − received, at least 0), from the
// rates' counts.
func (e *exporter) backlog(pub, cons []float64) []int64 {
	if xs, ok := e.own("backlog", 1); ok {
		return longs(xs)
	}
	if e.run.Workload != rundoc.E2E || len(pub) != len(e.bounds) || len(cons) != len(e.bounds) {
		return nil
	}
	subs := max(paramInt(e.params, "subscriptions"), 1)
	out := make([]int64, len(e.bounds))
	var sent, received float64
	for i := range e.bounds {
		d := e.bounds[i] - e.start(i)
		sent += float64(pub[i] * d)
		received += float64(cons[i] * d)
		out[i] = max(0, int64(math.Round(float64(subs)*sent-received)))
	}
	return out
}

// latencyLists are f's eight per-window lists (OMB's units): an OMB
// import's own, else from the windows' histograms, else empty.
func (e *exporter) latencyLists(f family, hs []*hdr.Histogram) [8][]float64 {
	var out [8][]float64
	scale := 1.0
	if f.micros {
		scale = 1000
	}
	own := 0
	for j, suffix := range suffixes {
		if xs, ok := e.own(f.kind+"-"+suffix, scale); ok {
			if f.micros && j > 0 {
				// OMB's delay percentiles are whole µs: ms/1000 came
				// from them, so rounding gives them back exactly.
				for i := range xs {
					xs[i] = math.Round(xs[i])
				}
			}
			out[j], own = xs, own+1
		}
	}
	if own > 0 || hs == nil {
		return out
	}
	for j := range suffixes {
		out[j] = make([]float64, len(hs))
	}
	for i, h := range hs {
		if h == nil {
			// A window without values: OMB's empty histogram gives 0s.
			continue
		}
		for j := range suffixes {
			out[j][i] = figure(h, quantiles[j], f.micros)
		}
	}
	return out
}

// figure is h's figure at quantile q (quantileOf's: -1 the mean, 101
// the max) in OMB's unit: ms, or µs when micros.
func figure(h *hdr.Histogram, q float64, micros bool) float64 {
	var v float64
	switch q {
	case -1:
		v = h.Mean()
	case 101:
		v = float64(h.Max())
	default:
		v = float64(h.ValueAtQuantile(q))
	}
	if micros {
		return v
	}
	return v / 1000
}

// aggregates are f's eight aggregated figures and its quantile map
// (OMB's units): from the window histogram of kind, else the run's
// metrics (kind-avg, …) and curves, else 0s and an empty map.
func (e *exporter) aggregates(f family, kind string, h *hdr.Histogram) ([8]float64, Quantiles) {
	var agg [8]float64
	if h != nil && h.TotalCount() > 0 {
		for j := range suffixes {
			agg[j] = figure(h, quantiles[j], f.micros)
		}
		sp := h.Spectrum(quantileTicks)
		qs := make(Quantiles, 0, len(sp))
		for i, p := range sp {
			q := p.Q
			if i == len(sp)-1 {
				// HdrHistogram's percentile iteration ends at 100% with
				// the max, as OMB's maps do.
				q = 100
			}
			v := float64(p.Value)
			if !f.micros {
				v /= 1000
			}
			if len(qs) > 0 && qs[len(qs)-1].Percentile == q {
				qs[len(qs)-1].Value = v
				continue
			}
			qs = append(qs, Quantile{Percentile: q, Value: v})
		}
		return agg, qs
	}
	scale := 1.0
	if f.micros {
		scale = 1000
	}
	for j, suffix := range suffixes {
		if m, ok := e.run.Metric(kind + "-" + suffix); ok && m.Unit == "ms" {
			agg[j] = m.Value * scale
			if f.micros && j > 0 {
				agg[j] = math.Round(agg[j])
			}
		}
	}
	var qs Quantiles
	for _, c := range e.curves {
		if c.Kind != f.kind || c.Unit != "ms" {
			continue
		}
		for _, p := range c.Points {
			v := p.Value * scale
			if f.micros {
				v = math.Round(v)
			}
			qs = append(qs, Quantile{Percentile: p.Q, Value: v})
		}
		break
	}
	return agg, qs
}

// describe fills in what the result says of the workload: an OMB
// import's own figures, else the run's spec's.
func (e *exporter) describe(r *Result) {
	p := e.params
	r.MessageSize = int64(paramInt(p, "record-size"))
	r.Topics = max(paramInt(p, "topics"), 1)
	r.Partitions = paramInt(p, "partitions")
	w := e.run.Workload
	switch {
	case hasParam(p, "producers-per-topic"):
		r.ProducersPerTopic = paramInt(p, "producers-per-topic")
	case w == rundoc.Producer:
		r.ProducersPerTopic = max(paramInt(p, "threads"), 1)
	case w == rundoc.E2E:
		r.ProducersPerTopic = 1
	}
	switch {
	case hasParam(p, "consumers-per-subscription"):
		r.ConsumersPerTopic = paramInt(p, "consumers-per-subscription")
	case w == rundoc.Consumer || w == rundoc.E2E:
		r.ConsumersPerTopic = 1
	}
}

// workloadName is the workload an OMB import names, else one made from
// the run's workload and spec, as OMB's workload files are named.
func (e *exporter) workloadName() string {
	if s, ok := e.params[ParamWorkload].(string); ok && s != "" {
		return s
	}
	parts := []string{"kbench", string(e.run.Workload), strconv.Itoa(max(paramInt(e.params, "topics"), 1)) + "-topic"}
	if n := paramInt(e.params, "partitions"); n > 0 {
		parts = append(parts, strconv.Itoa(n)+"-partitions")
	}
	if n := paramInt(e.params, "record-size"); n > 0 {
		parts = append(parts, strconv.Itoa(n)+"b")
	}
	return strings.Join(parts, "-")
}

// specParams are the params of a stored spec (a spec file's or an
// import's), nil when it has none.
func specParams(spec string) map[string]any {
	var doc struct {
		Params map[string]any `json:"params"`
	}
	if json.Unmarshal([]byte(spec), &doc) != nil {
		return nil
	}
	return doc.Params
}

func hasParam(p map[string]any, name string) bool {
	_, ok := p[name].(float64)
	return ok
}

// paramInt is a numeric param as a whole number ≥ 0 (0 when absent or
// not a number).
func paramInt(p map[string]any, name string) int {
	v, ok := p[name].(float64)
	if !ok || !(v >= 0) || v > math.MaxInt32 {
		return 0
	}
	return int(v)
}

func hasMetric(r *rundoc.Run, name string) bool {
	_, ok := r.Metric(name)
	return ok
}

// longs rounds values to whole numbers (nil stays nil).
func longs(xs []float64) []int64 {
	if xs == nil {
		return nil
	}
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = long(x)
	}
	return out
}

func long(x float64) int64 { return int64(math.Round(x)) }
