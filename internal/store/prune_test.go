package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestPruneRuns deletes the finished runs that ended before the cutoff and
// that no report uses, with their children; everything else stays.
func TestPruneRuns(t *testing.T) { eachBackend(t, testPruneRuns) }

func testPruneRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-2*24*time.Hour)
	at := func(t time.Time) *time.Time { return &t }

	oldDone := &Run{Label: "old", Status: rundoc.StatusSucceeded, CreatedAt: old, FinishedAt: at(old),
		Metrics: []Metric{{Name: "x", Value: 1}}, Series: []SeriesPoint{{Seq: 0, T: 1}},
		Profiles: []Profile{{Role: "client", Kind: "cpu", Data: []byte("p")}}}
	oldFailed := &Run{Label: "old failed", Status: rundoc.StatusFailed, CreatedAt: old, FinishedAt: at(old)}
	// Created long ago but finished recently: its age is its finish.
	longRun := &Run{Label: "long", Status: rundoc.StatusSucceeded, CreatedAt: old, FinishedAt: at(recent)}
	oldInReport := &Run{Label: "reported", Status: rundoc.StatusSucceeded, CreatedAt: old, FinishedAt: at(old)}
	recentDone := &Run{Label: "recent", Status: rundoc.StatusSucceeded, CreatedAt: recent, FinishedAt: at(recent)}
	oldQueued := &Run{Label: "still queued", CreatedAt: old}
	oldRunning := &Run{Label: "still running", CreatedAt: old}
	// A final run without a finish time (none is stored that way today,
	// but the column allows it) ages from its creation.
	oldNoFinish := &Run{Label: "no finish", Status: rundoc.StatusCanceled, CreatedAt: old}
	create(t, s, oldDone, oldFailed, longRun, oldInReport, recentDone, oldQueued, oldRunning, oldNoFinish)
	if err := s.StartRun(ctx, oldRunning.ID, old); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec("UPDATE runs SET finished_at = NULL WHERE id = ?", oldNoFinish.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.CreateReport(ctx, &rundoc.Report{Title: "keep", RunIDs: []uint{oldInReport.ID}}); err != nil {
		t.Fatal(err)
	}

	gen := s.Generation()
	got, err := s.PruneRuns(ctx, now.Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []uint{oldDone.ID, oldFailed.ID, oldNoFinish.ID}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("PruneRuns deleted %v, want %v", got, want)
	}
	if s.Generation() == gen {
		t.Error("PruneRuns did not bump the generation")
	}
	for _, id := range want {
		if _, err := s.GetRun(ctx, id); err == nil {
			t.Errorf("run %d is still there", id)
		}
		for _, table := range []string{"metrics", "series_points", "profiles"} {
			if n := rowCount(t, s, table, id); n != 0 {
				t.Errorf("%d %s rows of pruned run %d left", n, table, id)
			}
		}
	}
	for _, r := range []*Run{longRun, oldInReport, recentDone, oldQueued, oldRunning} {
		get(t, s, r.ID)
	}
	// Nothing more to prune: an empty answer, no write.
	gen = s.Generation()
	if got, err := s.PruneRuns(ctx, now.Add(-30*24*time.Hour)); err != nil || len(got) != 0 {
		t.Errorf("second PruneRuns = %v, %v; want nothing", got, err)
	}
	if s.Generation() != gen {
		t.Error("a PruneRuns that deleted nothing changed the generation (cached pages would be dropped for nothing)")
	}
}

// TestPruneRunsInBatches: more runs than one batch are all pruned.
func TestPruneRunsInBatches(t *testing.T) { eachBackend(t, testPruneRunsInBatches) }

func testPruneRunsInBatches(t *testing.T) {
	s := newStore(t)
	old := time.Now().UTC().Add(-100 * 24 * time.Hour)
	var runs []*Run
	for range pruneBatch*2 + 3 {
		runs = append(runs, &Run{Status: rundoc.StatusSucceeded, CreatedAt: old, FinishedAt: &old})
	}
	create(t, s, runs...)
	got, err := s.PruneRuns(context.Background(), time.Now().Add(-time.Hour))
	if err != nil || len(got) != len(runs) {
		t.Fatalf("PruneRuns = %d runs, %v; want %d", len(got), err, len(runs))
	}
	if n, _ := s.CountRuns(context.Background()); n != 0 {
		t.Errorf("%d runs left", n)
	}
}

// TestReportsUsingRun lists the reports that hold a run back.
func TestReportsUsingRun(t *testing.T) { eachBackend(t, testReportsUsingRun) }

func testReportsUsingRun(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, b := &Run{Status: rundoc.StatusSucceeded}, &Run{Status: rundoc.StatusSucceeded}
	create(t, s, a, b)
	r1 := &rundoc.Report{Title: "first", RunIDs: []uint{a.ID}}
	r2 := &rundoc.Report{Title: "second", RunIDs: []uint{b.ID, a.ID}}
	for _, r := range []*rundoc.Report{r1, r2} {
		if err := s.CreateReport(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ReportsUsingRun(ctx, a.ID)
	if err != nil || len(got) != 2 || got[0].Slug != r1.Slug || got[1].Title != "second" {
		t.Errorf("ReportsUsingRun(a) = %+v, %v; want both reports, oldest first", got, err)
	}
	if got, err := s.ReportsUsingRun(ctx, 999); err != nil || len(got) != 0 {
		t.Errorf("ReportsUsingRun(unknown) = %v, %v; want none", got, err)
	}
}
