package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestSeriesChangedSince: every write that moves SeriesGeneration names
// the series it may have changed (a run stored or finished as succeeded,
// runs deleted or pruned), SeriesChangedSince gathers them since any
// remembered generation, and SeriesInfos of those keys equals ListSeries
// restricted to them.
func TestSeriesChangedSince(t *testing.T) { eachBackend(t, testSeriesChangedSince) }

func testSeriesChangedSince(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	succeeded := func(key string, day int) *Run {
		at := t0.Add(time.Duration(day) * 24 * time.Hour)
		return &Run{Label: key, Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, SeriesKey: key, RunAt: at, FinishedAt: &at}
	}
	// step does write and checks the keys it is said to have changed,
	// alone and together with the steps before it.
	start := s.SeriesGeneration()
	var all []string
	step := func(name string, want []string, write func() error) {
		t.Helper()
		g := s.SeriesGeneration()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, ok := s.SeriesChangedSince(g)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%s: SeriesChangedSince = %q, %v; want %q, true", name, got, ok, want)
		}
		for _, k := range want {
			if !slices.Contains(all, k) {
				all = append(all, k)
			}
		}
		slices.Sort(all)
		if got, ok := s.SeriesChangedSince(start); !ok || !slices.Equal(got, all) {
			t.Errorf("after %s: SeriesChangedSince(start) = %q, %v; want %q, true", name, got, ok, all)
		}
	}
	a1, a2, b1 := succeeded("a", 1), succeeded("a", 2), succeeded("b", 1)
	step("CreateRuns of succeeded runs", []string{"a", "b"}, func() error { return s.CreateRuns(ctx, []*Run{a1, b1, a2}) })
	queued := []*Run{{Label: "c", Workload: rundoc.Producer, SeriesKey: "c"}, {Label: "d", Workload: rundoc.Producer, SeriesKey: "d"}}
	g := s.SeriesGeneration()
	if err := s.CreateRuns(ctx, queued); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, queued[1].ID, Outcome{Status: rundoc.StatusFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.SeriesChangedSince(g); !ok || len(got) != 0 || s.SeriesGeneration() != g {
		t.Errorf("a queued run and a failed one: SeriesChangedSince = %q, %v, generation moved %v; want none", got, ok, s.SeriesGeneration() != g)
	}
	step("FinishRun succeeded", []string{"c"}, func() error {
		return s.FinishRun(ctx, queued[0].ID, Outcome{Status: rundoc.StatusSucceeded})
	})
	step("FinishRun of no run", nil, func() error {
		if err := s.FinishRun(ctx, 999999, Outcome{Status: rundoc.StatusSucceeded}); err == nil {
			t.Error("FinishRun of run 999999 succeeded")
		}
		return nil
	})
	step("DeleteRun", []string{"b"}, func() error { return s.DeleteRun(ctx, b1.ID) })
	step("DeleteRun of a failed run", []string{"d"}, func() error { return s.DeleteRun(ctx, queued[1].ID) })
	step("PruneRuns", []string{"a"}, func() error {
		_, err := s.PruneRuns(ctx, t0.Add(36*time.Hour))
		return err
	})

	// SeriesInfos: the series of the keys that still have succeeded runs
	// (not b, emptied; not x, never stored), as ListSeries gives them.
	list, err := s.ListSeries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := s.SeriesInfos(ctx, []string{"x", "c", "b", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []SeriesInfo{{Key: "a", Workload: "producer", Runs: 1, MaxID: a2.ID, SumID: uint64(a2.ID)},
		{Key: "c", Workload: "producer", Runs: 1, MaxID: queued[0].ID, SumID: uint64(queued[0].ID)}}; !slices.Equal(infos, want) || !slices.Equal(list, want) {
		t.Errorf("SeriesInfos = %+v, ListSeries = %+v; want both %+v", infos, list, want)
	}
	if infos, err := s.SeriesInfos(ctx, nil); err != nil || len(infos) != 0 {
		t.Errorf("SeriesInfos of no keys = %+v, %v; want none", infos, err)
	}
}

// TestSeriesLogForgets: a generation older than the log remembers, or
// beyond the store's, cannot be answered; nor can one before a write
// whose series are unknown.
func TestSeriesLogForgets(t *testing.T) {
	s := newStore(t)
	g := s.SeriesGeneration()
	for i := range seriesLogMax + 1 {
		s.moveSeries([]string{fmt.Sprint(i % 3)}, true)
	}
	if _, ok := s.SeriesChangedSince(g); ok {
		t.Error("SeriesChangedSince of a forgotten generation answered")
	}
	if _, ok := s.SeriesChangedSince(s.SeriesGeneration() + 1); ok {
		t.Error("SeriesChangedSince of a future generation answered")
	}
	recent := s.SeriesGeneration() - 10
	if got, ok := s.SeriesChangedSince(recent); !ok || !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Errorf("SeriesChangedSince(recent) = %q, %v; want [0 1 2], true", got, ok)
	}
	s.moveSeries(nil, false)
	s.moveSeries([]string{"z"}, true)
	if _, ok := s.SeriesChangedSince(recent); ok {
		t.Error("SeriesChangedSince across an unknown write answered")
	}
	if got, ok := s.SeriesChangedSince(s.SeriesGeneration() - 1); !ok || !slices.Equal(got, []string{"z"}) {
		t.Errorf("SeriesChangedSince after the unknown write = %q, %v; want [z], true", got, ok)
	}
}

// TestSeriesChangedSinceOtherStore: on PostgreSQL, another store's
// series-changing writes reach SeriesChangedSince with their keys; a
// notification without keys (an older kbench's, or one whose keys would
// not fit PostgreSQL's 8000-byte payload) makes it answer that it cannot
// know.
func TestSeriesChangedSinceOtherStore(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dsn := storeDSN(t)
		open := func() *Store {
			s, err := Open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		reader, writer := open(), open()
		ctx := context.Background()
		// write does f on writer and waits for the reader to hear of it.
		write := func(name string, f func() error) uint64 {
			t.Helper()
			g := reader.SeriesGeneration()
			if err := f(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for deadline := time.Now().Add(30 * time.Second); reader.SeriesGeneration() == g; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: the reader never heard of the write", name)
				}
			}
			return g
		}
		run := &Run{Label: "a", Workload: rundoc.Producer, SeriesKey: "series a"}
		if err := writer.CreateRuns(ctx, []*Run{run}); err != nil {
			t.Fatal(err)
		}
		g := write("FinishRun succeeded", func() error {
			return writer.FinishRun(ctx, run.ID, Outcome{Status: rundoc.StatusSucceeded})
		})
		if got, ok := reader.SeriesChangedSince(g); !ok || !slices.Equal(got, []string{"series a"}) {
			t.Errorf("after FinishRun: SeriesChangedSince = %q, %v; want [series a], true", got, ok)
		}
		g = write("DeleteRun", func() error { return writer.DeleteRun(ctx, run.ID) })
		if got, ok := reader.SeriesChangedSince(g); !ok || !slices.Equal(got, []string{"series a"}) {
			t.Errorf("after DeleteRun: SeriesChangedSince = %q, %v; want [series a], true", got, ok)
		}
		// 300 series of 40-byte keys: 12 KB of keys.
		var many []*Run
		for i := range 300 {
			many = append(many, &Run{Label: "m", Workload: rundoc.Producer, Status: rundoc.StatusSucceeded,
				SeriesKey: fmt.Sprintf("%s%04d", strings.Repeat("k", 36), i)})
		}
		g = write("CreateRuns of 300 series", func() error { return writer.CreateRuns(ctx, many) })
		if got, ok := writer.SeriesChangedSince(g); !ok || len(got) != 300 {
			t.Errorf("the writer's own SeriesChangedSince = %d keys, %v; want 300, true", len(got), ok)
		}
		if got, ok := reader.SeriesChangedSince(g); ok {
			t.Errorf("keys too long for a notification: SeriesChangedSince = %d keys, true; want false", len(got))
		}
		// An older kbench's notification: its origin alone.
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		g = write("an older kbench's write", func() error {
			_, err := db.ExecContext(ctx, "SELECT pg_notify($1, $2)", changesChannel, "0123456789abcdef")
			return err
		})
		if got, ok := reader.SeriesChangedSince(g); ok {
			t.Errorf("a notification without keys: SeriesChangedSince = %q, true; want false", got)
		}
	})
}
