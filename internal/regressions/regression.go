package regressions

import (
	"math"
	"time"

	"github.com/kbench/kbench/client/wire"
)

// DefaultThreshold is the smallest change, in percent, the regressions
// list names unless told otherwise; badges and notifications use it.
const DefaultThreshold = 5.0

// Regression is a change point that made a metric of a series worse: the
// regressions list's row, in the units of the metric.
type Regression struct {
	Series, Workload, Metric, Unit string
	// Name is what the series is (Links.SeriesName); Series its key.
	Name string
	// RunID is the first run after the change, Index its position in the
	// series' history (Otava's convention), Time when it ran.
	RunID uint
	Index int
	Time  time.Time
	// Before and After are the segment means, ChangePct the change in
	// percent, PValue the test's (NaN when it gave none).
	Before, After, ChangePct, PValue float64
	CommitBefore, CommitAfter        string
	// CompareURL is the before/after comparison ("" when a side has no
	// run), HistoryURL the series' history of the metric.
	CompareURL, HistoryURL string
	// BeforeRuns and AfterRuns are the runs of the segments either side
	// of the change, in time order: what the functions that moved are
	// named from (package funcs). They are shared: callers must not
	// modify them.
	BeforeRuns, AfterRuns []uint
}

// CommitRange is "abc123..def456".
func (r Regression) CommitRange() string { return r.CommitBefore + ".." + r.CommitAfter }

// APIRegression is one regression as GET /api/regressions and the
// notifications name it.
type APIRegression = wire.Regression

// NewAPIRegression is r as the API names it.
func NewAPIRegression(r Regression) APIRegression {
	a := APIRegression{Series: r.Series, Name: r.Name, Metric: r.Metric, RunID: r.RunID, Index: r.Index, Before: r.Before, After: r.After,
		ChangePct: r.ChangePct, CompareURL: r.CompareURL, HistoryURL: r.HistoryURL, CommitBefore: r.CommitBefore,
		CommitAfter: r.CommitAfter, Time: r.Time, Unit: r.Unit, Workload: r.Workload}
	if !math.IsNaN(r.PValue) && !math.IsInf(r.PValue, 0) {
		p := r.PValue
		a.PValue = &p
	}
	return a
}
