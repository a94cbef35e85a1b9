package runner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/numfmt"
)

// The Kafka-format output computes its figures as Kafka's tools do, which
// is what makes it comparable with theirs: the consumer times its window
// in whole milliseconds, the producer cuts latency percentiles to whole
// milliseconds. The metrics keep the precise figures. These notes, stored
// in Measurement.OutputNotes and shown beside the output, say with the
// run's own numbers where the two differ, so nobody has to guess why a
// line and a table disagree.

// consumerLineNote explains the consumer's summary row: counters are what
// the row was computed from (whole-millisecond times, truncated rebalance
// time), records, window and rebalance the precise measurement. It returns
// "" when the row shows the measured figures at its own precision.
func consumerLineNote(counters kafkafmt.ConsumerCounters, records int64, window, rebalance time.Duration) string {
	row := counters.Row(time.UTC)
	secs := window.Seconds()
	fetch := window - rebalance
	rate := float64(records) / secs
	fetchRate := float64(records) / fetch.Seconds()
	kafkaRate, kafkaFetchRate := kafkafmt.JavaFixed(row.MessagesPerSec, 4), kafkafmt.JavaFixed(row.FetchMessagesPerSec, 4)
	measuredRate, measuredFetchRate := kafkafmt.JavaFixed(rate, 4), kafkafmt.JavaFixed(fetchRate, 4)
	if kafkaRate == measuredRate && kafkaFetchRate == measuredFetchRate && rebalance == time.Duration(row.RebalanceMs)*time.Millisecond {
		return ""
	}
	return fmt.Sprintf("Kafka's line uses whole-millisecond start and end times, as Kafka's tool does: "+
		"%s ms → %s records/s, rebalance %s ms, fetch %s ms → %s records/s; "+
		"measured: %s ms → %s records/s, rebalance %s ms, fetch %s ms → %s records/s (the metrics and result.json hold these).",
		numfmt.Group(strconv.FormatInt(counters.EndMs-counters.StartMs, 10)), numfmt.Group(kafkaRate),
		numfmt.Group(strconv.FormatInt(row.RebalanceMs, 10)), numfmt.Group(strconv.FormatInt(row.FetchMs, 10)), numfmt.Group(kafkaFetchRate),
		numfmt.Group(fixedMs(window)), numfmt.Group(measuredRate),
		numfmt.Group(fixedMs(rebalance)), numfmt.Group(fixedMs(fetch)), numfmt.Group(measuredFetchRate))
}

// producerLineNote explains the producer's summary line, whose latency
// percentiles Kafka prints cut to whole milliseconds ("0 ms 50th" for
// 0.393 ms). It lists the percentiles the cut changed, with their precise
// values, or returns "" when none changed.
func producerLineNote(h *latencyHist) string {
	if h.count() == 0 {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		label, metric string
		q             float64
	}{{"50th", "p50", 50}, {"95th", "p95", 95}, {"99th", "p99", 99}, {"99.9th", "p999", 99.9}} {
		v := h.quantileMs(p.q)
		if cut := math.Trunc(v); cut != v {
			parts = append(parts, fmt.Sprintf("%s %d ms is %s ms (record-latency-%s)", p.label, int64(cut), numfmt.Group(strconv.FormatFloat(v, 'f', 3, 64)), p.metric))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Kafka's line cuts latency percentiles to whole milliseconds, as Kafka's tool does: " + strings.Join(parts, ", ") +
		"; the metrics and result.json hold the precise values."
}

// fixedMs is d in milliseconds with three decimals (microseconds).
func fixedMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}
