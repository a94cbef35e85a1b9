package compare

import (
	"fmt"
	"github.com/kbench/kbench/internal/numfmt"
	"math"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// decide settles the table's tested changes: it adjusts their p-values
// together by Benjamini-Hochberg (q = α), gives each a verdict and a
// state, works out how many more repetitions an undecided change needs,
// and sums that up per column and for the table.
func (t *Table) decide() {
	type ref struct{ row, col int }
	var refs []ref
	var ps []float64
	for ri, row := range t.Rows {
		if !row.Headline {
			continue
		}
		for ci := 1; ci < len(row.Cells); ci++ {
			if c := row.Cells[ci]; c.Test == TestNotSignificant && c.P != nil {
				refs = append(refs, ref{ri, ci})
				ps = append(ps, *c.P)
			}
		}
	}
	t.Tested = len(ps)
	for i, a := range bhAdjust(ps) {
		row := &t.Rows[refs[i].row]
		t.judge(&row.Cells[refs[i].col], row.Cells[0].N, a, row.Better)
	}
	for _, row := range t.Rows {
		if !row.Headline {
			continue
		}
		for ci := 1; ci < len(row.Cells); ci++ {
			if c := row.Cells[ci]; c.Undecided() {
				more := min(c.More, MaxMoreRepetitions)
				t.Columns[ci].MoreRepetitions = max(t.Columns[ci].MoreRepetitions, more)
				t.MoreRepetitions = max(t.MoreRepetitions, more)
			}
		}
	}
}

// judge settles a tested change c of a headline row with baseline
// samples m, given its adjusted p-value.
func (t *Table) judge(c *Cell, m int, adj float64, better rundoc.Better) {
	c.PAdj = &adj
	p := *c.P
	switch {
	case adj <= t.Alpha:
		c.Test, c.State = TestSignificant, StateSignificant
		// The direction of the tested shift; the medians' when it is 0.
		sign := c.Sign
		if c.ChangeEst != nil && *c.ChangeEst != 0 {
			sign = int(math.Copysign(1, *c.ChangeEst))
		}
		c.Verdict = directionVerdict(better, sign)
		if sign == 0 {
			c.Verdict = VerdictNone
			c.Notes = append(c.Notes, "the distributions differ but the medians are equal")
		}
	case adj <= 2*t.Alpha:
		c.State = StateBorderline
		c.More = morePerSide(m, c.N, t.morePValue(p, adj, m, c.N))
		c.Notes = append(c.Notes, fmt.Sprintf("borderline: adjusted p %s ≤ 2α; run more repetitions (%s per side) to confirm or dismiss it",
			trimFloat(round3(adj)), moreText(c.More)))
	case c.ChangeLo != nil && (*c.ChangeLo <= -t.MinChange || *c.ChangeHi >= t.MinChange):
		c.State = StateInconclusive
		c.More = morePerSide(m, c.N, t.moreInterval(c, m))
		if c.More == 0 {
			// Narrow enough already: what is missing is significance
			// after the adjustment.
			c.More = morePerSide(m, c.N, t.morePValue(p, adj, m, c.N))
		}
		c.Notes = append(c.Notes, fmt.Sprintf("inconclusive: run more repetitions (%s per side): the %s interval of the change reaches beyond ±%s%%",
			moreText(c.More), pctLevel(1-t.Alpha), trimFloat(t.MinChange)))
	default:
		if c.ChangeLo != nil {
			c.State = StateUnchanged
		}
		if better != "" {
			c.Verdict = VerdictSame
		}
	}
}

// morePerSide runs a rule need(N) (does adding N runs to each side of an
// m vs n comparison suffice?) for N = 1…MaxMoreRepetitions and returns
// the first N that suffices, 0 when none is needed, or
// MaxMoreRepetitions+1 when even that many would not do.
func morePerSide(m, n int, need func(N int) bool) int {
	if need == nil || need(0) {
		return 0
	}
	for N := 1; N <= MaxMoreRepetitions; N++ {
		if need(N) {
			return N
		}
	}
	return MaxMoreRepetitions + 1
}

// moreText formats a number of runs from the rule: "about 7", or "more
// than 30".
func moreText(n int) string {
	if n > MaxMoreRepetitions {
		return fmt.Sprintf("more than %d", MaxMoreRepetitions)
	}
	return fmt.Sprintf("about %d", n)
}

// spread is how the width of a Mann-Whitney interval, and the inverse
// of its test statistic, scale with the sample sizes: the standard
// deviation of U over mn is √((m+n+1)/(12mn)), √(1/m + 1/n) up to the
// "+1". N more runs per side multiply it by spread(m+N, n+N)/spread(m, n).
func spread(m, n int) float64 { return math.Sqrt(1/float64(m) + 1/float64(n)) }

// moreInterval is the rule for an inconclusive change: assuming the
// estimate and the runs' spread stay as measured, the interval narrows
// as spread(m+N, n+N); it settles the change once its half-width is at
// most max(|e|, t − |e|) (e the estimate, t the minimum change): then it
// either excludes 0 or lies within ±t. Log-scale changes use ln(1+x).
func (t *Table) moreInterval(c *Cell, m int) func(N int) bool {
	if c.ChangeEst == nil || c.ChangeLo == nil {
		return nil
	}
	conv := func(pct float64) float64 { return pct }
	if c.logChange {
		conv = func(pct float64) float64 { return math.Log1p(pct / 100) }
	}
	e := math.Abs(conv(*c.ChangeEst))
	half := (conv(*c.ChangeHi) - conv(*c.ChangeLo)) / 2
	target := math.Max(e, conv(t.MinChange)-e)
	n := c.N
	return func(N int) bool { return half*spread(m+N, n+N)/spread(m, n) <= target }
}

// morePValue is the rule for a borderline change: assuming the effect
// and the spread stay as measured, the test statistic z = Φ⁻¹(1 − p/2)
// grows as spread(m, n)/spread(m+N, n+N); the change becomes significant
// once p falls to α·p/adj (the raw p-value at which its adjusted one
// reaches α, with the adjustment factor as now).
func (t *Table) morePValue(p, adj float64, m, n int) func(N int) bool {
	if !(p > 0 && p < 1 && adj > 0) {
		return nil
	}
	z := normalQuantile(1 - p/2)
	zWant := normalQuantile(1 - t.Alpha*p/adj/2)
	return func(N int) bool { return z*spread(m, n)/spread(m+N, n+N) >= zWant }
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// A Change is one headline change of a table: a non-baseline cell of a
// tested row, as [Table.Flags] and [Table.Undecided] list them.
type Change struct {
	Metric string
	Column string
	// Col is the column's index in the table (1 or more).
	Col  int
	Cell Cell
}

// Flags lists the changes the table calls significant (better, worse or
// ≠ after the Benjamini-Hochberg adjustment), row by row. Between groups
// of runs of one configuration every flag is a false one: the share of
// such tables with at least one flag estimates the false discovery rate,
// which the adjustment keeps at or below q = Alpha.
func (t *Table) Flags() []Change {
	return t.changes(func(c Cell) bool { return c.State == StateSignificant })
}

// Undecided lists the headline changes that more repetitions could
// decide (borderline, inconclusive, too few samples), row by row; each
// cell's More says how many more runs per side it needs.
func (t *Table) Undecided() []Change { return t.changes(Cell.Undecided) }

func (t *Table) changes(keep func(Cell) bool) []Change {
	var out []Change
	for _, row := range t.Rows {
		if !row.Headline {
			continue
		}
		for ci := 1; ci < len(row.Cells); ci++ {
			if keep(row.Cells[ci]) {
				out = append(out, Change{Metric: row.Metric, Column: t.Columns[ci].Name, Col: ci, Cell: row.Cells[ci]})
			}
		}
	}
	return out
}

// testNotes explain which rows are tested and how, and what the table
// suggests for its undecided changes.
func (t *Table) testNotes() []string {
	var notes []string
	var known, other []string
	for _, w := range t.Workloads {
		if _, ok := headlineMetrics[w]; ok {
			known = append(known, w)
		} else if w != "" {
			other = append(other, w)
		}
	}
	what := "the headline metrics of " + strings.Join(known, ", ")
	switch {
	case t.headlineSet:
		what = "chosen for this table"
	case len(known) == 0 || len(known) < len(t.Workloads):
		// A workload without its own list (an imported profile, runs
		// without one) brings every workload's headline metrics.
		what = "the headline metrics of every workload"
		if len(other) > 0 {
			what += ", as runs of " + strings.Join(other, ", ") + " have no list of their own"
		}
	}
	a := trimFloat(t.Alpha)
	if len(t.Headline) == 0 {
		notes = append(notes, "No row is a headline metric ("+what+"): every row is descriptive, its change shown without a test or verdict.")
		return notes
	}
	notes = append(notes, fmt.Sprintf("Tested rows: %s (%s). The other rows are descriptive: their change is shown without a test or verdict.",
		strings.Join(t.Headline, ", "), what))
	if t.Tested > 0 {
		notes = append(notes, fmt.Sprintf("Headline changes with ≥ %d runs on each side are tested with the Mann-Whitney U test (golang.org/x/perf/benchmath, as benchstat); "+
			"the p-values of the %d tested %s are adjusted together by Benjamini-Hochberg, which keeps the false discovery rate at q = %s: "+
			"a change is better or worse only when its adjusted p ≤ %s, borderline when ≤ %s. "+
			"The change column is, on every row, the ratio of the medians shown; the %s column beside it gives each tested change's Hodges-Lehmann estimate "+
			"(the median of the ratios of every candidate run to every baseline run) with its distribution-free %s confidence interval from the Mann-Whitney U distribution "+
			"(exact up to %d runs per side) and its adjusted p-value; the intervals are per change, not adjusted. "+
			"Not significant: inconclusive when the interval reaches beyond ±%s%%, else unchanged (~).",
			t.TestMinN, t.Tested, numfmt.Plural(t.Tested, "change", "changes"), a, a, trimFloat(2*t.Alpha),
			HLColumnLabel, pctLevel(1-t.Alpha), exactUMaxN, trimFloat(t.MinChange)))
	}
	und := t.Undecided()
	if len(und) == 0 || t.MoreRepetitions == 0 {
		return notes
	}
	more := numfmt.Plural(t.MoreRepetitions, "repetition", "repetitions")
	if t.Imported {
		more = numfmt.Plural(t.MoreRepetitions, "run", "runs")
	}
	notes = append(notes, fmt.Sprintf("%s %d headline %s undecided; %d more %s per side would help: %s.",
		t.Suggestion()[:strings.Index(t.Suggestion(), ":")+1], len(und), numfmt.Plural(len(und), "change is", "changes are"),
		t.MoreRepetitions, more, strings.Join(t.undecidedByColumn(und), "; ")))
	notes = append(notes, fmt.Sprintf("How many more: assuming each change's estimate and the runs' spread stay as measured, an interval narrows and the test statistic grows as "+
		"√(1/m + 1/n) shrinks (m and n runs per side). A change needs the fewest more runs per side that narrow an inconclusive interval to a half-width of "+
		"max(|estimate|, %s%% − |estimate|) (then it excludes 0 or lies within ±%s%%), bring a borderline change's adjusted p to %s, "+
		"or give %d runs per side to too few samples; the table suggests the most any change needs, at most %d.",
		trimFloat(t.MinChange), trimFloat(t.MinChange), a, t.TestMinN, MaxMoreRepetitions))
	return notes
}

// Suggestion is the table's advice on its undecided headline changes,
// one sentence, "" when every headline change is decided: "Inconclusive:
// run 7 more repetitions per side (2 headline changes undecided)." It
// starts "Too few runs to decide:" instead when every undecided change
// merely lacks runs (fewer than TestMinN on a side).
func (t *Table) Suggestion() string {
	if t.MoreRepetitions == 0 {
		return ""
	}
	und := t.Undecided()
	head := "Too few runs to decide:"
	for _, u := range und {
		if u.Cell.State != StateTooFew {
			head = "Inconclusive:"
		}
	}
	if t.Imported {
		// Imported runs cannot be run again: no offer to run them.
		return fmt.Sprintf("%s %d more %s per side would decide %d headline %s; imported runs cannot be run again: import more results for them.",
			head, t.MoreRepetitions, numfmt.Plural(t.MoreRepetitions, "run", "runs"), len(und), numfmt.Plural(len(und), "change", "changes"))
	}
	return fmt.Sprintf("%s run %d more %s per side (%d headline %s undecided).", head, t.MoreRepetitions,
		numfmt.Plural(t.MoreRepetitions, "repetition", "repetitions"), len(und), numfmt.Plural(len(und), "change", "changes"))
}

// undecidedByColumn lists the undecided changes per column: "B: 7 more
// (inconclusive: record-latency-p99; borderline: mb-per-sec)".
func (t *Table) undecidedByColumn(und []Change) []string {
	var out []string
	for ci, col := range t.Columns {
		var states []string
		byState := map[string][]string{}
		for _, u := range und {
			if u.Col != ci {
				continue
			}
			if byState[u.Cell.State] == nil {
				states = append(states, u.Cell.State)
			}
			byState[u.Cell.State] = append(byState[u.Cell.State], u.Metric)
		}
		if len(states) == 0 {
			continue
		}
		parts := make([]string, len(states))
		for i, st := range states {
			parts[i] = st + ": " + strings.Join(byState[st], ", ")
		}
		more := fmt.Sprint(col.MoreRepetitions)
		if slices.ContainsFunc(und, func(u Change) bool { return u.Col == ci && u.Cell.More > MaxMoreRepetitions }) {
			more = moreText(MaxMoreRepetitions + 1)
		}
		out = append(out, fmt.Sprintf("%s: %s more (%s)", col.Name, more, strings.Join(parts, "; ")))
	}
	return out
}
