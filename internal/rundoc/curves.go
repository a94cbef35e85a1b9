package rundoc

// Figures an import brings that kbench's own runs keep otherwise: a
// latency distribution known only by its quantiles, and figures over
// fixed windows that a run's interval series has no column for. Both are
// kept in the run's measurement document (Measurement.Curves and
// .Windows), which the store keeps as its text: they need no table, and
// no page of many runs loads them.

// ToolOMB is the Tool of a run imported from an OpenMessaging Benchmark
// result (internal/omb): its environment's and measurement's, so that
// comparisons can say that a side's load came from OMB.
const ToolOMB = "omb"

// QuantileCurve is a latency distribution as (percentile, value) points
// without counts, such as OMB's aggregated quantile maps. Without counts
// it is no histogram: it cannot be merged with one or with another
// curve, so pages draw it beside the histograms' spectra and
// comparisons never add it to a merged row.
type QuantileCurve struct {
	// Kind is the histogram kind whose latency the curve describes
	// (HistPublishLatency, HistE2ELatency, HistPublishDelay).
	Kind string `json:"kind"`
	// Unit is the values' unit: "ms", as the kind's metrics.
	Unit string `json:"unit"`
	// Source says where the points come from, for the legend
	// ("OMB aggregatedPublishLatencyQuantiles").
	Source string `json:"source"`
	// Points are in increasing Q.
	Points []CurvePoint `json:"points"`
}

// CurvePoint is a curve's value at the quantile Q (0..100).
type CurvePoint struct {
	Q     float64 `json:"q"`
	Value float64 `json:"value"`
}

// WindowSeries is one figure of a run over consecutive windows of StepS
// seconds from the measured window's start, value i covering
// [i·StepS, (i+1)·StepS): OMB's per-window lists (10 s each), under
// kbench's metric names ("record-send-rate", "publish-latency-p99",
// "backlog").
type WindowSeries struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	StepS  float64   `json:"step_s"`
	Values []float64 `json:"values"`
}
