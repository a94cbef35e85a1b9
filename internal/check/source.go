package check

import (
	"context"
	"errors"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/rundoc"
)

// Source is where check reads the runs and histories it judges: in
// `kbench check`, a kbench server's JSON API. It is an interface so that
// this package stays computation: the command does the HTTP calls.
type Source interface {
	// Base is the server's URL, named in messages and linked from the
	// report.
	Base() string
	// Run is one run (GET /api/runs/{id}); the error of an ID the
	// server does not know matches ErrNotFound.
	Run(ctx context.Context, id uint) (Run, error)
	// Runs lists the runs f names (GET /api/runs, every page), newest
	// first, keeping those keep accepts.
	Runs(ctx context.Context, f RunFilter, keep func(Run) bool) ([]Run, error)
	// History is a metric's history with its change points (GET
	// /api/history).
	History(ctx context.Context, q HistoryQuery) (History, error)
	// ReportBaseline is the runs of a saved report's baseline column
	// (GET /r/{slug}.json).
	ReportBaseline(ctx context.Context, slug string) ([]uint, error)
}

// FunctionSource is a Source that also names the functions that moved
// between two sets of runs (GET /api/functions), each side in time
// order, at most MaxFunctionRuns a side. Assess names them when its
// Source has it; an answer still "computing" is reported so.
type FunctionSource interface {
	Functions(ctx context.Context, base, target []uint) (wire.Functions, error)
}

// MaxFunctionRuns is the most runs a side FunctionSource is asked about
// (the server compares the nearest 25 with profiles).
const MaxFunctionRuns = 50

// ErrNotFound is matched by a Source's error for a run it does not know.
var ErrNotFound = errors.New("not found")

// NotFound marks err, a Source's answer that a run does not exist, as
// matching ErrNotFound; its text stays err's.
func NotFound(err error) error { return notFound{err} }

type notFound struct{ err error }

func (n notFound) Error() string        { return n.err.Error() }
func (n notFound) Unwrap() error        { return n.err }
func (n notFound) Is(target error) bool { return target == ErrNotFound }

// RunFilter narrows Source.Runs: the empty fields do not filter.
type RunFilter struct {
	Label  string
	Status rundoc.Status
}

// HistoryQuery asks Source.History for one metric's history, its change
// points detected with ChangePoint: the history of Run's series, or, when
// Run is 0, of the series of Fingerprint on Branch.
type HistoryQuery struct {
	Metric      string
	Run         uint
	Fingerprint string
	Branch      string
	ChangePoint changepoint.Options
}

// Run is a run as GET /api/runs and /api/runs/{id} show it; RunMetric
// one of its figures. They are the API's own types (client/wire), so the
// shape check reads is the one the server writes.
type (
	Run       = wire.Run
	RunMetric = wire.Metric
)

// metric returns the run's first figure named name.
func metric(r Run, name string) (value float64, unit string, better rundoc.Better, ok bool) {
	m, ok := r.Metric(name)
	return m.Value, m.Unit, m.Better, ok
}

// History is the answer of GET /api/history; HistoryPoint one run of it,
// HistoryChangePoint one of its change points (Index is its first point
// after the change).
type (
	History            = wire.History
	HistoryPoint       = wire.HistoryPoint
	HistoryChangePoint = wire.ChangePoint
)
