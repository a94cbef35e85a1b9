package ui

import (
	"html/template"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// The profile pages: one profile's flame graph (page "profile") and two
// profiles compared (page "compare_profiles"). The server turns what the
// profiles package computes into the types below: ui imports neither
// profiles nor net/http. The flame graphs themselves are drawn in the
// browser by static/flamegraph.js from the JSON endpoints named here.

// URL paths of the profile pages and of the JSON they draw.
const (
	ProfilePathPrefix   = "/profiles/"
	CompareProfilesPath = "/compare/profiles"
	DiffAPIPath         = "/api/diff"
)

// Normalisation modes of a comparison.
const (
	NormalizeTotal = "total"
	NormalizeWork  = "work"
	NormalizeNone  = "none"
)

// MaxChangeRows caps the table of the functions that changed most.
const MaxChangeRows = 50

// ProfileMeta describes a stored profile (the "profile" object of the
// flame-graph and diff JSON, plus the run's label).
type ProfileMeta struct {
	ID       uint   `json:"id"`
	RunID    uint   `json:"run_id"`
	RunLabel string `json:"run_label,omitempty"`
	Role     string `json:"role"`
	Kind     string `json:"kind"`
	Bytes    int64  `json:"bytes"`
	Samples  int64  `json:"samples"`
}

// Normalization says how a diff scaled the base profile's values before
// subtracting them from the candidate's.
type Normalization struct {
	Mode    string  `json:"mode"`  // total, work or none
	Scale   float64 `json:"scale"` // the factor applied to the base's values
	Explain string  `json:"explain"`
}

// Change is one function of a diff, base values already normalised. The
// view computes the deltas and percentages from the four values itself;
// the Delta fields mirror the JSON.
type Change struct {
	Name                 string
	BaseFlat, TargetFlat float64
	BaseCum, TargetCum   float64
	DeltaFlat, DeltaCum  float64
	DeltaFlatPct         float64
	DeltaCumPct          float64
	// QValue is the adjusted p-value of the function's cumulative test
	// and Significant its verdict: nil when not tested (too few runs a
	// side, or under 1 % of the total).
	QValue      *float64
	Significant *bool
}

// WritePaths tells how a profile's system calls moved bytes: writev/readv,
// many buffers in one call (Path "gather"), or write/read, one buffer per
// call ("single": one call per buffer of a request, or one per request
// when its buffers were joined first; the profile cannot tell which).
type WritePaths struct {
	Total float64 // the profile's total, in Unit
	Unit  string
	Rows  []WritePathRow
}

// WritePathRow is one direction and path of a WritePaths report.
type WritePathRow struct {
	Direction string // write or read
	Path      string // gather or single
	Value     float64
	Samples   int64
	Percent   float64 // of Total, in percent; recomputed when Total > 0
	Frames    []string
}

// FlameGraph is what a page needs to place a flame graph: the attributes
// of the <div class="flamegraph"> flamegraph.js mounts on.
type FlameGraph struct {
	ID string // element id; its parts get ID-search, ID-match, …
	// DataURL (data-src) is the format=rows API the graph draws from:
	// only the frames wide enough to draw at the current zoom, a subtree
	// fetched on zoom, a search's totals and matches from the server. It
	// carries the page's filters and order (WithView); the page adds
	// zoom, width and search.
	DataURL string
	Mode    string // tree or diff
	Zoom    string // initial zoom: frame names below the root joined with ";"
	Search  string // initial search regexp
	Unit    string
	// ZoomParam and SearchParam name the query parameters that keep the
	// graph's zoom and search in the page's URL.
	ZoomParam   string
	SearchParam string
	Label       string // what the graph shows, for screen readers
	// Views (data-views) turns on static/flameviews.js's views of the
	// graph (the top table, the sandwich, the inverted view): it names
	// the query parameter that keeps the top table's sort, "sort" or
	// "sort-N"; the suffix after "sort" names the graph's other view
	// parameters (view, sandwich, callers_zoom, callees_zoom). "" for
	// none.
	Views string
	// Initial is the first view's format=rows answer, inlined in the
	// page as an inert JSON script element so the graph draws without a
	// request; it comes from json.Marshal, which escapes <, > and &.
	Initial template.JS
}

// WallNote is what the profile pages say about a wall profile, so that
// nobody reads its widths as CPU time.
const WallNote = "A wall profile counts thread samples by state, not CPU time: each sample is a thread caught running Java code " +
	"(state=running, JFR's execution samples) or inside a native method (state=native, JFR's native method samples), " +
	"which includes threads blocked in native calls such as a socket read or write. " +
	"A wide frame is where threads spent their time, busy or waiting."

// KindNote is what a page says about profiles of kind: WallNote for
// wall profiles, "" for the others (their units say what they measure).
func KindNote(kind string) string {
	if kind == string(rundoc.KindWall) {
		return WallNote
	}
	return ""
}

// ProfileView is the page of one profile: its flame graph, the sample
// types to choose from, links to the download and the full pprof UI, a
// form to compare it with another profile, and the write-path panel.
type ProfileView struct {
	Page
	Profile ProfileMeta
	Heading string // "Profile #7: client cpu"
	// KindNote says what the profile's samples are when its kind needs
	// saying (KindNote).
	KindNote string
	RunURL   string
	RunText  string // "run #42 · trunk"
	Size     string
	// SampleCount is the profile's pprof sample entries: its distinct
	// stacks (with their labels), not the samples taken. The page says
	// "Distinct stacks"; the API's field keeps the name "samples".
	SampleCount string
	// Sample is the sample type shown; Unit its unit ("" when unknown).
	Sample      string
	Unit        string
	SampleTypes []Option
	PageURL     string // the page itself, without a query: the forms' action
	FlameGraph  FlameGraph
	// Filters is the filter bar above the graph.
	Filters     FilterBar
	DownloadURL string
	FileName    string
	PprofURL    string
	// CompareAction is where the "compare with profile #" form goes; it
	// sends base (this profile), target and sample.
	CompareAction string
	WritePaths    *WritePathsView
}

// WritePathsView is the write-path panel of one profile.
type WritePathsView struct {
	Unit  string
	Total string
	Rows  []WritePathRowView
}

// WritePathRowView is one line of the write-path panel.
type WritePathRowView struct {
	Direction string
	Path      string
	PathHelp  string
	Value     string
	Percent   string
	Samples   string
	Frames    []string
}

// CompareProfilesView is the comparison of two profiles: both flame graphs
// side by side, the differential flame graph, the normalisation, the
// functions that changed most and the write paths of both.
type CompareProfilesView struct {
	Page
	Base   CompareSide
	Target CompareSide
	// Filters is the filter bar above the graphs: it filters all three.
	Filters FilterBar
	// KindNote says what the profiles' samples are when their kind needs
	// saying (the server compares wall profiles only with each other).
	KindNote string
	Sample   string
	Unit     string
	// Normalize is the normalisation in effect (NormLabel in words);
	// Requested names the one asked for, when it differs (it was not
	// available).
	Normalize   string
	NormLabel   string
	NormExplain string
	NormScale   string // "0.830": what the base's values were multiplied by
	Requested   string
	// RequestedReason says why Requested was not available, when known.
	RequestedReason string
	NormOptions     []NormOption
	FormAction      string
	Diff            FlameGraph
	PprofURL        string
	SwapURL         string
	Changes         []ChangeRow
	// ChangesTotal is how many changed functions the server reported;
	// Changes holds at most MaxChangeRows of them.
	ChangesTotal int
	// WritePaths compares the two write-path reports; HasWritePaths is
	// false when the server had neither.
	HasWritePaths bool
	WritePaths    []WritePathCompareRow
	WritePathUnit string
	BaseWPTotal   string
	TargetWPTotal string
	// Sets is set when the sides are merged run sets (NewCompareRunSetsView);
	// the page then lists their runs instead of one profile a side.
	Sets *RunSets
	// FormFields are the hidden fields naming what is compared.
	FormFields []HiddenField
	// BaseDownloadURL and TargetDownloadURL download the merged sides.
	BaseDownloadURL, TargetDownloadURL string
}

// Sides are the base and the candidate, in that order.
func (v CompareProfilesView) Sides() []CompareSide { return []CompareSide{v.Base, v.Target} }

// CompareSide is one of the two profiles of a comparison.
type CompareSide struct {
	Label      string // Base or Candidate
	Profile    ProfileMeta
	Title      string // "profile #7: client cpu"
	URL        string // the profile's page
	RunURL     string
	RunText    string
	FlameGraph FlameGraph
}

// NormOption is one choice of the normalisation form.
type NormOption struct {
	ID       string
	Value    string
	Label    string
	Help     string
	Checked  bool
	Disabled bool
	Reason   string // why it is disabled
}

// ChangeRow is one function of the "changed most" table, formatted.
type ChangeRow struct {
	Name string
	// SearchURL is this comparison with the function searched in the
	// flame graphs; SearchRegexp the regexp (flamegraph.js applies it
	// without a reload).
	SearchURL    string
	SearchRegexp string
	BaseFlat     string
	TargetFlat   string
	DeltaFlat    string
	DeltaFlatPct string
	FlatClass    string // delta-grew, delta-shrank or ""
	BaseCum      string
	TargetCum    string
	DeltaCum     string
	DeltaCumPct  string
	CumClass     string
	// Q and Verdict are the significance test's q value and verdict on
	// the cumulative share ("yes", "no", "—" not tested).
	Q       string
	Verdict string
}

// WritePathCompareRow is one direction and path of both profiles.
type WritePathCompareRow struct {
	Direction  string
	Path       string
	PathHelp   string
	Base       string
	BasePct    string
	Target     string
	TargetPct  string
	Delta      string
	DeltaPct   string // the change of share, in percentage points
	DeltaClass string
	ShareClass string // DeltaClass for the change of share
	Frames     []string
}

// ProfileURL is a profile's page.
func ProfileURL(id uint) string { return ProfilePathPrefix + uintStr(id) }

// ProfilePprofURL is the full pprof web UI of a profile.
func ProfilePprofURL(id uint) string { return ProfileURL(id) + "/pprof/" }

// DiffPprofURL is the full pprof web UI of the difference target − base.
func DiffPprofURL(base, target uint) string {
	return "/diff/" + uintStr(base) + "/" + uintStr(target) + "/pprof/"
}

// FlameGraphDataURL is a profile's flame graph API in the row format
// (format=rows); sample "" leaves the choice to the server.
func FlameGraphDataURL(id uint, sample string) string {
	q := url.Values{"format": {"rows"}}
	if sample != "" {
		q.Set("sample", sample)
	}
	return "/api/profiles/" + uintStr(id) + "/flamegraph?" + q.Encode()
}

// DiffDataURL is the differential flame graph's API in the row format.
func DiffDataURL(base, target uint, normalize, sample string) string {
	q := compareQuery(base, target, normalize, sample)
	q.Set("format", "rows")
	return DiffAPIPath + "?" + q.Encode()
}

// CompareProfilesURL is the page comparing two profiles.
func CompareProfilesURL(base, target uint, normalize, sample string) string {
	return CompareProfilesPath + "?" + compareQuery(base, target, normalize, sample).Encode()
}

func compareQuery(base, target uint, normalize, sample string) url.Values {
	q := url.Values{"base": {uintStr(base)}, "target": {uintStr(target)}}
	if normalize != "" {
		q.Set("normalize", normalize)
	}
	if sample != "" {
		q.Set("sample", sample)
	}
	return q
}

func uintStr(n uint) string { return strconv.FormatUint(uint64(n), 10) }

// NewProfileView builds a profile's page. sampleTypes are the profile's
// sample types, as "cpu" or "cpu/nanoseconds" ("type/unit" also gives the
// unit); sample is the one asked for ("" picks the last, pprof's default);
// zoom and search come from the query and set the flame graph's initial
// zoom and search. wp is nil when the server has no write-path report.
func NewProfileView(meta ProfileMeta, sampleTypes []string, sample, zoom, search string, wp *WritePaths) ProfileView {
	types := parseSampleTypes(sampleTypes)
	sample, unit := splitSample(sample)
	if sample == "" && len(types) > 0 {
		sample = types[len(types)-1].name
	}
	v := ProfileView{
		Page:          Page{Title: "Profile #" + uintStr(meta.ID) + " · " + profileWhat(meta)},
		Profile:       meta,
		Heading:       "Profile #" + uintStr(meta.ID) + ": " + profileWhat(meta),
		KindNote:      KindNote(meta.Kind),
		RunURL:        runURL(meta.RunID),
		RunText:       runText(meta),
		Size:          FormatBytes(meta.Bytes),
		SampleCount:   FormatInt(meta.Samples),
		Sample:        sample,
		PageURL:       ProfileURL(meta.ID),
		DownloadURL:   ProfileDownloadURL(meta.ID),
		FileName:      ProfileFileName(meta.RunID, meta.Role, meta.Kind),
		PprofURL:      pprofURL(ProfilePprofURL(meta.ID), sample),
		CompareAction: CompareProfilesPath,
	}
	found := false
	for _, t := range types {
		selected := t.name == sample
		if selected {
			found = true
			if unit == "" {
				unit = t.unit
			}
		}
		label := t.name
		if t.unit != "" {
			label += " (" + t.unit + ")"
		}
		v.SampleTypes = append(v.SampleTypes, Option{Value: t.name, Label: label, Selected: selected})
	}
	if !found && sample != "" {
		v.SampleTypes = append(v.SampleTypes, Option{Value: sample, Label: sample, Selected: true})
	}
	if unit == "" && wp != nil {
		unit = wp.Unit
	}
	if unit == "" {
		unit = sampleUnits[sample]
	}
	v.Unit = unit
	v.FlameGraph = FlameGraph{
		ID:          "flamegraph",
		DataURL:     FlameGraphDataURL(meta.ID, sample),
		Mode:        "tree",
		Zoom:        zoom,
		Search:      search,
		Unit:        unit,
		ZoomParam:   "zoom",
		SearchParam: "search",
		Label:       "Flame graph of profile #" + uintStr(meta.ID) + sampleSuffix(sample),
		Views:       "sort",
	}
	if wp != nil {
		v.WritePaths = newWritePathsView(*wp, unit)
	}
	return v
}

// NewCompareProfilesView builds the comparison of base and target.
// sample and normalize are what the query asked for (sample may be
// "type/unit"); norm is the normalisation the diff applied; work
// normalisation is offered only when workAvailable, else workReason says
// why not. changes are the diff's functions (the view sorts them by
// |Δ flat|, then |Δ cum|, and keeps MaxChangeRows); wpBase and wpTarget
// may be nil.
func NewCompareProfilesView(base, target ProfileMeta, sample, normalize string, norm Normalization, workAvailable bool, workReason string, changes []Change, wpBase, wpTarget *WritePaths) CompareProfilesView {
	sample, unit := splitSample(sample)
	if unit == "" {
		for _, wp := range []*WritePaths{wpTarget, wpBase} {
			if wp != nil && wp.Unit != "" && unit == "" {
				unit = wp.Unit
			}
		}
	}
	if unit == "" {
		unit = sampleUnits[sample]
	}
	mode := norm.Mode
	if !validNormalize(mode) {
		mode = ""
		if validNormalize(normalize) && (normalize != NormalizeWork || workAvailable) {
			mode = normalize
		}
	}
	v := CompareProfilesView{
		Page:        Page{Title: "Compare profile #" + uintStr(base.ID) + " with profile #" + uintStr(target.ID)},
		Base:        compareSide("Base", base, sample, unit, "base"),
		Target:      compareSide("Candidate", target, sample, unit, "target"),
		KindNote:    KindNote(target.Kind),
		Sample:      sample,
		Unit:        unit,
		Normalize:   mode,
		NormLabel:   normLabels[mode],
		NormExplain: norm.Explain,
		FormAction:  CompareProfilesPath,
		PprofURL:    pprofURL(DiffPprofURL(base.ID, target.ID), sample),
		SwapURL:     CompareProfilesURL(target.ID, base.ID, normalize, sample),
		FormFields:  []HiddenField{{"base", uintStr(base.ID)}, {"target", uintStr(target.ID)}},
	}
	if v.KindNote == "" {
		v.KindNote = KindNote(base.Kind)
	}
	if mode == "" {
		v.NormLabel = "as the server chose"
	}
	if norm.Scale != 0 && !math.IsNaN(norm.Scale) && !math.IsInf(norm.Scale, 0) {
		v.NormScale = FormatNumber(norm.Scale)
	}
	if workReason == "" {
		workReason = "the runs' amounts of work are not known"
	}
	workReason = Sentences([]string{workReason})
	if validNormalize(normalize) && normalize != mode && mode != "" {
		v.Requested = normLabels[normalize]
		if normalize == NormalizeWork && !workAvailable {
			v.RequestedReason = capitalize(workReason)
		}
	}
	for _, m := range []string{NormalizeWork, NormalizeTotal, NormalizeNone} {
		o := NormOption{ID: "norm-" + m, Value: m, Label: normLabels[m], Help: normHelp[m], Checked: m == mode}
		if m == NormalizeWork && !workAvailable {
			o.Disabled = true
			o.Checked = false
			o.Reason = workReason
		}
		v.NormOptions = append(v.NormOptions, o)
	}
	v.Diff = FlameGraph{
		ID:          "diff-flamegraph",
		DataURL:     DiffDataURL(base.ID, target.ID, mode, sample),
		Mode:        "diff",
		Unit:        unit,
		ZoomParam:   "zoom",
		SearchParam: "search",
		Label:       "Differential flame graph: profile #" + uintStr(target.ID) + " against profile #" + uintStr(base.ID),
		Views:       "sort",
	}

	sorted := append([]Change(nil), changes...)
	sort.SliceStable(sorted, func(i, j int) bool {
		x, y := sorted[i], sorted[j]
		a, b := math.Abs(x.TargetFlat-x.BaseFlat), math.Abs(y.TargetFlat-y.BaseFlat)
		if a != b {
			return a > b
		}
		a, b = math.Abs(x.TargetCum-x.BaseCum), math.Abs(y.TargetCum-y.BaseCum)
		if a != b {
			return a > b
		}
		return x.Name < y.Name
	})
	v.ChangesTotal = len(sorted)
	if len(sorted) > MaxChangeRows {
		sorted = sorted[:MaxChangeRows]
	}
	for _, c := range sorted {
		re := "^" + regexp.QuoteMeta(c.Name) + "$"
		q := compareQuery(base.ID, target.ID, mode, sample)
		q.Set("search", re)
		v.Changes = append(v.Changes, ChangeRow{
			Name:         c.Name,
			SearchRegexp: re,
			SearchURL:    CompareProfilesPath + "?" + q.Encode() + "#" + v.Diff.ID,
			BaseFlat:     FormatProfileValue(c.BaseFlat, unit),
			TargetFlat:   FormatProfileValue(c.TargetFlat, unit),
			DeltaFlat:    numfmt.SignedProfileValue(c.TargetFlat-c.BaseFlat, unit),
			DeltaFlatPct: formatDeltaPct(c.BaseFlat, c.TargetFlat),
			FlatClass:    deltaClass(c.TargetFlat - c.BaseFlat),
			BaseCum:      FormatProfileValue(c.BaseCum, unit),
			TargetCum:    FormatProfileValue(c.TargetCum, unit),
			DeltaCum:     numfmt.SignedProfileValue(c.TargetCum-c.BaseCum, unit),
			DeltaCumPct:  formatDeltaPct(c.BaseCum, c.TargetCum),
			CumClass:     deltaClass(c.TargetCum - c.BaseCum),
			Q:            qValueText(c.QValue),
			Verdict:      verdictText(c.Significant),
		})
	}

	if wpBase != nil || wpTarget != nil {
		v.HasWritePaths = true
		v.WritePathUnit, v.WritePaths = compareWritePaths(wpBase, wpTarget, unit)
		if wpBase != nil {
			v.BaseWPTotal = FormatProfileValue(wpBase.Total, v.WritePathUnit)
		}
		if wpTarget != nil {
			v.TargetWPTotal = FormatProfileValue(wpTarget.Total, v.WritePathUnit)
		}
	}
	return v
}

func compareSide(label string, m ProfileMeta, sample, unit, which string) CompareSide {
	return CompareSide{
		Label:   label,
		Profile: m,
		Title:   "profile #" + uintStr(m.ID) + ": " + profileWhat(m),
		URL:     ProfileURL(m.ID),
		RunURL:  runURL(m.RunID),
		RunText: runText(m),
		FlameGraph: FlameGraph{
			ID:          which + "-flamegraph",
			DataURL:     FlameGraphDataURL(m.ID, sample),
			Mode:        "tree",
			Unit:        unit,
			ZoomParam:   which + "_zoom",
			SearchParam: "search",
			Label:       "Flame graph of the " + which + " profile #" + uintStr(m.ID),
		},
	}
}

var normLabels = map[string]string{
	NormalizeTotal: "same total",
	NormalizeWork:  "per unit of work",
	NormalizeNone:  "none",
}

var normHelp = map[string]string{
	NormalizeWork:  "The base is scaled by the ratio of the work both runs did: fair when they did different amounts of work.",
	NormalizeTotal: "The base is scaled to the candidate's total: shows where the time moved, not whether there was more of it.",
	NormalizeNone:  "Raw values: fair only when both runs did the same work.",
}

func validNormalize(m string) bool {
	return m == NormalizeTotal || m == NormalizeWork || m == NormalizeNone
}

// sampleUnits are the units of the sample types Go's profiles carry, for
// when the server names the type without its unit.
var sampleUnits = map[string]string{
	"cpu":           "nanoseconds",
	"samples":       "count",
	"wall":          "nanoseconds",
	"delay":         "nanoseconds",
	"contentions":   "count",
	"alloc_space":   "bytes",
	"inuse_space":   "bytes",
	"alloc_objects": "count",
	"inuse_objects": "count",
	"goroutine":     "count",
	"goroutines":    "count",
}

type sampleType struct{ name, unit string }

func parseSampleTypes(in []string) []sampleType {
	var out []sampleType
	for _, s := range in {
		name, unit := splitSample(s)
		if name == "" {
			continue
		}
		out = append(out, sampleType{name, unit})
	}
	return out
}

// splitSample splits "cpu/nanoseconds" into its type and unit.
func splitSample(s string) (name, unit string) {
	name, unit, _ = strings.Cut(strings.TrimSpace(s), "/")
	return name, unit
}

func sampleSuffix(sample string) string {
	if sample == "" {
		return ""
	}
	return ", " + sample
}

// pprofURL adds pprof's sample index parameter (si) to a pprof UI URL.
func pprofURL(base, sample string) string {
	if sample == "" {
		return base
	}
	return base + "?" + url.Values{"si": {sample}}.Encode()
}

func profileWhat(m ProfileMeta) string {
	return strings.TrimSpace(m.Role + " " + m.Kind)
}

func runText(m ProfileMeta) string {
	s := "run #" + uintStr(m.RunID)
	if m.RunLabel != "" {
		s += " · " + m.RunLabel
	}
	return s
}

// FormatProfileValue formats a profile value with its unit, as the flame
// graph's tooltips do: times as ns, µs, ms or s ("12.35 ms"), bytes as
// binary sizes ("1.5 MiB"), counts as numbers ("1,234")
// ([numfmt.ProfileValue]).
func FormatProfileValue(v float64, unit string) string { return numfmt.ProfileValue(v, unit) }

// formatDeltaPct is the change from base to target in percent of base.
func formatDeltaPct(base, target float64) string {
	switch {
	case base == 0 && target == 0:
		return dash
	case base == 0:
		return "new"
	}
	return numfmt.SignedPercent((target - base) / math.Abs(base) * 100)
}

func deltaClass(d float64) string {
	switch {
	case d > 0:
		return "delta-grew"
	case d < 0:
		return "delta-shrank"
	}
	return ""
}

var pathHelp = map[string]string{
	"gather":  "writev/readv: many buffers in one system call",
	"single":  "write/read: one buffer per system call (one per buffer of a request, or one per request when its buffers were joined first)",
	"unknown": "an I/O call whose shape the stack does not show",
}

func rowPercent(r WritePathRow, total float64) float64 {
	if total > 0 {
		return r.Value / total * 100
	}
	return r.Percent
}

func newWritePathsView(wp WritePaths, unit string) *WritePathsView {
	if wp.Unit != "" {
		unit = wp.Unit
	}
	v := &WritePathsView{Unit: unit, Total: FormatProfileValue(wp.Total, unit)}
	rows := append([]WritePathRow(nil), wp.Rows...)
	sort.SliceStable(rows, func(i, j int) bool { return pathLess(rows[i].Direction, rows[i].Path, rows[j].Direction, rows[j].Path) })
	for _, r := range rows {
		v.Rows = append(v.Rows, WritePathRowView{
			Direction: r.Direction,
			Path:      r.Path,
			PathHelp:  pathHelp[r.Path],
			Value:     FormatProfileValue(r.Value, unit),
			Percent:   numfmt.Percent(rowPercent(r, wp.Total)),
			Samples:   FormatInt(r.Samples),
			Frames:    r.Frames,
		})
	}
	return v
}

// pathLess orders write before read and gather before single.
func pathLess(d1, p1, d2, p2 string) bool {
	rank := func(s string, order ...string) int {
		for i, o := range order {
			if s == o {
				return i
			}
		}
		return len(order)
	}
	if r1, r2 := rank(d1, "write", "read"), rank(d2, "write", "read"); r1 != r2 {
		return r1 < r2
	}
	if d1 != d2 {
		return d1 < d2
	}
	if r1, r2 := rank(p1, "gather", "single"), rank(p2, "gather", "single"); r1 != r2 {
		return r1 < r2
	}
	return p1 < p2
}

func compareWritePaths(base, target *WritePaths, unit string) (string, []WritePathCompareRow) {
	for _, wp := range []*WritePaths{target, base} {
		if wp != nil && wp.Unit != "" {
			unit = wp.Unit
			break
		}
	}
	type key struct{ dir, path string }
	type pair struct {
		b, t       *WritePathRow
		bPct, tPct float64
	}
	rows := map[key]*pair{}
	var keys []key
	get := func(r WritePathRow) *pair {
		k := key{r.Direction, r.Path}
		p := rows[k]
		if p == nil {
			p = &pair{}
			rows[k] = p
			keys = append(keys, k)
		}
		return p
	}
	if base != nil {
		for i := range base.Rows {
			p := get(base.Rows[i])
			p.b = &base.Rows[i]
			p.bPct = rowPercent(base.Rows[i], base.Total)
		}
	}
	if target != nil {
		for i := range target.Rows {
			p := get(target.Rows[i])
			p.t = &target.Rows[i]
			p.tPct = rowPercent(target.Rows[i], target.Total)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return pathLess(keys[i].dir, keys[i].path, keys[j].dir, keys[j].path) })
	var out []WritePathCompareRow
	for _, k := range keys {
		p := rows[k]
		var bv, tv float64
		row := WritePathCompareRow{Direction: k.dir, Path: k.path, PathHelp: pathHelp[k.path], Base: dash, BasePct: dash, Target: dash, TargetPct: dash}
		seen := map[string]bool{}
		addFrames := func(fs []string) {
			for _, f := range fs {
				if !seen[f] {
					seen[f] = true
					row.Frames = append(row.Frames, f)
				}
			}
		}
		if p.b != nil {
			bv = p.b.Value
			row.Base, row.BasePct = FormatProfileValue(bv, unit), numfmt.Percent(p.bPct)
			addFrames(p.b.Frames)
		}
		if p.t != nil {
			tv = p.t.Value
			row.Target, row.TargetPct = FormatProfileValue(tv, unit), numfmt.Percent(p.tPct)
			addFrames(p.t.Frames)
		}
		row.Delta = numfmt.SignedProfileValue(tv-bv, unit)
		row.DeltaClass = deltaClass(tv - bv)
		d := p.tPct - p.bPct
		if math.Abs(d) < 1e-9 { // the same share, up to rounding
			d = 0
		}
		row.ShareClass = deltaClass(d)
		row.DeltaPct = strings.TrimSuffix(numfmt.SignedPercent(d), "%") + " pp"
		if d == 0 {
			row.DeltaPct = "0 pp"
		}
		out = append(out, row)
	}
	return unit, out
}

// RunFlameGraph is the flame graph a run's page shows inline: its first
// CPU profile, the client's first, else its first wall profile.
type RunFlameGraph struct {
	FlameGraph
	ProfileID uint
	Title     string // "client cpu"
	URL       string // the profile's page
	Note      string // KindNote of the profile's kind
}

// runFlameGraph picks the profile the run page draws: the first CPU
// profile of the client, else the first CPU profile; without a CPU
// profile, the first wall profile (a JVM's, converted from its flight
// recording) in the same order; nil when none.
func runFlameGraph(rows []ProfileRow) *RunFlameGraph {
	pick := -1
	for _, kind := range []string{string(rundoc.KindCPU), string(rundoc.KindWall)} {
		for i, p := range rows {
			if p.Kind != kind {
				continue
			}
			if p.Role == "client" {
				pick = i
				break
			}
			if pick < 0 {
				pick = i
			}
		}
		if pick >= 0 {
			break
		}
	}
	if pick < 0 {
		return nil
	}
	p := rows[pick]
	what := strings.TrimSpace(p.Role + " " + p.Kind)
	return &RunFlameGraph{
		FlameGraph: FlameGraph{
			ID:          "run-flamegraph",
			DataURL:     FlameGraphDataURL(p.ID, ""),
			Mode:        "tree",
			ZoomParam:   "zoom",
			SearchParam: "search",
			Label:       "Flame graph of the " + what + " profile #" + uintStr(p.ID),
		},
		ProfileID: p.ID,
		Title:     what,
		URL:       ProfileURL(p.ID),
		Note:      KindNote(p.Kind),
	}
}

// Sentences joins reasons into sentences, each ending with a period; the
// first keeps its case (it may follow "Unavailable: "), the others start
// with a capital.
func Sentences(reasons []string) string {
	var b strings.Builder
	for i, r := range reasons {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if i > 0 {
			r = capitalize(r)
		}
		b.WriteString(r)
		if !strings.HasSuffix(r, ".") {
			b.WriteByte('.')
		}
	}
	return b.String()
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}
