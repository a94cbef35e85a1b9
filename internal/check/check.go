// Package check is `kbench check`, but for its flags, HTTP calls and
// exit: which runs are the candidates (Selector, Candidates), what they
// are compared with (ParseBaseline, the series' history back to its last
// change point, or runs, a label, another branch, a saved report), the
// decision metric by metric (Decide), and the report (Assess,
// Report.Markdown; Report is also --json's document).
//
// It is computation over values: it reads runs and histories through a
// Source, which the command implements with the server's JSON API, and
// imports only compare, changepoint, rundoc and the small libraries, so
// it links no HTTP client, Kafka client, database or web framework
// (internal/layering checks it).
//
// Two tests, chosen per metric by how many values each side has:
//
//   - both sides have at least MinRepetitions values: the test the
//     comparison tables use, run by package compare itself (Mann-Whitney
//     U, p-values of the tested metrics adjusted together by
//     Benjamini-Hochberg, verdict by the metric's direction);
//   - otherwise (typically one new run against a history): Apache Otava's
//     change-point test, package changepoint, on the baseline values with
//     the candidates' appended; a change point at the first candidate is a
//     significant change.
//
// A significant change worse by the metric's direction and at least
// Options.Threshold percent large is a regression.
package check

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// MinRepetitions is the fewest values per side with which the comparison
// tables' Mann-Whitney U test can reach significance at their α = 0.05
// (compare's Table.TestMinN): below it compare gives no verdict, so
// check uses the change-point test instead. It is also the fewest baseline
// values check decides with at all: below it a metric is undecided.
const MinRepetitions = 4

// DefaultThreshold is the default of Options.Threshold, in percent.
const DefaultThreshold = 5.0

// Methods of a Result.
const (
	// MethodMannWhitney: compare's Mann-Whitney U test with the
	// Benjamini-Hochberg adjustment across the metrics so tested.
	MethodMannWhitney = "mann-whitney"
	// MethodChangePoint: Otava's E-divisive change-point test over the
	// baseline with the candidates appended.
	MethodChangePoint = "change-point"
)

// Verdicts of a Result.
const (
	// VerdictRegression: a significant change, worse by the metric's
	// direction, at least the threshold large.
	VerdictRegression = "regression"
	// VerdictImprovement: a significant change, better, at least the
	// threshold large.
	VerdictImprovement = "improvement"
	// VerdictWithinThreshold: a significant change smaller than the
	// threshold.
	VerdictWithinThreshold = "within threshold"
	// VerdictNoChange: the test finds no significant change.
	VerdictNoChange = "no change"
	// VerdictUndecided: too few values to test (see MinRepetitions), or
	// a side has no value of the metric.
	VerdictUndecided = "undecided"
)

// Point is one run's value of a metric.
type Point struct {
	RunID uint
	Value float64
}

// Input is one metric to judge: its baseline values (in time order) and
// the candidates' values.
type Input struct {
	Metric string
	Unit   string
	// Better is the metric's direction; a metric without one never
	// regresses (its significant changes are reported as no change with
	// a reason).
	Better     rundoc.Better
	Baseline   []Point
	Candidates []Point
}

// Options tune Decide. The zero value means the defaults.
type Options struct {
	// Threshold is the smallest change, in percent of the baseline, that
	// counts as a regression or an improvement (0 means
	// DefaultThreshold). It is also the comparison's MinChange.
	Threshold float64
	// ChangePoint are the parameters of the change-point test (window,
	// maximum p-value, minimum magnitude; zero values mean Otava's
	// defaults) and min_segment: a change point at the first candidate
	// with a side shorter than it is tentative, and leaves the metric
	// undecided (1 decides on every change point Otava reports).
	ChangePoint changepoint.Options
}

// Validate reports options Decide refuses.
func (o Options) Validate() error {
	var errs []error
	if !(o.Threshold >= 0 && o.Threshold < 100) {
		errs = append(errs, fmt.Errorf("threshold %v%%: must be above 0 and below 100", o.Threshold))
	}
	if err := o.ChangePoint.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Summary is one side of a Result.
type Summary struct {
	// N is the number of values the figure is computed from.
	N int
	// Stat says what Value is: "median" (Mann-Whitney), "mean" (the
	// change-point test compares segment means, as Otava does), or
	// "value" for a single value.
	Stat  string
	Value float64
	// RunIDs are the runs the values come from.
	RunIDs []uint
}

// Result is the decision for one metric.
type Result struct {
	Metric string
	Unit   string
	Better rundoc.Better
	// Baseline and Candidate summarise the two sides compared (N is 0
	// for a side without values).
	Baseline, Candidate Summary
	// ChangePct is the candidates' figure against the baseline's, in
	// percent; nil when a side is missing or the baseline's figure is 0.
	ChangePct *float64
	// PValue is what the test compared with its level: the
	// Benjamini-Hochberg adjusted Mann-Whitney p-value, or the change
	// point's t-test p-value; nil when the test did not produce one (no
	// change point at the first candidate, undecided).
	PValue *float64
	// Method is MethodMannWhitney, MethodChangePoint, or "" when
	// undecided.
	Method  string
	Verdict string
	// Reason explains the verdict in a sentence.
	Reason string
}

// Decide judges every input. Mann-Whitney is run for all inputs that
// qualify in one comparison table, so their p-values are adjusted
// together as a comparison page adjusts its headline metrics. Results
// come in the order of inputs.
func Decide(inputs []Input, opts Options) ([]Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if opts.Threshold == 0 {
		opts.Threshold = DefaultThreshold
	}
	out := make([]Result, len(inputs))
	var mw []int
	for i, in := range inputs {
		r := Result{Metric: in.Metric, Unit: in.Unit, Better: in.Better,
			Baseline: summary(in.Baseline, "mean"), Candidate: summary(in.Candidates, "mean")}
		switch {
		case len(in.Candidates) == 0:
			r.Verdict, r.Reason = VerdictUndecided, "the candidates have no value of this metric"
		case len(in.Baseline) < MinRepetitions:
			r.Verdict = VerdictUndecided
			r.Reason = fmt.Sprintf("too little baseline: %d %s, need at least %d", len(in.Baseline), numfmt.Plural(len(in.Baseline), "run", "runs"), MinRepetitions)
		case len(in.Candidates) >= MinRepetitions:
			mw = append(mw, i)
			out[i] = r
			continue
		default:
			r = changePointResult(in, r, opts)
		}
		if r.Verdict == VerdictUndecided && r.Baseline.N > 0 && r.Candidate.N > 0 {
			r.ChangePct = changePct(r.Baseline.Value, r.Candidate.Value)
		}
		out[i] = r
	}
	if len(mw) > 0 {
		if err := mannWhitney(inputs, mw, out, opts); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// summary is a side's mean (or single value) and runs.
func summary(ps []Point, stat string) Summary {
	s := Summary{N: len(ps)}
	if len(ps) == 0 {
		return s
	}
	s.Value = meanOf(ps)
	s.Stat = stat
	if len(ps) == 1 {
		s.Stat = "value"
	}
	for _, p := range ps {
		s.RunIDs = append(s.RunIDs, p.RunID)
	}
	return s
}

func meanOf(ps []Point) float64 {
	var sum float64
	for _, p := range ps {
		sum += p.Value
	}
	return sum / float64(len(ps))
}

// changePct is (after/before − 1) × 100 over |before|, nil for a zero
// baseline.
func changePct(before, after float64) *float64 {
	if before == 0 {
		return nil
	}
	d := (after - before) / math.Abs(before) * 100
	return &d
}

// changePointResult runs Otava's test on the baseline followed by the
// candidates. The baseline figure is the mean of the baseline's last
// segment (after any change point the test finds inside it), the
// candidates' the mean of their values.
func changePointResult(in Input, r Result, opts Options) Result {
	n := len(in.Baseline)
	values := make([]float64, 0, n+len(in.Candidates))
	for _, p := range in.Baseline {
		values = append(values, p.Value)
	}
	for _, p := range in.Candidates {
		values = append(values, p.Value)
	}
	cps := changepoint.Detect(values, opts.ChangePoint)
	// Only trusted change points count: a baseline is not cut at a
	// tentative one (a side shorter than min_segment), nor is one at the
	// first candidate decided on.
	start := 0
	var at *changepoint.ChangePoint
	var atBefore, atAfter int // the runs either side of at
	for i, c := range cps {
		before, after := changepoint.Sides(cps, len(values), i)
		if c.Index < n && !opts.ChangePoint.TooShort(before, after) {
			start = c.Index
		}
		if c.Index == n {
			at, atBefore, atAfter = &cps[i], before, after
		}
	}
	r.Method = MethodChangePoint
	r.Baseline = summary(in.Baseline[start:], "mean")
	r.ChangePct = changePct(r.Baseline.Value, r.Candidate.Value)
	if at == nil {
		r.Verdict = VerdictNoChange
		r.Reason = fmt.Sprintf("no change point at the first candidate (max p-value %s)", formatFloat(maxPValue(opts.ChangePoint)))
		if start > 0 {
			r.Reason += fmt.Sprintf("; baseline from the change point at its run #%d", in.Baseline[start].RunID)
		}
		return r
	}
	if opts.ChangePoint.TooShort(atBefore, atAfter) {
		r.Verdict = VerdictUndecided
		r.Reason = fmt.Sprintf("a tentative change point at the first candidate: %d %s before it and %d after, fewer than min_segment %d on a side; run more candidates",
			atBefore, numfmt.Plural(atBefore, "run", "runs"), atAfter, opts.ChangePoint.WithDefaults().MinSegment)
		return r
	}
	p := at.PValue
	r.PValue = &p
	sign := 0
	if r.ChangePct != nil {
		sign = int(math.Copysign(1, *r.ChangePct))
	}
	r.Verdict, r.Reason = significant(in.Better, sign, r.ChangePct, opts.Threshold)
	return r
}

// significant settles a significant change of sign sign and size pct.
func significant(better rundoc.Better, sign int, pct *float64, threshold float64) (verdict, reason string) {
	if better == "" {
		return VerdictNoChange, "a significant change, but the metric has no direction"
	}
	if sign == 0 || pct == nil {
		return VerdictNoChange, "the distributions differ but the central values are equal"
	}
	size := math.Abs(*pct)
	worse := (better == rundoc.HigherIsBetter) == (sign < 0)
	word := "better"
	if worse {
		word = "worse"
	}
	if size < threshold {
		return VerdictWithinThreshold, fmt.Sprintf("significantly %s, but by less than the %s%% threshold", word, formatFloat(threshold))
	}
	if worse {
		return VerdictRegression, fmt.Sprintf("significantly worse, by at least the %s%% threshold", formatFloat(threshold))
	}
	return VerdictImprovement, fmt.Sprintf("significantly better, by at least the %s%% threshold", formatFloat(threshold))
}

// mannWhitney decides the inputs at idx with one compare table: a
// baseline column and a candidates column of runs carrying only the
// metrics whose sides they belong to (a run can be in one metric's
// baseline and not in another's, whose history has a change point
// after it).
func mannWhitney(inputs []Input, idx []int, out []Result, opts Options) error {
	type side struct {
		order []uint
		runs  map[uint]*rundoc.Run
	}
	add := func(s *side, p Point, in Input) {
		r := s.runs[p.RunID]
		if r == nil {
			r = &rundoc.Run{ID: p.RunID, Status: rundoc.StatusSucceeded, Complete: true}
			s.runs[p.RunID] = r
			s.order = append(s.order, p.RunID)
		}
		r.Metrics = append(r.Metrics, rundoc.Metric{Name: in.Metric, Value: p.Value, Unit: in.Unit, Better: in.Better})
	}
	base := &side{runs: map[uint]*rundoc.Run{}}
	cand := &side{runs: map[uint]*rundoc.Run{}}
	var headline []string
	for _, i := range idx {
		in := inputs[i]
		if slices.Contains(headline, in.Metric) {
			return fmt.Errorf("check: metric %q given twice", in.Metric)
		}
		headline = append(headline, in.Metric)
		for _, p := range in.Baseline {
			add(base, p, in)
		}
		for _, p := range in.Candidates {
			add(cand, p, in)
		}
	}
	column := func(name string, s *side) compare.Column {
		c := compare.Column{Name: name}
		for _, id := range s.order {
			c.Runs = append(c.Runs, *s.runs[id])
		}
		return c
	}
	t, err := compare.Build([]compare.Column{column("baseline", base), column("candidates", cand)},
		compare.Options{Headline: headline, MinChange: opts.Threshold})
	if err != nil {
		return fmt.Errorf("check: compare: %w", err)
	}
	for _, i := range idx {
		r := out[i]
		ri := slices.IndexFunc(t.Rows, func(row compare.Row) bool { return row.Metric == r.Metric })
		if ri < 0 {
			return fmt.Errorf("check: compare left out metric %q", r.Metric)
		}
		row := t.Rows[ri]
		b, c := row.Cells[0], row.Cells[1]
		r.Method = MethodMannWhitney
		r.Baseline = Summary{N: b.N, Stat: "median", Value: b.Value, RunIDs: out[i].Baseline.RunIDs}
		r.Candidate = Summary{N: c.N, Stat: "median", Value: c.Value, RunIDs: out[i].Candidate.RunIDs}
		r.ChangePct = c.DeltaPct
		r.PValue = c.PAdj
		switch c.State {
		case compare.StateSignificant:
			r.Verdict, r.Reason = significant(row.Better, c.Sign, c.DeltaPct, opts.Threshold)
			if c.Verdict == compare.VerdictNone && row.Better != "" {
				r.Verdict, r.Reason = VerdictNoChange, "the distributions differ but the medians are equal"
			}
		case compare.StateUnchanged, compare.StateNone:
			r.Verdict, r.Reason = VerdictNoChange, "not significant"
		default:
			// Borderline or inconclusive: not significant, so no
			// regression; say what more repetitions would settle.
			r.Verdict = VerdictNoChange
			r.Reason = fmt.Sprintf("not significant (%s: about %d more runs per side would settle it)", c.State, c.More)
			if c.More > compare.MaxMoreRepetitions {
				r.Reason = fmt.Sprintf("not significant (%s: more than %d more runs per side would be needed)", c.State, compare.MaxMoreRepetitions)
			}
		}
		r.Reason += fmt.Sprintf("; Mann-Whitney U, p adjusted by Benjamini-Hochberg across %d %s, α = %s",
			t.Tested, numfmt.Plural(t.Tested, "metric", "metrics"), formatFloat(t.Alpha))
		out[i] = r
	}
	return nil
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// maxPValue is the maximum p-value the change-point test used.
func maxPValue(o changepoint.Options) float64 {
	if o.MaxPValue == 0 {
		return changepoint.DefaultMaxPValue
	}
	return o.MaxPValue
}
