package runner

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/kbench/kbench/internal/embeddedbroker"
)

// harnessNote is the note of a run the load generator limited, or "".
func harnessNote(res *rundoc.Result) string {
	for _, n := range res.Measurement.Notes {
		if strings.HasPrefix(n, "load generator limited this run") {
			return n
		}
	}
	return ""
}

// TestHarnessLimitedCPU: a producer with GOMAXPROCS=1 compressing records
// of 4 bits of entropy a byte with gzip as fast as it can (which keeps
// gzip busy: half-random data is costly to compress and small to send) is
// limited by its own CPU: the result
// says so (a note with the threshold, harness-limited 1, the reason in the
// measurement). The broker runs in its own process, with its own CPUs.
func TestHarnessLimitedCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	opts, _ := testOptions(t)
	res, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--duration", "1.5", "--record-size", "2000",
		"--payload-entropy", "0.5", "--profile", "none", "--producer-props", "compression.type=gzip", "batch.size=262144",
		"max.in.flight.requests.per.connection=20"), opts)
	if err != nil {
		t.Fatal(err)
	}
	busy := metric(t, res, "harness-cpu-saturation")
	note := harnessNote(res)
	t.Logf("harness-cpu-saturation %.1f%%; %s", busy, note)
	if metric(t, res, "harness-limited") != 1 || !strings.Contains(note, "GOMAXPROCS") || !strings.Contains(note, "90%") {
		t.Errorf("a CPU-bound run at GOMAXPROCS=1 (saturation %.1f%%) is not flagged as limited by its CPU: note %q", busy, note)
	}
	if len(res.Measurement.HarnessLimits) == 0 || !strings.Contains(res.Measurement.HarnessLimits[0], "CPU") {
		t.Errorf("measurement harness_limits = %q, want the CPU reason", res.Measurement.HarnessLimits)
	}
}

// TestHarnessBehindSchedule: a throttled producer asked for far more
// records than its producing goroutine can hand over falls behind its
// schedule while the broker answers quickly: intended-time latency far
// above service latency. The result says so. A throttled run that keeps
// its schedule is not flagged at all.
func TestHarnessBehindSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	t.Run("behind", func(t *testing.T) {
		// kafka-go's Writer does much of its per-message work in the
		// caller: a producing goroutine can hand it ~10⁵–10⁶ records/s, far
		// below the schedule, while 8 partitions (one request in flight
		// each) carry them off as fast as they come and the broker (its
		// own process) answers each request at once.
		opts, _ := testOptions(t)
		res, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--mode", "writer", "--duration", "6", "--throughput", "100000000",
			"--record-size", "10", "--partitions", "8", "--profile", "none", "--producer-props", "linger.ms=1"), opts)
		if err != nil {
			t.Fatal(err)
		}
		note := harnessNote(res)
		intended, service := metric(t, res, "record-latency-intended-p99"), metric(t, res, "record-latency-p99")
		request, blocked := metric(t, res, "request-latency-avg"), metric(t, res, "bufferpool-wait-ratio")
		t.Logf("intended p99 %.1f ms, service p99 %.1f ms, request latency %.1f ms, buffer wait %.3f; %s", intended, service, request, blocked, note)
		// Six seconds asking 10⁸ records/s: the schedule is missed by
		// seconds whatever the machine, and the intended-time latency
		// says so.
		if intended < 1000 {
			t.Errorf("record-latency-intended-p99 = %.1f ms for a run seconds behind its schedule", intended)
		}
		if metric(t, res, "harness-limited") != 1 {
			t.Fatalf("a throttled run far behind its schedule is not flagged: note %q", note)
		}
		// On a quiet machine the reason is the schedule. A loaded one
		// raises the service latency too (and flags the CPU the run could
		// not get): then the figures alone decide whether the schedule
		// rule holds, and the note must agree with them.
		rule := behindSchedule(intended, service, request, blocked)
		if got := strings.Contains(note, "behind its schedule") && strings.Contains(note, "10×"); got != (rule != "") {
			t.Errorf("the note names the schedule: %v; the rule on the run's figures: %q; note %q", got, rule, note)
		}
	})
	t.Run("on-time", func(t *testing.T) {
		b := startBroker(t, embeddedbroker.Options{})
		opts, _ := testOptions(t)
		// linger.ms 100: the service latency is ~100 ms, so only a
		// schedule missed by seconds would be flagged; 200 records/s ask
		// little of the producing goroutine.
		res, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "on-time",
			"--duration", "1.5", "--throughput", "200", "--record-size", "200", "--profile", "none", "--producer-props", "linger.ms=100"), opts)
		if err != nil {
			t.Fatal(err)
		}
		busy := metric(t, res, "harness-cpu-saturation")
		t.Logf("on time: saturation %.1f%%, intended p99 %.1f ms, service p99 %.1f ms", busy,
			metric(t, res, "record-latency-intended-p99"), metric(t, res, "record-latency-p99"))
		note := harnessNote(res)
		if strings.Contains(note, "behind its schedule") {
			t.Errorf("a throttled run whose latency is linger.ms is flagged as behind its schedule: %q", note)
		}
		// Saturation counts the time the threads waited for a CPU: on a
		// machine busy with other work the run really was limited by the
		// CPU it could get, and the flag for it is right.
		if busy >= 100*harnessCPUShare {
			t.Logf("the machine left this run too little CPU to be on time (saturation %.1f%%): %q", busy, note)
			return
		}
		if metric(t, res, "harness-limited") != 0 || note != "" || len(res.Measurement.HarnessLimits) != 0 {
			t.Errorf("a throttled run that kept up is flagged: saturation %.1f%%, note %q", busy, note)
		}
	})
}

// TestBehindScheduleThresholds: the rule, figure by figure, at and around
// its thresholds.
func TestBehindScheduleThresholds(t *testing.T) {
	tests := []struct {
		name                                string
		intended, service, request, blocked float64
		flagged                             bool
	}{
		{"far behind, broker quick", 2000, 50, 5, 0, true},
		{"on schedule", 12, 10, 2, 0, false},
		{"ratio exactly 10", 500, 50, 5, 0, false},
		{"under 10 ms", 9, 0.5, 0.1, 0, false},
		{"slow requests", 2000, 50, 250, 0, false},
		{"blocked on buffer.memory", 2000, 50, 5, 0.5, false},
	}
	for _, tt := range tests {
		got := behindSchedule(tt.intended, tt.service, tt.request, tt.blocked)
		if (got != "") != tt.flagged {
			t.Errorf("%s: behindSchedule = %q, want flagged %v", tt.name, got, tt.flagged)
		}
	}
}
