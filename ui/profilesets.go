package ui

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// RunSets names the sides of a comparison of merged run sets: the runs
// asked for, the profile of each that was merged, and the runs skipped
// because they lack a profile of that kind and role.
type RunSets struct {
	BaseRuns, TargetRuns []uint
	Kind, Role           string
	// Base and Target are the merged profiles, one per run, in order.
	Base, Target []ProfileMeta
	Skipped      []SkippedRun
}

// SkippedRun is a run left out of a side, and why.
type SkippedRun struct {
	RunID  uint
	Side   string // "base" or "target"
	Reason string
	URL    string
}

// HiddenField is a hidden field a page's forms carry to keep what they
// compare.
type HiddenField struct{ Name, Value string }

// RunSetsQuery is the query naming two run sets: base_runs, target_runs,
// kind and role, with normalize and sample when set.
func RunSetsQuery(baseRuns, targetRuns []uint, kind, role, normalize, sample string) url.Values {
	q := url.Values{"base_runs": {JoinIDs(baseRuns)}, "target_runs": {JoinIDs(targetRuns)}, "kind": {kind}, "role": {role}}
	if normalize != "" {
		q.Set("normalize", normalize)
	}
	if sample != "" {
		q.Set("sample", sample)
	}
	return q
}

// CompareRunSetsURL is the page comparing the merged profiles of two run
// sets; normalize and sample may be "".
func CompareRunSetsURL(baseRuns, targetRuns []uint, kind, role, normalize, sample string) string {
	return CompareProfilesPath + "?" + RunSetsQuery(baseRuns, targetRuns, kind, role, normalize, sample).Encode()
}

// DiffRunSetsPprofURL is pprof's web UI of the difference of two merged
// run sets: the sets travel in the path, since pprof's own links keep the
// path and drop the query.
func DiffRunSetsPprofURL(baseRuns, targetRuns []uint, kind, role string) string {
	return "/diff/runs/" + url.PathEscape(kind) + "/" + url.PathEscape(role) + "/" + JoinIDs(baseRuns) + "/" + JoinIDs(targetRuns) + "/pprof/"
}

// DiffRunSetsProfileURL downloads one side ("base" or "target") of a
// run-set comparison as a merged pprof profile.
func DiffRunSetsProfileURL(side string, baseRuns, targetRuns []uint, kind, role, normalize, sample string) string {
	q := RunSetsQuery(baseRuns, targetRuns, kind, role, normalize, sample)
	q.Set("side", side)
	return DiffAPIPath + "/profile.pb.gz?" + q.Encode()
}

// DiffRunSetsDataURL is the run-set diff as the flame graph widget reads
// it (format=rows).
func DiffRunSetsDataURL(baseRuns, targetRuns []uint, kind, role, normalize string) string {
	q := RunSetsQuery(baseRuns, targetRuns, kind, role, normalize, "")
	q.Set("format", "rows")
	return DiffAPIPath + "?" + q.Encode()
}

// runsText names runs for a label: "run #3" or "runs #3, #4, #5".
func runsText(ids []uint) string {
	if len(ids) == 1 {
		return "run #" + uintStr(ids[0])
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = "#" + uintStr(id)
	}
	return "runs " + strings.Join(s, ", ")
}

// JoinIDs writes ids as a query holds them: "3,4,5" (rundoc.JoinIDs).
func JoinIDs(ids []uint) string { return rundoc.JoinIDs(ids) }

// NewCompareRunSetsView builds the comparison of two merged run sets: the
// page NewCompareProfilesView builds, with its links, forms and diff
// graph naming the run sets, and the runs of each side listed. sets.Base
// and sets.Target must not be empty.
func NewCompareRunSetsView(sets RunSets, sample, normalize string, norm Normalization, workAvailable bool, workReason string, changes []Change, wpBase, wpTarget *WritePaths) CompareProfilesView {
	v := NewCompareProfilesView(sets.Base[0], sets.Target[0], sample, normalize, norm, workAvailable, workReason, changes, wpBase, wpTarget)
	for i := range sets.Skipped {
		sets.Skipped[i].URL = runURL(sets.Skipped[i].RunID)
	}
	v.Sets = &sets
	v.Page.Title = "Compare " + runsWord(len(sets.Base)) + " with " + runsWord(len(sets.Target)) + " · " + sets.Kind + " of the " + sets.Role
	sample = v.Sample
	query := func() url.Values {
		return RunSetsQuery(sets.BaseRuns, sets.TargetRuns, sets.Kind, sets.Role, v.Normalize, sample)
	}
	v.FormFields = []HiddenField{{"base_runs", JoinIDs(sets.BaseRuns)}, {"target_runs", JoinIDs(sets.TargetRuns)},
		{"kind", sets.Kind}, {"role", sets.Role}}
	v.PprofURL = pprofURL(DiffRunSetsPprofURL(sets.BaseRuns, sets.TargetRuns, sets.Kind, sets.Role), sample)
	v.SwapURL = CompareRunSetsURL(sets.TargetRuns, sets.BaseRuns, sets.Kind, sets.Role, normalize, sample)
	v.BaseDownloadURL = DiffRunSetsProfileURL("base", sets.BaseRuns, sets.TargetRuns, sets.Kind, sets.Role, v.Normalize, sample)
	v.TargetDownloadURL = DiffRunSetsProfileURL("target", sets.BaseRuns, sets.TargetRuns, sets.Kind, sets.Role, v.Normalize, sample)
	q := query()
	q.Set("format", "rows")
	v.Diff.DataURL = DiffAPIPath + "?" + q.Encode()
	v.Diff.Label = "Differential flame graph: " + runsWord(len(sets.Target)) + " against " + runsWord(len(sets.Base))
	for i := range v.Changes {
		q := query()
		q.Set("search", v.Changes[i].SearchRegexp)
		v.Changes[i].SearchURL = CompareProfilesPath + "?" + q.Encode() + "#" + v.Diff.ID
	}
	return v
}

func runsWord(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}
