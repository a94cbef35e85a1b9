package ui

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/testutil/golden"
)

func fixtureRunSetsView() CompareProfilesView {
	base, target := fixtureMeta()
	base2, target2 := base, target
	base2.ID, base2.RunID = base.ID+100, base.RunID+100
	target2.ID, target2.RunID = target.ID+100, target.RunID+100
	sets := RunSets{BaseRuns: []uint{base.RunID, base2.RunID, 77}, TargetRuns: []uint{target.RunID, target2.RunID}, Kind: "cpu", Role: "client",
		Base: []ProfileMeta{base, base2}, Target: []ProfileMeta{target, target2},
		Skipped: []SkippedRun{{RunID: 77, Side: "base", Reason: "no cpu profile of the client"}}}
	changes := []Change{{Name: "runtime.mallocgc", BaseFlat: 5e8, TargetFlat: 4.5e8, BaseCum: 9e8, TargetCum: 8.25e8}}
	v := NewCompareRunSetsView(sets, "cpu/nanoseconds", "total",
		Normalization{Mode: "total", Scale: 1.02, Explain: "every run scaled so that its total equals the target runs' mean total"},
		true, "", changes, fixtureWritePaths(1), fixtureWritePaths(1.1))
	v.CSRF = "tok"
	return v
}

func TestGoldenCompareRunSetsPage(t *testing.T) {
	u := newTestUI(t)
	golden.Check(t, "compare_profiles_runsets.html", render(t, u, "compare_profiles", fixtureRunSetsView()))
}

// TestNewCompareRunSetsView: every link and form of the page names the
// run sets, never one profile a side.
func TestNewCompareRunSetsView(t *testing.T) {
	v := fixtureRunSetsView()
	base, target := fixtureMeta()
	sets := JoinIDs([]uint{base.RunID, base.RunID + 100, 77})
	for _, c := range []struct{ name, got, want string }{
		{"diff data", v.Diff.DataURL, "/api/diff?base_runs=" + strings.ReplaceAll(sets, ",", "%2C")},
		{"swap", v.SwapURL, "/compare/profiles?base_runs=" + strings.ReplaceAll(JoinIDs([]uint{target.RunID, target.RunID + 100}), ",", "%2C")},
		{"pprof", v.PprofURL, "/diff/runs/cpu/client/" + sets + "/"},
		{"download", v.BaseDownloadURL, "/api/diff/profile.pb.gz?base_runs="},
		{"change search", v.Changes[0].SearchURL, "/compare/profiles?base_runs="},
	} {
		if !strings.HasPrefix(c.got, c.want) {
			t.Errorf("%s = %q, want a URL starting %q", c.name, c.got, c.want)
		}
	}
	if len(v.FormFields) != 4 || v.FormFields[0] != (HiddenField{"base_runs", sets}) || v.FormFields[2] != (HiddenField{"kind", "cpu"}) {
		t.Errorf("form fields %+v", v.FormFields)
	}
	if !strings.Contains(v.Page.Title, "2 runs with 2 runs") || v.Sets.Skipped[0].URL != "/runs/77" {
		t.Errorf("title %q, skipped %+v", v.Page.Title, v.Sets.Skipped)
	}
}
