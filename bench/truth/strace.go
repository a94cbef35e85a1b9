package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"
)

// syscwCalls are the syscalls /proc/PID/io's syscw counts (the kernel's
// vfs write paths). Socket sends (send, sendto, sendmsg, sendmmsg) are
// not among them: traced, they are reported beside syscw, never in it.
var syscwCalls = []string{"write", "writev", "pwrite64", "pwritev", "pwritev2"}

// socketSendCalls are traced too, to show whether a run used any.
var socketSendCalls = []string{"sendto", "sendmsg", "sendmmsg"}

// straceCall is a syscall strace saw being entered.
type straceCall struct {
	PID  int
	T    time.Time
	Name string
}

// parseStraceLine reads one line of `strace -f -ttt` output:
//
//	1234 1700000000.123456 write(3, ""..., 64) = 64
//	1234 1700000000.123456 writev(5, [...], 18 <unfinished ...>
//	1234 1700000000.123999 <... writev resumed>) = 4352
//	1234 1700000000.200000 +++ exited with 0 +++
//	1234 1700000000.200000 --- SIGURG {si_signo=SIGURG, …} ---
//
// Only the line that enters a syscall counts: a call that strace splits
// into "unfinished" and "resumed" halves is counted once, when it began.
// The PID is absent when strace follows a single process.
func parseStraceLine(line string) (straceCall, bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return straceCall{}, false
	}
	var c straceCall
	i := 0
	if !strings.Contains(f[0], ".") {
		pid, err := strconv.Atoi(f[0])
		if err != nil {
			return straceCall{}, false
		}
		c.PID = pid
		i = 1
	}
	if i+1 >= len(f) {
		return straceCall{}, false
	}
	secs, frac, ok := strings.Cut(f[i], ".")
	if !ok {
		return straceCall{}, false
	}
	s, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return straceCall{}, false
	}
	us, err := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	if err != nil {
		return straceCall{}, false
	}
	c.T = time.Unix(s, us*1000)
	rest := f[i+1]
	name, _, ok := strings.Cut(rest, "(")
	if !ok || name == "" || strings.HasPrefix(rest, "<") {
		return straceCall{}, false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return straceCall{}, false
		}
	}
	c.Name = name
	return c, true
}

// straceCounts counts the calls entered within [ws, we], by name, and in
// all.
type straceCounts struct {
	InWindow map[string]int
	Total    map[string]int
}

// countStrace reads strace's output and counts the calls.
func countStrace(r io.Reader, ws, we time.Time) (straceCounts, error) {
	c := straceCounts{InWindow: map[string]int{}, Total: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		call, ok := parseStraceLine(sc.Text())
		if !ok {
			continue
		}
		c.Total[call.Name]++
		if !call.T.Before(ws) && !call.T.After(we) {
			c.InWindow[call.Name]++
		}
	}
	return c, sc.Err()
}

// sum adds the counts of names.
func sum(m map[string]int, names []string) int {
	n := 0
	for _, k := range names {
		n += m[k]
	}
	return n
}
