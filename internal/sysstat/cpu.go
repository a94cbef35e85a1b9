package sysstat

import "time"

// CPUTime returns the total CPU time (user + system) consumed so far by the
// whole process, all threads included. Unit: time.Duration. Subtract two
// readings to get the CPU time of a window; divide by the window's wall
// time to get utilisation in cores. The error wraps [ErrUnsupported] where
// the platform cannot provide it.
func CPUTime() (time.Duration, error) {
	u, s, err := CPUTimes()
	if err != nil {
		return 0, err
	}
	return u + s, nil
}
