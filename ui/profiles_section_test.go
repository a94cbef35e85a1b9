package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// profiledRuns are runs of three labels (trunk, branch, next), two
// each, with the profiles listed per label.
func profiledRuns(profs map[string][]rundoc.Profile) []rundoc.Run {
	var runs []rundoc.Run
	id := uint(1)
	for _, label := range []string{"trunk", "branch", "next"} {
		for range 2 {
			r := rundoc.Run{ID: id, Label: label, Workload: "producer", Status: rundoc.StatusSucceeded,
				Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: 1000, Unit: "records/s", Better: rundoc.HigherIsBetter}}}
			for _, p := range profs[label] {
				p.ID, p.RunID = id*10+uint(len(r.Profiles)), id
				r.Profiles = append(r.Profiles, p)
			}
			runs = append(runs, r)
			id++
		}
	}
	return runs
}

func TestPlanProfileDiffs(t *testing.T) {
	cpu := rundoc.Profile{Kind: "cpu", Role: "client"}
	wall := rundoc.Profile{Kind: "wall", Role: "client"}
	heap := rundoc.Profile{Kind: "heap", Role: "client"}
	bcpu := rundoc.Profile{Kind: "cpu", Role: "broker"}
	for _, tt := range []struct {
		name  string
		profs map[string][]rundoc.Profile
		want  []string
	}{
		{"cpu inline, others linked", map[string][]rundoc.Profile{"trunk": {heap, cpu, bcpu}, "branch": {cpu, heap, bcpu}, "next": {cpu}},
			[]string{"inline client cpu: branch against trunk [1 2]→[3 4]", "client heap: branch against trunk [1 2]→[3 4]",
				"broker cpu: branch against trunk [1 2]→[3 4]", "client cpu: next against trunk [1 2]→[5 6]"}},
		{"wall when no cpu", map[string][]rundoc.Profile{"trunk": {heap, wall}, "branch": {heap, wall}},
			[]string{"inline client wall: branch against trunk [1 2]→[3 4]", "client heap: branch against trunk [1 2]→[3 4]"}},
		{"heap only: nothing inline", map[string][]rundoc.Profile{"trunk": {heap}, "branch": {heap}},
			[]string{"client heap: branch against trunk [1 2]→[3 4]"}},
		{"broker cpu inline when the client has none", map[string][]rundoc.Profile{"trunk": {bcpu}, "branch": {bcpu, cpu}},
			[]string{"inline broker cpu: branch against trunk [1 2]→[3 4]"}},
		{"baseline without profiles", map[string][]rundoc.Profile{"branch": {cpu}, "next": {cpu}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs := profiledRuns(tt.profs)
			tab, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range PlanProfileDiffs(tab, runs) {
				s := fmt.Sprintf("%s %v→%v", p.Title(), p.Base, p.Target)
				if p.Inline {
					s = "inline " + s
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("plans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestGoldenProfilesSection renders a comparison's Profiles section: the
// inline diff with its first view in the page and its top changes (a
// significant, a tested unchanged and an untested function), a link to
// the other kinds; then an undecided one with its banner.
func TestGoldenProfilesSection(t *testing.T) {
	cpu := rundoc.Profile{Kind: "cpu", Role: "client"}
	heap := rundoc.Profile{Kind: "heap", Role: "client"}
	runs := profiledRuns(map[string][]rundoc.Profile{"trunk": {cpu, heap}, "branch": {cpu, heap}})
	q := CompareQuery{Runs: []uint{1, 2, 3, 4, 5, 6}, By: compare.ByLabel}
	tab, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	yes, no := true, false
	pc := &compare.ProfileChanges{Title: "client cpu: branch against trunk", Unit: "nanoseconds", PerRecord: true, Decided: true, RunsNeeded: 3, BaseRuns: 3, TargetRuns: 3,
		Changes: []compare.FunctionChange{
			{Name: "main.encode", DeltaFlat: 120, DeltaCum: 130, DeltaCumPct: 48.5, QValue: f(0.002), FlatQValue: f(0.004), Significant: &yes},
			{Name: "main.write", DeltaFlat: -3, DeltaCum: -3, DeltaCumPct: -1.2, QValue: f(0.71), FlatQValue: f(0.71), Significant: &no},
			{Name: "main.rare", DeltaFlat: 0.4, DeltaCum: 0.4, DeltaCumPct: 100}}}
	v := NewCompareView(tab, runs, q, "## md")
	v.Profiles = NewProfilesSection(PlanProfileDiffs(tab, runs), runs, &InlineDiffData{Changes: pc, Normalize: "work", Initial: `{"rows":{}}`})
	u := newTestUI(t)
	page := render(t, u, "compare", v)
	for _, want := range []string{`id="profiles-diff-data"`, `flamegraph.js`, `class="sig-yes sig-grew"`, `client heap: branch against trunk`,
		`/compare/profiles?base_runs=1%2C2&amp;kind=heap&amp;role=client&amp;target_runs=3%2C4`} {
		if !strings.Contains(page, want) {
			t.Errorf("the compare page lacks %s", want)
		}
	}
	if strings.Contains(page, `id="profiles-banner"`) {
		t.Error("a decided diff has the undecided banner")
	}
	golden.Check(t, "compare_profiles_section.html", page)

	pc.Decided, pc.BaseRuns, pc.TargetRuns = false, 2, 2
	for i := range pc.Changes {
		pc.Changes[i].QValue, pc.Changes[i].FlatQValue, pc.Changes[i].Significant = nil, nil, nil
	}
	v.Profiles = NewProfilesSection(PlanProfileDiffs(tab, runs), runs, &InlineDiffData{Changes: pc, Normalize: "work", Initial: `{"rows":{}}`})
	page = render(t, u, "compare", v)
	if !strings.Contains(page, `id="profiles-banner"`) || !strings.Contains(page, "3 runs per side") {
		t.Error("an undecided diff lacks the banner naming the runs per side needed")
	}
}
