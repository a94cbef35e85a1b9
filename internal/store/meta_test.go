package store

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestMigrationMetaSeries: a database from before migration
// 0003_meta_series gets every run a time (its start, else its creation)
// and a series (its fingerprint, or for an import its tool and label),
// and no metadata.
func TestMigrationMetaSeries(t *testing.T) {
	s, err := Open(copyFixture(t, "kbench-v0.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[uint]string{1: "f1", 2: "f1", 3: "f2", 4: "imported:imported:imported"}
	for id, series := range want {
		r := get(t, s, id)
		if r.SeriesKey != series {
			t.Errorf("run %d: series %q, want %q", id, r.SeriesKey, series)
		}
		wantTime := r.CreatedAt
		if r.StartedAt != nil {
			wantTime = *r.StartedAt
		}
		if r.Time.IsZero() || !r.Time.Equal(wantTime) {
			t.Errorf("run %d: time %v, want %v (started %v, created %v)", id, r.Time, wantTime, r.StartedAt, r.CreatedAt)
		}
		if r.Meta != nil {
			t.Errorf("run %d: meta %v, want none", id, r.Meta)
		}
	}
	list, _, err := s.ListRuns(context.Background(), RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.SeriesKey != want[r.ID] || r.Time.IsZero() {
			t.Errorf("list: run %d: series %q time %v", r.ID, r.SeriesKey, r.Time)
		}
	}
	// A history reads its series in time order from the index.
	plan := queryPlan(t, s, "SELECT id FROM runs WHERE series = ? AND status = ? ORDER BY run_at, id", "f1", "succeeded")
	if !strings.Contains(plan, "idx_runs_series_status") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("history plan %q, want a walk of idx_runs_series_status without a sort", plan)
	}
}

// TestMetaSeriesTime: metadata is stored and read back; the series is
// the fingerprint on the run's branch, the tool and label of an import,
// or the one a run names; the time is the creation, then the start, or
// the one given.
func TestMetaSeriesTime(t *testing.T) { eachBackend(t, testMetaSeriesTime) }

func testMetaSeriesTime(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	meta := Meta{"commit": "abc123", "branch": "trunk"}
	at := time.Date(2022, 6, 21, 10, 0, 0, 0, time.UTC)
	launched := &Run{Label: "l", Workload: rundoc.Producer, Fingerprint: "0123456789abcdef", Meta: meta}
	plain := &Run{Label: "l", Workload: rundoc.Producer, Fingerprint: "0123456789abcdef"}
	imported := &Run{Label: "java a@b", Workload: rundoc.Producer, Source: rundoc.SourceImported, Status: rundoc.StatusSucceeded,
		Meta: Meta{"branch": "trunk"}, RunAt: at}
	named := &Run{Label: "x", Workload: rundoc.Producer, Source: rundoc.SourceImported, Status: rundoc.StatusSucceeded,
		SeriesKey: "0123456789abcdef@trunk"}
	before := time.Now()
	create(t, s, launched, plain, imported, named)
	for _, tc := range []struct {
		run    *Run
		series string
		meta   map[string]string
	}{
		{launched, "0123456789abcdef@trunk", meta},
		{plain, "0123456789abcdef", nil},
		{imported, "imported:producer:java a%40b@trunk", map[string]string{"branch": "trunk"}},
		{named, "0123456789abcdef@trunk", nil},
	} {
		got := get(t, s, tc.run.ID)
		if got.SeriesKey != tc.series || !maps.Equal(got.Meta, tc.meta) {
			t.Errorf("run %q: series %q meta %v, want %q %v", got.Label, got.SeriesKey, got.Meta, tc.series, tc.meta)
		}
	}
	if got := get(t, s, imported.ID).Time; !got.Equal(at) {
		t.Errorf("imported at %v, read back %v", at, got)
	}
	if got := get(t, s, plain.ID).Time; got.Before(before.Add(-time.Second)) || got.After(time.Now()) {
		t.Errorf("queued run's time %v, want its creation", got)
	}
	started := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.StartRun(ctx, launched.ID, started); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, launched.ID).Time; !got.Equal(started) {
		t.Errorf("started run's time %v, want its start %v", got, started)
	}
	// The run's own tags win over those its result recorded, and the
	// branch (its series) stays.
	err := s.FinishRun(ctx, launched.ID, Outcome{Status: rundoc.StatusSucceeded,
		Meta: map[string]string{"commit": "other", "version": "v0.4.49", "branch": "main"}})
	if err != nil {
		t.Fatal(err)
	}
	got := get(t, s, launched.ID)
	if want := map[string]string{"commit": "abc123", "branch": "trunk", "version": "v0.4.49"}; !maps.Equal(got.Meta, want) {
		t.Errorf("finished meta %v, want %v", got.Meta, want)
	}
	if err := s.FinishRun(ctx, plain.ID, Outcome{Status: rundoc.StatusSucceeded, Meta: map[string]string{"version": "v1", "branch": "b"}}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, plain.ID); !maps.Equal(got.Meta, map[string]string{"version": "v1"}) || got.SeriesKey != "0123456789abcdef" {
		t.Errorf("run without tags: meta %v series %q after finishing", got.Meta, got.SeriesKey)
	}

	// Bad metadata or series never reaches the table.
	for _, r := range []*Run{{Label: "bad", Meta: Meta{"Bad Key": "x"}}, {Label: "bad", SeriesKey: "a\nb"}} {
		err := s.CreateRuns(ctx, []*Run{r})
		var fe *rundoc.FieldError
		if !errors.As(err, &fe) || r.ID != 0 {
			t.Errorf("created a run with %v %q: %v", r.Meta, r.SeriesKey, err)
		}
	}
	if err := s.FinishRun(ctx, named.ID, Outcome{Status: rundoc.StatusSucceeded, Meta: map[string]string{"x": "a\x00"}}); err == nil {
		t.Error("FinishRun took bad metadata")
	}
}
