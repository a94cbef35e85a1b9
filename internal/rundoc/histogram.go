package rundoc

// A run's latency histograms: every latency a run measures is also kept
// whole, as an HdrHistogram (internal/hdr) of microseconds from
// HistogramLowest to HistogramHighest at HistogramDigits significant
// digits, in HdrHistogram's compressed V2 encoding, base64 with padding
// (HistogramEncoding), which HdrHistogram's own tools read. Histograms of
// the same layout merge by adding counts, so repetitions combine into the
// percentiles of all their records, which no median of percentiles is.
const (
	HistogramUnit     = "us"
	HistogramEncoding = "hdrhistogram-v2-compressed-base64"
	HistogramLowest   = int64(1)
	HistogramHighest  = int64(3_600_000_000) // one hour
	HistogramDigits   = 3

	// HistogramWindow is the scope of a histogram of the whole measured
	// window; HistogramInterval that of one interval of the series.
	HistogramWindow   = "window"
	HistogramInterval = "interval"
)

// The kinds of histogram, named as the latency metrics they hold
// (kind-p99 is the histogram's 99th percentile in ms).
const (
	HistRecordLatency         = "record-latency"          // producer: send → acknowledgement
	HistRecordLatencyIntended = "record-latency-intended" // throttled producer: intended send → acknowledgement
	HistE2ELatency            = "e2e-latency"             // send → consumer's receipt
	HistE2ELatencyIntended    = "e2e-latency-intended"    // e2e rate mode: intended send → receipt
	HistPublishLatency        = "publish-latency"         // e2e rate mode: send → acknowledgement
	HistPublishDelay          = "publish-delay"           // throttled: intended send → send (OMB's publishDelayLatency)
	HistRequestLatency        = "request-latency"         // write-path lab: request written → response
)

// Histogram is one latency histogram of a run.
type Histogram struct {
	// Kind is one of the Hist* kinds.
	Kind string `json:"kind"`
	// Scope is HistogramWindow or HistogramInterval.
	Scope string `json:"scope"`
	// StartS and EndS bound the values' time in seconds since the
	// measured window opened (for the window scope: 0 and its length).
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Count is how many values the histogram holds.
	Count int64 `json:"count"`
	// Data is the histogram in HistogramEncoding.
	Data string `json:"data"`
}
