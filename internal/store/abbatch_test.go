package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestMigrationABBatch: migration 0002 adds runs.ab_batch to a database of
// schema 0001 (here the fixture from before versions, with write-path
// preset runs added as that kbench stored them): the preset's runs, which
// were always queued interleaved, get their batch back from their group
// id; every other run gets none.
func TestMigrationABBatch(t *testing.T) {
	path := copyFixture(t, "kbench-v0.db")
	sqliteExec(t, path,
		`INSERT INTO runs (label, workload, status, source, spec, group_id, group_index, warmup) VALUES
		 ('gather', 'writepath', 'succeeded', 'launched', '{}', 'wp-0123456789ab-gather', 1, 0),
		 ('per-buffer', 'writepath', 'succeeded', 'launched', '{}', 'wp-0123456789ab-per-buffer', 1, 0),
		 ('wp-lookalike', 'producer', 'succeeded', 'launched', '{}', 'wp-notahexbatch-x', 1, 0),
		 ('grouped', 'producer', 'succeeded', 'launched', '{}', '0123456789abcdef', 1, 0)`)
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	runs, _, err := s.ListRuns(context.Background(), RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs {
		got[r.Label] = get(t, s, r.ID).ABBatch
		if full := get(t, s, r.ID); full.ABBatch != r.ABBatch {
			t.Errorf("run %d: ListRuns ab_batch %q, GetRun %q", r.ID, r.ABBatch, full.ABBatch)
		}
	}
	want := map[string]string{"gather": "wp-0123456789ab", "per-buffer": "wp-0123456789ab", "wp-lookalike": "", "grouped": ""}
	for label, w := range want {
		if got[label] != w {
			t.Errorf("run %q: ab_batch %q, want %q", label, got[label], w)
		}
	}
	if len(runs) != 4+4 {
		t.Fatalf("%d runs, want the fixture's 4 and 4 more", len(runs))
	}
	for _, r := range runs {
		if _, ok := want[r.Label]; !ok && r.ABBatch != "" {
			t.Errorf("fixture run %d got ab_batch %q", r.ID, r.ABBatch)
		}
	}
	var ids []string
	if err := s.db.Table(migrationsTable).Order("id").Pluck("id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	if len(ids) < 2 || !slices.Equal(ids[:2], []string{"0001_initial", "0002_ab_batch"}) || ids[len(ids)-1] != SchemaVersion {
		t.Errorf("migrations %v, schema version %s", ids, SchemaVersion)
	}
}

// TestABBatchRoundTrip: a run's batch is stored and read back by GetRun
// and ListRuns.
func TestABBatchRoundTrip(t *testing.T) { eachBackend(t, testABBatchRoundTrip) }

func testABBatchRoundTrip(t *testing.T) {
	s := newStore(t)
	a, b := &Run{Label: "a", ABBatch: "ab-1"}, &Run{Label: "b"}
	create(t, s, a, b)
	if got := get(t, s, a.ID).ABBatch; got != "ab-1" {
		t.Errorf("GetRun: ab_batch %q", got)
	}
	list, _, err := s.ListRuns(context.Background(), RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		want := map[uint]string{a.ID: "ab-1", b.ID: ""}[r.ID]
		if r.ABBatch != want {
			t.Errorf("ListRuns: run %d ab_batch %q, want %q", r.ID, r.ABBatch, want)
		}
	}
}

// TestAppendRuns: appended measured runs are numbered after the last of
// their group, warm-up runs get 0, a new group starts at 1, and appends
// that race for one group never share an index.
func TestAppendRuns(t *testing.T) { eachBackend(t, testAppendRuns) }

func testAppendRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	create(t, s, &Run{Label: "w", GroupID: "g1", Warmup: true}, &Run{Label: "x", GroupID: "g1", GroupIndex: 1},
		&Run{Label: "x", GroupID: "g1", GroupIndex: 2}, &Run{Label: "other", GroupID: "g0", GroupIndex: 7})
	runs := []*Run{{Label: "x", GroupID: "g1"}, {Label: "y", GroupID: "g2"}, {Label: "x", GroupID: "g1"},
		{Label: "w", GroupID: "g1", Warmup: true}, {Label: "single"}}
	if err := s.AppendRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{3, 1, 4, 0, 0} {
		if runs[i].GroupIndex != want || get(t, s, runs[i].ID).GroupIndex != want {
			t.Errorf("run %d (%s in %q): index %d, stored %d, want %d", i, runs[i].Label, runs[i].GroupID, runs[i].GroupIndex,
				get(t, s, runs[i].ID).GroupIndex, want)
		}
	}
	// Concurrent appends to one group.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.AppendRuns(ctx, []*Run{{Label: "x", GroupID: "g1"}, {Label: "x", GroupID: "g1"}})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := s.ListRuns(ctx, RunFilter{GroupID: "g1", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range list {
		if r.Warmup {
			continue
		}
		if seen[r.GroupIndex] {
			t.Errorf("index %d given twice in group g1", r.GroupIndex)
		}
		seen[r.GroupIndex] = true
	}
	for i := 1; i <= 4+16; i++ {
		if !seen[i] {
			t.Errorf("index %d missing from group g1 (have %v)", i, fmt.Sprint(seen))
		}
	}
}
