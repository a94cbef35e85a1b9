package main

import (
	"slices"
	"sync"
	"time"
)

// sample is one external reading of a process.
type sample struct {
	T time.Time
	// Edge marks a reading taken at once when a phase event arrived, not
	// on the sampler's schedule.
	Edge bool

	Stat   procStat
	StatOK bool
	// Threads is every live thread's runtime; RunNs their sum.
	Threads threadTimes
	RunNs   uint64
	RunOK   bool
	IO      procIO
	IOOK    bool
}

// sampler reads a process's /proc files every interval from its own
// goroutine, on its own clock, until stopped. Its schedule can be aligned
// to the run's window (align), so that its intervals are the ones
// kbench's own sampler measures, which starts with the window.
type sampler struct {
	pid      int
	interval time.Duration

	mu      sync.Mutex
	samples []sample
	base    time.Time // readings are due at base + k × interval

	realign chan struct{}
	quit    chan struct{}
	done    chan struct{}
}

func startSampler(pid int, interval time.Duration) *sampler {
	s := &sampler{pid: pid, interval: interval, base: time.Now(),
		realign: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	s.take(false)
	go s.loop()
	return s
}

// next is the first reading time due after now.
func (s *sampler) next(now time.Time) time.Time {
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	k := now.Sub(base)/s.interval + 1
	return base.Add(k * s.interval)
}

func (s *sampler) loop() {
	defer close(s.done)
	timer := time.NewTimer(time.Until(s.next(time.Now())))
	defer timer.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-s.realign:
			timer.Reset(time.Until(s.next(time.Now())))
		case <-timer.C:
			s.take(false)
			timer.Reset(time.Until(s.next(time.Now())))
		}
	}
}

// align makes readings due at t + k × interval from now on, when t is
// earlier than the alignment so far (every estimate of a window's start
// is late, never early), or when the sampler was not aligned yet.
func (s *sampler) align(t time.Time, first bool) {
	s.mu.Lock()
	if !first && !t.Before(s.base) {
		s.mu.Unlock()
		return
	}
	s.base = t
	s.mu.Unlock()
	select {
	case s.realign <- struct{}{}:
	default:
	}
}

// read takes one reading now.
func (s *sampler) read(edge bool) sample {
	sm := sample{T: time.Now(), Edge: edge}
	if st, err := readProcStat(s.pid); err == nil {
		sm.Stat, sm.StatOK = st, true
	}
	if tt, err := readThreads(s.pid); err == nil {
		sm.Threads, sm.RunNs, sm.RunOK = tt, tt.sumRun(), true
	}
	if io, err := readProcIO(s.pid); err == nil {
		sm.IO, sm.IOOK = io, true
	}
	return sm
}

// take reads now and keeps the reading.
func (s *sampler) take(edge bool) sample {
	sm := s.read(edge)
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	s.mu.Unlock()
	return sm
}

// stop ends sampling and returns every reading, in time order.
func (s *sampler) stop() []sample {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	// Edge readings come from another goroutine: put them in time order.
	slices.SortStableFunc(s.samples, func(a, b sample) int { return a.T.Compare(b.T) })
	return s.samples
}
