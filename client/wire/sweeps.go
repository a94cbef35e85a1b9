package wire

import (
	"encoding/json"
	"time"
)

// CreateSweep is the body of POST /api/presets/sweep: a latency-vs-
// throughput sweep of one or more configurations, first at their maximum
// rate, then at each of RatesPct percent of it.
type CreateSweep struct {
	Configs     []SweepConfigRequest `json:"configs"`
	RatesPct    []float64            `json:"rates_pct"`
	Repetitions *int                 `json:"repetitions"`
	// Workers above 1 is refused with its reason: a sweep's first phase
	// finds each configuration's maximum with an unthrottled run, which
	// a fleet cannot divide (its shards need a common duration).
	Workers int `json:"workers,omitempty"`
}

// SweepConfigRequest is one configuration of a sweep: params as POST
// /api/runs takes them, with the workload among them ("workload",
// producer when absent).
type SweepConfigRequest struct {
	Label  string                     `json:"label"`
	Params map[string]json.RawMessage `json:"params"`
	Queue  string                     `json:"queue,omitempty"`
	Target *Target                    `json:"target,omitempty"`
}

// SweepCreated answers POST /api/presets/sweep (201): the sweep's id and
// page.
type SweepCreated struct {
	Sweep string `json:"sweep"`
	URL   string `json:"url"`
}

// SweepCanceled answers POST /api/sweeps/{id}/cancel (202): Phase is
// "canceled", CanceledRuns how many of its runs were.
type SweepCanceled struct {
	CanceledRuns int    `json:"canceled_runs"`
	Phase        string `json:"phase"`
	Sweep        string `json:"sweep"`
	URL          string `json:"url"`
}

// Sweep answers GET /api/sweeps/{id}: a sweep, its phases, runs and the
// points it has measured.
type Sweep struct {
	Sweep string `json:"sweep"`
	URL   string `json:"url"`
	Phase string `json:"phase"`
	// Note says why a sweep ended as it did when that is not plain: it
	// was canceled, its runs were deleted, or it has no points.
	Note        string        `json:"note,omitempty"`
	CreatedAt   time.Time     `json:"created_at"`
	RatesPct    []float64     `json:"rates_pct"`
	Repetitions int           `json:"repetitions"`
	Configs     []SweepConfig `json:"configs"`
	Phases      []SweepPhase  `json:"phases"`
	Runs        []SweepRun    `json:"runs"`
	Points      []SweepPoint  `json:"points"`
}

// SweepConfig is a configuration as a sweep stores it (its spec redacted)
// with the metrics it plots and, once measured, its maximum rate.
type SweepConfig struct {
	Label    string            `json:"label"`
	Queue    string            `json:"queue"`
	Workload Workload          `json:"workload"`
	Spec     json.RawMessage   `json:"spec"`
	Metrics  map[string]string `json:"metrics"`
	MaxRate  *SweepMax         `json:"max_rate,omitempty"`
}

// SweepMax is what a sweep's first phase found for one configuration.
type SweepMax struct {
	Config        int     `json:"config"`
	RecordsPerSec float64 `json:"records_per_sec"`
	Runs          int     `json:"runs"`
	Note          string  `json:"note,omitempty"`
}

// SweepPhase is one phase of a sweep and how many of its runs finished.
type SweepPhase struct {
	Phase    int    `json:"phase"`
	Name     string `json:"name"`
	Runs     int    `json:"runs"`
	Finished int    `json:"finished"`
}

// SweepRun is one run of a sweep with the figures it plots.
type SweepRun struct {
	ID         uint               `json:"id"`
	URL        string             `json:"url"`
	Config     int                `json:"config"`
	Label      string             `json:"label"`
	Phase      int                `json:"phase"`
	RatePct    float64            `json:"rate_pct"`
	TargetRate float64            `json:"target_rate"`
	Status     Status             `json:"status"`
	Metrics    map[string]float64 `json:"metrics"`
}

// SweepPoint is one measured point of a sweep: a configuration at a rate.
type SweepPoint struct {
	Label      string  `json:"label"`
	RatePct    float64 `json:"rate_pct"`
	TargetRate float64 `json:"target_rate"`
	RunID      uint    `json:"run"`
	URL        string  `json:"url"`
	Throughput float64 `json:"records_per_sec"`
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p999_ms"`
}
