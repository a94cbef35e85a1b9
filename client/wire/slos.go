package wire

import (
	"encoding/json"
	"time"
)

// CreateSLO is the body of POST /api/presets/slo: find the highest rate
// at which Config's latency at Percentile stays under LatencyMs, to
// PrecisionPct, with Repetitions runs per rate. The fields left out take
// their defaults (percentile 99, precision 2 %, 1 repetition); MinRate
// and MaxRate (records/s) bound the rates tried, 0 for none. Without
// max_rate an unthrottled probe measures the maximum first.
type CreateSLO struct {
	Config       SweepConfigRequest `json:"config"`
	Percentile   *float64           `json:"percentile"`
	LatencyMs    float64            `json:"latency_ms"`
	PrecisionPct *float64           `json:"precision_pct"`
	Repetitions  *int               `json:"repetitions"`
	MinRate      float64            `json:"min_rate"`
	MaxRate      float64            `json:"max_rate"`
}

// SLOCreated answers POST /api/presets/slo (201): the search's id and
// page.
type SLOCreated struct {
	SLO string `json:"slo"`
	URL string `json:"url"`
}

// SLOCanceled answers POST /api/slos/{id}/cancel (202).
type SLOCanceled struct {
	CanceledRuns int    `json:"canceled_runs"`
	Phase        string `json:"phase"`
	SLO          string `json:"slo"`
	URL          string `json:"url"`
}

// SLO answers GET /api/slos/{id}: a latency-target search, every probe
// it measured and, once done, its answer: the rate lies in [Lo, Hi]
// (records/s), Lo the highest rate that met the target and Hi the lowest
// that did not (or the highest rate allowed, when it met the target
// there: outcome "at-maximum").
type SLO struct {
	SLO       string     `json:"slo"`
	URL       string     `json:"url"`
	Phase     string     `json:"phase"`
	Note      string     `json:"note,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Config    SLOConfig  `json:"config"`

	Percentile   float64 `json:"percentile"`
	LatencyMs    float64 `json:"latency_ms"`
	PrecisionPct float64 `json:"precision_pct"`
	Repetitions  int     `json:"repetitions"`
	MinRate      float64 `json:"min_rate"`
	MaxRate      float64 `json:"max_rate"`
	// MinSamples is how many latencies each run must hold: 1000/(100 − p).
	MinSamples int64 `json:"min_samples"`
	// MaxProbes is the most probes it makes before it gives up.
	MaxProbes int `json:"max_probes"`

	// Outcome is found, at-maximum, none or gave-up once done ("" before).
	Outcome string `json:"outcome,omitempty"`
	// Lo and Hi are the bracket so far (the answer once done); 0 where
	// not known yet.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Next is the probe being measured while searching.
	Next   *SLONext   `json:"next,omitempty"`
	Probes []SLOProbe `json:"probes"`
}

// SLOConfig is the configuration a search measures, as it stores it,
// with the metric of the achieved rate and the histogram whose
// percentile is held to the target.
type SLOConfig struct {
	Label      string          `json:"label"`
	Queue      string          `json:"queue"`
	Workload   Workload        `json:"workload"`
	Spec       json.RawMessage `json:"spec"`
	RateMetric string          `json:"rate_metric"`
	Latency    string          `json:"latency_histogram"`
}

// SLONext is the probe a search is measuring: its rate (0 for the
// unthrottled probe, Max) and the runs it has so far.
type SLONext struct {
	Rate float64 `json:"rate"`
	Max  bool    `json:"max,omitempty"`
}

// SLOProbe is one rate a search measured, its verdict and its runs.
type SLOProbe struct {
	Probe int     `json:"probe"`
	Rate  float64 `json:"rate"`
	Max   bool    `json:"max,omitempty"`
	// Measured is set once the probe needs no further run; Pass and
	// Reason are its verdict then.
	Measured bool     `json:"measured"`
	Pass     bool     `json:"pass"`
	Reason   string   `json:"reason"`
	Runs     []SLORun `json:"runs"`
}

// SLORun is one run of a probe: what it measured (rate in records/s,
// the latency at the search's percentile in ms from the run's histogram,
// how many latencies that histogram holds) and its own verdict.
type SLORun struct {
	ID             uint    `json:"run"`
	URL            string  `json:"url"`
	Status         Status  `json:"status"`
	Achieved       float64 `json:"achieved"`
	LatencyMs      float64 `json:"latency_ms"`
	Samples        int64   `json:"samples"`
	HarnessLimited bool    `json:"harness_limited,omitempty"`
	Error          string  `json:"error,omitempty"`
	Pass           bool    `json:"pass"`
	Reason         string  `json:"reason,omitempty"`
}
