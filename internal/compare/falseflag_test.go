package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// identicalProducerRuns draws n runs of one producer configuration: every
// run's figures come from the same distribution, so any change a table
// calls significant between two such groups is a false flag. A run has a
// shared speed factor (rates up, latencies down, as in real runs, so
// record-send-rate and mb-per-sec move together) and independent noise
// per metric, for the ~31 figures a producer run reports.
func identicalProducerRuns(rng *rand.Rand, first uint, label string, n int) []rundoc.Run {
	runs := make([]rundoc.Run, n)
	for i := range runs {
		speed := math.Exp(0.1 * rng.NormFloat64())
		noisy := func(v float64) float64 { return v * math.Exp(0.05*rng.NormFloat64()) }
		rate := noisy(1_000_000 * speed)
		lat := noisy(4 / speed)
		ms := []rundoc.Metric{
			metric("records-sent", 5_000_000, "records", ""),
			metric("record-send-rate", rate, "records/s", HigherIsBetter),
			metric("mb-per-sec", rate*256/(1<<20), "MB/s", HigherIsBetter),
			metric("record-latency-avg", noisy(lat), "ms", LowerIsBetter),
			metric("record-latency-p50", noisy(lat*0.8), "ms", LowerIsBetter),
			metric("record-latency-p95", noisy(lat*2.1), "ms", LowerIsBetter),
			metric("record-latency-p99", noisy(lat*3.3), "ms", LowerIsBetter),
			metric("record-latency-p999", noisy(lat*7.9), "ms", LowerIsBetter),
			metric("record-latency-max", noisy(lat*21), "ms", LowerIsBetter),
			metric("request-rate", noisy(rate/1000), "requests/s", ""),
			metric("request-latency-avg", noisy(lat*0.7), "ms", LowerIsBetter),
			metric("request-latency-max", noisy(lat*9), "ms", LowerIsBetter),
			metric("records-per-request-avg", noisy(1000), "records", ""),
			metric("batch-size-avg", noisy(262144), "bytes", ""),
			metric("process-cpu-avg", noisy(140), "%", LowerIsBetter),
			metric("process-cpu-p99", noisy(190), "%", LowerIsBetter),
			metric("process-cpu-max", noisy(200), "%", LowerIsBetter),
			metric("process-cpu-seconds", noisy(7.1), "s", LowerIsBetter),
			metric("cpu-seconds-per-gib", noisy(5.9), "s/GiB", LowerIsBetter),
			metric("gc-count", math.Round(noisy(120)), "cycles", LowerIsBetter),
			metric("gc-pause-total", noisy(3.4), "ms", LowerIsBetter),
			metric("heap-peak", noisy(61.5), "MiB", LowerIsBetter),
			metric("syscw", math.Round(noisy(5000)), "syscalls", LowerIsBetter),
			metric("syscr", math.Round(noisy(10250)), "syscalls", LowerIsBetter),
			metric("wchar", math.Round(noisy(1_310_720_000)), "bytes", ""),
			metric("rchar", math.Round(noisy(2_460_000)), "bytes", ""),
			metric("bytes-per-write-syscall", noisy(262144), "bytes", HigherIsBetter),
			metric("bytes-per-read-syscall", noisy(240), "bytes", HigherIsBetter),
			metric("syscw-rate", noisy(1000*speed), "syscalls/s", ""),
			metric("syscr-rate", noisy(2000*speed), "syscalls/s", ""),
			metric("record-retry-total", math.Round(noisy(3)), "retries", LowerIsBetter),
		}
		runs[i] = run(first+uint(i), label, ms...)
	}
	return runs
}

// significantCells counts the changes a table calls significant: on
// identical configurations, its false flags.
func significantCells(tab *Table) int {
	n := 0
	for _, row := range tab.Rows {
		for _, c := range row.Cells[1:] {
			if c.Test == TestSignificant {
				n++
			}
		}
	}
	return n
}

// TestFalseFlagRate compares many pairs of groups of identical producer
// runs (5 vs 5, as in the issue, and 8 vs 8) and counts the tables that
// flag at least one change. Every flag is false here, so that rate is the
// false discovery rate (all hypotheses are null), which Benjamini–Hochberg
// over the headline rows keeps at or below q = α. The seeds are fixed, so
// the test is deterministic; the tolerance is three standard errors of a
// rate of q over the number of simulations.
func TestFalseFlagRate(t *testing.T) {
	const sims = 1000
	for _, n := range []int{5, 8} {
		t.Run(fmt.Sprintf("%d vs %d", n, n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(n)))
			flagged, flags := 0, 0
			var alpha float64
			for range sims {
				cols := []Column{
					{Name: "A", Runs: identicalProducerRuns(rng, 1, "A", n)},
					{Name: "B", Runs: identicalProducerRuns(rng, 100, "B", n)},
				}
				tab, err := Build(cols, Options{})
				if err != nil {
					t.Fatal(err)
				}
				alpha = tab.Alpha
				k := significantCells(tab)
				if f := len(tab.Flags()); f != k {
					t.Fatalf("Flags() lists %d changes, the table calls %d significant", f, k)
				}
				flags += k
				if k > 0 {
					flagged++
				}
			}
			rate := float64(flagged) / sims
			tol := 3 * math.Sqrt(alpha*(1-alpha)/sims)
			t.Logf("%d vs %d identical runs: %d of %d tables flag a change (%.3f), %.3f false flags per table; q = %v, tolerance %.3f",
				n, n, flagged, sims, rate, float64(flags)/sims, alpha, tol)
			if rate > alpha+tol {
				t.Errorf("%.3f of tables of identical runs flag a change, want ≤ q = %v (+%.3f)", rate, alpha, tol)
			}
		})
	}
}
