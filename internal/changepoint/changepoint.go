// Package changepoint finds where a series of benchmark results shifts to a
// new level, with the method of Apache Otava (formerly Hunter; Fleming et
// al., "Hunter: Using Change Point Detection to Hunt for Performance
// Regressions", ICPE 2023): E-divisive means (Matteson and James) run over
// sliding windows, with Student's t-test instead of random permutations as
// the significance test, so the answer is deterministic.
//
// The work is done in two steps, as Otava does:
//
//  1. Split: windows of Options.Window points, each starting half a window
//     after the previous one (or at the last change point it found, if that
//     is further), are split recursively at the point that maximises the
//     E-divisive divergence while the t-test of the two sides gives a p-value
//     at most a relaxed threshold (10 × MaxPValue below 0.05, 2 × below 0.5,
//     MaxPValue itself above). The union over all windows is the set of weak
//     change points.
//  2. Merge: repeatedly the weakest weak point is dropped (the one with the
//     highest p-value if any p-value is not below MaxPValue, otherwise the one
//     with the smallest magnitude if that is not above MinMagnitude), and its
//     neighbour's figures are recomputed, until every remaining point passes.
//
// The package has no HTTP, no database and no dependency outside the
// standard library. It gives the same change points as Otava on Otava's own
// published test series (see otava_test.go).
package changepoint

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Otava's defaults (otava/series.py AnalysisOptions).
const (
	DefaultWindow    = 50
	DefaultMaxPValue = 0.001
)

// DefaultMinSegment is the default of Options.MinSegment: a change point
// is trusted when each side holds at least 4 runs, the fewest with which
// a comparison's Mann-Whitney test can reach significance (compare's
// TestMinN). Otava has no such parameter: on a series of 4 runs split 1/2/1
// it reports both change points with p = 0 (a one-run segment has no
// variance), which is no ground for a regression alarm.
const DefaultMinSegment = 4

// MaxWindow is the largest window Validate accepts, ten times Otava's
// default. Detection costs about O(len(values) × Window), so a window as
// long as a 20,000-run series took seconds a request; 500 still covers a
// window longer than any level a series holds in practice, and costs about
// 80 ms on 20,000 points.
const MaxWindow = 500

// Options are Otava's analysis parameters. The zero value means Otava's
// defaults: window 50, maximum p-value 0.001, minimum magnitude 0.
type Options struct {
	// Window is Otava's window_len: the number of points the divisive step
	// looks at at once (2 to MaxWindow; 0 means DefaultWindow). Consecutive
	// windows overlap by half. It bounds the work: detection costs about
	// O(len(values) × Window) distance computations per level of splitting.
	Window int
	// MaxPValue is Otava's max_pvalue: a change point is kept only if the
	// t-test of the segments either side gives a p-value below it (in (0, 1];
	// 0 means DefaultMaxPValue).
	MaxPValue float64
	// MinMagnitude is Otava's min_magnitude, a fraction (0.05 = 5%): a change
	// point is kept only if its Magnitude is above it. 0 keeps every
	// significant change point.
	MinMagnitude float64
	// MinSegment is not Otava's: it is the fewest points each side of a
	// change point must hold (the segments between reported change
	// points, Sides) for the change point to be trusted; shorter ones are
	// tentative. Detect ignores it and reports Otava's answer; callers
	// tell the two apart with Sides (0 means DefaultMinSegment, 1 trusts
	// every change point, as Otava does).
	MinSegment int
}

// Validate reports parameters Detect cannot honour, naming Otava's
// parameter. Zero values are valid: they stand for the defaults.
func (o Options) Validate() error {
	var errs []error
	if o.Window < 0 || o.Window == 1 || o.Window > MaxWindow {
		errs = append(errs, fmt.Errorf("changepoint: window %d: must be from 2 to %d (0 for the default %d)", o.Window, MaxWindow, DefaultWindow))
	}
	if !(o.MaxPValue >= 0 && o.MaxPValue <= 1) {
		errs = append(errs, fmt.Errorf("changepoint: max_pvalue %g: must be in (0, 1] (0 for the default %g)", o.MaxPValue, DefaultMaxPValue))
	}
	if !(o.MinMagnitude >= 0) || math.IsInf(o.MinMagnitude, 0) {
		errs = append(errs, fmt.Errorf("changepoint: min_magnitude %g: must be a finite fraction at least 0", o.MinMagnitude))
	}
	if o.MinSegment < 0 {
		errs = append(errs, fmt.Errorf("changepoint: min_segment %d: must be at least 1 (0 for the default %d)", o.MinSegment, DefaultMinSegment))
	}
	return errors.Join(errs...)
}

// WithDefaults is o with Otava's defaults in its zero fields: the
// parameters Detect uses, as pages show them and caches key them.
func (o Options) WithDefaults() Options {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.MaxPValue == 0 {
		o.MaxPValue = DefaultMaxPValue
	}
	if o.MinSegment == 0 {
		o.MinSegment = DefaultMinSegment
	}
	return o
}

// WithoutDefaults is o with the fields that equal Otava's defaults zeroed:
// the same detection, as URLs carry it (only what differs).
func (o Options) WithoutDefaults() Options {
	if o.Window == DefaultWindow {
		o.Window = 0
	}
	if o.MaxPValue == DefaultMaxPValue {
		o.MaxPValue = 0
	}
	if o.MinSegment == DefaultMinSegment {
		o.MinSegment = 0
	}
	return o
}

// Sides are the sizes of the segments either side of cps[i], change
// points of a series of n points sorted by Index: from the previous one
// (or the start) to it, and from it to the next (or the end).
func Sides(cps []ChangePoint, n, i int) (before, after int) {
	lo, hi := 0, n
	if i > 0 {
		lo = cps[i-1].Index
	}
	if i+1 < len(cps) {
		hi = cps[i+1].Index
	}
	return cps[i].Index - lo, hi - cps[i].Index
}

// Tentative says whether change point cps[i] of a series of n points has
// fewer than o.MinSegment points on a side (DefaultMinSegment for 0).
func (o Options) Tentative(cps []ChangePoint, n, i int) bool {
	return o.TooShort(Sides(cps, n, i))
}

// TooShort says whether a change point with before and after points
// either side (Sides) has fewer than o.MinSegment on a side.
func (o Options) TooShort(before, after int) bool {
	return min(before, after) < o.WithDefaults().MinSegment
}

// normalized fills in the defaults and replaces what Validate rejects, so
// that Detect never fails: a window below 2 becomes 2 (above MaxWindow,
// MaxWindow, so that no caller's work is unbounded), a p-value outside
// (0, 1] the default, a negative or non-finite magnitude 0.
func (o Options) normalized() Options {
	o = o.WithDefaults()
	o.Window = min(max(o.Window, 2), MaxWindow)
	if !(o.MaxPValue > 0 && o.MaxPValue <= 1) {
		o.MaxPValue = DefaultMaxPValue
	}
	if !(o.MinMagnitude >= 0) || math.IsInf(o.MinMagnitude, 0) {
		o.MinMagnitude = 0
	}
	return o
}

// firstPassPValue is the relaxed threshold of the split step, the same
// schedule as Otava's compute_change_points: weak change points are
// collected generously and the merge step applies MaxPValue itself.
func firstPassPValue(maxP float64) float64 {
	switch {
	case maxP < 0.05:
		return maxP * 10
	case maxP < 0.5:
		return maxP * 2
	default:
		return maxP
	}
}

// ChangePoint is one detected shift of the series.
type ChangePoint struct {
	// Index is the position in the series of the first point after the
	// change (Otava's convention); it is always in [1, len(values)-1].
	Index int
	// Before is the mean of the segment before the change: the points from
	// the previous reported change point (or the start) up to Index-1.
	// After is the mean of the points from Index up to the next reported
	// change point (or the end).
	Before, After float64
	// StdDevBefore and StdDevAfter are the population standard deviations
	// (divisor n, as numpy's std in Otava) of those two segments; 0 for a
	// segment of one point.
	StdDevBefore, StdDevAfter float64
	// PValue is the two-sided p-value of Student's t-test with pooled
	// variance (scipy's ttest_ind_from_stats, equal_var=True) fed with the
	// two segments' means, population standard deviations and sizes, as
	// Otava computes it. 1 when the segments hold two points together.
	PValue float64
	// Magnitude is Otava's change magnitude: the larger of
	// |After/Before - 1| and |Before/After - 1|, a ratio taken as 0 when its
	// denominator is 0. MinMagnitude is compared with it.
	Magnitude float64
}

// ChangePercent is the relative change from Before to After in percent,
// (After/Before - 1) × 100, Otava's forward_change_percent; 0 when Before is 0.
func (c ChangePoint) ChangePercent() float64 {
	if c.Before == 0 {
		return 0
	}
	return (c.After/c.Before - 1) * 100
}

// Detect returns the change points of values, sorted by Index, as Otava's
// compute_change_points finds them with the same window_len, max_pvalue and
// min_magnitude.
//
// Values that are NaN or ±Inf are taken as missing and filled as Otava fills
// missing values (fill_missing): with the previous finite value, or, before
// the first finite value, with that one; indexes keep referring to values.
// A series with fewer than 3 points, with no finite value, or constant, has
// no change point. values is not modified.
func Detect(values []float64, opts Options) []ChangePoint {
	return Analyze(values, opts).ChangePoints
}

// Analysis is the result of Analyze: the change points and what Extend needs
// to analyse a longer version of the same series incrementally.
type Analysis struct {
	// ChangePoints are the reported change points, as Detect returns them.
	ChangePoints []ChangePoint
	// Len is the number of values analysed.
	Len int
	// Options are the parameters used, defaults filled in.
	Options Options
}

// Analyze is Detect, returning an Analysis that can later be extended
// without re-running the split step over the whole series.
func Analyze(values []float64, opts Options) Analysis {
	opts = opts.normalized()
	z := fillMissing(values)
	weak := split(z, opts.Window, firstPassPValue(opts.MaxPValue), 0, nil)
	return finish(z, len(values), weak, opts)
}

// Extend analyses values, which must be the series a analysed with points
// appended, the way Otava's AnalyzedSeries.append does: the split step runs
// only over the tail (from the last change point or half-window step that is
// more than 4 windows plus the new points' share before the end), the
// change points found before are kept as weak change points, and the merge
// step runs over all of them. (Otava hands append the list it calls weak
// change points, but its merge step removes points from that very list, so
// what it keeps are the reported change points; so do we.)
// Like Otava's, the result can differ from Analyze on the whole series when
// an old window would now split differently. If values is shorter than what
// a analysed, or a is the zero Analysis, Extend analyses values from scratch
// (with a's options, defaults for the zero Analysis).
func (a Analysis) Extend(values []float64) Analysis {
	opts := a.Options.normalized()
	if len(values) < a.Len || a.Len == 0 {
		return Analyze(values, opts)
	}
	z := fillMissing(values)
	n, w := len(z), opts.Window
	added := len(values) - a.Len
	// Otava computes this bound in floating point; so do we.
	maxStart := float64(n) - (float64(added)/float64(w)+4)*float64(w)
	old := make([]int, len(a.ChangePoints))
	for i, c := range a.ChangePoints {
		old[i] = c.Index
	}
	start := 0
	for _, c := range old {
		if float64(c) < maxStart {
			start = c
		}
	}
	for s := 0; s < n; s += w / 2 {
		if float64(s) < maxStart && start < s {
			start = s
		}
	}
	weak := split(z, w, firstPassPValue(opts.MaxPValue), start, old)
	return finish(z, len(values), weak, opts)
}

// finish runs the merge step over the weak change points and reports the
// survivors with the figures of the final segments.
func finish(z []float64, n int, weak []int, opts Options) Analysis {
	res := Analysis{Len: n, Options: opts}
	if len(weak) == 0 {
		return res
	}
	kept := merge(z, weak, opts.MaxPValue, opts.MinMagnitude)
	// Otava reports the figures each point carries at the end of the merge;
	// after a removal it recomputes the point that followed the removed one
	// but not the one that preceded it, so a point's figures can describe a
	// segment that no longer ends at the next reported point. Recomputing
	// all of them here makes Before and After the means of the segments
	// between the reported change points, which is what callers show; the
	// set of points kept is Otava's.
	for i, idx := range kept {
		st := segmentStats(z, kept, i)
		res.ChangePoints = append(res.ChangePoints, ChangePoint{
			Index:        idx,
			Before:       st.mean1,
			After:        st.mean2,
			StdDevBefore: st.std1,
			StdDevAfter:  st.std2,
			PValue:       st.p,
			Magnitude:    st.magnitude(),
		})
	}
	return res
}

// fillMissing returns a copy of values with every non-finite value replaced
// like Otava's fill_missing replaces None, or nil if no value is finite.
func fillMissing(values []float64) []float64 {
	first := slices.IndexFunc(values, isFinite)
	if first < 0 {
		return nil
	}
	z := make([]float64, len(values))
	prev := values[first]
	for i, v := range values {
		if isFinite(v) {
			prev = v
		}
		z[i] = prev
	}
	return z
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// split is Otava's split step over z, starting at start and keeping the weak
// change points in old: it slides a window of w points, half a window at a
// time (or to the last change point the window found, if further), runs the
// divisive detector in each window with threshold p, and returns the union
// of the points found, sorted.
func split(z []float64, w int, p float64, start int, old []int) []int {
	weak := slices.Clone(old)
	step := w / 2
	var sc scratch
	for start < len(z) {
		end := min(start+w, len(z))
		found := detectWindow(z[start:end], p, &sc)
		last := 0
		for _, local := range found {
			idx := start + local
			if !slices.Contains(weak, idx) {
				weak = append(weak, idx)
			}
			last = idx
		}
		start = max(last, start+step)
	}
	slices.Sort(weak)
	return weak
}

// merge is Otava's merge step. It returns the indexes of the weak change
// points that survive, in order.
func merge(z []float64, weak []int, maxP, minMag float64) []int {
	cps := slices.Clone(weak)
	st := make([]stats, len(cps))
	for i := range cps {
		st[i] = segmentStats(z, cps, i)
	}
	for len(cps) > 0 {
		// The weakest is the point with the highest p-value (the first of
		// equals, as Python's max); if every p-value passes, the point with
		// the smallest magnitude (the first of equals, as Python's min).
		// The comparisons are written the way Python's max and min make
		// them, so that NaN p-values are treated the same way.
		weakest := 0
		for i := 1; i < len(cps); i++ {
			if st[i].p > st[weakest].p {
				weakest = i
			}
		}
		if st[weakest].p < maxP {
			weakest = 0
			for i := 1; i < len(cps); i++ {
				if st[i].magnitude() < st[weakest].magnitude() {
					weakest = i
				}
			}
			if st[weakest].magnitude() > minMag {
				return cps
			}
		}
		cps = slices.Delete(cps, weakest, weakest+1)
		st = slices.Delete(st, weakest, weakest+1)
		// Otava recomputes the points now at positions weakest and
		// weakest+1: the one that followed the removed point (its left
		// segment grew) and the one after it. The point before the removed
		// one keeps its figures although its right segment grew; doing the
		// same keeps the same points as Otava.
		for _, i := range []int{weakest, weakest + 1} {
			if i < len(cps) {
				st[i] = segmentStats(z, cps, i)
			}
		}
	}
	return cps
}

// segmentStats compares the segments either side of cps[i]: from the
// previous change point (or 0) to cps[i], and from cps[i] to the next (or
// the end).
func segmentStats(z []float64, cps []int, i int) stats {
	lo, hi := 0, len(z)
	if i > 0 {
		lo = cps[i-1]
	}
	if i+1 < len(cps) {
		hi = cps[i+1]
	}
	return compare(z[lo:cps[i]], z[cps[i]:hi])
}
