package ui

import (
	"github.com/kbench/kbench/compare"
	"github.com/kbench/kbench/store"
)

// Paths of A/B comparisons.
const (
	// AddRepetitionsPath is where the comparison page's "add repetitions"
	// form posts.
	AddRepetitionsPath = "/compare/repetitions"
	// DefaultAddRepetitions is the form's number of repetitions to add.
	DefaultAddRepetitions = 5
)

// CompareProgress is how far a comparison's runs are: while some are
// queued or running, its figures cover only the finished ones.
type CompareProgress struct {
	Done, Total int
	// Pending are the runs not finished, in the comparison's order.
	Pending []PendingRun
}

// PendingRun is a run not finished yet.
type PendingRun struct {
	Link   RunLink
	Status string // queued or running
}

// NewCompareProgress counts the finished runs of a comparison.
func NewCompareProgress(runs []store.Run) CompareProgress {
	p := CompareProgress{Total: len(runs)}
	for i := range runs {
		r := &runs[i]
		if r.Final() {
			p.Done++
			continue
		}
		p.Pending = append(p.Pending, PendingRun{Link: runLink(r), Status: r.Status})
	}
	return p
}

// RefusedRun is a run whose configuration cannot be run again, and why.
type RefusedRun struct {
	Link   RunLink
	Reason string
}

// AddRepetitionsView is the comparison page's offer to run each column's
// configuration N more times, interleaved: the form, or why there is none.
type AddRepetitionsView struct {
	// ByRun: columns are single runs, which have no repetitions to add
	// to; the page says to switch to columns by label or group.
	ByRun bool
	// Refused are the runs that cannot be run again: no form then.
	Refused []RefusedRun
	// Full: the comparison already holds as many runs as one can.
	Full     bool
	MaxRuns  int
	Action   string
	CSRF     string
	Query    CompareQuery
	Columns  int
	N, MaxN  int
	HideFlag string // "1" when unchanged rows are hidden, kept across the post
}

// Offered reports whether the page shows the form.
func (v AddRepetitionsView) Offered() bool { return !v.ByRun && len(v.Refused) == 0 && !v.Full }

// NewAddRepetitions builds the offer for comparison q of columns columns
// (by label or group), given the runs that cannot be run again and the
// most runs one comparison holds: N defaults to DefaultAddRepetitions,
// and at most as many as keep the comparison within maxRuns.
func NewAddRepetitions(q CompareQuery, columns int, refused []RefusedRun, maxRuns, maxN int) AddRepetitionsView {
	v := AddRepetitionsView{ByRun: q.By == "" || q.By == compare.ByRun, Refused: refused, MaxRuns: maxRuns, Action: AddRepetitionsPath,
		Query: q, Columns: columns}
	if q.HideUnchanged {
		v.HideFlag = "1"
	}
	if columns > 0 {
		v.MaxN = min(maxN, (maxRuns-len(q.Runs))/columns)
	}
	v.Full = !v.ByRun && v.MaxN < 1
	v.N = min(DefaultAddRepetitions, max(v.MaxN, 1))
	return v
}
