package rundoc

import (
	"slices"
	"time"
)

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

	// HistogramLogFile is the name of a run's interval histograms next
	// to its result.json: HdrHistogram's log format (version 1.3), one
	// line per kind and interval, tagged with the kind, on a grid of
	// HistogramLogStep from the measured window's start.
	HistogramLogFile = "histograms.hlog"
	HistogramLogStep = time.Second
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

// HistogramKinds are the kinds of histogram a run keeps, in the order
// pages list them.
var HistogramKinds = []string{
	HistRecordLatency, HistRecordLatencyIntended, HistE2ELatency, HistE2ELatencyIntended,
	HistPublishLatency, HistPublishDelay, HistRequestLatency,
}

// ValidHistogramKind reports whether kind is one of HistogramKinds.
func ValidHistogramKind(kind string) bool { return slices.Contains(HistogramKinds, kind) }
