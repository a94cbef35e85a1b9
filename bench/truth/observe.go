package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// observed is one `kbench run` as the suite saw it from outside.
type observed struct {
	Name string
	Args []string
	Dir  string // --out
	PID  int

	Events []event
	// IO at the moment the "measure" and "finishing" phase events were
	// read (/proc/PID/io, read at once by the goroutine reading stdout),
	// and how long after the event's own time each was read.
	IOStart, IOEnd       procIO
	IOStartOK, IOEndOK   bool
	IOStartLag, IOEndLag time.Duration

	Samples []sample
	Result  *kbenchResult
	Err     error
	Stderr  string
	// Strace is strace's output file when the run was traced.
	Strace string
}

// windowBounds returns the measured window's start and end.
func (o *observed) windowBounds() (time.Time, time.Time, error) {
	if o.Result == nil {
		return time.Time{}, time.Time{}, errors.New("no result.json")
	}
	secs := o.Result.Measurement.WindowSeconds
	if secs <= 0 {
		return time.Time{}, time.Time{}, errors.New("result.json has no window length")
	}
	ws, ok := windowStart(o.Events, secs)
	if !ok {
		return time.Time{}, time.Time{}, errors.New("no progress event dates the window")
	}
	return ws, ws.Add(time.Duration(secs * float64(time.Second))), nil
}

// runOpts are how the suite launches a run.
type runOpts struct {
	// Sample reads the process's /proc files every SampleEvery.
	Sample      bool
	SampleEvery time.Duration
	// Strace traces the run with strace into a file in the run's
	// directory (then it is not sampled: the process is strace's child).
	Strace     bool
	StraceArgs []string
}

// runKbench runs `kbench run ARGS --progress json --out DIR` and watches
// it. The returned error is the suite's own failure; a failing run is in
// observed.Err.
func runKbench(ctx context.Context, kbench, outDir, name string, args []string, opt runOpts) (*observed, error) {
	dir := filepath.Join(outDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	o := &observed{Name: name, Args: args, Dir: dir}
	full := append([]string{"run"}, args...)
	full = append(full, "--progress", "json", "--out", dir)
	var cmd *exec.Cmd
	if opt.Strace {
		o.Strace = filepath.Join(dir, "strace.txt")
		sargs := append(append([]string{}, opt.StraceArgs...), "-o", o.Strace, "--", kbench)
		cmd = exec.CommandContext(ctx, "strace", append(sargs, full...)...)
	} else {
		cmd = exec.CommandContext(ctx, kbench, full...)
	}
	stderrFile, err := os.Create(filepath.Join(dir, "stderr.txt"))
	if err != nil {
		return nil, err
	}
	defer stderrFile.Close()
	cmd.Stderr = stderrFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	events, err := os.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer events.Close()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	o.PID = cmd.Process.Pid
	var smp *sampler
	if opt.Sample && !opt.Strace {
		smp = startSampler(o.PID, opt.SampleEvery)
	}
	aligned := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		events.Write(append(append([]byte{}, line...), '\n'))
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if smp != nil {
			// Align the sampler's schedule with the window's start, as
			// soon as an event dates it, and again when a later event
			// dates it earlier.
			switch {
			case e.Type == "phase" && e.Phase == "measure":
				smp.align(e.Time, !aligned)
				aligned = true
			case e.Type == "interval" && e.Elapsed > 0:
				smp.align(e.Time.Add(-time.Duration(e.Elapsed*float64(time.Second))), !aligned)
				aligned = true
			}
		}
		if e.Type == "phase" && (e.Phase == "measure" || e.Phase == "finishing") {
			// Read the counters first, then look at the clock: the
			// edge is as close to the event as this process can be.
			var io procIO
			var ioErr error
			if !opt.Strace {
				io, ioErr = readProcIO(o.PID)
			}
			lag := time.Since(e.Time)
			if smp != nil {
				smp.take(true)
			}
			if !opt.Strace && ioErr == nil {
				if e.Phase == "measure" {
					o.IOStart, o.IOStartOK, o.IOStartLag = io, true, lag
				} else {
					o.IOEnd, o.IOEndOK, o.IOEndLag = io, true, lag
				}
			}
		}
		o.Events = append(o.Events, e)
	}
	if smp != nil {
		o.Samples = smp.stop()
		writeSamples(filepath.Join(dir, "samples.csv"), o.Samples)
	}
	werr := cmd.Wait()
	if b, err := os.ReadFile(filepath.Join(dir, "stderr.txt")); err == nil {
		o.Stderr = strings.TrimSpace(string(b))
	}
	o.Result, err = readResult(dir)
	switch {
	case err != nil:
		o.Err = fmt.Errorf("%s: %w (exit: %v; stderr: %s)", name, err, werr, lastLine(o.Stderr))
	case werr != nil:
		o.Err = fmt.Errorf("%s: %v: %s", name, werr, firstNonEmpty(o.Result.Error, lastLine(o.Stderr)))
	case !o.Result.Complete:
		o.Err = fmt.Errorf("%s: incomplete: %s", name, o.Result.Error)
	}
	return o, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// writeSamples keeps the sampler's readings beside the run's result, so a
// disagreement can be looked into: one line per reading.
func writeSamples(path string, ss []sample) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "unix_ns,edge,threads,threads_run_ns,stat_utime_ticks,stat_stime_ticks,syscw,wchar")
	for _, s := range ss {
		fmt.Fprintf(w, "%d,%v,%d,%d,%d,%d,%d,%d\n", s.T.UnixNano(), s.Edge, len(s.Threads.RunNs), s.RunNs,
			s.Stat.UtimeTicks, s.Stat.StimeTicks, s.IO.Syscw, s.IO.Wchar)
	}
	w.Flush()
}
