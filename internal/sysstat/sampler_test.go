package sysstat

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// spin busy-waits for d without making system calls (on Linux
// time.Now uses the vDSO).
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func TestCPUTime(t *testing.T) {
	a, err := CPUTime()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("CPU time unavailable: %v", err)
	}
	if err != nil {
		t.Fatalf("CPUTime: %v", err)
	}
	spin(50 * time.Millisecond)
	b, err := CPUTime()
	if err != nil {
		t.Fatalf("CPUTime: %v", err)
	}
	if b <= a {
		t.Fatalf("CPU time did not advance across a 50ms spin: %v -> %v", a, b)
	}
	u, s, err := CPUTimes()
	if err != nil || u < 0 || s < 0 || u+s < b {
		t.Fatalf("CPUTimes = %v, %v, %v; want non-negative parts summing to >= %v", u, s, err, b)
	}
}

func TestNearestRank(t *testing.T) {
	tests := []struct{ n, p, want int }{
		{1, 99, 1}, {2, 99, 2}, {99, 99, 99}, {100, 99, 99}, {101, 99, 100},
		{200, 99, 198}, {1000, 99, 990}, {10, 50, 5}, {11, 50, 6}, {7, 100, 7},
	}
	for _, tc := range tests {
		if got := nearestRank(tc.n, tc.p); got != tc.want {
			t.Errorf("nearestRank(%d, %d) = %d, want %d", tc.n, tc.p, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// 100 samples 1..100 (shuffled order must not matter): nearest-rank p99
	// is the 99th smallest.
	samples := make([]float64, 100)
	for i := range samples {
		samples[i] = float64((i*37)%100 + 1)
	}
	s := summarize(samples, 3*time.Second, 2*time.Second)
	if s.Samples != 100 || s.P99Percent != 99 || s.MaxPercent != 100 {
		t.Errorf("summarize: got samples=%d p99=%v max=%v, want 100, 99, 100", s.Samples, s.P99Percent, s.MaxPercent)
	}
	if s.AvgPercent != 150 { // 3s CPU over 2s wall = 1.5 cores
		t.Errorf("avg = %v, want 150 (total CPU / total wall, not the mean of samples)", s.AvgPercent)
	}
	if samples[0] != 1 || samples[1] != 38 {
		t.Error("summarize modified its input")
	}

	// Few samples: p99 is the max.
	s = summarize([]float64{10, 90, 50}, time.Second, 10*time.Second)
	if s.P99Percent != 90 || s.MaxPercent != 90 || s.AvgPercent != 10 {
		t.Errorf("summarize(3 samples) = %+v", s)
	}

	// No samples: only the whole-window average.
	s = summarize(nil, 5*time.Millisecond, 10*time.Millisecond)
	if s.Samples != 0 || s.AvgPercent != 50 || s.P99Percent != 0 || s.MaxPercent != 0 {
		t.Errorf("summarize(no samples) = %+v", s)
	}
	s = summarize(nil, 0, 0)
	if s.AvgPercent != 0 {
		t.Errorf("summarize(zero wall) avg = %v, want 0", s.AvgPercent)
	}
}

func skipIfNoCPUTime(t *testing.T) {
	t.Helper()
	if _, err := CPUTime(); errors.Is(err, ErrUnsupported) {
		t.Skipf("CPU time unavailable: %v", err)
	}
}

func TestCPUSamplerSpin(t *testing.T) {
	skipIfNoCPUTime(t)
	// The spinning goroutine alone should keep about one core busy. The
	// upper bound allows every core the process can use plus a margin for
	// runtime threads. The lower bound of 30% of a core is a property of
	// the machine as much as of the code: on an oversubscribed box (three
	// CPU hogs on two cores gave 24-66% here) the spinner really gets less.
	// So an attempt below 30% is retried, and if every attempt is below
	// it, the test is skipped, but only after the sampler's figures agreed
	// with an independent measurement in every attempt.
	upper := 100*float64(max(runtime.GOMAXPROCS(0), runtime.NumCPU())) + 25
	const attempts = 3
	var avgs []float64
	for range attempts {
		sum := spinAndSample(t)
		if sum.AvgPercent > upper {
			t.Fatalf("AvgPercent = %.1f, above %.0f", sum.AvgPercent, upper)
		}
		if sum.AvgPercent >= 30 {
			return
		}
		avgs = append(avgs, sum.AvgPercent)
	}
	t.Skipf("machine overloaded: a busy goroutine got only %.1f%% of a core in each attempt (sampler and independent measurement agreed)", avgs)
}

// spinAndSample spins one goroutine for 300ms under a sampler and checks the
// summary against an independent CPUTime measurement enclosing it.
func spinAndSample(t *testing.T) CPUSummary {
	t.Helper()
	const interval = 20 * time.Millisecond

	w0 := time.Now()
	c0, _ := CPUTime()
	s := StartCPUSampler(interval)
	spin(300 * time.Millisecond)
	sum := s.Stop()
	c1, _ := CPUTime()
	outerWall := time.Since(w0)
	outerCPU := c1 - c0

	t.Logf("summary: %+v; enclosing measurement: CPU %v over %v", sum, outerCPU, outerWall)
	if sum.Err != nil {
		t.Fatalf("sampler error: %v", sum.Err)
	}
	if sum.Interval != interval {
		t.Errorf("Interval = %v, want %v", sum.Interval, interval)
	}
	if sum.Wall < 300*time.Millisecond || sum.Wall > outerWall {
		t.Errorf("Wall = %v, want between the 300ms spin and the enclosing %v", sum.Wall, outerWall)
	}
	// The enclosing window contains the sampler's: CPU can only be larger
	// outside, and by no more than the gap between the windows times the
	// number of CPUs, plus a little for the coarse (tick-level) update of
	// other threads' CPU time.
	gap := outerWall - sum.Wall
	if sum.CPU <= 0 || sum.CPU > outerCPU {
		t.Errorf("sampler CPU %v, enclosing measurement %v", sum.CPU, outerCPU)
	}
	if lo := outerCPU - gap*time.Duration(runtime.NumCPU()) - 20*time.Millisecond; sum.CPU < lo {
		t.Errorf("sampler CPU %v below %v implied by the enclosing measurement", sum.CPU, lo)
	}
	if got, want := sum.AvgPercent, percent(sum.CPU, sum.Wall); got != want {
		t.Errorf("AvgPercent %v != 100*CPU/Wall %v", got, want)
	}
	// 300ms at 20ms should give many samples; demand only one so a
	// starved sampler goroutine does not fail the test.
	if sum.Samples < 1 {
		t.Errorf("Samples = %d, want >= 1", sum.Samples)
	}
	if sum.Samples > int(sum.Wall/(interval/2))+1 {
		t.Errorf("Samples = %d, more than possible with samples >= interval/2 in %v", sum.Samples, sum.Wall)
	}
	if sum.P99Percent > sum.MaxPercent || sum.MaxPercent <= 0 {
		t.Errorf("P99 %.1f, Max %.1f: want 0 < P99 <= Max", sum.P99Percent, sum.MaxPercent)
	}
	if sum.HeapPeak.Observations < 2 || sum.HeapPeak.AllocBytes == 0 || sum.HeapPeak.InUseBytes < sum.HeapPeak.AllocBytes {
		t.Errorf("HeapPeak = %+v", sum.HeapPeak)
	}
	return sum
}

func TestCPUSamplerNoSamples(t *testing.T) {
	skipIfNoCPUTime(t)
	s := StartCPUSampler(time.Hour)
	spin(5 * time.Millisecond)
	sum := s.Stop()
	if sum.Err != nil {
		t.Fatalf("sampler error: %v", sum.Err)
	}
	if sum.Samples != 0 || sum.P99Percent != 0 || sum.MaxPercent != 0 {
		t.Errorf("expected no samples, got %+v", sum)
	}
	if sum.Wall <= 0 || sum.AvgPercent <= 0 {
		t.Errorf("expected a whole-window average, got %+v", sum)
	}
}

func TestCPUSamplerStopIdempotent(t *testing.T) {
	s := StartCPUSampler(time.Millisecond)
	// Stop once the sampler has ticked twice, so there is a summary to keep.
	for deadline := time.Now().Add(10 * time.Second); s.heap.Peak().Observations < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sampler did not tick twice within 10 s")
		}
	}

	var wg sync.WaitGroup
	results := make([]CPUSummary, 8)
	for i := range results {
		wg.Go(func() { results[i] = s.Stop() })
	}
	wg.Wait()
	again := s.Stop()

	select {
	case <-s.done:
	default:
		t.Fatal("sampling goroutine still running after Stop returned")
	}
	for i, r := range results {
		if r != again {
			t.Errorf("Stop #%d returned %+v, later Stop returned %+v", i, r, again)
		}
	}
	// Nothing may change after Stop: no tick can come (done is closed), and
	// a summary computed again would have a longer Wall.
	if later := s.Stop(); later != again {
		t.Errorf("summary changed after Stop: %+v then %+v", again, later)
	}
}

func TestStartCPUSamplerPanicsOnBadInterval(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("StartCPUSampler(0) did not panic")
		}
	}()
	StartCPUSampler(0)
}
