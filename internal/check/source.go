package check

import (
	"context"
	"errors"
	"time"

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

// Run is a run as GET /api/runs and /api/runs/{id} show it, the fields
// check reads.
type Run struct {
	ID          uint              `json:"id"`
	Label       string            `json:"label"`
	Workload    string            `json:"workload"`
	Status      rundoc.Status     `json:"status"`
	Error       string            `json:"error"`
	Fingerprint string            `json:"fingerprint"`
	Warmup      bool              `json:"warmup"`
	Meta        map[string]string `json:"meta"`
	Time        time.Time         `json:"time"`
	SeriesKey   string            `json:"series_key"`
	Metrics     []RunMetric       `json:"metrics"`
}

// RunMetric is one figure of a Run.
type RunMetric struct {
	Name   string        `json:"name"`
	Value  float64       `json:"value"`
	Unit   string        `json:"unit"`
	Better rundoc.Better `json:"better"`
}

// metric returns the run's first figure named name.
func (r Run) metric(name string) (value float64, unit string, better rundoc.Better, ok bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, m.Unit, m.Better, true
		}
	}
	return 0, "", "", false
}

// History is the answer of GET /api/history.
type History struct {
	Points       []HistoryPoint       `json:"points"`
	ChangePoints []HistoryChangePoint `json:"change_points"`
}

// HistoryChangePoint is a change point of a History: Index is its first
// point after the change.
type HistoryChangePoint struct {
	Index     int     `json:"index"`
	RunID     uint    `json:"run_id"`
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	ChangePct float64 `json:"change_pct"`
	PValue    float64 `json:"p_value"`
	Direction string  `json:"direction"`
}

// HistoryPoint is one run of a history.
type HistoryPoint struct {
	RunID uint              `json:"run_id"`
	Time  time.Time         `json:"time"`
	Value *float64          `json:"value"`
	Meta  map[string]string `json:"meta"`
}
