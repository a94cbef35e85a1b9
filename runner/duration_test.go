package runner

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/kbench/kbench/internal/embeddedbroker"
)

// steadyStateRe is Kafka's summary of the records after --warmup-records.
var steadyStateRe = regexp.MustCompile(`(?m)^\d+ steady state records sent, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{2} ms avg latency, \d+\.\d{2} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$`)

// TestProducerDuration: with --duration the producer sends for that long
// after its warm-up, in every mode, and reports in Kafka's format.
func TestProducerDuration(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: --duration runs of 1.5 s")
	}
	b := startBroker(t, embeddedbroker.Options{})
	for _, mode := range []string{rundoc.ModeRaw, rundoc.ModeClient, rundoc.ModeWriter} {
		t.Run(mode, func(t *testing.T) {
			opts, out := testOptions(t)
			topic := "duration-" + mode
			res, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", topic, "--mode", mode,
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
	if testing.Short() {
		t.Skip("slow: --duration runs of 1.5 s")
	}
	prev := durationBacklog
	durationBacklog = 3000 // laps even on a fast machine
	t.Cleanup(func() { durationBacklog = prev })
	b := startBroker(t, embeddedbroker.Options{})
	for _, mode := range []string{rundoc.ModeAssign, rundoc.ModeGroup} {
		t.Run(mode, func(t *testing.T) {
			opts, out := testOptions(t)
			topic := "duration-consume-" + mode
			res, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", topic, "--mode", mode,
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
