package sysstat

import (
	"slices"
	"sync"
	"time"
)

// CPUSummary is the result of a [CPUSampler]. Percentages are of ONE core:
// 100 means one core fully busy on average, 200 two cores, and so on. They
// count all threads of the process (Go runtime, GC, cgo), so they may
// exceed 100*GOMAXPROCS.
type CPUSummary struct {
	// Samples is the number of per-interval samples behind P99Percent and
	// MaxPercent. When it is 0 those two fields are 0 and meaningless;
	// AvgPercent is still valid if Wall > 0.
	Samples int
	// Interval is the nominal sampling interval that was requested. Actual
	// samples span the real elapsed time between ticks, never less than
	// half of Interval (see StartCPUSampler). Unit: time.Duration.
	Interval time.Duration
	// Wall is the wall-clock length of the whole window, from
	// StartCPUSampler to Stop. Unit: time.Duration.
	Wall time.Duration
	// CPU is the process CPU time (user + system) spent in the whole
	// window. Unit: time.Duration.
	CPU time.Duration
	// AvgPercent is CPU / Wall over the whole window, in percent of one
	// core. It is not the mean of the samples: time in the last, partial
	// interval counts too, and samples of different lengths weigh by their
	// length.
	AvgPercent float64
	// P99Percent is the 99th percentile of the per-sample utilisation, in
	// percent of one core, by the nearest-rank method: the samples are
	// sorted ascending and the value at 1-based rank ceil(0.99*Samples) is
	// taken. With fewer than 100 samples this is the maximum.
	P99Percent float64
	// MaxPercent is the highest per-sample utilisation, in percent of one
	// core.
	MaxPercent float64
	// HeapPeak is the peak Go heap seen in the window, sampled every
	// Interval (plus once at start and once at Stop). Spikes shorter than
	// Interval can be missed, so it is a lower bound of the true peak.
	HeapPeak HeapPeak
	// Err is non-nil if process CPU time could not be read; it then wraps
	// [ErrUnsupported] where the platform lacks it, and every CPU field is
	// zero and must not be reported. HeapPeak is valid regardless.
	Err error
}

// CPUSampler measures the process's CPU utilisation between
// [StartCPUSampler] and [CPUSampler.Stop]. Its methods are safe for
// concurrent use.
type CPUSampler struct {
	cpuTime   func() (time.Duration, error)
	interval  time.Duration
	startWall time.Time
	startCPU  time.Duration
	startErr  error

	stop chan struct{} // closed by Stop
	done chan struct{} // closed when the sampling goroutine has returned

	heap HeapPeakTracker

	// Owned by the sampling goroutine until done is closed.
	samples []float64
	tickErr error

	once    sync.Once
	summary CPUSummary
}

// StartCPUSampler starts measuring the process's CPU utilisation. Every
// interval a background goroutine reads the process CPU time and the wall
// clock and records one sample: 100 * ΔCPU / Δwall, using the real elapsed
// wall time since the previous sample, not the nominal interval. A tick
// that arrives less than interval/2 after the previous sample (the ticker
// catching up after a delay) is folded into the next sample instead of
// producing a short, noisy one. The same tick also updates the heap peak.
//
// Choosing the interval: on Linux the CPU time of a thread that is running
// on another CPU is only brought up to date at scheduler ticks (CONFIG_HZ,
// often 250 Hz, i.e. 4ms), so each sample can be off by up to about one
// tick per busy thread: roughly ±20% of a core per busy thread at a 20ms
// interval, ±4% at 100ms. Use 100ms or more when P99Percent and MaxPercent
// matter; AvgPercent is only affected at the two ends of the window. Each
// sample costs one getrusage(2) and a runtime/metrics read. Samples are kept in memory (8 bytes each).
// interval must be positive, or StartCPUSampler panics. Call Stop at
// least once: until then a goroutine and a ticker are running.
func StartCPUSampler(interval time.Duration) *CPUSampler {
	return StartCPUSamplerOf(interval, CPUTime)
}

// StartCPUSamplerOf is StartCPUSampler reading the CPU time with cpuTime,
// such as [ProcessCPUTime] of another process. The heap peak is still this
// process's.
func StartCPUSamplerOf(interval time.Duration, cpuTime func() (time.Duration, error)) *CPUSampler {
	if interval <= 0 {
		panic("sysstat: StartCPUSampler: interval must be positive")
	}
	s := &CPUSampler{
		cpuTime:  cpuTime,
		interval: interval,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	s.heap.Observe()
	s.startWall = time.Now()
	s.startCPU, s.startErr = s.cpuTime()
	go s.run()
	return s
}

func (s *CPUSampler) run() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	prevWall, prevCPU := s.startWall, s.startCPU
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.heap.Observe()
		if s.startErr != nil || s.tickErr != nil {
			continue
		}
		now := time.Now()
		cpu, err := s.cpuTime()
		if err != nil {
			s.tickErr = err
			continue
		}
		dw := now.Sub(prevWall)
		if dw < s.interval/2 {
			continue
		}
		s.samples = append(s.samples, percent(cpu-prevCPU, dw))
		prevWall, prevCPU = now, cpu
	}
}

// Stop ends the measurement, waits for the sampling goroutine to exit and
// returns the summary. The window ends when Stop is called (plus the few
// microseconds needed to stop the goroutine). Stop may be called any
// number of times, from any goroutine: later and concurrent calls wait for
// the first one and return the same summary.
func (s *CPUSampler) Stop() CPUSummary {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		endWall := time.Now()
		endCPU, endErr := s.cpuTime()
		s.heap.Observe()

		var sum CPUSummary
		err := s.startErr
		if err == nil {
			err = s.tickErr
		}
		if err == nil {
			err = endErr
		}
		if err != nil {
			sum = CPUSummary{Err: err}
		} else {
			sum = summarize(s.samples, endCPU-s.startCPU, endWall.Sub(s.startWall))
		}
		sum.Interval = s.interval
		sum.HeapPeak = s.heap.Peak()
		s.summary = sum
		s.samples = nil
	})
	return s.summary
}

// summarize computes the CPU fields of a CPUSummary from per-sample
// percentages and the totals of the whole window.
func summarize(samples []float64, cpu, wall time.Duration) CPUSummary {
	sum := CPUSummary{Samples: len(samples), Wall: wall, CPU: cpu}
	if wall > 0 {
		sum.AvgPercent = percent(cpu, wall)
	}
	if n := len(samples); n > 0 {
		sorted := slices.Clone(samples)
		slices.Sort(sorted)
		sum.P99Percent = sorted[nearestRank(n, 99)-1]
		sum.MaxPercent = sorted[n-1]
	}
	return sum
}

// nearestRank returns the 1-based nearest rank ceil(p/100*n) of the p-th
// percentile (0 < p <= 100) of n > 0 sorted values, computed in integers to
// avoid floating-point rounding at exact multiples.
func nearestRank(n, p int) int {
	r := (p*n + 99) / 100
	return max(r, 1)
}

// percent returns 100*cpu/wall: utilisation in percent of one core.
func percent(cpu, wall time.Duration) float64 {
	return 100 * float64(cpu) / float64(wall)
}
