//go:build linux

package sysstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// ThreadDemand returns, for each thread of the process alive now, how
// long it has been running on a CPU plus how long it waited for one while
// runnable (the first two fields of /proc/self/task/TID/schedstat): the CPU
// it wanted. Threads that have exited are not in it. Unit: time.Duration
// (nanoseconds).
//
// On kernels without scheduler statistics the error wraps
// [ErrUnsupported].
func ThreadDemand() (map[int]Demand, error) { return threadDemand("/proc/self") }

// ThreadDemandOf is ThreadDemand of another process.
func ThreadDemandOf(pid int) (map[int]Demand, error) {
	return threadDemand(fmt.Sprintf("/proc/%d", pid))
}

func threadDemand(proc string) (map[int]Demand, error) {
	files, err := filepath.Glob(proc + "/task/*/schedstat")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%w: no %s/task/*/schedstat", ErrUnsupported, proc)
	}
	out := make(map[int]Demand, len(files))
	for _, f := range files {
		tid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // the thread exited meanwhile
			}
			return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		d, err := ParseSchedstat(data)
		if err != nil {
			return nil, err
		}
		out[tid] = d
	}
	return out, nil
}
