package wire

// FlameGraph answers GET /api/profiles/{id}/flamegraph. With format=rows
// Rows holds the frames of one view (zoom, width, filters, order) laid
// out as rows, with a search's answer in Rows.Match, Total the total
// kept by the filters and WholeTotal the profile's; Labels lists the
// string labels to filter on and NameVariants the raw frame names merged
// under each normalised one (JVM lambdas' addresses). With format=tree (the default, deprecated)
// Tree holds the whole graph; with format=compact (deprecated) Compact
// holds it flattened.
type FlameGraph struct {
	Compact      *FlameCompact       `json:"compact,omitempty"`
	Function     *TopFunction        `json:"function,omitempty"`
	Labels       map[string][]string `json:"labels,omitempty"`
	NameVariants map[string][]string `json:"name_variants,omitempty"`
	Profile      *ProfileMeta        `json:"profile,omitempty"`
	Rows         *FlameRows          `json:"rows,omitempty"`
	Sample       string              `json:"sample"`
	SampleTypes  []SampleType        `json:"sample_types,omitempty"`
	Top          *FlameTop           `json:"top,omitempty"`
	Total        int64               `json:"total"`
	Tree         *FlameNode          `json:"tree,omitempty"`
	Unit         string              `json:"unit"`
	WholeTotal   int64               `json:"whole_total,omitempty"`
}

// ProfileMeta is a profile as the flame graph and diff answers name it.
type ProfileMeta struct {
	ID    uint   `json:"id"`
	RunID uint   `json:"run_id"`
	Role  string `json:"role"`
	Kind  string `json:"kind"`
	Bytes int64  `json:"bytes"`
	// Samples counts the profile's pprof sample entries: its distinct
	// stacks, not the samples taken.
	Samples  int64 `json:"samples"`
	Uploaded bool  `json:"uploaded,omitempty"`
}

// SampleType names one of a profile's sample values.
type SampleType struct {
	Type string `json:"type"`
	Unit string `json:"unit"`
}

// FlameNode is one frame of a flame graph: Value its cumulative value
// (the root's is the profile's total), Self its flat value. Children are
// sorted by name.
type FlameNode struct {
	Name     string       `json:"name"`
	Value    int64        `json:"value"`
	Self     int64        `json:"self"`
	Children []*FlameNode `json:"children,omitempty"`
}

// FlameCompact is a flame graph flattened: the frames in pre-order,
// Stride integers each (name index, value, self, child count; a diff's
// adds base and base_self, Stride 6), names interned in Names.
type FlameCompact struct {
	Names  []string `json:"names"`
	Nodes  []int64  `json:"nodes"`
	Stride int      `json:"stride,omitempty"`
}

// FlameRows is one view of a flame graph cut to a width (format=rows;
// profiles.Rows documents it): Levels[d] the frames at depth d, Stride
// numbers each (offset, width, value, self[, base, base_self], name
// index; name index -1 a folded run of narrow siblings).
type FlameRows struct {
	Names       []string    `json:"names"`
	Levels      [][]float64 `json:"levels"`
	Stride      int         `json:"stride"`
	Width       int         `json:"width"`
	Order       string      `json:"order"`
	Zoom        string      `json:"zoom"`
	ZoomMissing bool        `json:"zoom_missing,omitempty"`
	Frames      int         `json:"frames"`
	Sent        int         `json:"sent"`
	Match       *RowsMatch  `json:"match,omitempty"`
	// Significant (diffs only) is, per entry of Names, that function's
	// significance verdict on its cumulative share (Diff.Significance):
	// true changed, false tested and not changed, null not tested. It is
	// absent when the diff could not decide (too few runs a side).
	Significant []*bool `json:"significant,omitempty"`
	// View is the graph the rows cut (view=): "" for the flame graph
	// itself, inverted, callers or callees (a function's sandwich).
	View string `json:"view,omitempty"`
}

// FlameTop answers view=top: the functions of the (filtered) graph,
// largest first by Sort, at most Limit of them; Count is how many
// functions the whole graph has.
type FlameTop struct {
	Sort      string        `json:"sort"`
	Limit     int           `json:"limit"`
	Count     int           `json:"count"`
	Functions []TopFunction `json:"functions"`
}

// TopFunction is one function of a top table: Self its flat value summed
// over its frames, Total its cumulative value counted once per stack; a
// diff's BaseSelf and BaseTotal are the base's (normalised; absent: 0).
type TopFunction struct {
	Name      string  `json:"name"`
	Self      float64 `json:"self"`
	Total     float64 `json:"total"`
	BaseSelf  float64 `json:"base_self,omitempty"`
	BaseTotal float64 `json:"base_total,omitempty"`
}

// RowsMatch is a search's answer over the whole tree: the matched totals
// (Total, within the zoomed frame Zoom; a diff's base too), the frames
// counted, and the indexes into FlameRows.Names of the names matched.
type RowsMatch struct {
	Total     float64 `json:"total"`
	Zoom      float64 `json:"zoom"`
	Count     int     `json:"count"`
	BaseTotal float64 `json:"base_total,omitempty"`
	BaseZoom  float64 `json:"base_zoom,omitempty"`
	Names     []int   `json:"names"`
}

// Diff answers GET /api/diff: the differential flame graph of the target
// side against the base side, the functions that changed most and both
// write-path panels. A side is one profile (?base=&target= profile ids;
// Base and Target are set) or the merged profiles of a run set
// (?base_runs=&target_runs=&kind=&role=): RunsBase/RunsTarget are the runs
// merged, ProfilesBase/ProfilesTarget their profiles, Skipped the runs
// left out for lacking one. With format=rows, Rows (with base columns)
// replaces the tree; Total and BaseTotal are what the filters kept,
// WholeTotal and WholeBaseTotal the unfiltered totals, Labels both sides'
// string labels. Tree (format=tree) and Compact (format=compact) are the
// deprecated whole-tree formats.
type Diff struct {
	Base           *ProfileMeta        `json:"base,omitempty"`
	BaseTotal      float64             `json:"base_total,omitempty"`
	Changes        []FunctionChange    `json:"changes,omitempty"`
	Compact        *DiffCompact        `json:"compact,omitempty"`
	Function       *TopFunction        `json:"function,omitempty"`
	Kind           string              `json:"kind,omitempty"`
	Labels         map[string][]string `json:"labels,omitempty"`
	NameVariants   map[string][]string `json:"name_variants,omitempty"`
	Normalization  *Normalization      `json:"normalization,omitempty"`
	ProfilesBase   []uint              `json:"profiles_base,omitempty"`
	ProfilesTarget []uint              `json:"profiles_target,omitempty"`
	Role           string              `json:"role,omitempty"`
	Rows           *FlameRows          `json:"rows,omitempty"`
	RunsBase       []uint              `json:"runs_base,omitempty"`
	RunsTarget     []uint              `json:"runs_target,omitempty"`
	Sample         string              `json:"sample,omitempty"`
	Significance   *DiffSignificance   `json:"significance,omitempty"`
	Skipped        []SkippedRun        `json:"skipped,omitempty"`
	Target         *ProfileMeta        `json:"target,omitempty"`
	Top            *FlameTop           `json:"top,omitempty"`
	Total          float64             `json:"total,omitempty"`
	Tree           *DiffNode           `json:"tree,omitempty"`
	Unit           string              `json:"unit,omitempty"`
	WholeBaseTotal float64             `json:"whole_base_total,omitempty"`
	WholeTotal     float64             `json:"whole_total,omitempty"`
	WritePaths     *DiffWritePaths     `json:"write_paths,omitempty"`
}

// SkippedRun is a run of a run set left out of a diff, and why (it has
// no profile of the kind and role compared). Side is "base" or "target".
type SkippedRun struct {
	RunID  uint   `json:"run_id"`
	Side   string `json:"side"`
	Reason string `json:"reason"`
}

// DiffCompact is a diff flattened: the frames in pre-order, six numbers
// each (name index, value, self, base, base_self, child count; the
// values may be fractions), names interned in Names.
type DiffCompact struct {
	Names  []string  `json:"names"`
	Nodes  []float64 `json:"nodes"`
	Stride int       `json:"stride,omitempty"`
}

// DiffNode is one frame of a differential flame graph: Value and Self are
// the target's, Base and BaseSelf the base's after scaling; each side is
// the mean of its runs, so values may be fractions.
type DiffNode struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Self     float64 `json:"self"`
	Base     float64 `json:"base"`
	BaseSelf float64 `json:"base_self"`
	// Significant is the frame's function's verdict (see FunctionChange),
	// absent when it was not tested.
	Significant *bool       `json:"significant,omitempty"`
	Children    []*DiffNode `json:"children,omitempty"`
}

// DiffSignificance says how a diff's changes were tested: Method
// "welch-log-share" (Welch's t on the log of each run's share of the
// function, Benjamini-Hochberg over the family at Q), the runs each side
// needs (RunsNeeded) and whether both sides have them (Decided; when not,
// every significant and q value is null and the diff cannot separate a
// change from noise). Tested and TestedFlat are the family sizes: the
// functions holding at least 1 % of the pooled total (cumulative, flat).
type DiffSignificance struct {
	Method     string  `json:"method"`
	Q          float64 `json:"q"`
	RunsNeeded int     `json:"runs_needed"`
	Decided    bool    `json:"decided"`
	Tested     int     `json:"tested"`
	TestedFlat int     `json:"tested_flat"`
}

// Normalization says how base values are scaled before they are compared
// with the target's (Mode "none", "total" or "work"), and why.
type Normalization struct {
	Mode    string  `json:"mode"`
	Scale   float64 `json:"scale"`
	Explain string  `json:"explain"`
}

// FunctionChange is how one function's values moved between base and
// target (base values scaled, each side a mean of its runs); the
// percentages are of the base value.
type FunctionChange struct {
	Name         string  `json:"name"`
	BaseFlat     float64 `json:"base_flat"`
	TargetFlat   float64 `json:"target_flat"`
	BaseCum      float64 `json:"base_cum"`
	TargetCum    float64 `json:"target_cum"`
	DeltaFlat    float64 `json:"delta_flat"`
	DeltaCum     float64 `json:"delta_cum"`
	DeltaFlatPct float64 `json:"delta_flat_pct"`
	DeltaCumPct  float64 `json:"delta_cum_pct"`
	// QValue is the Benjamini-Hochberg adjusted p-value of the test on
	// the function's cumulative share, Significant whether it is at most
	// the diff's q, FlatQValue the flat share's: null when the function
	// was not tested (below 1 % of the pooled total) or the diff is not
	// decided (Diff.Significance).
	QValue      *float64 `json:"q_value"`
	Significant *bool    `json:"significant"`
	FlatQValue  *float64 `json:"flat_q_value"`
	// The per-run values the tests compare: each run's cumulative
	// (BaseRuns, TargetRuns) and flat (BaseRunsFlat, TargetRunsFlat)
	// share, its value divided by the run's reference (per record with
	// normalize=work, a fraction of the run's total with total), in the
	// order of Diff.RunsBase and RunsTarget.
	BaseRuns       []float64 `json:"base_runs"`
	TargetRuns     []float64 `json:"target_runs"`
	BaseRunsFlat   []float64 `json:"base_runs_flat"`
	TargetRunsFlat []float64 `json:"target_runs_flat"`
}

// DiffWritePaths are the write-path panels of both profiles of a diff.
type DiffWritePaths struct {
	Base   WritePaths `json:"base"`
	Target WritePaths `json:"target"`
}

// WritePaths answers GET /api/profiles/{id}/writepaths: a profile's socket
// and file I/O split by system call shape, gathering (writev/readv) or
// single-buffer (write/read).
type WritePaths struct {
	Total int64          `json:"total"`
	Unit  string         `json:"unit"`
	Rows  []WritePathRow `json:"rows"`
}

// WritePathRow is one (direction, path) class of samples: Direction
// "write" or "read", Path "gather", "single" or "unknown".
type WritePathRow struct {
	Direction string   `json:"direction"`
	Path      string   `json:"path"`
	Value     int64    `json:"value"`
	Samples   int64    `json:"samples"`
	Percent   float64  `json:"percent"`
	Frames    []string `json:"frames"`
}
