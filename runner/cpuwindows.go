package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/rundoc"
)

// profWindows cuts the measured window into the windows of a windowed CPU
// profile (--profile-windows): at least rundoc.MinProfileWindow each,
// their boundaries at the interval series' ticks, so a window is a whole
// number of the intervals the run page charts. With goProfile it holds
// kbench's own CPU profile, one file a window; Go's profiler can only be
// read by stopping it, so each boundary stops the profiler and starts it
// again, and the samples of the time the stop takes (the profiler writing
// what it holds) are lost. Without it (the JVM of a Java write-path
// strategy) it keeps only the boundaries, which name the windows of the
// JVM's samples by their timestamps (jfrWindow).
//
// Its methods are safe for concurrent use: the series' goroutine calls
// tick while the run's goroutine may be stopping the window.
type profWindows struct {
	dir       string
	goProfile bool
	cpuTime   func() (time.Duration, error)

	mu     sync.Mutex
	start  time.Time // the measured window's start, the origin of the names
	spans  []profSpan
	cur    profSpan // the open window
	file   *os.File
	closed bool
	err    error // a restart that failed: the profile ends there
}

// profSpan is one window: from and to are its boundaries (interval
// ticks); on and off the time its profiler ran, within them; cpu the
// process's CPU time between on and off.
type profSpan struct {
	from, to time.Time
	on, off  time.Time
	cpu      time.Duration
	file     string
}

// startProfWindows starts the first window's profiler (with goProfile).
// The measured window's start is given later (begin), once its counters
// are read.
func startProfWindows(dir string, goProfile bool, cpuTime func() (time.Duration, error)) (*profWindows, error) {
	pw := &profWindows{dir: dir, goProfile: goProfile, cpuTime: cpuTime}
	if err := pw.startProfile(time.Now()); err != nil {
		return nil, err
	}
	return pw, nil
}

// begin sets the first window's start: the measured window's.
func (pw *profWindows) begin(start time.Time) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.start, pw.cur.from = start, start
}

// startProfile opens the next window's file and starts the profiler; the
// caller holds pw.mu (or owns pw alone).
func (pw *profWindows) startProfile(at time.Time) error {
	pw.cur = profSpan{from: at, on: at}
	if !pw.goProfile {
		return nil
	}
	name := fmt.Sprintf("client-cpu.w%04d.pb.gz", len(pw.spans))
	f, err := os.Create(filepath.Join(pw.dir, name))
	if err != nil {
		return fmt.Errorf("runner: cpu profile window: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("runner: cpu profile window: %w", err)
	}
	pw.cur.on = time.Now()
	pw.cur.cpu, _ = pw.cpuTime()
	pw.cur.file, pw.file = name, f
	return nil
}

// stopProfile ends the open window at the boundary at; the caller holds
// pw.mu.
func (pw *profWindows) stopProfile(at time.Time) error {
	s := pw.cur
	s.to = at
	s.off = at
	if pw.file != nil {
		cpu, _ := pw.cpuTime()
		s.off = time.Now()
		s.cpu = cpu - s.cpu
		pprof.StopCPUProfile()
		err := pw.file.Close()
		pw.file = nil
		if err != nil {
			return fmt.Errorf("runner: cpu profile window %s: %w", s.file, err)
		}
	}
	pw.spans = append(pw.spans, s)
	return nil
}

// tick is the series' tick at now, its step then step: when the open
// window has reached its length (rundoc.ProfileWindowLength, within half
// a step, as ticks come a little late), it ends there and the next one
// begins.
func (pw *profWindows) tick(now time.Time, step time.Duration) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.closed || pw.err != nil || pw.start.IsZero() || now.Sub(pw.cur.from) < rundoc.ProfileWindowLength(step)-step/2 {
		return
	}
	if err := pw.stopProfile(now); err != nil {
		pw.err = err
		return
	}
	if err := pw.startProfile(now); err != nil {
		pw.err = err
	}
}

// stop ends the last window at end, the measured window's end.
func (pw *profWindows) stop(end time.Time) error {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.closed {
		return pw.err
	}
	pw.closed = true
	if pw.err != nil {
		return pw.err
	}
	return pw.stopProfile(end)
}

// names are the windows' label values, in order: START-END in whole
// seconds since the measured window opened. A last window shorter than
// rundoc.MinProfileWindow (the run ended between two boundaries) joins
// the one before, which then names them both: no window is shorter,
// unless the run was.
func (pw *profWindows) names() []string {
	return windowNames(pw.start, pw.spans)
}

func windowNames(start time.Time, spans []profSpan) []string {
	out := make([]string, len(spans))
	n := len(spans)
	last := n - 1
	if n > 1 && spans[last].to.Sub(spans[last].from) < rundoc.MinProfileWindow {
		last = n - 2
	}
	for i := range spans {
		from, to := spans[i].from, spans[i].to
		if i >= last {
			from, to = spans[last].from, spans[n-1].to
		}
		out[i] = rundoc.WindowName(from.Sub(start).Seconds(), to.Sub(start).Seconds())
	}
	return out
}

// namer names the window of an instant once the windows are stopped: the
// window whose boundaries hold it; before the first, the first, and after
// the last, the last (the JVM's recording starts a little before the
// window and ends a little after).
func (pw *profWindows) namer() func(time.Time) string {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	names := pw.names()
	ends := make([]time.Time, len(pw.spans))
	for i, s := range pw.spans {
		ends[i] = s.to
	}
	return func(t time.Time) string {
		for i, end := range ends {
			if t.Before(end) || i == len(ends)-1 {
				return names[i]
			}
		}
		return ""
	}
}

// write merges the windows' profiles into one at path, each window's
// samples labelled rundoc.WindowLabel with its name and a comment per
// window saying what its profiler covered, and removes the windows'
// files. note says what the windows cost.
func (pw *profWindows) write(path string) (note string, err error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	names := pw.names()
	var parts []*profile.Profile
	var lost time.Duration
	for i, s := range pw.spans {
		p, err := readProfileFile(filepath.Join(pw.dir, s.file))
		if err != nil {
			return "", err
		}
		p.SetLabel(rundoc.WindowLabel, []string{names[i]})
		p.Comments = []string{fmt.Sprintf("kbench window %s: profiled %.3f-%.3f s, process CPU %.3f s",
			names[i], s.on.Sub(pw.start).Seconds(), s.off.Sub(pw.start).Seconds(), s.cpu.Seconds())}
		parts = append(parts, p)
		if i > 0 {
			lost += max(s.on.Sub(pw.spans[i-1].off), 0)
		}
	}
	if len(parts) == 0 {
		return "", errors.New("runner: cpu profile windows: none recorded")
	}
	merged, err := profile.Merge(parts)
	if err != nil {
		return "", fmt.Errorf("runner: merge cpu profile windows: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("runner: cpu profile: %w", err)
	}
	if err := merged.Write(f); err != nil {
		f.Close()
		return "", fmt.Errorf("runner: cpu profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("runner: cpu profile: %w", err)
	}
	for _, s := range pw.spans {
		os.Remove(filepath.Join(pw.dir, s.file))
	}
	restarts := len(pw.spans) - 1
	distinct := map[string]bool{}
	for _, n := range names {
		distinct[n] = true
	}
	note = fmt.Sprintf("client cpu profile: %d windows of at least %v aligned with the interval series, each sample labelled %s=START-END (seconds since the window opened)",
		len(distinct), rundoc.MinProfileWindow, rundoc.WindowLabel)
	if restarts > 0 {
		note += fmt.Sprintf("; Go's profiler is read by stopping it, and its %d restarts left %.1f ms without samples (%.2f ms each)",
			restarts, ms(lost), ms(lost)/float64(restarts))
	}
	return note, nil
}

func readProfileFile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("runner: cpu profile window: %w", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("runner: cpu profile window %s: %w", filepath.Base(path), err)
	}
	return p, nil
}
