package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestE2ELoadRaisesLatency is the issue's physics check "at 10% of the
// maximum rate p99 is lower than at 110%", with rate mode as a sweep runs
// it: the maximum is an unthrottled rate-mode run's consume-rate, then the
// same configuration runs at 10% of it and past it.
//
// At 10% the producer's batches leave at linger and the broker idles: p99
// is a round trip. Past the maximum the producer cannot keep up: records
// wait in its buffer (buffer.memory) behind those not yet sent, so p99
// grows with the backlog.
//
// The contrast is 10% against 300%, not 110%: a one-second maximum is
// pessimistic (its window includes draining the unthrottled producer's
// full buffer), and on this shared 2-core machine 110% of it was reached
// in 2 of 3 tries (e.g. max 46,000 records/s, "110%" achieved 50,500), so
// that run was near saturation, not past it, and its p99 (8 ms) was within
// reach of a noisy idle p99 (one 10% run had 48 ms). 300% is past any
// maximum the noise can hide. It compares behaviour, never a bound on a
// time.
func TestE2ELoadRaisesLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: paced runs of a second each")
	}
	b := startBroker(t, embeddedbroker.Options{})
	run := func(topic string, args ...string) *rundoc.Result {
		t.Helper()
		opts, out := testOptions(t)
		args = append([]string{"--bootstrap-server", b.Addr(), "--topic", topic, "--mode", "rate", "--record-size", "100",
			"--producer-props", "linger.ms=1", "--profile", "none"}, args...)
		res, err := Run(context.Background(), mustParse(t, rundoc.E2E, args...), opts)
		if err != nil {
			t.Fatalf("%s: %v\n%s", topic, err, out)
		}
		return res
	}
	max := metric(t, run("e2e-max", "--duration", "1"), "consume-rate")
	if max < 10*rundoc.MinRate {
		t.Fatalf("maximum rate %v records/s: too low to run at 10%%", max)
	}
	low := run("e2e-low", "--duration", "1", "--throughput", fmt.Sprint(max*0.10))
	high := run("e2e-high", "--duration", "1", "--throughput", fmt.Sprint(max*3))
	lo, hi := metric(t, low, "e2e-latency-p99"), metric(t, high, "e2e-latency-p99")
	t.Logf("max %.0f records/s; p99 at 10%%: %.2f ms (%.0f records/s), at 300%%: %.2f ms (%.0f records/s)",
		max, lo, metric(t, low, "consume-rate"), hi, metric(t, high, "consume-rate"))
	if !(lo < hi) {
		t.Errorf("e2e-latency-p99 at 10%% of the maximum (%.2f ms) is not below that at 300%% (%.2f ms)", lo, hi)
	}
}
