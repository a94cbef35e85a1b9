package compare

import (
	"errors"
	"fmt"
	"github.com/kbench/kbench/internal/numfmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
	"golang.org/x/perf/benchmath"
)

// Options tune [Build]. The zero value is the default.
type Options struct {
	// Histograms are the runs' whole-window latency histograms, by run
	// id: each column's of a kind are merged (Table.Merged), and each
	// latency percentile row gets a merged row beside it when a column
	// merges two runs or more. Nil merges nothing.
	Histograms map[uint][]rundoc.Histogram
	// HideUnchanged drops rows whose non-baseline cells are all
	// unchanged: "~" (no significant difference) or exactly equal to the
	// baseline. Rows with an untested or untestable change stay.
	HideUnchanged bool
	// Alpha is the significance level of the Mann-Whitney U test; 0
	// means 0.05.
	Alpha float64
	// Confidence is the level of the median's interval; 0 means 0.95.
	Confidence float64
	// Headline lists the metrics to test. Nil means the headline metrics
	// of the workloads of the columns' runs ([HeadlineMetrics]); every
	// other row is descriptive: its change is shown, not tested.
	Headline []string
	// MinChange is the smallest change worth detecting, in percent of
	// the baseline: a tested change whose interval holds 0 but also
	// changes beyond ±MinChange is inconclusive. 0 means 5.
	MinChange float64
}

// Defaults of [Options].
const (
	DefaultAlpha      = 0.05
	DefaultConfidence = 0.95
	DefaultMinChange  = 5.0 // percent
)

// MaxMoreRepetitions caps the repetitions per side a table suggests
// ([Table.MoreRepetitions]): a change that would need more is left to a
// note, since repeating alone is then not a practical way to settle it.
const MaxMoreRepetitions = 30

// Directions of a metric (rundoc.Metric.Better).
const (
	HigherIsBetter = rundoc.HigherIsBetter
	LowerIsBetter  = rundoc.LowerIsBetter
)

// Verdicts of a non-baseline cell ([Cell.Verdict]).
const (
	VerdictBetter = "better"
	VerdictWorse  = "worse"
	VerdictSame   = "same"
	// VerdictNone ("") means no verdict: the metric has no direction,
	// there are too few samples, or a value is missing.
	VerdictNone = ""
)

// Tests: how a non-baseline cell was compared with the baseline
// ([Cell.Test]).
const (
	// TestNone: the baseline column, or a value missing on either side.
	TestNone = ""
	// TestSignificant: Mann-Whitney U with p ≤ α and enough samples on
	// both sides. The verdict follows the metric's direction.
	TestSignificant = "significant"
	// TestNotSignificant: the test ran with enough samples and p > α:
	// the data cannot support a change. Shown as "~" with the p-value.
	TestNotSignificant = "not significant"
	// TestTooFew: fewer samples on a side than the test needs to ever
	// reach α (4 per side at α = 0.05), or a single run against a group.
	// No verdict.
	TestTooFew = "too few samples"
	// TestSingleRuns: one run on each side. No test is possible; the
	// verdict is by direction only and must be read as untested.
	TestSingleRuns = "single runs"
	// TestDescriptive: the metric is not a headline metric of the
	// table's workloads. Its change is shown; it is not tested and gets
	// no verdict or p-value.
	TestDescriptive = "descriptive"
)

// States of a headline change ([Cell.State]): what the data says about
// it and whether more repetitions would help.
const (
	// StateNone: the baseline, a descriptive row, a missing value.
	StateNone = ""
	// StateSignificant: the Benjamini-Hochberg adjusted p ≤ α.
	StateSignificant = "significant"
	// StateBorderline: α < adjusted p ≤ 2α. More repetitions may
	// confirm the change.
	StateBorderline = "borderline"
	// StateInconclusive: not significant, and the change's interval
	// reaches beyond ±MinChange: the data can rule out neither no change
	// nor a change worth knowing. Run more repetitions.
	StateInconclusive = "inconclusive"
	// StateUnchanged: not significant, and the interval lies within
	// ±MinChange: no change that large.
	StateUnchanged = "unchanged"
	// StateTooFew: fewer than TestMinN runs on a side (single runs
	// included): too few to decide. Run more repetitions.
	StateTooFew = "too few samples"
)

// ErrUnitMismatch is returned by [Build] when runs report a metric in
// different units.
var ErrUnitMismatch = errors.New("metric units differ")

// A Table is a comparison: one row per metric, one cell per column.
type Table struct {
	Columns []ColumnInfo
	// Rows are ordered by section (see [Sections]), then by the order in
	// which metrics first appear in the columns' runs.
	Rows []Row
	// Merged are the columns' merged latency histograms
	// (Options.Histograms), for the percentile spectra; rows named
	// metric+MergedSuffix hold their figures.
	Merged []MergedHistogram
	// Hidden lists the metrics HideUnchanged dropped, in row order.
	Hidden []string
	// HideUnchanged, Alpha and Confidence are the options in effect.
	HideUnchanged bool
	Alpha         float64
	Confidence    float64
	// IntervalMinN is the fewest samples that give a finite interval at
	// Confidence (6 at 0.95); TestMinN the fewest per side with which
	// the U test can reach Alpha (4 at 0.05).
	IntervalMinN int
	TestMinN     int
	// Notes explain the table: baseline, samples per column, excluded
	// warm-up runs, the significance method, caveats.
	Notes []string
	// Comparability lists the settings that differ between the columns
	// (see comparability.go); ComparabilityUnknown the runs that
	// recorded no configuration to check.
	Comparability        []Difference
	ComparabilityUnknown []uint
	// Warnings are the measured runs' [RunWarnings], column by column.
	Warnings []TableWarning

	// Workloads are the workloads of the columns' measured runs, sorted,
	// whose headline metrics the table tests ("" for runs without one).
	Workloads []string
	// Headline are the rows' metrics that are tested, in row order
	// (hidden rows included): the headline metrics of Workloads, or
	// Options.Headline.
	Headline []string
	// Tested is the number of changes (headline rows × non-baseline
	// columns with ≥ TestMinN runs per side) among which
	// Benjamini-Hochberg controls the false discovery rate at q = Alpha.
	Tested int
	// MinChange is the smallest change worth detecting, in percent
	// (Options.MinChange).
	MinChange float64
	// MoreRepetitions is how many more runs per side the table suggests
	// so that its undecided headline changes (borderline, inconclusive,
	// too few samples) can be decided: the most any column needs
	// ([ColumnInfo.MoreRepetitions]), at most MaxMoreRepetitions; 0 when
	// every headline change is decided. See [Table.Undecided].
	MoreRepetitions int
	// Imported is true when a measured run was imported: kbench cannot
	// run it again, so the table suggests importing more runs rather
	// than running more repetitions.
	Imported bool
	// NotInterleaved names the columns whose repetitions were not queued
	// interleaved with the baseline's (see interleave.go), in column
	// order; a note says which runs ran apart.
	NotInterleaved []string

	// EmbeddedRuns are the measured runs that ran on kbench's embedded
	// broker, in column order; [Table.EmbeddedText] says what that means.
	EmbeddedRuns []uint
	// runsTotal is the number of measured runs.
	runsTotal int

	// outputs are the measured runs of each column, for the Markdown
	// export's output blocks.
	outputs [][]runOutput
	// headlineSet: Options.Headline chose the tested metrics.
	headlineSet bool
}

type runOutput struct {
	ID     uint
	Label  string
	Output string
}

// ColumnInfo describes a column of a [Table].
type ColumnInfo struct {
	Name     string
	Baseline bool
	// Runs are the IDs of the runs the column's figures come from.
	Runs []uint
	// WarmupsExcluded are the IDs of the column's warm-up runs, left out.
	WarmupsExcluded []uint
	// MoreRepetitions is how many more runs this column and the
	// baseline would each need to decide the column's undecided headline
	// changes (the most any of them needs); 0 when all are decided and
	// for the baseline.
	MoreRepetitions int
}

// A Row is one metric across the columns.
type Row struct {
	Section string
	Metric  string
	Unit    string
	Better  rundoc.Better
	Help    string
	// Decimals is how many decimals the row's values are shown with,
	// the same in every column (see [Row.ValueText]).
	Decimals int
	Cells    []Cell // one per column
	Notes    []string
	// Headline reports whether the metric is tested; false: the row is
	// descriptive.
	Headline bool
}

// A Cell is one metric of one column, and for a non-baseline column its
// comparison with the baseline.
type Cell struct {
	// N is the number of samples: runs of the column with this metric.
	// 0 means the metric is missing from the column.
	N int
	// Value is the run's value when N is 1, the median when N > 1.
	Value float64
	// Values are the samples in ascending order.
	Values []float64
	// Lo and Hi bound the median's confidence interval; nil when N is
	// below the table's IntervalMinN (benchmath gives ±∞ there).
	Lo, Hi *float64

	// DeltaPct is the change of Value against the baseline's Value, in
	// percent of the baseline's magnitude. Nil for the baseline, when a
	// side is missing, or when the baseline is 0 and this value is not.
	DeltaPct *float64
	// Sign is -1, 0 or +1 as Value is below, equal to or above the
	// baseline's (0 when not compared).
	Sign int
	// Test says how the cell was compared; see the Test constants.
	Test string
	// P is the Mann-Whitney U p-value, when both sides have ≥ 2 samples.
	P *float64
	// Verdict is better, worse, same or "" (see the Verdict constants).
	// With Test == TestSingleRuns it is by direction only, untested.
	Verdict string
	// Notes explain the cell: missing interval, too few samples,
	// untested single runs, warnings from benchmath.
	Notes []string

	// PAdj is the Benjamini-Hochberg adjusted p-value of a tested
	// change (Test significant or not significant): the verdict compares
	// it with α.
	PAdj *float64
	// ChangeEst is the Hodges-Lehmann estimate of the change, in percent
	// of the baseline: the median of the ratios of every candidate run's
	// value to every baseline run's (of their logs), for tested changes.
	// ChangeLo and ChangeHi bound its distribution-free 1−α confidence
	// interval, from the Mann-Whitney U distribution (nil when the
	// samples are too small for one).
	ChangeEst, ChangeLo, ChangeHi *float64
	// State says what the data says about a headline change and whether
	// more repetitions would help; see the State constants.
	State string
	// More is how many more runs per side the change needs to be
	// decided (the rule is in the table's notes); 0 when it is decided,
	// descriptive or not compared; MaxMoreRepetitions+1 when it would
	// need more than MaxMoreRepetitions.
	More int

	// logChange: ChangeEst is of log values (a ratio), not of values.
	logChange bool
}

// Undecided reports whether the cell is a headline change that more
// repetitions could decide: borderline, inconclusive or too few samples.
func (c Cell) Undecided() bool {
	return c.State == StateBorderline || c.State == StateInconclusive || c.State == StateTooFew
}

// Compared reports whether the cell was compared with a baseline value.
func (c Cell) Compared() bool { return c.Test != TestNone }

// Unchanged reports whether the cell shows no change against the
// baseline: "~" (tested, not significant, and not borderline or
// inconclusive) or a value exactly equal to the baseline's. A cell with
// an untested, untestable or undecided change is not unchanged.
func (c Cell) Unchanged() bool {
	if c.Test == TestNotSignificant {
		return c.State == StateUnchanged || c.State == StateNone
	}
	return c.Compared() && c.Sign == 0 && c.Test != TestSignificant
}

// Build compares columns: the first is the baseline. Every metric present
// in any column becomes a row; a metric must have the same unit in every
// run, or Build returns an error wrapping [ErrUnitMismatch] that names
// the metric and two runs.
//
// A cell of a single-run column is that run's value; of a multi-run
// column, the median with its confidence interval (benchmath
// AssumeNothing), when there are enough samples for one. Each
// non-baseline cell gets the change of its value against the baseline's.
//
// Only headline rows are tested (Options.Headline, else the headline
// metrics of the runs' workloads, [HeadlineMetrics]); the others are
// descriptive (TestDescriptive): change only, no p-value, no verdict.
// A headline cell gets:
//
//   - both sides ≥ TestMinN samples (4 at α = 0.05): the Mann-Whitney U
//     p-value (benchmath), adjusted with the other tested changes of the
//     table by Benjamini-Hochberg at q = α, and the Hodges-Lehmann
//     estimate of the change with its 1−α interval. Adjusted p ≤ α gives
//     better or worse by the metric's direction (no verdict for a metric
//     without one); otherwise the state says borderline (adjusted p ≤
//     2α), inconclusive (the interval reaches beyond ±MinChange) or
//     unchanged ("~", verdict same).
//   - both sides ≥ 2 samples but a side below TestMinN: the p-value is
//     kept, but the test is TestTooFew and there is no verdict.
//   - one run on each side: TestSingleRuns, the verdict by direction
//     only (same when equal), flagged "single runs: no significance test".
//   - one run against a group: TestTooFew, no p-value, no verdict.
//
// The last three are StateTooFew. Undecided changes (borderline,
// inconclusive, too few) set the repetitions the table suggests.
func Build(cols []Column, opts Options) (*Table, error) {
	if len(cols) == 0 {
		return nil, errors.New("compare: no columns")
	}
	alpha, conf := opts.Alpha, opts.Confidence
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if conf == 0 {
		conf = DefaultConfidence
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("compare: alpha %v is not between 0 and 1", opts.Alpha)
	}
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("compare: confidence %v is not between 0 and 1", opts.Confidence)
	}
	minChange := opts.MinChange
	if minChange == 0 {
		minChange = DefaultMinChange
	}
	if !(minChange > 0 && minChange < 100) {
		return nil, fmt.Errorf("compare: minimum change %v%% is not between 0 and 100", opts.MinChange)
	}
	t := &Table{
		HideUnchanged: opts.HideUnchanged,
		Alpha:         alpha,
		Confidence:    conf,
		IntervalMinN:  intervalMinN(conf),
		TestMinN:      testMinN(alpha),
		MinChange:     minChange,
	}
	thresholds := &benchmath.Thresholds{CompareAlpha: alpha}

	// The runs each column's figures come from.
	measured := make([][]rundoc.Run, len(cols))
	var notes []string
	for i, c := range cols {
		if len(c.Runs) == 0 {
			return nil, fmt.Errorf("compare: column %q has no runs", c.Name)
		}
		info := ColumnInfo{Name: c.Name, Baseline: i == 0}
		var ms, warm []rundoc.Run
		for _, r := range c.Runs {
			if r.Warmup {
				warm = append(warm, r)
			} else {
				ms = append(ms, r)
			}
		}
		if len(ms) == 0 {
			ms, warm = warm, nil
			notes = append(notes, fmt.Sprintf("%s: only warm-up runs (%s); their figures are shown.", c.Name, idList(runIDs(ms))))
		}
		info.Runs = runIDs(ms)
		info.WarmupsExcluded = runIDs(warm)
		measured[i] = ms
		t.Columns = append(t.Columns, info)
		outs := make([]runOutput, len(ms))
		for j, r := range ms {
			outs[j] = runOutput{ID: r.ID, Label: r.Label, Output: r.Output}
			t.Imported = t.Imported || r.Source == rundoc.SourceImported
		}
		t.outputs = append(t.outputs, outs)
	}

	// Gather every metric's values per column, checking units.
	type metricInfo struct {
		unit    string
		unitRun uint
		better  rundoc.Better
		clash   bool // runs disagree on the direction
		help    string
		values  [][]float64 // per column
	}
	var order []string
	metrics := map[string]*metricInfo{}
	var skipped []string
	for ci, runs := range measured {
		for _, r := range runs {
			seen := map[string]bool{}
			for _, m := range r.Metrics {
				if seen[m.Name] {
					continue // the first figure of a name counts
				}
				seen[m.Name] = true
				mi := metrics[m.Name]
				if mi == nil {
					mi = &metricInfo{unit: m.Unit, unitRun: r.ID, values: make([][]float64, len(cols))}
					metrics[m.Name] = mi
					order = append(order, m.Name)
				} else if mi.unit != m.Unit {
					return nil, fmt.Errorf("compare: %w: metric %q is in %q in run #%d but in %q in run #%d",
						ErrUnitMismatch, m.Name, mi.unit, mi.unitRun, m.Unit, r.ID)
				}
				switch {
				case m.Better == "" || mi.clash:
				case mi.better == "":
					mi.better = m.Better
				case mi.better != m.Better:
					mi.clash = true
				}
				if mi.help == "" {
					mi.help = m.Help
				}
				if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
					skipped = append(skipped, fmt.Sprintf("%s of run #%d (%v)", m.Name, r.ID, m.Value))
					continue
				}
				mi.values[ci] = append(mi.values[ci], m.Value)
			}
		}
	}

	headline := opts.Headline
	t.headlineSet = headline != nil
	t.Workloads = workloads(measured)
	if headline == nil {
		for _, w := range t.Workloads {
			for _, m := range HeadlineMetrics(w) {
				if !slices.Contains(headline, m) {
					headline = append(headline, m)
				}
			}
		}
	}

	for _, name := range order {
		mi := metrics[name]
		row := Row{Section: SectionOf(name), Metric: name, Unit: mi.unit, Better: mi.better, Help: mi.help,
			Headline: slices.Contains(headline, name)}
		if mi.clash {
			row.Better = ""
			row.Notes = append(row.Notes, "runs disagree on whether higher or lower is better: no verdict")
		}
		samples := make([]*benchmath.Sample, len(cols))
		row.Cells = make([]Cell, len(cols))
		for ci, vs := range mi.values {
			row.Cells[ci], samples[ci] = summarize(vs, t, thresholds)
		}
		for ci := 1; ci < len(cols); ci++ {
			if row.Headline {
				t.compareCell(&row.Cells[ci], row.Cells[0], samples[ci], samples[0], row.Better)
			} else {
				describeCell(&row.Cells[ci], row.Cells[0])
			}
		}
		row.Decimals = rowDecimals(row.Cells)
		t.Rows = append(t.Rows, row)
	}
	var histProblems []string
	t.Merged, histProblems = mergeHistograms(measured, opts.Histograms)
	t.addMergedRows()
	slices.SortStableFunc(t.Rows, func(a, b Row) int { return sectionRank(a.Section) - sectionRank(b.Section) })
	for _, row := range t.Rows {
		if row.Headline {
			t.Headline = append(t.Headline, row.Metric)
		}
	}
	t.decide()

	if opts.HideUnchanged && len(cols) > 1 {
		kept := t.Rows[:0]
		for _, row := range t.Rows {
			if t.rowUnchanged(row) {
				t.Hidden = append(t.Hidden, row.Metric)
				continue
			}
			kept = append(kept, row)
		}
		t.Rows = kept
	}

	t.Notes = append(t.notes(cols, measured), notes...)
	if slices.ContainsFunc(t.Rows, func(r Row) bool { return strings.HasSuffix(r.Metric, MergedSuffix) }) {
		t.Notes = append(t.Notes, "Rows ending \"(merged)\" show the percentile of all of a column's runs' values together (their HdrHistograms added); "+
			"the row above each shows the median of the runs' own percentiles. Merged rows are descriptive: not tested.")
	}
	for _, p := range histProblems {
		t.Notes = append(t.Notes, "A latency histogram was left out of the merge: "+p+".")
	}
	measuredFs := measuredFacts(measured)
	t.Comparability, t.ComparabilityUnknown = comparability(measured, measuredFs)
	if n := comparabilityNote(t.ComparabilityUnknown); n != "" {
		t.Notes = append(t.Notes, n)
	}
	t.Notes = append(t.Notes, unknownSettingsNotes(measured, measuredFs)...)
	if n := ombNote(measured); n != "" {
		t.Notes = append(t.Notes, n)
	}
	t.Warnings = tableWarnings(t.Columns, measured)
	for _, runs := range measured {
		t.runsTotal += len(runs)
		for _, r := range runs {
			if r.OnEmbeddedBroker() {
				t.EmbeddedRuns = append(t.EmbeddedRuns, r.ID)
			}
		}
	}
	t.checkInterleaving(measured)
	if len(skipped) > 0 {
		t.Notes = append(t.Notes, "Values that are not finite numbers were left out: "+strings.Join(skipped, ", ")+".")
	}
	if len(t.Hidden) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d unchanged %s hidden: %s. A tested row counts as unchanged when its changes are ~ or equal; "+
			"a descriptive row when they are equal or within ±%s%% (not tested).",
			len(t.Hidden), numfmt.Plural(len(t.Hidden), "metric", "metrics"), strings.Join(t.Hidden, ", "), trimFloat(t.MinChange)))
	}
	return t, nil
}

// summarize makes the cell of one column's values, and its sample when
// there are at least two values.
func summarize(vs []float64, t *Table, th *benchmath.Thresholds) (Cell, *benchmath.Sample) {
	c := Cell{N: len(vs)}
	switch len(vs) {
	case 0:
		return c, nil
	case 1:
		c.Value = vs[0]
		c.Values = []float64{vs[0]}
		return c, nil
	}
	// NewSample sorts its argument in place: give it a copy.
	s := benchmath.NewSample(slices.Clone(vs), th)
	sum := benchmath.AssumeNothing.Summary(s, t.Confidence)
	c.Value = sum.Center
	c.Values = s.Values
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) && !math.IsNaN(sum.Lo) && !math.IsNaN(sum.Hi) {
		lo, hi := sum.Lo, sum.Hi
		c.Lo, c.Hi = &lo, &hi
	} else {
		c.Notes = append(c.Notes, fmt.Sprintf("no %s interval: too few samples (need ≥ %d, have %d)", pctLevel(t.Confidence), t.IntervalMinN, len(vs)))
	}
	return c, s
}

// setChange fills in c's change against the baseline cell base: sign
// and percentage. It reports false when a side is missing.
func setChange(c *Cell, base Cell) bool {
	if c.N == 0 {
		return false
	}
	if base.N == 0 {
		c.Notes = append(c.Notes, "no baseline value")
		return false
	}
	switch {
	case c.Value > base.Value:
		c.Sign = 1
	case c.Value < base.Value:
		c.Sign = -1
	}
	switch {
	case base.Value != 0:
		d := (c.Value - base.Value) / math.Abs(base.Value) * 100
		c.DeltaPct = &d
	case c.Value == 0:
		d := 0.0
		c.DeltaPct = &d
	}
	return true
}

// describeCell fills in the change of a descriptive row's cell: shown,
// not tested.
func describeCell(c *Cell, base Cell) {
	if !setChange(c, base) {
		return
	}
	c.Test = TestDescriptive
	c.Notes = append(c.Notes, "descriptive: not a headline metric, so not tested")
}

// compareCell fills in c's comparison with the baseline cell base, for
// a headline row. A change with enough samples to test is left
// TestNotSignificant with its raw p-value and Hodges-Lehmann change;
// [Table.decide] then adjusts the p-values and settles it.
func (t *Table) compareCell(c *Cell, base Cell, s, baseS *benchmath.Sample, better rundoc.Better) {
	if !setChange(c, base) {
		return
	}
	direction := directionVerdict(better, c.Sign)
	tooFew := fmt.Sprintf("too few samples (need ≥ %d per side; have %d and %d)", t.TestMinN, base.N, c.N)
	c.State = StateTooFew
	c.More = max(1, t.TestMinN-min(base.N, c.N))
	switch {
	case base.N >= 2 && c.N >= 2:
		cmp := benchmath.AssumeNothing.Compare(baseS, s)
		// Set Alpha ourselves: not every Assumption fills it in.
		cmp.Alpha = t.Alpha
		p := cmp.P
		c.P = &p
		if base.N < t.TestMinN || c.N < t.TestMinN {
			// The test cannot call a difference with this few samples
			// (benchmath's warning says the same): no verdict.
			c.Test = TestTooFew
			c.Notes = append(c.Notes, tooFew)
			return
		}
		c.Test = TestNotSignificant
		c.State, c.More = StateNone, 0
		if hl, ok := hodgesLehmann(base.Values, c.Values, base.Value, t.Alpha); ok {
			est := hl.Est
			c.ChangeEst = &est
			if hl.Interval {
				lo, hi := hl.Lo, hl.Hi
				c.ChangeLo, c.ChangeHi = &lo, &hi
			}
			c.logChange = hl.Log
			if !hl.Log {
				c.Notes = append(c.Notes, "change and interval of the values over the baseline's median, not of their ratios: some values are 0 or negative")
			}
			if !hl.Exact {
				c.Notes = append(c.Notes, "interval from the normal approximation of the Mann-Whitney U distribution")
			}
		} else {
			c.Notes = append(c.Notes, "no interval of the change: the baseline's median is 0")
		}
		for _, w := range cmp.Warnings {
			c.Notes = append(c.Notes, w.Error())
		}
	case base.N == 1 && c.N == 1:
		c.Test = TestSingleRuns
		c.Verdict = direction
		c.Notes = append(c.Notes, "single runs: no significance test")
	default:
		c.Test = TestTooFew
		c.Notes = append(c.Notes, tooFew)
	}
}

// directionVerdict is the verdict of a change of sign sign for a metric
// whose direction is better.
func directionVerdict(better rundoc.Better, sign int) string {
	if sign == 0 {
		if better == "" {
			return VerdictNone
		}
		return VerdictSame
	}
	switch better {
	case HigherIsBetter:
		if sign > 0 {
			return VerdictBetter
		}
		return VerdictWorse
	case LowerIsBetter:
		if sign < 0 {
			return VerdictBetter
		}
		return VerdictWorse
	}
	return VerdictNone
}

// rowUnchanged reports whether "hide unchanged" drops row: every
// non-baseline cell is unchanged ([Cell.Unchanged]) or, in a descriptive
// row, moved by less than MinChange (a description of the medians, not
// a test).
func (t *Table) rowUnchanged(row Row) bool {
	for _, c := range row.Cells[1:] {
		small := c.Test == TestDescriptive && c.DeltaPct != nil && math.Abs(*c.DeltaPct) < t.MinChange
		if !c.Unchanged() && !small {
			return false
		}
	}
	return true
}

// workloads are the distinct workloads of runs, sorted.
func workloads(measured [][]rundoc.Run) []string {
	var ws []string
	for _, runs := range measured {
		for _, r := range runs {
			if !slices.Contains(ws, string(r.Workload)) {
				ws = append(ws, string(r.Workload))
			}
		}
	}
	slices.Sort(ws)
	return ws
}

// intervalMinN is the fewest samples for which benchmath gives a finite
// median interval at confidence conf.
func intervalMinN(conf float64) int {
	const limit = 50
	for n := 2; n <= limit; n++ {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = float64(i + 1)
		}
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), conf)
		if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) {
			return n
		}
	}
	return limit + 1
}

// testMinN is the fewest samples per side with which the Mann-Whitney U
// test can reach p ≤ alpha: two samples of that size that do not overlap
// at all give the smallest p there is.
func testMinN(alpha float64) int {
	const limit = 50
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	for n := 2; n <= limit; n++ {
		a, b := make([]float64, n), make([]float64, n)
		for i := range a {
			a[i], b[i] = float64(i), float64(n+i)
		}
		c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, th), benchmath.NewSample(b, th))
		if c.P <= alpha {
			return n
		}
	}
	return limit + 1
}

// notes explains the table.
func (t *Table) notes(cols []Column, measured [][]rundoc.Run) []string {
	var notes []string
	multi, single, tooFew := false, false, false
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			multi = multi || c.N > 1
			single = single || c.Test == TestSingleRuns
			tooFew = tooFew || c.Test == TestTooFew
		}
	}
	notes = append(notes, fmt.Sprintf("Baseline: %s. Changes are against its %s.", cols[0].Name, map[bool]string{true: "median", false: "value"}[len(measured[0]) > 1]))
	for i, info := range t.Columns {
		var b strings.Builder
		b.WriteString(info.Name)
		b.WriteString(": ")
		if n := len(info.Runs); n == 1 {
			b.WriteString("run " + idList(info.Runs))
		} else {
			fmt.Fprintf(&b, "median of %d runs (%s)", n, idList(info.Runs))
			if n < t.IntervalMinN {
				fmt.Fprintf(&b, "; no %s interval (needs ≥ %d runs)", pctLevel(t.Confidence), t.IntervalMinN)
			}
		}
		if len(info.WarmupsExcluded) > 0 {
			fmt.Fprintf(&b, "; warm-up %s %s excluded", numfmt.Plural(len(info.WarmupsExcluded), "run", "runs"), idList(info.WarmupsExcluded))
		}
		b.WriteString(".")
		notes = append(notes, b.String())
		for _, r := range measured[i] {
			if r.Status != "" && r.Status != rundoc.StatusSucceeded {
				notes = append(notes, fmt.Sprintf("Run #%d is %s: its figures may cover only part of the measurement.", r.ID, r.Status))
			}
		}
	}
	if multi {
		notes = append(notes, fmt.Sprintf("Several runs per column: the median and its %s confidence interval (benchmath, no distribution assumed).", pctLevel(t.Confidence)))
	}
	if len(t.Columns) > 1 {
		notes = append(notes, t.testNotes()...)
	}
	if tooFew {
		notes = append(notes, fmt.Sprintf("Some changes have too few runs to test (need ≥ %d per side): they get no verdict.", t.TestMinN))
	}
	if single {
		notes = append(notes, fmt.Sprintf("Single runs are compared without a significance test: the mark shows only the direction of the change, "+
			"and run-to-run noise can be larger than the change. Repeat runs (≥ %d per side) to test it.", t.TestMinN))
	}
	return notes
}

func runIDs(runs []rundoc.Run) []uint {
	if len(runs) == 0 {
		return nil
	}
	ids := make([]uint, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// idList formats run ids: "#3, #4, #5".
func idList(ids []uint) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(parts, ", ")
}

// pctLevel formats a level as a percentage: 0.95 → "95%".
func pctLevel(v float64) string { return trimFloat(v*100) + "%" }

// trimFloat formats v in the fewest digits that read back as v, rounded
// to 10 significant digits first (0.95*100 is 94.99999999999999).
func trimFloat(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// EmbeddedText is a short note for a table with runs on kbench's
// embedded broker ([Table.EmbeddedRuns]): which runs, and that acks and
// replication cannot show their cost there (rundoc.EmbeddedBrokerNote).
// "" when no run used it.
func (t *Table) EmbeddedText() string {
	if len(t.EmbeddedRuns) == 0 {
		return ""
	}
	who := "All runs ran on the embedded broker."
	if len(t.EmbeddedRuns) < t.runsTotal {
		who = numfmt.Plural(len(t.EmbeddedRuns), "Run ", "Runs ") + idList(t.EmbeddedRuns) + " ran on the embedded broker."
	}
	return who + " " + rundoc.EmbeddedBrokerNote
}
