package store

import (
	"context"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestSeriesGeneration: the writes that may change a series' succeeded
// runs (a run finished or stored as succeeded, a run deleted) move
// SeriesGeneration; the others (a run queued, started, canceled or
// failed, profiles, a report) move Generation alone.
func TestSeriesGeneration(t *testing.T) {
	eachBackend(t, testSeriesGeneration)
}

func testSeriesGeneration(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	step := func(name string, wantSeries bool, write func() error) {
		t.Helper()
		g, sg := s.Generation(), s.SeriesGeneration()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Generation() == g {
			t.Errorf("%s did not change Generation", name)
		}
		if moved := s.SeriesGeneration() != sg; moved != wantSeries {
			t.Errorf("%s: SeriesGeneration moved %v, want %v", name, moved, wantSeries)
		}
	}
	queued := []*Run{{Label: "a", Workload: "producer"}, {Label: "b", Workload: "producer"}, {Label: "c", Workload: "producer"}}
	step("CreateRuns of queued runs", false, func() error { return s.CreateRuns(ctx, queued) })
	step("StartRun", false, func() error { return s.StartRun(ctx, queued[0].ID, time.Now()) })
	step("CancelQueued", false, func() error { return s.CancelQueued(ctx, queued[1].ID, "no") })
	step("CancelQueued of no run", false, func() error {
		if err := s.CancelQueued(ctx, 0, ""); err == nil {
			t.Error("CancelQueued of run 0 succeeded")
		}
		return nil
	})
	step("AddProfiles", false, func() error {
		_, err := s.AddProfiles(ctx, queued[0].ID, []Profile{{Role: "client", Kind: "cpu", Data: []byte("x")}})
		return err
	})
	step("FinishRun failed", false, func() error {
		return s.FinishRun(ctx, queued[0].ID, Outcome{Status: rundoc.StatusFailed, Error: "boom"})
	})
	step("FinishRun succeeded", true, func() error {
		return s.FinishRun(ctx, queued[2].ID, Outcome{Status: rundoc.StatusSucceeded,
			Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: 1, Unit: "records/s"}}})
	})
	step("CreateReport", false, func() error {
		return s.CreateReport(ctx, &rundoc.Report{Title: "r", RunIDs: []uint{queued[2].ID}})
	})
	step("CreateRuns of a succeeded run", true, func() error {
		return s.CreateRuns(ctx, []*Run{{Label: "d", Workload: "producer", Status: rundoc.StatusSucceeded}})
	})
	step("DeleteRun", true, func() error { return s.DeleteRun(ctx, queued[1].ID) })
}

// TestSeriesGenerationOtherStore: on PostgreSQL, another store's writes
// on the same database move Generation, and SeriesGeneration only when
// they may change series.
func TestSeriesGenerationOtherStore(t *testing.T) {
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
		// wait waits for the reader to hear of the writer's write.
		wait := func(name string, g uint64) {
			t.Helper()
			for deadline := time.Now().Add(30 * time.Second); reader.Generation() == g; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: the reader never heard of the write", name)
				}
			}
		}
		runs := []*Run{{Label: "a", Workload: "producer"}}
		g, sg := reader.Generation(), reader.SeriesGeneration()
		if err := writer.CreateRuns(ctx, runs); err != nil {
			t.Fatal(err)
		}
		wait("CreateRuns of a queued run", g)
		if reader.SeriesGeneration() != sg {
			t.Error("another store's queued run moved SeriesGeneration")
		}
		g, sg = reader.Generation(), reader.SeriesGeneration()
		if err := writer.FinishRun(ctx, runs[0].ID, Outcome{Status: rundoc.StatusSucceeded}); err != nil {
			t.Fatal(err)
		}
		wait("FinishRun succeeded", g)
		if reader.SeriesGeneration() == sg {
			t.Error("another store's succeeded run did not move SeriesGeneration")
		}
		// The reader's own writes are not counted twice: its notification
		// comes back to it and is dropped.
		g, sg = reader.Generation(), reader.SeriesGeneration()
		if err := reader.CancelQueued(ctx, 0, ""); err == nil {
			t.Fatal("CancelQueued of run 0 succeeded")
		}
		if err := writer.CancelQueued(ctx, 0, ""); err == nil {
			t.Fatal("CancelQueued of run 0 succeeded")
		}
		wait("CancelQueued", g+1)
		if reader.SeriesGeneration() != sg {
			t.Error("CancelQueued moved SeriesGeneration")
		}
	})
}
