// Package sysstat measures the current process during a benchmark's
// measured window: kernel I/O accounting from /proc/self/io, process CPU
// time, a periodic CPU-utilisation sampler, and Go runtime GC and heap
// statistics read through runtime/metrics.
//
// Every figure is process-wide (all threads of the process), not
// per-goroutine or per-thread. Metrics that the platform cannot provide are
// reported through errors wrapping [ErrUnsupported], so that callers can
// omit them instead of printing zeros.
//
// A typical measured window looks like:
//
//	io0, ioErr := sysstat.ReadIO()
//	gc0 := sysstat.ReadGC()
//	s := sysstat.StartCPUSampler(100 * time.Millisecond)
//	runBenchmark()
//	cpu := s.Stop()
//	gc := sysstat.ReadGC().Sub(gc0)
//	io1, _ := sysstat.ReadIO()
//	if ioErr == nil {
//		delta := io1.Sub(io0) // omit I/O metrics when ioErr != nil
//		_ = delta
//	}
package sysstat

import (
	"errors"
	"fmt"
)

// ErrUnsupported is wrapped by every error this package returns when a
// metric is not available on the running system (wrong operating system,
// /proc/self/io missing or unreadable, no getrusage). It itself wraps
// [errors.ErrUnsupported], so errors.Is works with either sentinel.
var ErrUnsupported = fmt.Errorf("sysstat: metric not available on this system: %w", errors.ErrUnsupported)
