package omb

import (
	"fmt"
	"math"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// suffixes are the figures of each of OMB's latencies, as kbench names
// them (kind-avg, kind-p50, …, kind-max) in OMB's order (Avg, 50pct, …,
// Max); quantiles holds each one's percentile, -1 for the mean and 101
// for the max.
var (
	suffixes  = []string{"avg", "p50", "p75", "p95", "p99", "p999", "p9999", "max"}
	ombNames  = []string{"Avg", "50pct", "75pct", "95pct", "99pct", "999pct", "9999pct", "Max"}
	quantiles = []float64{-1, 50, 75, 95, 99, 99.9, 99.99, 101}
)

// family is one of OMB's latencies: its per-window lists' and
// aggregated figures' field names, its quantile map, and the kbench
// histogram kind (and metric prefix) it maps to.
type family struct {
	kind string
	// window and aggregated prefix the field names (window+"99pct").
	window, aggregated string
	quantiles          string
	// micros: OMB writes it in µs (publish delay); kbench keeps ms.
	micros bool
	help   string
}

var families = []family{
	{kind: rundoc.HistPublishLatency, window: "publishLatency", aggregated: "aggregatedPublishLatency",
		quantiles: "aggregatedPublishLatencyQuantiles",
		help:      "publish latency: send → acknowledgement, by OMB's driver (the Java client, for Kafka)"},
	{kind: rundoc.HistPublishDelay, window: "publishDelayLatency", aggregated: "aggregatedPublishDelayLatency",
		quantiles: "aggregatedPublishDelayLatencyQuantiles", micros: true,
		help: "publish delay: how late each send left against its schedule (OMB writes whole µs; ms here, as kbench's)"},
	{kind: rundoc.HistE2ELatency, window: "endToEndLatency", aggregated: "aggregatedEndToEndLatency",
		quantiles: "aggregatedEndToEndLatencyQuantiles",
		help:      "end-to-end latency: publish → receipt, timed by the wall clock in whole milliseconds"},
}

// rateSeries are OMB's per-window lists that are not latencies, with the
// names and units kbench gives them.
var rateSeries = []struct{ field, name, unit string }{
	{"publishRate", "record-send-rate", "records/s"},
	{"consumeRate", "consume-rate", "records/s"},
	{"publishErrorRate", "publish-error-rate", "errors/s"},
	{"backlog", "backlog", "records"},
}

// Run is an OMB result as a kbench run: an imported e2e run whose
// source is OMB (its documents' Tool is rundoc.ToolOMB), ready to store.
type Run struct {
	// Label is the result's driver, or "OMB" when it names none.
	Label    string
	Workload rundoc.Workload
	// Spec says what was imported, with the result's workload and
	// driver as params (ImportSpec.Params), for comparisons to list.
	Spec        rundoc.ImportSpec
	Environment rundoc.Environment
	// Measurement holds, besides how the figures were read, OMB's
	// quantile maps as curves and its per-window lists as windows.
	Measurement rundoc.Measurement
	Metrics     []rundoc.Metric
	// Series is one point per 10 s window: the consume rate and the
	// end-to-end latency, as a kbench e2e run's series holds receipts.
	Series []rundoc.SeriesPoint
}

// Run maps the result to a kbench run; file names it in the run's spec
// and notes.
//
//   - publishLatency*, publishDelayLatency* and endToEndLatency* become
//     publish-latency-*, publish-delay-* and e2e-latency-* (avg, p50,
//     p75, p95, p99, p999, p9999, max; all in ms: the publish delay's µs
//     are divided by 1000, as kbench's own publish-delay is in ms). The
//     metrics are OMB's aggregated figures (the whole test's
//     histograms); one the result lacks is read off its quantile map
//     when it has one, and said so in the notes.
//   - publishRate and consumeRate become record-send-rate and
//     consume-rate: their mean over the 10 s windows, weighted by time
//     (OMB records no window's length, so each counts as 10 s).
//   - Every per-window list is kept as a window series; the quantile
//     maps as curves (no counts: never merged).
func (p *Parsed) Run(file string) Run {
	r := &p.Result
	run := Run{Label: r.Driver, Workload: rundoc.E2E}
	if strings.TrimSpace(run.Label) == "" {
		run.Label = "OMB"
	}
	var notes []string
	notes = append(notes, fmt.Sprintf("imported from an OpenMessaging Benchmark result (%s): workload %q, driver %q, %d windows of %d s",
		file, r.Workload, r.Driver, p.Windows, WindowSeconds))
	notes = append(notes, "OMB's figures: its load came from OMB's driver (for Kafka, the Java client), not kbench's; "+
		"its end-to-end latency is timed by the wall clock in whole milliseconds, so differences under 1 ms are not measured")

	for _, rs := range rateSeries[:2] {
		if xs := p.floats(rs.field); len(xs) > 0 {
			run.Metrics = append(run.Metrics, rundoc.Metric{Name: rs.name, Value: mean(xs), Unit: rs.unit, Better: rundoc.HigherIsBetter,
				Help: fmt.Sprintf("mean of OMB's %s over its %d windows of %d s", rs.field, len(xs), WindowSeconds)})
		}
	}
	notes = append(notes, fmt.Sprintf("record-send-rate and consume-rate are the means of the %d windows' rates: OMB does not record how long each window lasted, so each counts as %d s",
		p.Windows, WindowSeconds))
	for _, f := range families {
		ms, fallback := p.familyMetrics(f)
		run.Metrics = append(run.Metrics, ms...)
		notes = append(notes, fallback...)
	}

	run.Series = p.series()
	notes = append(notes, fmt.Sprintf("the series holds a point per %d s window: the consume rate and the end-to-end latency; "+
		"its records are the rate × %d s (and bytes × messageSize), since OMB records rates, not counts", WindowSeconds, WindowSeconds))
	run.Measurement = rundoc.Measurement{Source: rundoc.SourceImported, Tool: rundoc.ToolOMB,
		WindowSeconds: float64(p.Windows * WindowSeconds), Curves: p.curves(), Windows: p.windows()}
	if len(run.Measurement.Curves) > 0 {
		notes = append(notes, "OMB's quantile maps are kept as curves (percentile → latency, without counts): drawn beside histograms, never merged with them")
	}
	if len(p.Unknown) > 0 {
		notes = append(notes, "fields kbench does not read, ignored: "+strings.Join(p.Unknown, ", "))
	}
	run.Measurement.Notes = notes
	run.Environment = rundoc.Environment{Source: rundoc.SourceImported, Tool: rundoc.ToolOMB,
		Broker: "imported: an OMB result does not say which cluster it ran against"}
	run.Spec = rundoc.ImportSpec{Workload: rundoc.Imported, Files: []string{file}, Tool: rundoc.ToolOMB, Params: p.params()}
	return run
}

// ParamWorkload and ParamDriver name an OMB run's workload and driver
// among an import's params (rundoc.ImportSpec.Params).
const (
	ParamWorkload = "omb-workload"
	ParamDriver   = "omb-driver"
)

// params are what the result says of its workload, under kbench's
// parameter names where kbench has the same one (record-size, topics,
// partitions, consumers-per-subscription: OMB's consumersPerTopic is its
// workload's consumerPerSubscription).
func (p *Parsed) params() map[string]any {
	r := &p.Result
	out := map[string]any{ParamWorkload: r.Workload, ParamDriver: r.Driver}
	add := func(field, name string, v int64) {
		if p.Has(field) {
			out[name] = v
		}
	}
	add("messageSize", "record-size", r.MessageSize)
	add("topics", "topics", int64(r.Topics))
	add("partitions", "partitions", int64(r.Partitions))
	add("producersPerTopic", "producers-per-topic", int64(r.ProducersPerTopic))
	add("consumersPerTopic", "consumers-per-subscription", int64(r.ConsumersPerTopic))
	return out
}

// familyMetrics are f's eight metrics, and notes on those read off its
// quantile map.
func (p *Parsed) familyMetrics(f family) ([]rundoc.Metric, []string) {
	var out []rundoc.Metric
	var fromMap []string
	curve := p.quantiles(f.quantiles)
	for j, suffix := range suffixes {
		field := f.aggregated + ombNames[j]
		var v float64
		help := "OMB's " + field + ", its " + f.help
		switch x, ok := p.scalar(field); {
		case ok:
			v = x
		case len(curve) > 0 && quantiles[j] >= 0:
			v = curveAt(curve, quantiles[j])
			help = "read off OMB's " + f.quantiles + " (the result has no " + field + "), its " + f.help
			fromMap = append(fromMap, f.kind+"-"+suffix)
		default:
			continue
		}
		if f.micros {
			v /= 1000
		}
		out = append(out, rundoc.Metric{Name: f.kind + "-" + suffix, Value: v, Unit: "ms", Better: rundoc.LowerIsBetter, Help: help})
	}
	var notes []string
	if len(fromMap) > 0 {
		notes = append(notes, fmt.Sprintf("%s %s read off %s: the result has no aggregated figure for %s",
			strings.Join(fromMap, ", "), plural(len(fromMap), "is", "are"), f.quantiles, plural(len(fromMap), "it", "them")))
	}
	return out, notes
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// curveAt is a quantile map's value at percentile q: that of its first
// entry at or above q (HdrHistogram's maps step up to each percentile's
// value); its last for the max (q > 100).
func curveAt(qs Quantiles, q float64) float64 {
	for _, e := range qs {
		if e.Percentile >= q {
			return e.Value
		}
	}
	return qs[len(qs)-1].Value
}

// series is one point per window: the consume rate and the end-to-end
// latency.
func (p *Parsed) series() []rundoc.SeriesPoint {
	r := &p.Result
	out := make([]rundoc.SeriesPoint, p.Windows)
	at := func(xs []float64, i int) float64 {
		if i < len(xs) {
			return xs[i]
		}
		return 0
	}
	for i := range out {
		rate := at(r.ConsumeRate, i)
		records := int64(math.Round(rate * WindowSeconds))
		out[i] = rundoc.SeriesPoint{T: float64((i + 1) * WindowSeconds), Records: records, Bytes: records * r.MessageSize,
			RecordsPerSec: rate, MBPerSec: rate * float64(r.MessageSize) / (1 << 20),
			LatencyAvgMs: at(r.EndToEndLatencyAvg, i), LatencyMaxMs: at(r.EndToEndLatencyMax, i),
			LatencyP50Ms: at(r.EndToEndLatency50pct, i), LatencyP99Ms: at(r.EndToEndLatency99pct, i), LatencyP999Ms: at(r.EndToEndLatency999pct, i)}
	}
	return out
}

// windows are the result's per-window lists as window series, under
// kbench's names, in ms for every latency.
func (p *Parsed) windows() []rundoc.WindowSeries {
	var out []rundoc.WindowSeries
	add := func(name, unit, field string, scale float64) {
		xs := p.floats(field)
		if len(xs) == 0 {
			return
		}
		vs := make([]float64, len(xs))
		for i, x := range xs {
			vs[i] = x * scale
		}
		out = append(out, rundoc.WindowSeries{Name: name, Unit: unit, StepS: WindowSeconds, Values: vs})
	}
	for _, rs := range rateSeries {
		add(rs.name, rs.unit, rs.field, 1)
	}
	for _, f := range families {
		scale := 1.0
		if f.micros {
			scale = 1.0 / 1000
		}
		for j, suffix := range suffixes {
			add(f.kind+"-"+suffix, "ms", f.window+ombNames[j], scale)
		}
	}
	return out
}

// curves are the result's quantile maps, in ms.
func (p *Parsed) curves() []rundoc.QuantileCurve {
	var out []rundoc.QuantileCurve
	for _, f := range families {
		qs := p.quantiles(f.quantiles)
		if len(qs) == 0 {
			continue
		}
		c := rundoc.QuantileCurve{Kind: f.kind, Unit: "ms", Source: "OMB " + f.quantiles, Points: make([]rundoc.CurvePoint, len(qs))}
		for i, q := range qs {
			v := q.Value
			if f.micros {
				v /= 1000
			}
			c.Points[i] = rundoc.CurvePoint{Q: q.Percentile, Value: v}
		}
		out = append(out, c)
	}
	return out
}

// fieldPtr is the pointer to the named field of the result.
func (p *Parsed) fieldPtr(name string) any {
	for _, f := range fieldsOf(&p.Result) {
		if f.name == name {
			return f.ptr
		}
	}
	return nil
}

// floats is the named per-window list as numbers (nil when absent).
func (p *Parsed) floats(name string) []float64 {
	switch v := p.fieldPtr(name).(type) {
	case *[]float64:
		return *v
	case *[]int64:
		out := make([]float64, len(*v))
		for i, x := range *v {
			out[i] = float64(x)
		}
		return out
	}
	return nil
}

// scalar is the named aggregated figure, if the result has it.
func (p *Parsed) scalar(name string) (float64, bool) {
	if !p.Has(name) {
		return 0, false
	}
	switch v := p.fieldPtr(name).(type) {
	case *float64:
		return *v, true
	case *int64:
		return float64(*v), true
	}
	return 0, false
}

// quantiles is the named quantile map (nil when absent).
func (p *Parsed) quantiles(name string) Quantiles {
	if v, ok := p.fieldPtr(name).(*Quantiles); ok {
		return *v
	}
	return nil
}

// mean is the mean of xs, 0 for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
