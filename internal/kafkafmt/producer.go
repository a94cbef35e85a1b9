package kafkafmt

import (
	"slices"
	"strconv"
	"strings"
)

// bytesPerMB is the MB of the perf tools: 1024*1024 bytes.
const bytesPerMB = 1024.0 * 1024.0

// ProducerInterval renders one periodic producer line, ending in "\n",
// like ProducerPerformance.Stats.printWindow:
//
//	%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.%n
//
// Java passes the window's maximum latency, an int, as a double.
// [ProducerCounters.IntervalLine] computes the numbers from raw counters
// exactly as Java does.
func ProducerInterval(records int64, recordsPerSec, mbPerSec, avgLatencyMs, maxLatencyMs float64) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(records, 10))
	b.WriteString(" records sent, ")
	b.WriteString(JavaFixed(recordsPerSec, 1))
	b.WriteString(" records/sec (")
	b.WriteString(JavaFixed(mbPerSec, 2))
	b.WriteString(" MB/sec), ")
	b.WriteString(JavaFixed(avgLatencyMs, 1))
	b.WriteString(" ms avg latency, ")
	b.WriteString(JavaFixed(maxLatencyMs, 1))
	b.WriteString(" ms max latency.\n")
	return b.String()
}

// ProducerTotals holds the numbers of the final producer summary line.
type ProducerTotals struct {
	Records       int64
	RecordsPerSec float64
	MBPerSec      float64 // MB = 1024*1024 bytes
	AvgLatencyMs  float64
	MaxLatencyMs  float64 // Java's maximum is an int shown with %.2f
	// Latency percentiles in ms.
	P50, P95, P99, P999 int64
	// SteadyState marks the extra summary Kafka prints for the records
	// after --warmup-records: "N steady state records sent, ...".
	SteadyState bool
}

// ProducerSummary renders the final producer line, ending in "\n", like
// ProducerPerformance.Stats.printTotal:
//
//	%d%s records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.%n
//
// where %s is " steady state" for the steady-state summary and empty
// otherwise, and %f has Java's default precision of 6.
func ProducerSummary(s ProducerTotals) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(s.Records, 10))
	if s.SteadyState {
		b.WriteString(" steady state")
	}
	b.WriteString(" records sent, ")
	b.WriteString(JavaFixed(s.RecordsPerSec, 6))
	b.WriteString(" records/sec (")
	b.WriteString(JavaFixed(s.MBPerSec, 2))
	b.WriteString(" MB/sec), ")
	b.WriteString(JavaFixed(s.AvgLatencyMs, 2))
	b.WriteString(" ms avg latency, ")
	b.WriteString(JavaFixed(s.MaxLatencyMs, 2))
	b.WriteString(" ms max latency, ")
	b.WriteString(strconv.FormatInt(s.P50, 10))
	b.WriteString(" ms 50th, ")
	b.WriteString(strconv.FormatInt(s.P95, 10))
	b.WriteString(" ms 95th, ")
	b.WriteString(strconv.FormatInt(s.P99, 10))
	b.WriteString(" ms 99th, ")
	b.WriteString(strconv.FormatInt(s.P999, 10))
	b.WriteString(" ms 99.9th.\n")
	return b.String()
}

// ProducerWarmupNotice is the line ProducerPerformance prints before
// sending when --warmup-records is positive.
func ProducerWarmupNotice(warmupRecords int64) string {
	return "Warmup first " + strconv.FormatInt(warmupRecords, 10) +
		" records. Steady state results will print after the complete test summary.\n"
}

// ProducerSteadyStateNotice is the line ProducerPerformance prints when
// the first steady-state window is reported.
func ProducerSteadyStateNotice() string {
	return "In steady state.\n"
}

// ProducerCounters are the raw counters ProducerPerformance.Stats keeps,
// for a reporting window or for a whole run.
type ProducerCounters struct {
	Records        int64 // records acknowledged
	Bytes          int64 // their payload bytes
	TotalLatencyMs int64 // sum of per-record latencies
	MaxLatencyMs   int64
	ElapsedMs      int64 // window or run duration
}

// RecordsPerSec is Java's 1000.0 * count / (double) elapsed.
func (c ProducerCounters) RecordsPerSec() float64 {
	return 1000.0 * float64(c.Records) / float64(c.ElapsedMs)
}

// MBPerSec is Java's 1000.0 * bytes / (double) elapsed / (1024.0 * 1024.0).
func (c ProducerCounters) MBPerSec() float64 {
	return 1000.0 * float64(c.Bytes) / float64(c.ElapsedMs) / bytesPerMB
}

// AvgLatencyMs is Java's totalLatency / (double) count.
func (c ProducerCounters) AvgLatencyMs() float64 {
	return float64(c.TotalLatencyMs) / float64(c.Records)
}

// IntervalLine computes the window numbers the way printWindow does
// (same operations in the same order, hence the same doubles) and renders
// them with [ProducerInterval].
func (c ProducerCounters) IntervalLine() string {
	return ProducerInterval(c.Records, c.RecordsPerSec(), c.MBPerSec(), c.AvgLatencyMs(), float64(c.MaxLatencyMs))
}

// Totals computes the summary numbers the way printTotal does, with the
// given latency percentiles (see [Percentiles]).
func (c ProducerCounters) Totals(p50, p95, p99, p999 int64) ProducerTotals {
	return ProducerTotals{
		Records:       c.Records,
		RecordsPerSec: c.RecordsPerSec(),
		MBPerSec:      c.MBPerSec(),
		AvgLatencyMs:  c.AvgLatencyMs(),
		MaxLatencyMs:  float64(c.MaxLatencyMs),
		P50:           p50,
		P95:           p95,
		P99:           p99,
		P999:          p999,
	}
}

// Percentiles picks latency percentiles the way ProducerPerformance does:
// sort the (sampled) latencies and take element (int) (p * n) for each p.
// Kafka asks for 0.5, 0.95, 0.99 and 0.999. latencies is not modified.
// Where Java would fail (an empty slice, p outside [0, 1)) this returns
// zeros or clamps the index.
func Percentiles(latencies []int64, ps ...float64) []int64 {
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	out := make([]int64, len(ps))
	if len(sorted) == 0 {
		return out
	}
	for i, p := range ps {
		idx := int(p * float64(len(sorted)))
		idx = min(max(idx, 0), len(sorted)-1)
		out[i] = sorted[idx]
	}
	return out
}
