package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/runner/embedded"
)

// TestDurationFlag: the producer and the consumer take --duration (seconds,
// after any warm-up) instead of their count; giving both is refused naming
// both flags, bad values name --duration, and a spec with a duration
// survives the round trip through params (what `kbench serve` hands its
// child runs).
func TestDurationFlag(t *testing.T) {
	for _, tc := range []struct{ workload, count string }{{Producer, "num-records"}, {Consumer, "messages"}} {
		s, err := ParseArgs(tc.workload, []string{"--duration", "2.5", "--warmup-records", "1000"})
		if err != nil {
			t.Fatalf("%s --duration 2.5: %v", tc.workload, err)
		}
		if s.Duration != 2.5 || s.NumRecords != 0 || s.WarmupRecords != 1000 {
			t.Errorf("%s: duration %v, count %d, warm-up %d; want 2.5, 0 (no count) and 1000", tc.workload, s.Duration, s.NumRecords, s.WarmupRecords)
		}
		params, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		back, err := SpecFromParams(tc.workload, params)
		if err != nil || back.Duration != 2.5 || back.NumRecords != 0 {
			t.Errorf("%s: params round trip: %+v, %v", tc.workload, back, err)
		}
		if err := back.Validate(); err != nil {
			t.Errorf("%s: Validate after the round trip: %v", tc.workload, err)
		}

		_, err = ParseArgs(tc.workload, []string{"--duration", "5", "--" + tc.count, "100"})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "duration" || !strings.Contains(err.Error(), "--"+tc.count) {
			t.Errorf("%s: --duration with --%s: %v, want an error on duration naming --%s", tc.workload, tc.count, err, tc.count)
		}
		_, err = SpecFromParams(tc.workload, map[string]json.RawMessage{"duration": json.RawMessage(`5`), tc.count: json.RawMessage(`100`)})
		if !errors.As(err, &fe) || fe.Field != "duration" {
			t.Errorf("%s: params with duration and %s: %v, want an error on duration", tc.workload, tc.count, err)
		}
		for _, bad := range []string{"-1", "0", "1e300", "NaN"} {
			_, err := ParseArgs(tc.workload, []string{"--duration", bad})
			if !errors.As(err, &fe) || fe.Field != "duration" {
				t.Errorf("%s --duration %s: %v, want an error on duration", tc.workload, bad, err)
			}
		}
		if s := DefaultSpec(tc.workload); s.Duration != 0 || s.NumRecords != 500000 {
			t.Errorf("%s: default spec has duration %v and count %d; the CLI's defaults stay a count", tc.workload, s.Duration, s.NumRecords)
		}
	}
	if _, err := ParseArgs(Writepath, []string{"--duration", "5", "--requests", "10"}); err == nil {
		t.Error("writepath took --duration and --requests together")
	}
}

// steadyStateRe is Kafka's summary of the records after --warmup-records.
var steadyStateRe = regexp.MustCompile(`(?m)^\d+ steady state records sent, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{2} ms avg latency, \d+\.\d{2} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$`)

// TestProducerDuration: with --duration the producer sends for that long
// after its warm-up, in every mode, and reports in Kafka's format.
func TestProducerDuration(t *testing.T) {
	b := startBroker(t, embedded.Options{})
	for _, mode := range []string{ModeRaw, ModeClient, ModeWriter} {
		t.Run(mode, func(t *testing.T) {
			opts, out := testOptions(t)
			topic := "duration-" + mode
			res, err := Run(context.Background(), mustParse(t, Producer, "--bootstrap-server", b.Addr(), "--topic", topic, "--mode", mode,
				"--duration", "1.5", "--warmup-records", "500", "--record-size", "100", "--throughput", "4000", "--profile", "none"), opts)
			if err != nil {
				t.Fatal(err)
			}
			sent := metric(t, res, "records-sent")
			if sent < 100 || res.Measurement.WindowSeconds < 1.5 {
				t.Errorf("records-sent %v over a %.2f s window; want records over at least --duration 1.5 s", sent, res.Measurement.WindowSeconds)
			}
			if got := highWatermarks(t, b.Addr(), topic); got != int64(sent)+500 {
				t.Errorf("the broker holds %d records, want the %v measured plus 500 warm-up", got, sent)
			}
			if !steadyStateRe.MatchString(out.String()) {
				t.Errorf("no Kafka summary line:\n%s", out.String())
			}
			if !strings.Contains(strings.Join(res.Measurement.Notes, "\n"), "--duration 1.5") {
				t.Errorf("notes do not say the window was timed: %q", res.Measurement.Notes)
			}
		})
	}
}

// TestConsumerDuration: with --duration the consumer reads for that long;
// when the topic runs out it reads it again from the start with a new
// consumer (a lap; in group mode a new group, whose join counts as
// rebalance time), so a short backlog still fills the window.
func TestConsumerDuration(t *testing.T) {
	prev := durationBacklog
	durationBacklog = 3000 // laps even on a fast machine
	t.Cleanup(func() { durationBacklog = prev })
	b := startBroker(t, embedded.Options{})
	for _, mode := range []string{ModeAssign, ModeGroup} {
		t.Run(mode, func(t *testing.T) {
			opts, out := testOptions(t)
			topic := "duration-consume-" + mode
			res, err := Run(context.Background(), mustParse(t, Consumer, "--bootstrap-server", b.Addr(), "--topic", topic, "--mode", mode,
				"--partitions", "2", "--duration", "1.5", "--warmup-records", "100", "--record-size", "64", "--profile", "none",
				"--consumer-props", "fetch.max.wait.ms=50"), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Measurement.PrefillRecords != 3100 {
				t.Errorf("prefilled %d records, want the backlog 3000 plus the 100 warm-up", res.Measurement.PrefillRecords)
			}
			got := metric(t, res, "records-consumed-total")
			if res.Measurement.WindowSeconds < 1.5 || got <= 3000 {
				t.Errorf("%v records in %.2f s, want more than the 3000 of the backlog over at least 1.5 s", got, res.Measurement.WindowSeconds)
			}
			if metric(t, res, "bytes-consumed-total") != got*64 {
				t.Errorf("bytes %v for %v records of 64 B", metric(t, res, "bytes-consumed-total"), got)
			}
			notes := strings.Join(res.Measurement.Notes, "\n")
			t.Logf("%v records in %.2f s; rebalance %v ms; %s", got, res.Measurement.WindowSeconds, metric(t, res, "rebalance-time"), notes)
			if !strings.Contains(notes, "--duration 1.5") || !strings.Contains(notes, "lap") {
				t.Errorf("notes do not say how the window was filled: %q", res.Measurement.Notes)
			}
			m := consumerRowRe.FindStringSubmatch(out.String())
			if m == nil || m[1] != fmt.Sprint(int64(got)) {
				t.Errorf("no Kafka summary row for %v records:\n%s", got, out.String())
			}
		})
	}
}
