package ui

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// wallViews are a JVM's wall profiles (thread samples converted from a
// flight recording, as kbench stores them) on both profile pages.
func wallViews() (ProfileView, CompareProfilesView) {
	gather := ProfileMeta{ID: 11, RunID: 50, RunLabel: "java-gather", Role: "client", Kind: "wall", Bytes: 9120, Samples: 41}
	single := ProfileMeta{ID: 12, RunID: 51, RunLabel: "java-per-buffer", Role: "client", Kind: "wall", Bytes: 8800, Samples: 37}
	wp := func(path, frame string, v float64) *WritePaths {
		return &WritePaths{Total: 150, Unit: "count", Rows: []WritePathRow{
			{Direction: "write", Path: path, Value: v, Samples: 3, Frames: []string{frame, "sun.nio.ch.IOUtil.write"}},
			{Direction: "read", Path: "single", Value: 50, Samples: 2, Frames: []string{"sun.nio.ch.SocketDispatcher.read0"}},
		}}
	}
	pv := NewProfileView(gather, []string{"samples/count"}, "", "", "", wp("gather", "sun.nio.ch.FileDispatcherImpl.writev0", 95))
	pv.CSRF = "tok"
	cv := NewCompareProfilesView(gather, single, "samples/count", "total",
		Normalization{Mode: "total", Scale: 1, Explain: "both totals are 150 samples"}, false, "",
		[]Change{{Name: "sun.nio.ch.FileDispatcherImpl.write0", TargetFlat: 80, TargetCum: 80}, {Name: "sun.nio.ch.FileDispatcherImpl.writev0", BaseFlat: 95, BaseCum: 95}},
		wp("gather", "sun.nio.ch.FileDispatcherImpl.writev0", 95), wp("single", "sun.nio.ch.FileDispatcherImpl.write0", 80))
	cv.CSRF = "tok"
	return pv, cv
}

// TestGoldenWallProfilePages: a wall profile's page and the comparison of
// two say plainly that wall samples are threads by state, not CPU time;
// a CPU profile's pages say nothing of the kind.
func TestGoldenWallProfilePages(t *testing.T) {
	u := newTestUI(t)
	pv, cv := wallViews()
	page := render(t, u, "profile", pv)
	cmp := render(t, u, "compare_profiles", cv)
	golden.Check(t, "profile_wall.html", page)
	golden.Check(t, "compare_profiles_wall.html", cmp)
	for name, got := range map[string]string{"profile": page, "compare": cmp} {
		if !strings.Contains(got, `<p class="notice" id="kind-note">A wall profile counts thread samples by state, not CPU time`) ||
			!strings.Contains(got, "blocked in native calls") {
			t.Errorf("%s page of wall profiles lacks the note on what wall samples are", name)
		}
	}
	for name, got := range map[string]string{
		"profile": render(t, u, "profile", fixtureProfileView()),
		"compare": render(t, u, "compare_profiles", fixtureCompareView()),
	} {
		if strings.Contains(got, `id="kind-note"`) {
			t.Errorf("%s page of CPU profiles carries the wall note", name)
		}
	}
	if pv.Unit != "count" || pv.Sample != "samples" || pv.FileName != "run50-client-wall.pb.gz" {
		t.Errorf("wall profile view: sample %q unit %q file %q", pv.Sample, pv.Unit, pv.FileName)
	}
}
