package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/kbench/kbench/internal/numfmt"
)

// Verdicts of a check.
const (
	verdictOK      = "ok"
	verdictDiffers = "DIFFERS"
	verdictSkipped = "skipped"
)

// tolKind is how a tolerance measures a difference.
type tolKind int

const (
	tolExact    tolKind = iota // the two figures are equal
	tolRelative                // |k − i| ≤ limit × |i|
	tolAbsolute                // |k − i| ≤ limit, in Unit
)

// tolerance is how far kbench's figure may be from the independent one.
type tolerance struct {
	Kind  tolKind
	Limit float64 // a fraction for tolRelative (0.05 = 5%), else in Unit
	Unit  string  // tolAbsolute: what Limit counts, e.g. "points"
}

func exact() tolerance                { return tolerance{Kind: tolExact} }
func relative(frac float64) tolerance { return tolerance{Kind: tolRelative, Limit: frac} }
func absolute(lim float64, u string) tolerance {
	return tolerance{Kind: tolAbsolute, Limit: lim, Unit: u}
}

func (t tolerance) String() string {
	switch t.Kind {
	case tolRelative:
		return "±" + trimFloat(t.Limit*100) + "%"
	case tolAbsolute:
		return "±" + trimFloat(t.Limit) + " " + t.Unit
	}
	return "exact"
}

// judge compares kbench's figure k with the independent figure i. It
// returns the verdict and the difference as text: k − i, and for
// relative tolerances k/i too.
func (t tolerance) judge(k, i float64) (verdict, diff string) {
	if math.IsNaN(k) || math.IsNaN(i) || math.IsInf(k, 0) || math.IsInf(i, 0) {
		return verdictDiffers, "not a number"
	}
	d := k - i
	ok := false
	switch t.Kind {
	case tolExact:
		ok = d == 0
		diff = signed(d)
	case tolRelative:
		switch {
		case i == 0:
			ok = k == 0
			diff = signed(d)
		default:
			rel := d / math.Abs(i)
			ok = math.Abs(rel) <= t.Limit+1e-12
			diff = fmt.Sprintf("%+.2f%% (ratio %.4f)", rel*100, k/i)
		}
	case tolAbsolute:
		ok = math.Abs(d) <= t.Limit+1e-12
		diff = fmt.Sprintf("%s %s", signed(d), t.Unit)
	}
	if ok {
		return verdictOK, diff
	}
	return verdictDiffers, diff
}

// signed formats a difference with its sign and at most two decimals.
func signed(d float64) string {
	if d == math.Trunc(d) && math.Abs(d) < 1e15 {
		return fmt.Sprintf("%+d", int64(d))
	}
	return fmt.Sprintf("%+.2f", d)
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// check is one cross-check: a figure kbench reported against the same
// quantity measured independently.
type check struct {
	Area   string // counts, rates, cpu, syscalls, false flags
	Run    string // the run it is about
	What   string // what is compared
	Kbench string // kbench's figure, with its unit
	Indep  string // the independent figure, with its unit and source
	Diff   string
	Tol    string
	// Verdict is ok, DIFFERS or skipped.
	Verdict string
	Note    string
}

// compareFigures builds a check from two numbers.
func compareFigures(area, run, what string, k float64, kText string, i float64, iText string, tol tolerance) check {
	v, d := tol.judge(k, i)
	return check{Area: area, Run: run, What: what, Kbench: kText, Indep: iText, Diff: d, Tol: tol.String(), Verdict: v}
}

// skipped is a check that could not be made, and why.
func skipped(area, run, what, why string) check {
	return check{Area: area, Run: run, What: what, Verdict: verdictSkipped, Note: why, Tol: "—"}
}

// line is the check as one line of the console output.
func (c check) line() string {
	if c.Verdict == verdictSkipped {
		return fmt.Sprintf("%-9s %-24s %s: skipped: %s", c.Area, c.Run, c.What, c.Note)
	}
	s := fmt.Sprintf("%-9s %-24s %s: kbench %s | independent %s | diff %s | tolerance %s → %s",
		c.Area, c.Run, c.What, c.Kbench, c.Indep, c.Diff, c.Tol, c.Verdict)
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// binomUpperTail is P(X ≥ k) for X ~ Binomial(n, p): how likely k or more
// false flags are among n independent tests at level p.
func binomUpperTail(n, k int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > n {
		return 0
	}
	sum := 0.0
	for j := k; j <= n; j++ {
		lg := lgammaInt(n+1) - lgammaInt(j+1) - lgammaInt(n-j+1)
		sum += math.Exp(lg + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
	}
	return math.Min(sum, 1)
}

func lgammaInt(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// num formats a figure with thousands separators and decimals digits
// after the point (numfmt.Fixed, with an ASCII minus).
func num(v float64, decimals int) string { return numfmt.Fixed(v, decimals, numfmt.Hyphen) }
