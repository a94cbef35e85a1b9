package kafkafmt

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// goldenProducerWindows are five reporting windows of a 1 KiB-record run.
var goldenProducerWindows = []ProducerCounters{
	{Records: 64651, Bytes: 64651 * 1024, TotalLatencyMs: 121165, MaxLatencyMs: 311, ElapsedMs: 5005},
	{Records: 100016, Bytes: 100016 * 1024, TotalLatencyMs: 250040, MaxLatencyMs: 45, ElapsedMs: 5000},
	{Records: 99970, Bytes: 99970 * 1024, TotalLatencyMs: 262421, MaxLatencyMs: 60, ElapsedMs: 5001},
	{Records: 100012, Bytes: 100012 * 1024, TotalLatencyMs: 200024, MaxLatencyMs: 38, ElapsedMs: 5000},
	{Records: 99995, Bytes: 99995 * 1024, TotalLatencyMs: 234988, MaxLatencyMs: 52, ElapsedMs: 5003},
}

func TestGoldenProducer(t *testing.T) {
	var b strings.Builder
	total := ProducerCounters{}
	for _, w := range goldenProducerWindows {
		b.WriteString(w.IntervalLine())
		total.Records += w.Records
		total.Bytes += w.Bytes
		total.TotalLatencyMs += w.TotalLatencyMs
		total.MaxLatencyMs = max(total.MaxLatencyMs, w.MaxLatencyMs)
		total.ElapsedMs += w.ElapsedMs
	}
	// The records acknowledged after the last window.
	total.Records += 35356
	total.Bytes += 35356 * 1024
	total.TotalLatencyMs += 70712
	total.ElapsedMs += 1774
	b.WriteString(ProducerSummary(total.Totals(2, 5, 9, 287)))
	golden.Check(t, "producer.golden", b.String())
}

func TestGoldenConsumer(t *testing.T) {
	c := ConsumerCounters{StartMs: 1715000000123, EndMs: 1715000031789, Bytes: 1_000_000 * 100, Messages: 1_000_000, RebalanceMs: 3021}
	golden.Check(t, "consumer.golden", ConsumerHeader(false)+ConsumerSummaryRow(c.Row(time.UTC)))
}

func TestGoldenConsumerDetailed(t *testing.T) {
	var b strings.Builder
	b.WriteString(ConsumerHeader(true))
	// Intervals of about 5 s; the first includes the group join, the
	// fourth is all rebalance.
	ends := []int64{1715000005150, 1715000010151, 1715000015160, 1715000020163, 1715000025170, 1715000030171}
	msgs := []int64{18_432, 71_680, 125_952, 125_952, 177_152, 231_424}
	rebalance := []int64{3021, 0, 0, 5003, 12, 0}
	start, lastMsgs := int64(1715000000123), int64(0)
	for i, end := range ends {
		c := ConsumerIntervalCounters{StartMs: start, EndMs: end, Bytes: msgs[i] * 100, LastBytes: lastMsgs * 100,
			Messages: msgs[i], LastMessages: lastMsgs, RebalanceMs: rebalance[i]}
		b.WriteString(ConsumerDetailedRow(c.Row(time.UTC)))
		start, lastMsgs = end, msgs[i]
	}
	b.WriteString(ConsumerTimeoutWarning(10000))
	golden.Check(t, "consumer_detailed.golden", b.String())
}

func TestGoldenMetrics(t *testing.T) {
	client := []Tag{{"client-id", "perf-producer-client"}}
	node := func(id string) []Tag { return []Tag{{"client-id", "perf-producer-client"}, {"node-id", id}} }
	topic := []Tag{{"client-id", "perf-producer-client"}, {"topic", "bench"}}
	ms := []Metric{
		{Group: "producer-metrics", Name: "record-send-rate", Tags: client, Value: 19894.427527405},
		{Group: "producer-metrics", Name: "record-send-total", Tags: client, Value: 500000.0},
		{Group: "producer-metrics", Name: "request-latency-avg", Tags: client, Value: 2.3125},
		{Group: "producer-metrics", Name: "request-latency-max", Tags: client, Value: 311.0},
		{Group: "producer-metrics", Name: "batch-size-avg", Tags: client, Value: 16064.725},
		{Group: "producer-metrics", Name: "compression-rate-avg", Tags: client, Value: math.NaN()},
		{Group: "producer-metrics", Name: "record-error-rate", Tags: client, Value: 0.0},
		{Group: "producer-metrics", Name: "bufferpool-wait-ratio", Tags: client, Value: 0.0004995},
		{Group: "producer-metrics", Name: "metadata-age", Tags: client, Value: 31.762},
		{Group: "producer-node-metrics", Name: "request-rate", Tags: node("node-1"), Value: 120.45},
		{Group: "producer-node-metrics", Name: "request-rate", Tags: node("node--1"), Value: 0.0333},
		{Group: "producer-node-metrics", Name: "outgoing-byte-total", Tags: node("node-1"), Value: 5.12456789e8},
		{Group: "producer-topic-metrics", Name: "record-send-rate", Tags: topic, Value: 19894.4275},
		{Group: "producer-topic-metrics", Name: "byte-total", Tags: topic, Value: 512000000.0},
		{Group: "kafka-metrics-count", Name: "count", Tags: client, Value: 112.0},
		{Group: "app-info", Name: "version", Tags: client, Value: "3.9.0"},
		{Group: "app-info", Name: "commit-id", Tags: client, Value: "a60e31147e6b01ee"},
		{Group: "app-info", Name: "start-time-ms", Tags: client, Value: int64(1715000000011)},
	}
	golden.Check(t, "metrics.golden", PrintMetrics(ms))
}
