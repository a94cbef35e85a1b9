package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat is the CPU part of /proc/PID/stat (proc(5)): the user and
// system time of the whole thread group, dead threads included, in clock
// ticks (USER_HZ, sysconf(_SC_CLK_TCK)), and the number of threads.
type procStat struct {
	UtimeTicks uint64
	StimeTicks uint64
	Threads    int
}

// parseStat reads the content of /proc/PID/stat or /proc/PID/task/TID/stat.
// The command name (field 2) is in parentheses and may itself hold spaces
// and parentheses, so the fields are counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("stat: no ')' after the command name")
	}
	// Fields after the name: state is field 3, utime 14, stime 15,
	// num_threads 20 (1-based, proc(5)).
	f := strings.Fields(string(b[i+1:]))
	const first = 3
	field := func(n int) (uint64, error) {
		k := n - first
		if k >= len(f) {
			return 0, fmt.Errorf("stat: %d fields after the name, need field %d", len(f), n)
		}
		v, err := strconv.ParseUint(f[k], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: field %d: %w", n, err)
		}
		return v, nil
	}
	var s procStat
	var err error
	if s.UtimeTicks, err = field(14); err != nil {
		return procStat{}, err
	}
	if s.StimeTicks, err = field(15); err != nil {
		return procStat{}, err
	}
	n, err := field(20)
	if err != nil {
		return procStat{}, err
	}
	s.Threads = int(n)
	return s, nil
}

// parseSchedstat reads /proc/PID/task/TID/schedstat: time spent on the
// CPU (ns), time spent waiting to run (ns), timeslices. Only the first,
// the scheduler's own runtime of the thread, is returned. It is exact to
// the nanosecond, except that a thread running at the moment of the read
// may not have its current slice added yet (at most one scheduler tick).
func parseSchedstat(b []byte) (runNs uint64, err error) {
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, errors.New("schedstat: empty")
	}
	v, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedstat: %w", err)
	}
	return v, nil
}

// procIO is /proc/PID/io (proc(5)): the kernel's I/O accounting of the
// whole thread group. Syscw counts write(2), pwrite64, writev(2), pwritev
// and the like; send(2), sendto and sendmsg(2) on sockets are not
// counted.
type procIO struct {
	Rchar, Wchar, Syscr, Syscw uint64
	ReadBytes, WriteBytes      uint64
}

// sub returns the counters accumulated between o and p (p later).
func (p procIO) sub(o procIO) procIO {
	return procIO{Rchar: p.Rchar - o.Rchar, Wchar: p.Wchar - o.Wchar, Syscr: p.Syscr - o.Syscr,
		Syscw: p.Syscw - o.Syscw, ReadBytes: p.ReadBytes - o.ReadBytes, WriteBytes: p.WriteBytes - o.WriteBytes}
}

// parseIO reads the content of /proc/PID/io. The four counters syscalls
// are counted with are required; unknown lines are ignored (kernels add
// fields).
func parseIO(b []byte) (procIO, error) {
	var io procIO
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return procIO{}, fmt.Errorf("io: %s: %w", k, err)
		}
		switch strings.TrimSpace(k) {
		case "rchar":
			io.Rchar = n
			seen++
		case "wchar":
			io.Wchar = n
			seen++
		case "syscr":
			io.Syscr = n
			seen++
		case "syscw":
			io.Syscw = n
			seen++
		case "read_bytes":
			io.ReadBytes = n
		case "write_bytes":
			io.WriteBytes = n
		}
	}
	if seen < 4 {
		return procIO{}, errors.New("io: rchar, wchar, syscr or syscw missing")
	}
	return io, nil
}

// The readers below read one process's files; pid is a process of this
// user (or the caller is root), else the kernel refuses io.

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

func readProcIO(pid int) (procIO, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return procIO{}, err
	}
	return parseIO(b)
}

// threadTimes is one reading of every live thread of a process.
type threadTimes struct {
	// RunNs is each thread's scheduler runtime (schedstat), by thread id.
	RunNs map[int]uint64
	// Ticks is each thread's utime+stime from its own stat, by thread id.
	Ticks map[int]uint64
}

// sumRun is the runtime of all the threads read, in nanoseconds.
func (t threadTimes) sumRun() uint64 {
	var s uint64
	for _, v := range t.RunNs {
		s += v
	}
	return s
}

// readThreads reads /proc/PID/task/*/schedstat and stat. A thread that
// exits between the directory listing and its read is skipped.
func readThreads(pid int) (threadTimes, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return threadTimes{}, err
	}
	tt := threadTimes{RunNs: make(map[int]uint64, len(ents)), Ticks: make(map[int]uint64, len(ents))}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue
		}
		ns, err := parseSchedstat(b)
		if err != nil {
			return threadTimes{}, err
		}
		tt.RunNs[tid] = ns
		if b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat")); err == nil {
			if st, err := parseStat(b); err == nil {
				tt.Ticks[tid] = st.UtimeTicks + st.StimeTicks
			}
		}
	}
	if len(tt.RunNs) == 0 {
		return threadTimes{}, fmt.Errorf("%s: no readable thread", dir)
	}
	return tt, nil
}
