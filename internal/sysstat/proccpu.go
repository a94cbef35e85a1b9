package sysstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on every
// Linux architecture Go supports.
const userHZ = 100

// ProcessCPUTime returns the CPU time (user + system) another process has
// consumed so far, all its threads included, from /proc/PID/stat: in
// steps of 10 ms (USER_HZ), coarser than [CPUTime]'s. The error wraps
// [ErrUnsupported] where /proc is missing.
func ProcessCPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return ParseProcStatCPU(data)
}

// ParseProcStatCPU reads utime + stime (fields 14 and 15) of a
// /proc/PID/stat line.
func ParseProcStatCPU(data []byte) (time.Duration, error) {
	f, err := StatFields(data)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("sysstat: /proc/PID/stat has %d fields, want at least 15", len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("sysstat: /proc/PID/stat CPU time %q", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// StatFields splits a /proc/PID/stat line into its fields from field 3
// (the state) on: field n (proc(5)'s numbering) is at index n-3. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so the fields are counted from the last ')'.
func StatFields(data []byte) ([][]byte, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, fmt.Errorf("sysstat: /proc/PID/stat without a command name")
	}
	return bytes.Fields(data[i+1:]), nil
}
