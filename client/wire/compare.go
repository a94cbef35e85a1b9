package wire

// Comparison answers GET /api/compare and is the document of a report's
// JSON export (GET /r/{slug}.json): a table of metrics, one column per
// run or group of runs (the baseline first), with each change, the test
// that decided it and the settings that differ between the columns. A
// report that shows a sweep only has Title, Notes, URL, Created and Sweep
// (SweepReport).
//
// Numbers are raw (no rounding); what each figure is is said in the
// document itself (ChangeMethod, HLMethod, Legend) and in the Cell's
// fields.
type Comparison struct {
	Title string `json:"title"`
	Notes string `json:"notes,omitempty"`
	URL   string `json:"url,omitempty"`
	// Created is RFC 3339, UTC.
	Created       string   `json:"created,omitempty"`
	Alpha         float64  `json:"alpha"`
	Confidence    float64  `json:"confidence"`
	IntervalMinN  int      `json:"interval_min_n"`
	TestMinN      int      `json:"test_min_n"`
	HideUnchanged bool     `json:"hide_unchanged"`
	Columns       []Column `json:"columns"`
	Rows          []Row    `json:"rows"`
	Hidden        []string `json:"hidden_metrics,omitempty"`
	// Sweep is the latency-vs-throughput sweep a report shows.
	Sweep *ReportSweep `json:"sweep,omitempty"`
	// SLO is the latency-target search a report shows, as GET
	// /api/slos/{id} answers it, its links absolute.
	SLO *SLO `json:"slo,omitempty"`
	// Comparability lists the settings that differ between the columns;
	// ComparabilityUnknown the runs that recorded no configuration;
	// Warnings what the runs' own figures cast doubt on. All three are
	// empty arrays when there is nothing to say.
	Comparability        []Difference `json:"comparability"`
	ComparabilityUnknown []uint       `json:"comparability_unknown_runs"`
	Warnings             []Warning    `json:"warnings"`
	TableNotes           []string     `json:"table_notes"`
	Legend               string       `json:"legend"`
	// How the table tests its changes: FDRQ is the Benjamini-Hochberg
	// level (= Alpha), ChangeCILevel that of the Hodges-Lehmann
	// intervals (1 − Alpha).
	FDRQ            float64  `json:"fdr_q"`
	ChangeCILevel   float64  `json:"hl_ci_level"`
	MinChangePct    float64  `json:"min_change_pct"`
	Workloads       []string `json:"workloads"`
	HeadlineMetrics []string `json:"headline_metrics"`
	// TestedChanges is how many changes the adjustment covers;
	// MoreRepetitions the runs per side the undecided headline changes
	// need (0 when all are decided), at most MaxMore (MaxMore+1: more).
	TestedChanges   int `json:"tested_changes"`
	MoreRepetitions int `json:"more_repetitions"`
	MaxMore         int `json:"max_more_repetitions"`

	// ChangeMethod and HLMethod say what a cell's change and hl figures
	// are.
	ChangeMethod string `json:"change_method"`
	HLMethod     string `json:"hl_method"`

	// EmbeddedRuns and EmbeddedNote name the runs that used kbench's
	// embedded broker, absent when none did.
	EmbeddedRuns []uint `json:"embedded_broker_runs,omitempty"`
	EmbeddedNote string `json:"embedded_broker_note,omitempty"`

	// NotInterleaved lists the columns not interleaved with the baseline,
	// absent when empty.
	NotInterleaved []string `json:"not_interleaved,omitempty"`
}

// Column is one column of a comparison: a run or a group of runs.
type Column struct {
	Name     string `json:"name"`
	Baseline bool   `json:"baseline"`
	Runs     []uint `json:"runs"`
	// WarmupsExcluded are the warm-up runs left out of the column.
	WarmupsExcluded []uint `json:"warmups_excluded,omitempty"`
	MoreRepetitions int    `json:"more_repetitions"`
}

// Row is one metric of a comparison, a cell per column.
type Row struct {
	Section string   `json:"section"`
	Metric  string   `json:"metric"`
	Unit    string   `json:"unit"`
	Better  Better   `json:"better"`
	Help    string   `json:"help,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Cells   []Cell   `json:"cells"`
	// Headline: the row is tested; false: descriptive.
	Headline bool `json:"headline"`
}

// Cell is one column's figure of a metric: its value (null when the
// column's runs lack the metric), the samples it is the median of and its
// interval; in the other columns than the baseline, its change against
// the baseline (DeltaPct, every row) and for tested changes the test (P,
// PAdj) and the Hodges-Lehmann estimate (ChangeEst in ChangeLo …
// ChangeHi).
type Cell struct {
	Column   string    `json:"column"`
	N        int       `json:"n"`
	Value    *float64  `json:"value"`
	Values   []float64 `json:"values,omitempty"`
	Lo       *float64  `json:"lo"`
	Hi       *float64  `json:"hi"`
	DeltaPct *float64  `json:"median_change_pct"`
	P        *float64  `json:"p_value"`
	Test     string    `json:"test"`
	Verdict  string    `json:"verdict"`
	// Text and Change are the value and the change as the Markdown
	// export shows them.
	Text      string   `json:"text"`
	Change    string   `json:"change"`
	Notes     []string `json:"notes,omitempty"`
	PAdj      *float64 `json:"p_adjusted"`
	ChangeEst *float64 `json:"hl_change_pct"`
	ChangeLo  *float64 `json:"hl_ci_low"`
	ChangeHi  *float64 `json:"hl_ci_high"`
	// HL is the Hodges-Lehmann column's text.
	HL    string `json:"hl"`
	State string `json:"state"`
	// More is the runs per side the change needs.
	More int `json:"more_repetitions"`
}

// Difference is a setting that differs between a comparison's columns.
type Difference struct {
	Setting string    `json:"setting"`
	Values  []*string `json:"values"` // one per column; null: unknown
}

// Warning is what a run's own figures cast doubt on (too few latency
// samples, a short window, …), as text and in parts.
type Warning struct {
	Run           uint     `json:"run"`
	Column        string   `json:"column"`
	Kind          string   `json:"kind"`
	Metrics       []string `json:"metrics,omitempty"`
	Samples       int64    `json:"samples,omitempty"`
	WindowSeconds float64  `json:"window_seconds,omitempty"`
	Text          string   `json:"text"`
}

// ReportSweep is the latency-vs-throughput sweep a report shows: a point
// per configuration and rate.
type ReportSweep struct {
	ID     string             `json:"id"`
	URL    string             `json:"url,omitempty"`
	Labels []string           `json:"labels"`
	Points []ReportSweepPoint `json:"points"`
}

// ReportSweepPoint is one run of a sweep at one rate, with its figures.
type ReportSweepPoint struct {
	Label      string      `json:"label"`
	RatePct    float64     `json:"rate_pct"`
	TargetRate float64     `json:"target_rate"`
	TargetUnit string      `json:"target_unit"`
	Run        uint        `json:"run"`
	URL        string      `json:"url,omitempty"`
	Achieved   SweepFigure `json:"achieved"`
	P50        SweepFigure `json:"p50"`
	P99        SweepFigure `json:"p99"`
	P999       SweepFigure `json:"p999"`
}

// SweepFigure is one figure of a sweep's point, named as the run's metric.
type SweepFigure struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	Better Better  `json:"better,omitempty"`
	Value  float64 `json:"value"`
}

// SweepReport is the document of a report that shows a sweep or a
// latency-target search and compares no runs; Comparison decodes it too.
type SweepReport struct {
	Title   string       `json:"title"`
	Notes   string       `json:"notes,omitempty"`
	URL     string       `json:"url,omitempty"`
	Created string       `json:"created,omitempty"`
	Sweep   *ReportSweep `json:"sweep,omitempty"`
	// SLO is the latency-target search the report shows.
	SLO *SLO `json:"slo,omitempty"`
}
