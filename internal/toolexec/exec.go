package toolexec

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/tailbuf"
)

// Defaults of [Command].
const (
	// DefaultMaxOutput is how much of the command's stdout is kept (its
	// end): Kafka's tools print their summary last.
	DefaultMaxOutput = 8 << 20
	// DefaultStderrTail is how much of the end of its stderr is kept.
	DefaultStderrTail = 16 << 10
	// DefaultInterval is the CPU sampling interval.
	DefaultInterval = 100 * time.Millisecond
)

// StopGrace is how long a stopped command has between SIGINT and SIGKILL.
const StopGrace = 10 * time.Second

// ErrUnsupported says the system cannot run or sample the command as
// this package does (no /proc, no process groups).
var ErrUnsupported = errors.New("not supported on this system")

// Shell-style exit statuses for commands that did not exit by themselves.
const (
	// ExitNotFound is the status of a command that could not be found.
	ExitNotFound = 127
	// ExitCannotRun is the status of a command found but not executable.
	ExitCannotRun = 126
	// ExitSignalBase plus the signal's number is the status of a command
	// killed by a signal, as shells report it.
	ExitSignalBase = 128
)

// Command is what [Run] runs.
type Command struct {
	// Argv is the program and its arguments; Argv[0] is looked up in
	// PATH (of this process) when it holds no slash.
	Argv []string
	// Env is the command's whole environment; nil means this process's.
	Env []string
	// Dir is its working directory; "" means this process's.
	Dir string
	// Stdout and Stderr, when set, get the command's output as it comes,
	// with secrets replaced.
	Stdout, Stderr io.Writer
	// Secrets are replaced in everything passed through or kept (see
	// [Secrets]); nil means none.
	Secrets []string
	// MaxOutput, StderrTail and Interval default to DefaultMaxOutput,
	// DefaultStderrTail and DefaultInterval.
	MaxOutput, StderrTail int
	Interval              time.Duration

	// afterSample, when set (by tests), is called with the command's pid
	// right after each CPU reading, the first one included.
	afterSample func(pid int)
}

// CPU is the CPU use of the command's process tree.
type CPU struct {
	// Samples is the number of interval samples behind P99Percent and
	// MaxPercent (0: the command ended within one interval, and those two
	// mean nothing).
	Samples int
	// Interval is the sampling interval.
	Interval time.Duration
	// Wall is the command's wall time, CPU the tree's CPU time
	// (user+system).
	Wall, CPU time.Duration
	// AvgPercent is CPU ÷ Wall, P99Percent and MaxPercent the 99th
	// percentile (nearest rank) and maximum of the samples; all in % of
	// one core.
	AvgPercent, P99Percent, MaxPercent float64
	// Err says why the tree could not be sampled (then every other field
	// but Wall is zero).
	Err error
}

// Execution is what happened when [Run] ran a command.
type Execution struct {
	// Argv is the command as run, with secrets replaced.
	Argv              []string
	Started, Finished time.Time
	// ExitCode is the command's exit status, or as a shell reports what
	// stopped it: ExitSignalBase+n for signal n, ExitNotFound,
	// ExitCannotRun.
	ExitCode int
	// Signal names the signal that killed it ("" when it exited).
	Signal string
	// StartErr says why the command did not start (nil when it did).
	StartErr error
	// Stopped is the context's cause when the context ended the command.
	Stopped error
	// Stdout is the end of its stdout, at most MaxOutput bytes from a line
	// start (StdoutCut bytes before it were dropped); StderrTail the end of
	// its stderr. Both with secrets replaced.
	Stdout     string
	StdoutCut  int64
	StderrTail string
	CPU        CPU
}

// Succeeded reports whether the command ran and exited 0.
func (e *Execution) Succeeded() bool {
	return e.StartErr == nil && e.ExitCode == 0 && e.Signal == ""
}

// Failure says how the command failed ("" when it succeeded): its exit
// status or signal or why it did not start, then the end of its stderr.
func (e *Execution) Failure() string {
	var msg string
	switch {
	case e.StartErr != nil:
		msg = e.StartErr.Error()
	case e.Stopped != nil:
		msg = fmt.Sprintf("stopped (%v), exit status %d", e.Stopped, e.ExitCode)
	case e.Signal != "":
		msg = fmt.Sprintf("killed by signal %s (exit status %d)", e.Signal, e.ExitCode)
	case e.ExitCode != 0:
		msg = fmt.Sprintf("exited with status %d", e.ExitCode)
	default:
		return ""
	}
	if tail := strings.TrimSpace(e.StderrTail); tail != "" {
		const show = 4 << 10
		if len(tail) > show {
			tail = "…" + tail[len(tail)-show:]
		}
		msg += "\nstderr:\n" + tail
	}
	return msg
}

// summarizeCPU computes the CPU figures from the samples (percentages)
// and the totals.
func summarizeCPU(samples []float64, cpu, wall, interval time.Duration) CPU {
	c := CPU{Samples: len(samples), Interval: interval, Wall: wall, CPU: cpu}
	if wall > 0 {
		c.AvgPercent = 100 * float64(cpu) / float64(wall)
	}
	if n := len(samples); n > 0 {
		sorted := slices.Clone(samples)
		slices.Sort(sorted)
		rank := max((99*n+99)/100, 1)
		c.P99Percent, c.MaxPercent = sorted[rank-1], sorted[n-1]
	}
	return c
}

// tailText returns what t kept and how many bytes came before it;
// fromLine also drops a partial first line when something was dropped
// before it.
func tailText(t *tailbuf.Buffer, fromLine bool) (string, int64) {
	text, dropped := t.String(), t.Dropped()
	if fromLine && dropped > 0 {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			dropped += int64(i + 1)
			text = text[i+1:]
		}
	}
	return text, dropped
}

// lineRedactor passes what is written to w a line at a time with the
// secrets replaced, so a secret is never split between two writes.
type lineRedactor struct {
	mu      sync.Mutex
	w       io.Writer
	r       *redactor
	partial []byte
}

func (l *lineRedactor) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	i := strings.LastIndexByte(string(l.partial), '\n')
	if i < 0 {
		if len(l.partial) < 64<<10 {
			return len(p), nil
		}
		i = len(l.partial) - 1 // a very long line: pass it on in pieces
	}
	line := l.partial[:i+1]
	l.partial = append([]byte(nil), l.partial[i+1:]...)
	if l.w != nil {
		_, _ = io.WriteString(l.w, l.r.Replace(string(line)))
	}
	return len(p), nil
}

// flush passes on an unfinished last line.
func (l *lineRedactor) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 && l.w != nil {
		_, _ = io.WriteString(l.w, l.r.Replace(string(l.partial)))
	}
	l.partial = nil
}
