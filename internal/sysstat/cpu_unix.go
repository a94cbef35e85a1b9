//go:build unix

package sysstat

import (
	"fmt"
	"syscall"
	"time"
)

// CPUTimes returns the user and system CPU time consumed so far by the
// whole process (all threads, including exited ones), from
// getrusage(RUSAGE_SELF). Unit: time.Duration (nanoseconds), with the
// microsecond resolution of struct timeval. On Linux the sum user+system is
// the scheduler's precise runtime; the split between the two is an
// estimate scaled from tick sampling.
func CPUTimes() (user, system time.Duration, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, fmt.Errorf("sysstat: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), nil
}
