package toolexec

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/sysstat"
)

// procStat is what the tree sampler reads of one process from
// /proc/PID/stat.
type procStat struct {
	ppid  int
	pgrp  int
	start uint64 // starttime, in clock ticks since boot: with the pid, the process's identity
	// self is utime+stime (every thread, live or exited), children
	// cutime+cstime (the children it reaped, and theirs), in clock ticks.
	self, children uint64
}

// procKey names a process across pid reuse.
type procKey struct {
	pid   int
	start uint64
}

// readProcStat reads /proc/PID/stat.
func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	f, err := sysstat.StatFields(data) // field n is f[n-3]
	if err != nil {
		return procStat{}, fmt.Errorf("toolexec: /proc/%d/stat: %w", pid, err)
	}
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("toolexec: /proc/%d/stat: %d fields", pid, len(f)+2)
	}
	num := func(n int) uint64 {
		v, _ := strconv.ParseUint(string(f[n-3]), 10, 64)
		return v
	}
	ppid, _ := strconv.Atoi(string(f[4-3]))
	pgrp, _ := strconv.Atoi(string(f[5-3]))
	return procStat{ppid: ppid, pgrp: pgrp, start: num(22), self: num(14) + num(15), children: num(16) + num(17)}, nil
}

// scanProcs reads every process of /proc. Processes that end while it
// reads are left out.
func scanProcs() (map[int]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("toolexec: %w: %w", ErrUnsupported, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("toolexec: read /proc: %w", err)
	}
	procs := make(map[int]procStat, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil {
			continue // ended meanwhile
		}
		procs[pid] = st
	}
	return procs, nil
}

// member is a process of the tree as last seen.
type member struct {
	ppid     int
	total    uint64 // self + children, clock ticks
	children uint64 // the reaped children's part of total
}

// treeCPU follows the process tree under one root and sums its CPU time.
// Its members are the root, the processes of the root's process group
// (Run makes the root a group leader), every descendant of a member, and
// every process once a member until it ends: a daemonised grandchild whose
// parent exited before a sample saw it is still in the group.
type treeCPU struct {
	root    int
	members map[procKey]member
	// escaped is the time of members that ended while their parent was
	// not in the tree (re-parented away): no member's cutime got it.
	escaped uint64
	last    uint64 // the highest total returned, so samples never go back
}

func newTreeCPU(root int) *treeCPU {
	return &treeCPU{root: root, members: map[procKey]member{}}
}

// sample returns the CPU time the tree used so far, in clock ticks: every
// live member's self and reaped children, plus the members that escaped.
// A member that ended under a member parent is that parent's (its cutime
// holds it once reaped; between exit and reaping it is a zombie whose
// stat still shows its time). The total never decreases: a scan that
// reads a parent just before it reaps a child and misses the child just
// after sees less, for one sample.
func (t *treeCPU) sample() (uint64, error) {
	procs, err := scanProcs()
	if err != nil {
		return 0, err
	}
	kids := map[int][]int{}
	for pid, st := range procs {
		kids[st.ppid] = append(kids[st.ppid], pid)
	}
	live := map[procKey]procStat{}
	var walk func(pid int)
	walk = func(pid int) {
		st, ok := procs[pid]
		if !ok {
			return
		}
		k := procKey{pid, st.start}
		if _, seen := live[k]; seen {
			return
		}
		live[k] = st
		for _, c := range kids[pid] {
			walk(c)
		}
	}
	walk(t.root)
	for pid, st := range procs {
		if st.pgrp == t.root {
			walk(pid) // in the command's process group, whoever its parent now is
		}
	}
	for k := range t.members {
		if st, ok := procs[k.pid]; ok && st.start == k.start {
			walk(k.pid) // still alive, perhaps re-parented: it and its children stay in
		}
	}
	livePids := map[int]bool{}
	for k := range live {
		livePids[k.pid] = true
	}
	// Members gone under a live parent, by parent: their time is the
	// parent's cutime once it reaps them. A scan reads /proc in pid order,
	// parents first, so a child reaped after its parent was read is in
	// neither: what the parent's cutime did not gain of its gone children
	// this time counts as theirs (it reaches the cutime by the next scan).
	// A member gone with its parent (a $(…) subshell and its date) went
	// up the chain of reaping to the nearest live ancestor, if one is a
	// member; with none, its time escaped the tree.
	gone := map[int]member{}
	for k, m := range t.members {
		if _, ok := live[k]; !ok {
			gone[k.pid] = m
			delete(t.members, k)
		}
	}
	goneUnder := map[int]uint64{}
	for _, m := range gone {
		up := m.ppid
		for hops := 0; hops < len(gone); hops++ {
			p, ok := gone[up]
			if !ok {
				break
			}
			up = p.ppid
		}
		if livePids[up] {
			goneUnder[up] += m.total
		} else {
			t.escaped += m.total
		}
	}
	total := t.escaped
	prevChildren := map[int]uint64{}
	for k, m := range t.members {
		prevChildren[k.pid] = m.children
	}
	for k, st := range live {
		t.members[k] = member{ppid: st.ppid, total: st.self + st.children, children: st.children}
		total += st.self + st.children
		if gone := goneUnder[k.pid]; gone > 0 {
			if gained := st.children - min(st.children, prevChildren[k.pid]); gained < gone {
				total += gone - gained
			}
		}
	}
	t.last = max(t.last, total)
	return t.last, nil
}

// outside returns the CPU time, in clock ticks, of the members that are
// not the root and whose parent is not a member: what the root's rusage
// does not hold once it is reaped.
func (t *treeCPU) outside() uint64 {
	pids := map[int]bool{}
	for k := range t.members {
		pids[k.pid] = true
	}
	sum := t.escaped
	for k, m := range t.members {
		if k.pid != t.root && !pids[m.ppid] {
			sum += m.total
		}
	}
	return sum
}

var clockTicks = sync.OnceValue(func() time.Duration {
	// AT_CLKTCK of the auxiliary vector: sysconf(_SC_CLK_TCK) without cgo.
	const atClkTck = 17
	if data, err := os.ReadFile("/proc/self/auxv"); err == nil {
		word := strconv.IntSize / 8
		read := func(b []byte) uint64 {
			if word == 4 {
				return uint64(binary.NativeEndian.Uint32(b))
			}
			return binary.NativeEndian.Uint64(b)
		}
		for i := 0; i+2*word <= len(data); i += 2 * word {
			k, v := read(data[i:]), read(data[i+word:])
			if k == atClkTck && v > 0 {
				return time.Second / time.Duration(v)
			}
		}
	}
	return 10 * time.Millisecond // USER_HZ is 100 on every Linux architecture
})

// ticksToDuration converts clock ticks to a duration.
func ticksToDuration(ticks uint64) time.Duration { return time.Duration(ticks) * clockTicks() }

// procSupported reports why the tree cannot be sampled, if it cannot.
func procSupported() error {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return fmt.Errorf("toolexec: %w: %w", ErrUnsupported, err)
	}
	return nil
}
