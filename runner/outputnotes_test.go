package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/kafkafmt"
)

func TestConsumerLineNote(t *testing.T) {
	tests := []struct {
		name              string
		counters          kafkafmt.ConsumerCounters
		records           int64
		window, rebalance time.Duration
		want              []string // parts of the note; none: no note
	}{{
		// The run: 1,000,000 records in 1.0899 s with a 1.602 ms
		// join, whose clock readings fell 1,090 ms apart.
		name:     "whole milliseconds",
		counters: kafkafmt.ConsumerCounters{StartMs: 1_700_000_000_100, EndMs: 1_700_000_001_190, Messages: 1_000_000, RebalanceMs: 1},
		records:  1_000_000, window: 1089927 * time.Microsecond, rebalance: 1602 * time.Microsecond,
		want: []string{
			"Kafka's line uses whole-millisecond start and end times",
			": 1,090 ms → 917,431.1927 records/s, rebalance 1 ms, fetch 1,089 ms → 918,273.6455 records/s;",
			"measured: 1,089.927 ms → 917,492.6394 records/s, rebalance 1.602 ms, fetch 1,088.325 ms → 918,843.1764 records/s",
		},
	}, {
		name:     "nothing to explain",
		counters: kafkafmt.ConsumerCounters{StartMs: 5000, EndMs: 7000, Messages: 500_000, RebalanceMs: 0},
		records:  500_000, window: 2 * time.Second,
	}, {
		name:     "rebalance alone differs",
		counters: kafkafmt.ConsumerCounters{StartMs: 5000, EndMs: 7000, Messages: 0, RebalanceMs: 3},
		records:  0, window: 2 * time.Second, rebalance: 3500 * time.Microsecond,
		want: []string{"rebalance 3 ms, fetch 1,997 ms → 0.0000 records/s;", "rebalance 3.500 ms, fetch 1,996.500 ms"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := consumerLineNote(tt.counters, tt.records, tt.window, tt.rebalance)
			if len(tt.want) == 0 {
				if got != "" {
					t.Errorf("note = %q, want none", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("note %q lacks %q", got, w)
				}
			}
		})
	}
}

func TestProducerLineNote(t *testing.T) {
	// Values below 2,048 µs, and 4,095, are exact in the histogram (3
	// significant digits).
	hist := func(us ...int64) *latencyHist {
		h := newLatencyHist()
		for _, v := range us {
			h.record(time.Duration(v) * time.Microsecond)
		}
		return h
	}
	var spread []int64
	for i := range 1000 {
		spread = append(spread, 393) // p50 and p95
		if i >= 985 {
			spread[i] = 2000 // p99: whole
		}
		if i >= 998 {
			spread[i] = 4095 // p99.9
		}
	}
	tests := []struct {
		name string
		h    *latencyHist
		want string
	}{
		{"empty", newLatencyHist(), ""},
		{"whole milliseconds", hist(1000, 2000, 2000), ""},
		{"cut", hist(spread...), "Kafka's line cuts latency percentiles to whole milliseconds, as Kafka's tool does: " +
			"50th 0 ms is 0.393 ms (record-latency-p50), 95th 0 ms is 0.393 ms (record-latency-p95), 99.9th 4 ms is 4.095 ms (record-latency-p999); " +
			"the metrics and result.json hold the precise values."},
	}
	for _, tt := range tests {
		if got := producerLineNote(tt.h); got != tt.want {
			t.Errorf("%s: note = %q, want %q", tt.name, got, tt.want)
		}
	}
}
