//go:build !linux

package sysstat

import (
	"fmt"
	"runtime"
)

// ReadIO returns the current /proc/self/io counters of the whole process.
// /proc/self/io only exists on Linux; on this platform ReadIO always
// returns an error wrapping [ErrUnsupported], and callers should omit I/O
// metrics.
func ReadIO() (IO, error) {
	return IO{}, fmt.Errorf("%w: /proc/self/io is Linux-only (GOOS=%s)", ErrUnsupported, runtime.GOOS)
}

// ReadThreadIO is Linux-only; elsewhere the error wraps [ErrUnsupported].
func ReadThreadIO(pid, tid int) (IO, error) {
	return IO{}, fmt.Errorf("%w: /proc/PID/task/TID/io is Linux-only (GOOS=%s)", ErrUnsupported, runtime.GOOS)
}
