package toolexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/kbench/kbench/internal/childproc"
	"github.com/kbench/kbench/internal/tailbuf"
)

// Run runs c until it exits or ctx ends (see the package doc) and says
// what happened. It returns an error only for a Command it cannot use
// (no Argv); a command that cannot start is an Execution with StartErr.
func Run(ctx context.Context, c Command) (*Execution, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, errors.New("toolexec: no command to run")
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.StderrTail <= 0 {
		c.StderrTail = DefaultStderrTail
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	repl := replacer(c.Secrets)
	e := &Execution{Argv: RedactArgs(c.Argv, c.Secrets)}
	out := tailbuf.New(c.MaxOutput)
	errTail := tailbuf.New(c.StderrTail)
	echoOut := &lineRedactor{w: c.Stdout, r: repl}
	echoErr := &lineRedactor{w: c.Stderr, r: repl}

	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.Stdout = io.MultiWriter(out, echoOut)
	cmd.Stderr = io.MultiWriter(errTail, echoErr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Pipes a leftover process holds open do not keep Wait forever (it is
	// killed anyway, see below).
	cmd.WaitDelay = 2 * time.Second

	e.Started = time.Now()
	if err := childproc.Start(cmd); err != nil {
		e.Finished = time.Now()
		e.StartErr = fmt.Errorf("cannot run %s: %w", e.Argv[0], err)
		e.ExitCode = ExitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			e.ExitCode = ExitNotFound
		}
		e.CPU = CPU{Interval: c.Interval, Err: errors.New("the command did not start")}
		return e, nil
	}
	pid := cmd.Process.Pid

	// The stopper: SIGINT to the group when ctx ends, SIGKILL after the
	// grace.
	exited := make(chan struct{})
	stopperDone := make(chan struct{})
	go func() {
		defer close(stopperDone)
		select {
		case <-exited:
			return
		case <-ctx.Done():
		}
		_ = syscall.Kill(-pid, syscall.SIGINT)
		t := time.NewTimer(StopGrace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()

	// The sampler, until the command has exited (a zombie not yet reaped,
	// so its times and its children's are still in /proc).
	tree := newTreeCPU(pid)
	sampleErr := procSupported()
	var samples []float64
	prevWall := e.Started
	var prevTicks uint64
	if sampleErr == nil {
		prevTicks, sampleErr = tree.sample()
		prevWall = time.Now()
	}
	if c.afterSample != nil {
		c.afterSample(pid)
	}
	zombie := make(chan error, 1)
	go func() { zombie <- waitExited(pid) }()
	tick := time.NewTicker(c.Interval)
	waitErr := error(nil)
loop:
	for {
		select {
		case waitErr = <-zombie:
			break loop
		case <-tick.C:
		}
		if sampleErr != nil {
			continue
		}
		ticks, err := tree.sample()
		if err != nil {
			sampleErr = err
			continue
		}
		// The reading's time is when the scan ended: on a loaded machine
		// a scan of /proc takes long, and the tree's processes (the
		// newest, highest pids) are read last.
		now := time.Now()
		dw := now.Sub(prevWall)
		if dw < c.Interval/2 {
			continue // a tick that caught up late: fold it into the next
		}
		if c.afterSample != nil {
			c.afterSample(pid)
		}
		samples = append(samples, 100*float64(ticksToDuration(ticks-prevTicks))/float64(dw))
		prevWall, prevTicks = now, ticks
	}
	tick.Stop()
	var outsideTicks uint64
	if sampleErr == nil && waitErr == nil {
		if _, err := tree.sample(); err == nil {
			outsideTicks = tree.outside()
		}
	}
	// Whatever the command left running in its group ends with it.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	err := cmd.Wait()
	e.Finished = time.Now()
	close(exited)
	<-stopperDone
	echoOut.flush()
	echoErr.flush()
	if ctx.Err() != nil {
		e.Stopped = context.Cause(ctx)
	}

	st := cmd.ProcessState
	switch {
	case st == nil:
		e.ExitCode, e.StartErr = ExitCannotRun, fmt.Errorf("waiting for %s: %w", e.Argv[0], err)
	default:
		ws, _ := st.Sys().(syscall.WaitStatus)
		e.ExitCode = st.ExitCode()
		if ws.Signaled() {
			e.Signal = unixSignalName(ws.Signal())
			e.ExitCode = ExitSignalBase + int(ws.Signal())
		}
	}
	wall := e.Finished.Sub(e.Started)
	if sampleErr != nil {
		e.CPU = CPU{Interval: c.Interval, Wall: wall, Err: sampleErr}
	} else {
		// The kernel's account of the command and the children it
		// reaped, plus members that left its ancestry.
		var cpu time.Duration
		if st != nil {
			cpu = st.UserTime() + st.SystemTime()
		}
		cpu += ticksToDuration(outsideTicks)
		e.CPU = summarizeCPU(samples, cpu, wall, c.Interval)
	}
	e.Stdout, e.StdoutCut = tailText(out, true)
	e.Stdout = repl.Replace(e.Stdout)
	tail, _ := tailText(errTail, false)
	e.StderrTail = repl.Replace(tail)
	return e, nil
}

// waitExited blocks until process pid has exited, without reaping it
// (waitid with WNOWAIT), so its /proc entry stays for a last sample.
func waitExited(pid int) error {
	const pPID = 1
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return fmt.Errorf("toolexec: waitid %d: %w", pid, errno)
	}
}

// unixSignalName is "SIGKILL" for SIGKILL.
func unixSignalName(s syscall.Signal) string {
	name := s.String()
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return strings.TrimSpace(name)
}
