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
	// on the sampler's tick; edges bracket the window but are left out of
	// the per-interval utilisation samples.
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
// goroutine, on its own clock, until stopped.
type sampler struct {
	pid      int
	interval time.Duration

	mu      sync.Mutex
	samples []sample

	quit chan struct{}
	done chan struct{}
}

func startSampler(pid int, interval time.Duration) *sampler {
	s := &sampler{pid: pid, interval: interval, quit: make(chan struct{}), done: make(chan struct{})}
	s.take(false)
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
				s.take(false)
			}
		}
	}()
	return s
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
