//go:build !linux

package sysstat

import (
	"fmt"
	"runtime"
)

// ThreadDemand is only available on Linux; elsewhere the error wraps
// [ErrUnsupported].
func ThreadDemand() (map[int]Demand, error) {
	return nil, fmt.Errorf("%w: scheduler statistics on %s", ErrUnsupported, runtime.GOOS)
}

// ThreadDemandOf is only available on Linux; elsewhere the error wraps
// [ErrUnsupported].
func ThreadDemandOf(pid int) (map[int]Demand, error) {
	return nil, fmt.Errorf("%w: scheduler statistics on %s", ErrUnsupported, runtime.GOOS)
}
