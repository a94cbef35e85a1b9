//go:build !unix

package sysstat

import (
	"fmt"
	"runtime"
	"time"
)

// CPUTimes returns the user and system CPU time consumed so far by the
// whole process. It needs getrusage(2); on this platform it always returns
// an error wrapping [ErrUnsupported].
func CPUTimes() (user, system time.Duration, err error) {
	return 0, 0, fmt.Errorf("%w: process CPU time not implemented for GOOS=%s", ErrUnsupported, runtime.GOOS)
}
