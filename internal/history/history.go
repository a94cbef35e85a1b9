// Package history builds a metric's history across the runs of one series:
// the points in time order, the change points Apache Otava's method finds
// in them (package changepoint), the segments between change points, and
// marks where what measured the runs changed (kbench's build, kafka-go, Go,
// the recorded configuration or the machine), so that an upgrade that
// changed what a metric means is not read as a regression.
//
// It has no HTTP and no database: the store hands it runs, the server and
// the pages show what it builds.
package history

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/internal/rundoc"
)

// Directions of a change point, by the metric's direction.
const (
	Better = "better"
	Worse  = "worse"
)

// UnknownCommit names a run without a commit tag in a commit range.
const UnknownCommit = "unknown"

// Point is one run's value of the metric.
type Point struct {
	RunID uint
	Time  time.Time
	Value float64
	// Meta is the run's metadata (nil for none).
	Meta map[string]string
}

// ChangePoint is a change point of the history.
type ChangePoint struct {
	// Index is the position in Points of the first run after the change
	// (Otava's convention); RunID is that run.
	Index int
	RunID uint
	// Before and After are the means of the segments either side, as the
	// detector gives them; ChangePct is (After/Before - 1) × 100.
	Before, After float64
	ChangePct     float64
	PValue        float64
	// Magnitude is Otava's magnitude (a fraction), which min_magnitude is
	// compared with.
	Magnitude float64
	// Direction is Better or Worse by the metric's direction, "" when the
	// metric has none.
	Direction string
	// RunsBefore and RunsAfter are the sizes of the segments either side
	// (changepoint.Sides). Tentative is true when one of them holds fewer
	// than the options' MinSegment runs: the change point is shown, but
	// not listed as a regression, badged, notified or decided on.
	RunsBefore, RunsAfter int
	Tentative             bool
	// CommitBefore is the commit of the last run before the change,
	// CommitAfter that of the first run after it; UnknownCommit where a
	// run has no commit tag.
	CommitBefore, CommitAfter string
}

// CommitRange is "abc123..def456", the commits between which the change
// happened.
func (c ChangePoint) CommitRange() string { return c.CommitBefore + ".." + c.CommitAfter }

// Segment is the runs between two change points, Points[Start:End].
type Segment struct {
	Start, End int
	Median     float64
}

// Mark says what changed between a point and the one before it besides
// the code measured.
type Mark struct {
	// Index is the position in Points of the first run with the change.
	Index int
	RunID uint
	// Changes say what changed, one thing each: "kafka-go v0.4.47 →
	// v0.4.48", "config linger.ms 0 → 5".
	Changes []string
}

// History is a metric across a series' runs.
type History struct {
	Metric string
	// Unit and Better are the metric's, from the newest point's run.
	Unit   string
	Better rundoc.Better
	// Points are in the order of the runs given: time order.
	Points       []Point
	ChangePoints []ChangePoint
	Segments     []Segment
	Marks        []Mark
	// Options are the detection's parameters, defaults filled in.
	Options changepoint.Options
}

// Build builds the history of metric over runs, which must be one series'
// runs in time order. Only succeeded runs that are not warm-ups and have
// the metric with a finite value become points. opts are the detector's
// (zero fields mean Otava's defaults); Build does not validate them.
func Build(runs []rundoc.Run, metric string, opts changepoint.Options) History {
	h := History{Metric: metric, Options: opts.WithDefaults()}
	var envs []*rundoc.Environment
	for i := range runs {
		r := &runs[i]
		if r.Status != rundoc.StatusSucceeded || r.Warmup {
			continue
		}
		m, ok := r.Metric(metric)
		if !ok || math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			continue
		}
		h.Unit, h.Better = m.Unit, m.Better
		h.Points = append(h.Points, Point{RunID: r.ID, Time: r.Time, Value: m.Value, Meta: r.Meta})
		envs = append(envs, r.Environment)
	}
	values := make([]float64, len(h.Points))
	for i, p := range h.Points {
		values[i] = p.Value
	}
	cps := changepoint.Detect(values, h.Options)
	for i, c := range cps {
		before, after := h.Points[c.Index-1], h.Points[c.Index]
		nb, na := changepoint.Sides(cps, len(values), i)
		h.ChangePoints = append(h.ChangePoints, ChangePoint{
			Index: c.Index, RunID: after.RunID, Before: c.Before, After: c.After,
			ChangePct: c.ChangePercent(), PValue: c.PValue, Magnitude: c.Magnitude,
			Direction:  direction(h.Better, c.Before, c.After),
			RunsBefore: nb, RunsAfter: na, Tentative: h.Options.TooShort(nb, na),
			CommitBefore: Commit(before.Meta), CommitAfter: Commit(after.Meta),
		})
	}
	start := 0
	for i := 0; i <= len(h.ChangePoints); i++ {
		end := len(h.Points)
		if i < len(h.ChangePoints) {
			end = h.ChangePoints[i].Index
		}
		if end > start {
			h.Segments = append(h.Segments, Segment{Start: start, End: end, Median: median.Of(values[start:end])})
		}
		start = end
	}
	for i := 1; i < len(envs); i++ {
		if ch := EnvironmentChanges(envs[i-1], envs[i]); len(ch) > 0 {
			h.Marks = append(h.Marks, Mark{Index: i, RunID: h.Points[i].RunID, Changes: ch})
		}
	}
	return h
}

// TentativeReason says why c is tentative with minSegment, "" when it is
// not: "1 run before it and 2 after; a change point is trusted with at
// least 4 on each side (min_segment)".
func (c ChangePoint) TentativeReason(minSegment int) string {
	if !c.Tentative {
		return ""
	}
	return fmt.Sprintf("%d %s before it and %d after; a change point is trusted with at least %d on each side (min_segment)",
		c.RunsBefore, plural(c.RunsBefore, "run", "runs"), c.RunsAfter, minSegment)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Commit is the commit a run's metadata names, UnknownCommit for none.
func Commit(meta map[string]string) string {
	if c := meta[rundoc.MetaCommit]; c != "" {
		return c
	}
	return UnknownCommit
}

// direction is Better or Worse for a change from before to after of a
// metric whose direction is b; "" when it has none or nothing changed.
func direction(b rundoc.Better, before, after float64) string {
	if after == before {
		return ""
	}
	switch b {
	case rundoc.HigherIsBetter:
		if after > before {
			return Better
		}
		return Worse
	case rundoc.LowerIsBetter:
		if after < before {
			return Better
		}
		return Worse
	}
	return ""
}

// BeforeAfter are the runs a before/after comparison of change point k
// compares: the last at most perSide runs of the segment before it and
// the first at most perSide runs of the segment after it, in time order.
// The segments are the runs between change points, so neither side mixes
// in another change; perSide bounds the comparison (the detector's half
// window is the natural choice, and comparisons take at most 50 runs).
func (h History) BeforeAfter(k, perSide int) (before, after []uint) {
	if k < 0 || k >= len(h.ChangePoints) || perSide < 1 {
		return nil, nil
	}
	lo, hi := 0, len(h.Points)
	if k > 0 {
		lo = h.ChangePoints[k-1].Index
	}
	if k+1 < len(h.ChangePoints) {
		hi = h.ChangePoints[k+1].Index
	}
	at := h.ChangePoints[k].Index
	for _, p := range h.Points[max(lo, at-perSide):at] {
		before = append(before, p.RunID)
	}
	for _, p := range h.Points[at:min(hi, at+perSide)] {
		after = append(after, p.RunID)
	}
	return before, after
}

// maxConfigChanges is how many changed settings a mark names before it
// counts the rest.
const maxConfigChanges = 4

// EnvironmentChanges says what differs from a to b among what changes a
// metric's meaning without being the code measured: kbench's build,
// kafka-go's and Go's versions, the client configuration the run applied,
// the machine (CPU model, cores, kernel, host) and the target. A field
// either run did not record is not compared, and runs without an
// environment (imports of Kafka tool output) give nothing.
func EnvironmentChanges(a, b *rundoc.Environment) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	diff := func(what, x, y string) {
		if x != "" && y != "" && x != y {
			out = append(out, what+" "+x+" → "+y)
		}
	}
	diff("kbench", kbenchBuild(a), kbenchBuild(b))
	diff("kafka-go", a.KafkaGoVersion, b.KafkaGoVersion)
	diff("Go", a.GoVersion, b.GoVersion)
	// Runs read together share one decoded configuration per distinct
	// text (store.SeriesRuns): the same one has no changes.
	if a.Config != nil && b.Config != nil && a.Config != b.Config {
		out = append(out, configChanges(a.Config, b.Config)...)
	}
	diff("CPU", a.CPUModel, b.CPUModel)
	if a.Cores > 0 && b.Cores > 0 && a.Cores != b.Cores {
		out = append(out, "cores "+strconv.Itoa(a.Cores)+" → "+strconv.Itoa(b.Cores))
	}
	diff("kernel", a.Kernel, b.Kernel)
	diff("host", a.Host, b.Host)
	diff("target", targetOf(a), targetOf(b))
	return out
}

// kbenchBuild names a kbench build: its version, and the executable's hash
// when the version alone does not tell builds apart.
func kbenchBuild(e *rundoc.Environment) string {
	switch {
	case e.KbenchBuild == "":
		return e.KbenchVersion
	case e.KbenchVersion == "":
		return "build " + e.KbenchBuild
	}
	return e.KbenchVersion + " (build " + e.KbenchBuild + ")"
}

// targetOf is what the run talked to (rundoc.TargetIdentity: never the
// port an embedded broker or sink picked, nor the order of a cluster's
// bootstrap servers), with the release guess for a cluster.
func targetOf(e *rundoc.Environment) string {
	s := rundoc.TargetIdentity(e)
	if e.Target != nil && e.Target.ReleaseGuess != "" {
		s += " (" + e.Target.ReleaseGuess + ")"
	}
	return s
}

// configChanges lists the settings that differ between two recorded
// configurations, in b's order, then those a alone has.
func configChanges(a, b *rundoc.Config) []string {
	var ch []string
	if a.Mode != b.Mode && a.Mode != "" && b.Mode != "" {
		ch = append(ch, "mode "+a.Mode+" → "+b.Mode)
	}
	for _, s := range b.Settings {
		old, ok := a.Get(s.Name)
		switch {
		case !ok:
			ch = append(ch, s.Name+" (none) → "+s.Value)
		case old != s.Value:
			ch = append(ch, s.Name+" "+old+" → "+s.Value)
		}
	}
	for _, s := range a.Settings {
		if _, ok := b.Get(s.Name); !ok {
			ch = append(ch, s.Name+" "+s.Value+" → (none)")
		}
	}
	if len(ch) == 0 {
		return nil
	}
	if len(ch) > maxConfigChanges {
		ch = append(slices.Clip(ch[:maxConfigChanges]), fmt.Sprintf("%d more", len(ch)-maxConfigChanges))
	}
	return []string{"config " + strings.Join(ch, ", ")}
}
