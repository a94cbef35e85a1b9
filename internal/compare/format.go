package compare

import (
	"math"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/numfmt"
)

// minus is the sign of negative numbers and changes in text: a real
// minus (U+2212), not a hyphen. CSV and JSON keep raw numbers.
const minus = numfmt.Minus

// Marks of the text notation, defined in [Table.Legend].
const (
	markBetter        = "✓"
	markWorse         = "✗"
	markSame          = "~"
	markChanged       = "≠"
	markEqual         = "="
	markUntested      = "?"
	markMissing       = "—"
	arrowHigherBetter = "↑"
	arrowLowerBetter  = "↓"
)

// FormatNumber formats v for people as [numfmt.NumberSign] does, with
// a real minus sign: thousands separators and about three significant
// digits without hiding the integer part.
//
//	1234567.89 → "1,234,568"   4.1234 → "4.12"   123.45 → "123.5"   0.01234 → "0.0123"   -2 → "−2"
func FormatNumber(v float64) string { return numfmt.NumberSign(v, minus) }

// FormatValue formats a value with its unit: "1,234,567 records/s",
// "4.12 ms", "87.5%". No unit gives the number alone.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "":
		return FormatNumber(v)
	case "%":
		return FormatNumber(v) + "%"
	}
	return FormatNumber(v) + " " + unit
}

// FormatDelta formats a change in percent with its sign: "+3.4%",
// "−12.0%", "0.0%"; one decimal below 100%, none from 100% on
// ("+250%", "+1,234%"), two (or "<0.01%") for changes that would round
// to zero.
func FormatDelta(pct float64) string {
	switch {
	case math.IsNaN(pct):
		return "?"
	case pct == 0:
		return "0.0%"
	}
	sign := "+"
	if pct < 0 {
		sign = minus
	}
	a := math.Abs(pct)
	var s string
	switch {
	case math.IsInf(a, 0):
		s = "∞"
	case a >= 100:
		s = numfmt.Group(strconv.FormatFloat(a, 'f', 0, 64))
	case a >= 0.05:
		s = strconv.FormatFloat(a, 'f', 1, 64)
	case a >= 0.005:
		s = strconv.FormatFloat(a, 'f', 2, 64)
	default:
		s = "<0.01"
	}
	return sign + s + "%"
}

// FormatP formats a p-value as benchstat does, three decimals:
// "p=0.310"; below 0.001, "p<0.001".
func FormatP(p float64) string {
	if p < 0.0005 {
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}

// formatInterval formats the confidence interval of a median: "±2.3%"
// (the larger distance of the bounds from the median, in percent of it),
// or "lo … hi" when the bounds do not share the median's sign.
func formatInterval(center, lo, hi float64) string {
	if (center > 0 && lo > 0) || (center < 0 && hi < 0) {
		w := math.Max(hi-center, center-lo) / math.Abs(center) * 100
		if w >= 10 {
			return "±" + numfmt.Group(strconv.FormatFloat(w, 'f', 0, 64)) + "%"
		}
		return "±" + strconv.FormatFloat(w, 'f', 1, 64) + "%"
	}
	if center == 0 && lo == 0 && hi == 0 {
		return "±0.0%"
	}
	return "[" + FormatNumber(lo) + " … " + FormatNumber(hi) + "]"
}

// ValueText is the figure of cell i as tables show it, without the unit:
// the value with the row's decimals ("1,234,567", "4.12"), then for a
// median with an interval the interval ("4.12 ±2.3%"); "—" when the
// metric is missing. A whole value keeps no decimals whatever the row's:
// it came whole from its source (a count, Kafka's latencies in whole
// milliseconds), and "200.000 ms" next to "0.523 ms" would claim a
// precision it never had.
func (r Row) ValueText(i int) string {
	c := r.Cells[i]
	if c.N == 0 {
		return markMissing
	}
	d := r.Decimals
	if a := math.Abs(c.Value); a == math.Trunc(a) {
		d = 0
	}
	s := numfmt.Fixed(c.Value, d, minus)
	if c.Lo != nil && c.Hi != nil {
		s += " " + formatInterval(c.Value, *c.Lo, *c.Hi)
	}
	return s
}

// rowDecimals is the number of decimals that shows every fractional value
// of a row with FormatNumber's precision: 0 when all are whole numbers,
// else the most any fractional value needs (at most 9), so that a column
// of figures lines up ("94.10" next to "94.76", not "94.1"). Whole values
// show none (see [Row.ValueText]).
func rowDecimals(cells []Cell) int {
	d := 0
	for _, c := range cells {
		a := math.Abs(c.Value)
		if c.N == 0 || a == math.Trunc(a) || math.IsInf(a, 0) {
			continue
		}
		d = max(d, numfmt.Decimals(a))
	}
	return min(d, 9)
}

// ChangeText is a cell's change against the baseline in the notation of
// [Table.Legend], "" for the baseline or a missing value. Every row's
// change is the same estimator, the ratio of the values shown (the medians
// of the columns' runs, or the single runs' figures), so that a reader can
// check it from the figures beside it; the mark after it is the verdict.
// A tested change's Hodges-Lehmann estimate, its interval and adjusted
// p-value are in a column of their own ([Table.HLText]):
//
//	"+3.4% ✓"              significant, better
//	"−12.0% ✗"             significant, worse
//	"+5.1% ≠"              significant, metric without a direction
//	"+0.8% ~"              no change beyond ±MinChange
//	"+4.0% borderline"     adjusted p ≤ 2α
//	"+1.2% inconclusive"   the interval reaches beyond ±MinChange
//	"+3.4% n<4"            too few samples to test
//	"+3.4% ✓?"             single runs, better by direction only, untested
//	"−3.4% ✗?"             single runs, worse by direction only, untested
//	"0.0% ="               single runs, identical values
//	"+3.4%"                single runs without a direction, or a descriptive row
//
// A baseline of 0 shows "from 0" instead of a percentage.
func (t *Table) ChangeText(c Cell) string {
	if c.Test == TestNone {
		return ""
	}
	delta := "from 0"
	if c.DeltaPct != nil {
		delta = FormatDelta(*c.DeltaPct)
	}
	var mark string
	switch c.Test {
	case TestSignificant:
		switch c.Verdict {
		case VerdictBetter:
			mark = markBetter
		case VerdictWorse:
			mark = markWorse
		default:
			mark = markChanged
		}
	case TestNotSignificant:
		switch c.State {
		case StateBorderline, StateInconclusive:
			mark = c.State
		default:
			mark = markSame
		}
	case TestTooFew:
		mark = "n<" + strconv.Itoa(t.TestMinN)
	case TestSingleRuns:
		switch c.Verdict {
		case VerdictBetter:
			mark = markBetter + markUntested
		case VerdictWorse:
			mark = markWorse + markUntested
		default:
			if c.Sign == 0 {
				mark = markEqual
			}
		}
	}
	if mark == "" {
		return delta
	}
	return delta + " " + mark
}

// HLText is a tested change's Hodges-Lehmann estimate with its
// interval and the adjusted p-value the verdict rests on, as the
// Hodges-Lehmann column shows it: "−4.1% [−5.0%, −3.2%] adj. p=0.002";
// only "adj. p=0.002" when the baseline's median is 0 (no estimate), and
// "" for a change that was not tested (descriptive rows, too few runs,
// single runs, the baseline).
func (t *Table) HLText(c Cell) string {
	var parts []string
	if c.ChangeEst != nil {
		est := FormatDelta(*c.ChangeEst)
		if c.ChangeLo != nil && c.ChangeHi != nil {
			est += " " + FormatChangeInterval(*c.ChangeLo, *c.ChangeHi)
		}
		parts = append(parts, est)
	}
	if c.PAdj != nil {
		parts = append(parts, "adj. "+FormatP(*c.PAdj))
	}
	return strings.Join(parts, " ")
}

// HasHL reports whether column col has a tested change, and so a
// Hodges-Lehmann column beside it in the table's views and exports.
func (t *Table) HasHL(col int) bool {
	if col <= 0 {
		return false
	}
	for _, row := range t.Rows {
		if col < len(row.Cells) && t.HLText(row.Cells[col]) != "" {
			return true
		}
	}
	return false
}

// HLHeading names the Hodges-Lehmann column of a column named name:
// "branch: Hodges-Lehmann Δ, 95% CI"; without the name when it is "".
func (t *Table) HLHeading(name string) string {
	h := HLColumnLabel + ", " + pctLevel(1-t.Alpha) + " CI"
	if name == "" {
		return h
	}
	return name + ": " + h
}

// HLColumnLabel labels the column of the tested changes' Hodges-Lehmann
// estimates in every view and export.
const HLColumnLabel = "Hodges-Lehmann Δ"

// FormatChangeInterval formats the interval of a change in percent:
// "[+1.1%, +7.5%]".
func FormatChangeInterval(lo, hi float64) string {
	return "[" + FormatDelta(lo) + ", " + FormatDelta(hi) + "]"
}

// Legend explains the notation of the table's text exports, one line,
// including how the table tests its changes (Benjamini-Hochberg at q =
// α) and which rows are descriptive.
func (t *Table) Legend() string {
	a := trimFloat(t.Alpha)
	n := strconv.Itoa(t.TestMinN)
	mc := trimFloat(t.MinChange) + "%"
	tested := "the table's tested changes (none here)"
	if t.Tested > 0 {
		tested = "the table's " + strconv.Itoa(t.Tested) + " tested " + numfmt.Plural(t.Tested, "change", "changes")
	}
	return "↑ higher is better, ↓ lower is better · value: the run's figure, or the median of a column's runs with its " +
		pctLevel(t.Confidence) + " confidence interval (±) · (change vs the baseline column): on every row the ratio of the values shown, " +
		"the column's median over the baseline's, minus 1, in percent, followed by the verdict · " +
		HLColumnLabel + " column, for tested rows (the workload's headline metrics; bold in Markdown): the Hodges-Lehmann estimate of the change " +
		"(the median of the ratios of every candidate run to every baseline run) with its " +
		pctLevel(1-t.Alpha) + " distribution-free interval [low, high] (Mann-Whitney U) and the adjusted p-value · " +
		"✓ better, ✗ worse: significant (Mann-Whitney U, ≥ " + n + " runs per side, p adjusted by Benjamini-Hochberg over " +
		tested + ": false discovery rate q = " + a + ", adjusted p ≤ " + a + ") · " +
		"≠ significant change, metric without a direction · ~ no change beyond ±" + mc + " · " +
		"borderline: adjusted p ≤ " + trimFloat(2*t.Alpha) + " · inconclusive: the Hodges-Lehmann interval holds 0 and changes beyond ±" + mc + ": run more repetitions · " +
		"n<" + n + " too few runs to test, no verdict · " +
		"✓? ✗? single runs: direction only, not tested · = same value · " +
		"other rows are descriptive: not tested · — not measured"
}
