package wire

// MovedFunction is a function named as a cause of a change between two
// sets of runs (a change point's segments, a regression, kbench check's
// baseline against its candidates): one whose share of the runs' CPU
// profiles changed significantly, ranked by the size of that change with
// callers its named callees explain left out (profiles.RankFunctions).
type MovedFunction struct {
	Name string `json:"name"`
	// Delta is the change of the function's mean cumulative value per
	// unit of the normalisation (FunctionNaming.Normalize: per record
	// for "work", a fraction of the run's total for "total"), target
	// mean − base mean; Base and Target are the two means. DeltaPct is
	// Delta in percent of Base (±100 when Base is 0).
	Delta    float64 `json:"delta"`
	DeltaPct float64 `json:"delta_pct"`
	Base     float64 `json:"base"`
	Target   float64 `json:"target"`
	// QValue is the Benjamini-Hochberg adjusted p-value of the change
	// (Welch's t on the runs' log shares).
	QValue float64 `json:"q_value"`
}

// Statuses of a FunctionNaming.
const (
	// FunctionsComputing: not computed yet (it is, in the background,
	// paused while a local run executes); ask again.
	FunctionsComputing = "computing"
	// FunctionsNamed: computed; Functions lists those that moved (none
	// when no function changed significantly).
	FunctionsNamed = "named"
	// FunctionsNoProfiles: no run of a side has a CPU profile of the
	// client.
	FunctionsNoProfiles = "no_profiles"
	// FunctionsTooFewRuns: a side has fewer runs with profiles than the
	// test needs to decide (RunsNeeded).
	FunctionsTooFewRuns = "too_few_runs"
	// FunctionsFailed: the profiles could not be read (Reason says why).
	FunctionsFailed = "failed"
)

// FunctionNaming says how the functions of a change were named: from
// which runs, normalised how, and whether it is done.
type FunctionNaming struct {
	// Status is one of "computing", "named", "no_profiles",
	// "too_few_runs" or "failed".
	Status string `json:"status"`
	// Kind and Role are the profiles compared ("cpu", "client").
	Kind string `json:"kind"`
	Role string `json:"role"`
	// RunsBase and RunsTarget are the runs compared: those of each side
	// with a profile, at most 25, the nearest to the change.
	RunsBase   []uint `json:"runs_base"`
	RunsTarget []uint `json:"runs_target"`
	// Normalize is "work" (per record: every run has a record count) or
	// "total" (a share of each run's total); Unit is what a delta counts
	// ("nanoseconds/record", "share of total"). Both "" until named.
	Normalize string `json:"normalize,omitempty"`
	Unit      string `json:"unit,omitempty"`
	// RunsNeeded is the runs with profiles each side needs to decide.
	RunsNeeded int `json:"runs_needed"`
	// DiffURL is the run-set differential flame graph of the two sides
	// ("" without runs on both).
	DiffURL string `json:"diff_url,omitempty"`
	// Reason says in words why nothing is named (too few runs, failed).
	Reason string `json:"reason,omitempty"`
}

// Functions answers GET /api/functions: the functions that moved
// between two sets of runs.
type Functions struct {
	FunctionNaming
	Functions []MovedFunction `json:"functions"`
}
