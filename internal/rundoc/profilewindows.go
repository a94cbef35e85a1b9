package rundoc

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// The values of --profile-windows (Spec.ProfileWindows); empty is the
// default, decided by WantsProfileWindows.
const (
	ProfileWindowsOn  = "on"
	ProfileWindowsOff = "off"
)

// MinProfileWindow is the shortest window of a windowed CPU profile. Go's
// CPU profile is read by stopping the profiler and starting it again, and
// every stop loses the samples of the time the profiler spends writing
// what it holds: windows shorter than this would lose a larger share of
// them (and JFR's samples, labelled by their timestamps, get the same
// windows).
const MinProfileWindow = 2 * time.Second

// WindowLabel is the pprof label key whose value names a sample's window:
// "START-END" in whole seconds since the measured window opened.
const WindowLabel = "window"

// ProfileWindowLength is the length of one profile window when the
// series' step is step: the fewest whole steps that reach
// MinProfileWindow, so every window boundary is an interval boundary.
func ProfileWindowLength(step time.Duration) time.Duration {
	if step <= 0 {
		return MinProfileWindow
	}
	n := (MinProfileWindow + step - 1) / step
	return max(n, 1) * step
}

// WindowName is the label value of the window from..to (seconds since the
// measured window opened), rounded to whole seconds; a window never reads
// as empty ("8-8"), so its end is at least one second past its start.
func WindowName(from, to float64) string {
	a := int64(math.Round(from))
	b := max(int64(math.Round(to)), a+1)
	return fmt.Sprintf("%d-%d", a, b)
}

// SeriesPoints is how many points the interval series of a measured
// window of secs seconds holds at SeriesStep: one per whole step, and a
// last, shorter part of at least half a step is a point of its own (the
// runner's recordSeries joins a shorter one to the point before). It
// ignores the coarsening of very long series, which only merges points.
func SeriesPoints(secs float64) int {
	if secs <= 0 {
		return 0
	}
	step := SeriesStep.Seconds()
	n := int(secs / step)
	if secs-float64(n)*step >= step/2 || n == 0 {
		n++
	}
	return n
}

// ExpectedWindowSeconds is the length of the measured window the spec
// implies: its --duration, or its measured records (requests for the
// write-path lab) over a positive --throughput. 0 when only the run can
// tell (a count sent as fast as the client can).
func (s Spec) ExpectedWindowSeconds() float64 {
	if s.Duration > 0 {
		return s.Duration
	}
	if s.Throughput <= 0 {
		return 0
	}
	n := s.NumRecords - s.WarmupRecords
	if s.Workload == Writepath {
		n = s.Requests
	}
	if n <= 0 {
		return 0
	}
	return float64(n) / s.Throughput
}

// WantsProfileWindows reports whether a run of the spec records its CPU
// profile in windows: as --profile-windows says when given, and by default
// when it captures a cpu profile and its interval series will have at
// least 3 points, or may (ExpectedWindowSeconds unknown): a run too short
// for that has one window, which its whole profile already is.
func (s Spec) WantsProfileWindows() bool {
	if !slices.Contains(s.Profiles, string(KindCPU)) {
		return false
	}
	switch s.ProfileWindows {
	case ProfileWindowsOn:
		return true
	case ProfileWindowsOff:
		return false
	}
	secs := s.ExpectedWindowSeconds()
	return secs == 0 || SeriesPoints(secs) >= 3
}

func profileWindowsOption() option {
	return option{name: "profile-windows", kind: kindString,
		help: fmt.Sprintf("record the cpu profile in windows of at least %v aligned with the interval series, stored as one profile whose samples carry the label %s=START-END (seconds since the measured window opened), so a time range of the run selects its own flame graph; each window ends with a stop and restart of the profiler, which loses the samples of the few milliseconds it takes",
			MinProfileWindow, WindowLabel),
		set:       func(s *Spec, v []string) error { s.ProfileWindows = v[0]; return nil },
		get:       func(s *Spec) string { return s.ProfileWindows },
		unset:     Workloads(),
		unsetHelp: "on when a cpu profile is captured and the interval series will have 3 points or more",
		choices: []Choice{
			{Value: ProfileWindowsOn, Help: "windows whatever the run's length"},
			{Value: ProfileWindowsOff, Help: "one profile of the whole window, the profiler never restarted"},
		}}
}
