package wire

import "time"

// History answers GET /api/history: one metric of one series in time
// order, with the change points change-point detection finds in it.
// ChangePoints are those with at least Params.MinSegment runs each side,
// which the regressions list, badges, notifications and kbench check go
// by; Tentative the others it reports. With min_segment=1 every change
// point is in ChangePoints.
type History struct {
	// Series is the series' key; Name what it is, in words.
	Series       string         `json:"series"`
	Name         string         `json:"name"`
	Metric       string         `json:"metric"`
	Unit         string         `json:"unit"`
	Better       Better         `json:"better"`
	Points       []HistoryPoint `json:"points"`
	ChangePoints []ChangePoint  `json:"change_points"`
	Tentative    []ChangePoint  `json:"tentative_change_points"`
	Segments     []Segment      `json:"segments"`
	Marks        []Mark         `json:"marks"`
	Params       HistoryParams  `json:"params"`
	// Metrics are the metrics the series' runs have.
	Metrics    []string `json:"metrics"`
	HistoryURL string   `json:"history_url"`
}

// HistoryPoint is one run of a history: its value of the metric.
type HistoryPoint struct {
	RunID uint              `json:"run_id"`
	Time  time.Time         `json:"time"`
	Value float64           `json:"value"`
	Meta  map[string]string `json:"meta"`
}

// ChangePoint is a point of a history where the metric's level changed:
// Index is the first point after the change, RunID its run.
type ChangePoint struct {
	Index     int     `json:"index"`
	RunID     uint    `json:"run_id"`
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	ChangePct float64 `json:"change_pct"`
	// PValue is null in the unlikely case the test gave no number.
	PValue       *float64 `json:"p_value"`
	Direction    string   `json:"direction"`
	Magnitude    float64  `json:"magnitude"`
	CommitBefore string   `json:"commit_before"`
	CommitAfter  string   `json:"commit_after"`
	CompareURL   string   `json:"compare_url"`
	// RunsBefore and RunsAfter are the sizes of the segments either side;
	// Tentative is true when one is below min_segment (TentativeReason
	// says so in words).
	RunsBefore      int    `json:"runs_before"`
	RunsAfter       int    `json:"runs_after"`
	Tentative       bool   `json:"tentative"`
	TentativeReason string `json:"tentative_reason,omitempty"`
	// Functions are the functions that moved at the change (at most
	// 10, the largest change first; see MovedFunction), FunctionNaming
	// how they were named and whether that is done. Both are absent on
	// tentative change points.
	Functions      []MovedFunction `json:"functions,omitempty"`
	FunctionNaming *FunctionNaming `json:"function_naming,omitempty"`
}

// Segment is the points between two change points, Points[Start:End],
// and their median.
type Segment struct {
	Start  int     `json:"start"`
	End    int     `json:"end"`
	Median float64 `json:"median"`
}

// Mark is a point of a history where something besides the code measured
// changed (a client library's version, a setting), one thing in each of
// Changes.
type Mark struct {
	Index   int      `json:"index"`
	RunID   uint     `json:"run_id"`
	Changes []string `json:"changes"`
}

// HistoryParams are the parameters change-point detection used.
type HistoryParams struct {
	Window       int     `json:"window"`
	MaxPValue    float64 `json:"max_pvalue"`
	MinMagnitude float64 `json:"min_magnitude"`
	MinSegment   int     `json:"min_segment"`
}

// Regressions answers GET /api/regressions: the newest change point of
// every series' metric that went the wrong way by more than the
// threshold.
type Regressions struct {
	Regressions []Regression `json:"regressions"`
}

// Regression is one regression: a change point of a series' metric.
type Regression struct {
	// Series is the series' key; Name what it is, in words.
	Series    string  `json:"series"`
	Name      string  `json:"name"`
	Metric    string  `json:"metric"`
	RunID     uint    `json:"run_id"`
	Index     int     `json:"index"`
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	ChangePct float64 `json:"change_pct"`
	// PValue is null in the unlikely case the test gave no number.
	PValue       *float64  `json:"p_value"`
	CompareURL   string    `json:"compare_url"`
	HistoryURL   string    `json:"history_url"`
	CommitBefore string    `json:"commit_before"`
	CommitAfter  string    `json:"commit_after"`
	Time         time.Time `json:"time"`
	Unit         string    `json:"unit"`
	Workload     string    `json:"workload"`
	// Functions and FunctionNaming are as a ChangePoint's.
	Functions      []MovedFunction `json:"functions,omitempty"`
	FunctionNaming *FunctionNaming `json:"function_naming,omitempty"`
}
