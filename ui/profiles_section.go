package ui

import (
	"html/template"
	"slices"
	"strconv"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// ProfileDiffPlan is one differential profile a comparison's Profiles
// section offers: the runs of a candidate column against the baseline
// column's, each side the runs that have a profile of Kind and Role.
type ProfileDiffPlan struct {
	BaseName, TargetName string
	Base, Target         []uint
	Kind, Role           string
	// Inline: the section draws this diff in the page (the first
	// candidate column's CPU profile, else its wall profile); the others
	// are links.
	Inline bool
}

// Title names the diff: "client cpu: branch against trunk".
func (p ProfileDiffPlan) Title() string {
	return p.Role + " " + p.Kind + ": " + p.TargetName + " against " + p.BaseName
}

// profileKindOrder ranks the kinds a Profiles section lists: what a run
// spent its CPU on first, then its threads' time, then memory and the
// rest by name.
func profileKindOrder(kind string) int {
	switch rundoc.ProfileKind(kind) {
	case rundoc.KindCPU:
		return 0
	case rundoc.KindWall:
		return 1
	case rundoc.KindHeap:
		return 2
	case rundoc.KindAllocs:
		return 3
	}
	return 4
}

// PlanProfileDiffs lists the diffs of a comparison's Profiles section:
// for each candidate column in the table's order (the first column is
// the baseline), each kind and role of profile that runs of both it and
// the baseline have; client before broker, cpu, wall, heap, allocs, then
// the other kinds by name. The first candidate column's client cpu diff
// (its wall diff when its runs have no cpu profile; then the broker's)
// is the inline one, listed first.
func PlanProfileDiffs(t *compare.Table, runs []rundoc.Run) []ProfileDiffPlan {
	if t == nil || len(t.Columns) < 2 {
		return nil
	}
	byID := map[uint]*rundoc.Run{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	type kr struct{ kind, role string }
	// having lists, per kind and role, a column's runs with such a
	// profile, in the column's order.
	having := func(c compare.ColumnInfo) map[kr][]uint {
		out := map[kr][]uint{}
		for _, id := range c.Runs {
			r := byID[id]
			if r == nil {
				continue
			}
			seen := map[kr]bool{}
			for _, p := range r.Profiles {
				k := kr{string(p.Kind), string(p.Role)}
				if !seen[k] {
					seen[k] = true
					out[k] = append(out[k], id)
				}
			}
		}
		return out
	}
	base := having(t.Columns[0])
	var out []ProfileDiffPlan
	for ci, c := range t.Columns[1:] {
		target := having(c)
		var keys []kr
		for k := range target {
			if len(base[k]) > 0 {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b kr) int {
			if a.role != b.role {
				return roleOrder(a.role) - roleOrder(b.role)
			}
			if oa, ob := profileKindOrder(a.kind), profileKindOrder(b.kind); oa != ob {
				return oa - ob
			}
			if a.kind < b.kind {
				return -1
			}
			return 1
		})
		inline := -1
		if ci == 0 {
			for i, k := range keys {
				if k.kind == string(rundoc.KindCPU) || k.kind == string(rundoc.KindWall) {
					inline = i
					break
				}
			}
		}
		start := len(out)
		for i, k := range keys {
			out = append(out, ProfileDiffPlan{BaseName: t.Columns[0].Name, TargetName: c.Name, Base: base[k], Target: target[k],
				Kind: k.kind, Role: k.role, Inline: i == inline})
		}
		if inline > 0 {
			p := out[start+inline]
			copy(out[start+1:start+inline+1], out[start:start+inline])
			out[start] = p
		}
	}
	return out
}

func roleOrder(role string) int {
	switch rundoc.ProfileRole(role) {
	case rundoc.RoleClient:
		return 0
	case rundoc.RoleBroker:
		return 1
	}
	return 2
}

// ProfilesSection is the Profiles section of a comparison (/compare, its
// A/B results, reports): the first candidate column's CPU (or wall) diff
// drawn in the page with its top changes, and links to every other
// column's and kind's run-set diff.
type ProfilesSection struct {
	// None says why there is no diff at all, "" when there is one.
	None string
	// Inline is the diff drawn in the page, nil when none is.
	Inline *InlineProfileDiff
	// Links are the other diffs, each its own page.
	Links []ProfileDiffLink
}

// InlineProfileDiff is the diff a Profiles section draws in the page.
type InlineProfileDiff struct {
	Title        string
	Base, Target []RunLink
	CompareURL   string
	// FlameGraph carries its first view in Initial: the page draws it
	// without a request.
	FlameGraph FlameGraph
	// PerUnit says what the table's Δ is of: "per record" or "of each
	// run's total".
	PerUnit string
	// Banner says the runs are too few to tell a change from noise, ""
	// when the significance test decided.
	Banner string
	// Tested says how the changes were tested.
	Tested  string
	Changes []ProfileChangeRow
	// Error says why the diff could not be drawn, "" when it was.
	Error string
}

// ProfileChangeRow is one function of an inline diff's top changes.
type ProfileChangeRow struct {
	Name                          string
	DeltaFlat, DeltaCum, DeltaPct string
	Q, FlatQ                      string
	Verdict                       string // "yes", "no", "not tested", "—" undecided
	Class                         string // CSS classes of the row
}

// ProfileDiffLink links a run-set diff of a Profiles section.
type ProfileDiffLink struct {
	Text string
	URL  string
	Runs string // "runs #1, #2 against runs #3, #4"
}

// InlineDiffData is what the server computed for the inline diff: its
// top changes (nil with Err set when it could not be computed), the
// normalisation its data URL asks for, and its first view's rows answer.
type InlineDiffData struct {
	Changes   *compare.ProfileChanges
	Normalize string
	Initial   template.JS
	Err       string
}

// maxInlineChanges is how many functions the inline diff's table lists.
const maxInlineChanges = 15

// NewProfilesSection builds a comparison's Profiles section from its
// plans (PlanProfileDiffs) and, when the first is inline, the server's
// data for it.
func NewProfilesSection(plans []ProfileDiffPlan, runs []rundoc.Run, inline *InlineDiffData) ProfilesSection {
	if len(plans) == 0 {
		return ProfilesSection{None: "No profiles to compare: the baseline column and the other columns need runs with a profile of the same kind and role " +
			"(a run records a client CPU profile with the profile option of its spec)."}
	}
	byID := map[uint]*rundoc.Run{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	links := func(ids []uint) []RunLink {
		out := make([]RunLink, 0, len(ids))
		for _, id := range ids {
			if r := byID[id]; r != nil {
				out = append(out, runLink(r))
			} else {
				out = append(out, RunLink{ID: id, URL: runURL(id), Text: "run #" + uintStr(id)})
			}
		}
		return out
	}
	var sec ProfilesSection
	for _, p := range plans {
		if !p.Inline || inline == nil {
			sec.Links = append(sec.Links, ProfileDiffLink{Text: p.Title(), URL: CompareRunSetsURL(p.Base, p.Target, p.Kind, p.Role, "", ""),
				Runs: runsText(p.Target) + " against " + runsText(p.Base)})
			continue
		}
		d := &InlineProfileDiff{Title: p.Title(), Base: links(p.Base), Target: links(p.Target), Error: inline.Err,
			CompareURL: CompareRunSetsURL(p.Base, p.Target, p.Kind, p.Role, inline.Normalize, ""),
			FlameGraph: FlameGraph{ID: "profiles-diff", DataURL: DiffRunSetsDataURL(p.Base, p.Target, p.Kind, p.Role, inline.Normalize), Mode: "diff",
				Label: "Differential flame graph: " + runsText(p.Target) + " against " + runsText(p.Base), Initial: inline.Initial}}
		if pc := inline.Changes; pc != nil {
			d.PerUnit = "of each run's total"
			if pc.PerRecord {
				d.PerUnit = "per record"
			}
			if !pc.Decided {
				d.Banner = "These runs cannot separate a change from noise: " + numfmt.Plural(pc.BaseRuns, "1 run", strconv.Itoa(pc.BaseRuns)+" runs") +
					" against " + strconv.Itoa(pc.TargetRuns) + ". With " + strconv.Itoa(pc.RunsNeeded) +
					" runs per side the significance test tells which changes are real; until then every change is coloured, noise included."
			}
			d.Tested = "q: the Benjamini-Hochberg adjusted p-value of Welch's t on the log of each run's share, over the functions holding at least 1 % of the total; significant at q ≤ 0.05."
			for _, c := range pc.Changes[:min(len(pc.Changes), maxInlineChanges)] {
				d.Changes = append(d.Changes, profileChangeRow(c, pc))
			}
		}
		sec.Inline = d
	}
	return sec
}

func profileChangeRow(c compare.FunctionChange, pc *compare.ProfileChanges) ProfileChangeRow {
	fig := func(v float64) string {
		if pc.PerRecord {
			return numfmt.SignedProfileValue(v, pc.Unit)
		}
		return numfmt.SignedPercent(v * 100)
	}
	q := func(v *float64) string {
		if v == nil {
			return "—"
		}
		return numfmt.PValue(*v)
	}
	r := ProfileChangeRow{Name: c.Name, DeltaFlat: fig(c.DeltaFlat), DeltaCum: fig(c.DeltaCum), DeltaPct: numfmt.SignedPercent(c.DeltaCumPct),
		Q: q(c.QValue), FlatQ: q(c.FlatQValue)}
	switch {
	case c.Significant == nil && !pc.Decided:
		r.Verdict, r.Class = "—", "sig-undecided"
	case c.Significant == nil:
		r.Verdict, r.Class = "not tested", "sig-untested"
	case *c.Significant:
		r.Verdict, r.Class = "yes", "sig-yes"
		if c.DeltaCum > 0 {
			r.Class += " sig-grew"
		} else {
			r.Class += " sig-shrank"
		}
	default:
		r.Verdict, r.Class = "no", "sig-no"
	}
	return r
}

// qValueText formats a q value, "—" when the function was not tested.
func qValueText(q *float64) string {
	if q == nil {
		return "—"
	}
	return numfmt.PValue(*q)
}

// verdictText words a significance verdict: "yes", "no", or "—" when
// the function was not tested.
func verdictText(sig *bool) string {
	switch {
	case sig == nil:
		return "—"
	case *sig:
		return "yes"
	}
	return "no"
}
