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

// TestSLOSteps: a search advances only from the step its caller decided
// from, so of two servers deciding the same step one stores its runs and
// the other gets ErrConflict with nothing stored; it ends once, and a
// cancel (any step) and an end (one step) racing end it once.
func TestSLOSteps(t *testing.T) { eachBackend(t, testSLOSteps) }

func testSLOSteps(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	queued := func(label string) *Run { return &Run{Label: label, Workload: "producer", Status: rundoc.StatusQueued} }
	slo := &SLO{ID: "0123456789ab", Config: "{}", Search: "{}"}
	if err := s.CreateSLO(ctx, slo, []*Run{queued("max")}, []SLORun{{Probe: 0, Max: true}}); err != nil {
		t.Fatal(err)
	}
	if slo.Steps != 1 || slo.Phase != SLOSearching {
		t.Fatalf("created %+v, want step 1, searching", slo)
	}
	if err := s.AdvanceSLO(ctx, slo.ID, 1, []*Run{queued("1000/s")}, []SLORun{{Probe: 1, Rate: 1000}}); err != nil {
		t.Fatal(err)
	}
	// A second server that decided from step 1 too.
	err := s.AdvanceSLO(ctx, slo.ID, 1, []*Run{queued("late")}, []SLORun{{Probe: 1, Rate: 1000}})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("AdvanceSLO from a stale step = %v, want ErrConflict", err)
	}
	got, links, err := s.GetSLO(ctx, slo.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps != 2 || len(links) != 2 || links[1].Step != 2 || links[1].Rate != 1000 || !links[0].Max {
		t.Errorf("after one advance: %+v, links %+v; want step 2 and two links", got, links)
	}
	if n, _ := s.CountRuns(ctx); n != 2 {
		t.Errorf("%d runs stored, want 2: the refused advance stores none", n)
	}
	if err := s.EndSLO(ctx, slo.ID, 1, SLOEnd{Phase: SLODone, Outcome: "found"}); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "step 2") {
		t.Errorf("EndSLO at a stale step = %v, want ErrConflict naming step 2", err)
	}
	if err := s.EndSLO(ctx, slo.ID, 2, SLOEnd{Phase: SLODone, Outcome: "found", Lo: 900, Hi: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := s.EndSLO(ctx, slo.ID, -1, SLOEnd{Phase: SLOCanceled}); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "has ended") {
		t.Errorf("cancel after the end = %v, want ErrConflict", err)
	}
	if err := s.EndSLO(ctx, "ffffffffffff", -1, SLOEnd{Phase: SLOCanceled}); !errors.Is(err, ErrNotFound) {
		t.Errorf("EndSLO(unknown) = %v, want ErrNotFound", err)
	}
	got, _, _ = s.GetSLO(ctx, slo.ID)
	if got.Phase != SLODone || got.Outcome != "found" || got.Lo != 900 || got.Hi != 1000 || got.EndedAt == nil {
		t.Errorf("ended %+v", got)
	}
	if list, err := s.ListSLOs(ctx, SLOSearching, 0); err != nil || len(list) != 0 {
		t.Errorf("ListSLOs(searching) = %v, %v; want none", list, err)
	}
	if _, _, err := s.GetSLO(ctx, "ffffffffffff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetSLO(unknown) = %v, want ErrNotFound", err)
	}
}

// TestReportSLOHoldsRuns: a report that shows a search holds back its
// runs as one showing a sweep does.
func TestReportSLOHoldsRuns(t *testing.T) { eachBackend(t, testReportSLOHoldsRuns) }

func testReportSLOHoldsRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	old := time.Now().UTC().Add(-40 * 24 * time.Hour)
	done := func(label string) *Run {
		return &Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, CreatedAt: old, FinishedAt: &old}
	}
	search := func(id string) []*Run {
		runs := []*Run{done(id + " max"), done(id + " probe")}
		if err := s.CreateSLO(ctx, &SLO{ID: id}, runs[:1], []SLORun{{Max: true}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AdvanceSLO(ctx, id, 1, runs[1:], []SLORun{{Probe: 1, Rate: 500}}); err != nil {
			t.Fatal(err)
		}
		return runs
	}
	shown, free := search("0123456789ab"), search("ba9876543210")
	if err := s.CreateReport(ctx, &rundoc.Report{Title: "no such search", SLO: "ffffffffffff"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreateReport(unknown search) = %v, want ErrNotFound", err)
	}
	rep := &rundoc.Report{Title: "the search", SLO: "0123456789ab"}
	if err := s.CreateReport(ctx, rep); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetReport(ctx, rep.Slug); err != nil || got.SLO != "0123456789ab" {
		t.Errorf("GetReport = %+v, %v; want the search", got, err)
	}
	for _, r := range shown {
		if err := s.DeleteRun(ctx, r.ID); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), rep.Slug) {
			t.Errorf("DeleteRun(%s, of a reported search) = %v, want ErrConflict naming the report", r.Label, err)
		}
	}
	pruned, err := s.PruneRuns(ctx, time.Now().Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []uint{free[0].ID, free[1].ID}
	if slices.Sort(pruned); !slices.Equal(pruned, want) {
		t.Errorf("PruneRuns deleted %v, want %v (the runs of the search no report shows)", pruned, want)
	}
}
