package sysstat

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
)

// procLoadavg is the kernel's load average file (Linux).
const procLoadavg = "/proc/loadavg"

// LoadAverage is the system's load average: the number of runnable or
// uninterruptibly sleeping tasks, exponentially averaged over 1, 5 and 15
// minutes. It describes the whole machine, not this process: a value near
// or above the number of CPUs means other work competed for them.
type LoadAverage struct {
	Load1, Load5, Load15 float64
}

// ReadLoadAverage reads /proc/loadavg. Where it does not exist (not Linux,
// a restricted /proc) the error wraps [ErrUnsupported], and callers should
// leave the load average out rather than report zeros.
func ReadLoadAverage() (LoadAverage, error) {
	data, err := os.ReadFile(procLoadavg)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return LoadAverage{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return LoadAverage{}, fmt.Errorf("sysstat: %w", err)
	}
	return ParseLoadAverage(string(data))
}

// ParseLoadAverage parses the contents of /proc/loadavg:
// "0.52 0.58 0.59 2/345 12345" (three averages, runnable/total tasks, the
// last PID). Only the three averages are read; each must be a finite,
// non-negative number.
func ParseLoadAverage(s string) (LoadAverage, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return LoadAverage{}, fmt.Errorf("sysstat: %s: want three load averages, got %q", procLoadavg, s)
	}
	var v [3]float64
	for i := range v {
		x, err := strconv.ParseFloat(f[i], 64)
		if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return LoadAverage{}, fmt.Errorf("sysstat: %s: %q is not a load average", procLoadavg, f[i])
		}
		v[i] = x
	}
	return LoadAverage{Load1: v[0], Load5: v[1], Load15: v[2]}, nil
}
