package sysstat

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// Demand is a thread's scheduler statistics: time it ran on a CPU and
// time it waited for one while runnable.
type Demand struct {
	Run, Wait time.Duration
}

// Sub returns d − e.
func (d Demand) Sub(e Demand) Demand { return Demand{Run: d.Run - e.Run, Wait: d.Wait - e.Wait} }

// Total is the CPU time the thread wanted: running plus waiting to run.
func (d Demand) Total() time.Duration { return d.Run + d.Wait }

// ParseSchedstat reads a schedstat file: time on a CPU, time waiting on a
// run queue and time slices, the times in nanoseconds.
func ParseSchedstat(data []byte) (Demand, error) {
	fields := bytes.Fields(data)
	if len(fields) < 2 {
		return Demand{}, fmt.Errorf("sysstat: schedstat %q: want 3 fields", truncate(data))
	}
	var v [2]int64
	for i := range v {
		n, err := strconv.ParseInt(string(fields[i]), 10, 64)
		if err != nil || n < 0 {
			return Demand{}, fmt.Errorf("sysstat: schedstat %q: field %d is not a count of nanoseconds", truncate(data), i+1)
		}
		v[i] = n
	}
	return Demand{Run: time.Duration(v[0]), Wait: time.Duration(v[1])}, nil
}
