// The Profiles section of a comparison (/compare, its A/B results and
// reports): the first candidate column's diff drawn from the page, its
// top changes, and the table the Markdown export carries.

package server

import (
	"context"
	"encoding/json"
	"html/template"
	"net/url"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/profileset"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

// maxExportChanges is how many functions the Profiles section's table
// and the Markdown export list.
const maxExportChanges = 15

// profilesSection builds a comparison's Profiles section from its table
// and runs (read with their profiles), and the top-changes table of its
// inline diff for the Markdown export (nil when there is none). base is
// the scheme and host the export's link starts with ("" for a relative
// link).
func (s *Server) profilesSection(ctx context.Context, t *compare.Table, runs []rundoc.Run, base string) (ui.ProfilesSection, *compare.ProfileChanges) {
	plans := ui.PlanProfileDiffs(t, runs)
	var inline *ui.InlineDiffData
	var pc *compare.ProfileChanges
	if len(plans) > 0 && plans[0].Inline {
		inline, pc = s.inlineDiff(ctx, plans[0])
		if pc != nil {
			pc.URL = base + pc.URL
		}
	}
	return ui.NewProfilesSection(plans, runs, inline), pc
}

// inlineDiff computes the inline diff of plan p: per record when every
// run has a record count, else as shares of each run's total; its first
// view as the rows API answers it (the page draws it without a request)
// and its top changes. A diff that cannot be computed says why.
func (s *Server) inlineDiff(ctx context.Context, p ui.ProfileDiffPlan) (*ui.InlineDiffData, *compare.ProfileChanges) {
	fail := func(err error) (*ui.InlineDiffData, *compare.ProfileChanges) {
		s.log.Error("the Profiles section's diff", "base_runs", p.Base, "target_runs", p.Target, "kind", p.Kind, "role", p.Role, "err", err)
		return &ui.InlineDiffData{Normalize: "total", Err: "The differential profile could not be computed: " + err.Error()}, nil
	}
	set, err := profileset.Load(ctx, s.store, s.parsedProfile, profileset.Query{BaseRuns: p.Base, TargetRuns: p.Target, Kind: p.Kind, Role: p.Role})
	if err != nil {
		return fail(err)
	}
	normalize := "total"
	if len(set.WorkReasons()) == 0 {
		normalize = "work"
	}
	cmp, err := s.normalized(set, normalize)
	if err != nil {
		return fail(err)
	}
	cmp.kind, cmp.role = p.Kind, p.Role
	view, err := readView(url.Values{})
	if err != nil {
		return fail(err)
	}
	body, stats, err := s.diffRowsAnswer(ctx, cmp, view)
	if err != nil {
		return fail(err)
	}
	js, err := json.Marshal(body)
	if err != nil {
		return fail(err)
	}
	pc := &compare.ProfileChanges{Title: p.Title(), Unit: cmp.unit, PerRecord: normalize == "work", Decided: stats.res.Decided,
		RunsNeeded: stats.res.RunsNeeded, BaseRuns: len(stats.res.BaseRuns), TargetRuns: len(stats.res.TargetRuns),
		URL: ui.CompareRunSetsURL(p.Base, p.Target, p.Kind, p.Role, normalize, "")}
	for _, ch := range stats.changes[:min(len(stats.changes), maxExportChanges)] {
		fc := compare.FunctionChange{Name: ch.Name, DeltaCumPct: ch.DeltaCumPct, QValue: ch.QValue, FlatQValue: ch.FlatQValue, Significant: ch.Significant}
		// Per unit of the runs' references: the shares' mean changes.
		if f, ok := stats.res.Function(ch.Name); ok {
			fc.DeltaFlat, fc.DeltaCum = f.DeltaFlat, f.Delta
		}
		pc.Changes = append(pc.Changes, fc)
	}
	// json.Marshal escapes <, > and &: the answer is safe inside the
	// page's inert script element.
	return &ui.InlineDiffData{Changes: pc, Normalize: normalize, Initial: template.JS(js)}, pc
}
