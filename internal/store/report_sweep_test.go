package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestReportSweepHoldsRuns: a report that shows a sweep holds back every
// run of the sweep, both phases, as it holds back the runs it compares:
// DeleteRun refuses them naming the report, ReportsUsingRun lists it and
// PruneRuns leaves them, while an old run of a sweep no report shows is
// pruned. An unknown sweep is ErrNotFound and stores nothing.
func TestReportSweepHoldsRuns(t *testing.T) { eachBackend(t, testReportSweepHoldsRuns) }

func testReportSweepHoldsRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	old := time.Now().UTC().Add(-40 * 24 * time.Hour)
	done := func(label string) *Run {
		return &Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, CreatedAt: old, FinishedAt: &old}
	}
	sweep := func(id string, label string) (max, rate *Run) {
		max, rate = done(label+" max"), done(label+" 50%")
		if err := s.CreateSweep(ctx, &Sweep{ID: id, Phase: SweepMaxRate, Configs: "[]", RatesPct: "[50]", Repetitions: 1},
			[]*Run{max}, []SweepRun{{Phase: 1, TargetRate: -1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AdvanceSweep(ctx, id, SweepRates, "[]", []*Run{rate}, []SweepRun{{Phase: 2, RatePct: 50, TargetRate: 500}}); err != nil {
			t.Fatal(err)
		}
		return max, rate
	}
	shownMax, shownRate := sweep("0123456789ab", "shown")
	freeMax, freeRate := sweep("ba9876543210", "free")

	if err := s.CreateReport(ctx, &rundoc.Report{Title: "no such sweep", Sweep: "ffffffffffff"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreateReport(unknown sweep) = %v, want ErrNotFound", err)
	}
	rep := &rundoc.Report{Title: "the sweep", Sweep: "0123456789ab"}
	if err := s.CreateReport(ctx, rep); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetReport(ctx, rep.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sweep != "0123456789ab" || len(got.RunIDs) != 0 {
		t.Errorf("GetReport = %+v, want the sweep and no compared runs", got)
	}

	for _, r := range []*Run{shownMax, shownRate} {
		err := s.DeleteRun(ctx, r.ID)
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), rep.Slug) {
			t.Errorf("DeleteRun(%s, of a reported sweep) = %v, want ErrConflict naming the report", r.Label, err)
		}
		using, err := s.ReportsUsingRun(ctx, r.ID)
		if err != nil || len(using) != 1 || using[0].Slug != rep.Slug {
			t.Errorf("ReportsUsingRun(%s) = %+v, %v; want the report", r.Label, using, err)
		}
	}
	if using, err := s.ReportsUsingRun(ctx, freeMax.ID); err != nil || len(using) != 0 {
		t.Errorf("ReportsUsingRun(a run of a sweep no report shows) = %+v, %v; want none", using, err)
	}

	pruned, err := s.PruneRuns(ctx, time.Now().Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []uint{freeMax.ID, freeRate.ID}
	if slices.Sort(pruned); !slices.Equal(pruned, want) {
		t.Errorf("PruneRuns deleted %v, want %v (the runs of the sweep no report shows)", pruned, want)
	}
	get(t, s, shownMax.ID)
	get(t, s, shownRate.ID)

	// A report comparing runs is unchanged by the sweep column.
	other := done("other")
	create(t, s, other)
	if err := s.CreateReport(ctx, &rundoc.Report{Title: "runs", RunIDs: []uint{other.ID}, By: "run"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRun(ctx, other.ID); !errors.Is(err, ErrConflict) {
		t.Errorf("DeleteRun(compared run) = %v, want ErrConflict", err)
	}
}
