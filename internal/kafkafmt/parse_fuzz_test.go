package kafkafmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseOutput checks ParseOutput never panics, that what it imports is
// sound, and that its errors point into the input.
func FuzzParseOutput(f *testing.F) {
	for _, fx := range impFixtures() {
		f.Add([]byte(fx.text))
	}
	for _, s := range []string{
		"",
		"\n\n",
		"In steady state.\n",
		ProducerWarmupNotice(10) + "5 steady state records sent, 1.0 records/sec (0.00 MB/sec), 1.0 ms avg latency, 1.0 ms max latency, 1 ms 50th, 1 ms 95th, 1 ms 99th, 1 ms 99.9th.\n",
		"1 records sent, NaN records/sec (Infinity MB/sec), -Infinity ms avg latency, 1,5 ms max latency.\n",
		"time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\nx, 0, 1, 1, 1, 1\nx, 1, 1, 1, 0, 1\n",
		"\nMetric Name   Value\na:b:{k=v, c=d} : 1.0E-5\n",
		"\xff\xfe1\x002\x00",
		"[2025-01-01 12:00:00,123] WARN x (a.B)\n\tat a.B.c(B.java:1)\n",
		// EndToEndLatency: progress, summary, NaN average of a run of
		// no records, Java's int-wrapped percentiles, the topic lines.
		"0\t9.99E-4\n1000\t1.2E7\nAvg latency: 1,5000 ms\nPercentiles: 50th = 1, 99th = 2, 99.9th = 3\n",
		"Avg latency: NaN ms\n",
		"Avg latency: 1.0 ms\nPercentiles: 50th = -1, 99th = 2147483647, 99.9th = 3\n",
		E2ETopicCreation("t", 1, 1) + "Creation of topic t failed\n",
		"0    0.0\r\nAvg latency: 0.0000 ms\r\n\r\nPercentiles: 50th = 0, 99th = 0, 99.9th = 0\r\n",
		// kafka-share-consumer-perf-test: rows of two consumers on one
		// line, NaN rates, a consumer row without its client id.
		ShareConsumerHeader + "\nx, y, 1, NaN, Infinity, 5, 0 for share consumer 12x, y, 1, 1, 1, 6, 0 for share consumer 2\n" +
			"Share consumer 1 having client id a b consumption metrics- x, y, 1,5, 1, 1, 1, 1\nx, y, 1, 1, 1, 1, 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := ParseOutput(bytes.NewReader(data))
		lines := impCountLines(importText(data))
		if err != nil {
			if im != nil {
				t.Fatal("an Imported with an error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line < 0 || pe.Line > lines {
				t.Fatalf("error on line %d of %d: %v", pe.Line, lines, err)
			}
			if !utf8.ValidString(pe.Text) || !utf8.ValidString(pe.Msg) {
				t.Fatalf("invalid UTF-8 in %q", err)
			}
			return
		}
		if im.Tool != ToolProducer && im.Tool != ToolConsumer && im.Tool != ToolShareConsumer && im.Tool != ToolE2E {
			t.Fatalf("tool %q", im.Tool)
		}
		if im.Lines != lines {
			t.Fatalf("Lines = %d, want %d", im.Lines, lines)
		}
		if len(im.Metrics) == 0 {
			t.Fatal("no metrics")
		}
		for _, m := range im.Metrics {
			if !utf8.ValidString(m.Name) || m.Name == "" {
				t.Fatalf("metric name %q", m.Name)
			}
			// Only --print-metrics values, named "<group>:<name>", may
			// be NaN or infinite.
			if (math.IsNaN(m.Value) || math.IsInf(m.Value, 0)) && !strings.Contains(m.Name, ":") {
				t.Fatalf("metric %s = %v", m.Name, m.Value)
			}
		}
		for _, n := range im.Notes {
			if !utf8.ValidString(n) {
				t.Fatalf("note %q", n)
			}
		}
		if im.Tool == ToolE2E {
			// Its percentiles are whole ms at least 0; it has no series.
			for _, m := range im.Metrics {
				if m.Name != "e2e-latency-avg" && !strings.Contains(m.Name, ":") && (m.Value < 0 || m.Value != math.Trunc(m.Value)) {
					t.Fatalf("%s = %v", m.Name, m.Value)
				}
			}
			if len(im.Intervals) != 0 {
				t.Fatalf("%d intervals of EndToEndLatency output", len(im.Intervals))
			}
		}
		if _, err := json.Marshal(im.Intervals); err != nil {
			t.Fatalf("intervals: %v", err)
		}
	})
}

// impCountLines counts lines the way ParseOutput does.
func impCountLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
