package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestWorkersAndQueues: a worker's row is written at start, its heartbeat
// moves, a stopped worker is not live; a run records its queue (local by
// default) and, when it starts, the worker that took it; recovery reads
// a queue's own running and queued runs only.
func TestWorkersAndQueues(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		s := newStore(t)
		a := &Worker{Host: "bench-a", Queue: "lab-a", PID: 4242, Version: "v1", Tools: "jp:producer-perf-test"}
		b := &Worker{Host: "bench-b", Queue: "lab-b", PID: 4343, Version: "v1"}
		for _, w := range []*Worker{a, b} {
			if err := s.RegisterWorker(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		if a.ID == 0 || b.ID == 0 || a.ID == b.ID || a.StartedAt.IsZero() {
			t.Fatalf("registered workers %+v, %+v", a, b)
		}
		gen := s.Generation()
		before := a.HeartbeatAt
		time.Sleep(2 * time.Millisecond)
		if err := s.Heartbeat(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if s.Generation() != gen {
			t.Error("a heartbeat changed the store's generation (it would empty the page cache every few seconds)")
		}
		if err := s.Heartbeat(ctx, 9999); !errors.Is(err, ErrNotFound) {
			t.Errorf("heartbeat of no worker: %v, want ErrNotFound", err)
		}
		if err := s.StopWorker(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		live, err := s.LiveWorkers(ctx, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 1 || live[0].ID != a.ID || live[0].Queue != "lab-a" || live[0].Tools != "jp:producer-perf-test" || !live[0].HeartbeatAt.After(before) {
			t.Errorf("live workers %+v, want only bench-a with a newer heartbeat than %v", live, before)
		}
		if live, _ := s.LiveWorkers(ctx, -time.Hour); len(live) != 0 {
			t.Errorf("workers with a heartbeat an hour ahead: %+v", live)
		}

		runs := []*Run{{Label: "default"}, {Label: "a1", Queue: "lab-a"}, {Label: "a2", Queue: "lab-a"}, {Label: "b1", Queue: "lab-b"}}
		if err := s.CreateRuns(ctx, runs); err != nil {
			t.Fatal(err)
		}
		if q, err := s.RunQueue(ctx, runs[0].ID); err != nil || q != DefaultQueue {
			t.Errorf("queue of a run that named none: %q, %v; want %q", q, err, DefaultQueue)
		}
		if err := s.StartRunOn(ctx, runs[1].ID, time.Time{}, a); err != nil {
			t.Fatal(err)
		}
		if err := s.StartRun(ctx, runs[3].ID, time.Time{}); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetRun(ctx, runs[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Queue != "lab-a" || got.Worker != "bench-a" {
			t.Errorf("started run: queue %q worker %q, want lab-a, bench-a", got.Queue, got.Worker)
		}
		list, _, err := s.ListRuns(ctx, RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		workers := map[string]string{}
		for _, r := range list {
			workers[r.Label] = r.Queue + "/" + r.Worker
		}
		if workers["a1"] != "lab-a/bench-a" || workers["default"] != "local/" || workers["b1"] != "lab-b/" {
			t.Errorf("listed queue/worker: %v", workers)
		}

		running, err := s.RunningIn(ctx, "lab-a")
		if err != nil {
			t.Fatal(err)
		}
		if len(running) != 1 || running[0].ID != runs[1].ID || running[0].Worker == nil || running[0].Worker.PID != 4242 {
			t.Errorf("running in lab-a: %+v", running)
		}
		running, _ = s.RunningIn(ctx, "lab-b")
		if len(running) != 1 || running[0].Worker != nil {
			t.Errorf("running in lab-b (started without a worker): %+v", running)
		}
		queued, err := s.QueuedRunsIn(ctx, "lab-a")
		if err != nil {
			t.Fatal(err)
		}
		if ids := runIDs(queued); !slices.Equal(ids, []uint{runs[2].ID}) {
			t.Errorf("queued in lab-a: %v, want [%d]", ids, runs[2].ID)
		}
		if err := s.InterruptRun(ctx, runs[1].ID, "worker lost"); err != nil {
			t.Fatal(err)
		}
		if err := s.InterruptRun(ctx, runs[1].ID, "again"); !errors.Is(err, ErrConflict) {
			t.Errorf("interrupting a final run: %v, want ErrConflict", err)
		}
		got, _ = s.GetRun(ctx, runs[1].ID)
		if got.Status != rundoc.StatusInterrupted || got.Error != "worker lost" || got.FinishedAt == nil {
			t.Errorf("interrupted run: %s %q %v", got.Status, got.Error, got.FinishedAt)
		}
		if got, _ := s.GetRun(ctx, runs[3].ID); got.Status != rundoc.StatusRunning {
			t.Errorf("lab-b's run is %s after lab-a's was interrupted", got.Status)
		}
	})
}

// TestWorkerClockSkew: on PostgreSQL a worker's heartbeats are written
// and judged by the database server's clock, never by the clock of the
// machine that writes or reads them. A worker whose machine's clock is
// hours off (behind or ahead) is live, as seen from a server with a
// correct clock, while it sends heartbeats, and is no longer live once it
// has been silent longer than the limit; the silence of its running run
// is measured by the same clock.
func TestWorkerClockSkew(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	server, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	const lostAfter = 30 * time.Second // lifecycle.WorkerLostAfter
	for _, skew := range []time.Duration{-3 * time.Hour, 3 * time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			ws, err := Open(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close() })
			ws.SetClock(func() time.Time { return time.Now().Add(skew) })
			w := &Worker{Host: "skewed", Queue: "lab-skew", PID: 4242}
			if err := ws.RegisterWorker(ctx, w); err != nil {
				t.Fatal(err)
			}
			run := &Run{Label: "skew", Queue: "lab-skew"}
			if err := ws.CreateRuns(ctx, []*Run{run}); err != nil {
				t.Fatal(err)
			}
			if err := ws.StartRunOn(ctx, run.ID, time.Time{}, w); err != nil {
				t.Fatal(err)
			}
			if err := ws.Heartbeat(ctx, w.ID); err != nil {
				t.Fatal(err)
			}
			isLive := func() bool {
				t.Helper()
				live, err := server.LiveWorkers(ctx, lostAfter)
				if err != nil {
					t.Fatal(err)
				}
				return slices.ContainsFunc(live, func(l Worker) bool { return l.ID == w.ID })
			}
			silence := func() time.Duration {
				t.Helper()
				running, err := server.RunningRuns(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range running {
					if r.ID == run.ID && r.Worker != nil && r.Worker.ID == w.ID {
						return r.Silence
					}
				}
				t.Fatalf("run %d is not running on worker %d: %+v", run.ID, w.ID, running)
				return 0
			}
			if !isLive() {
				t.Errorf("a worker %v off that just sent a heartbeat is not live", skew)
			}
			if got := silence(); got < 0 || got >= lostAfter {
				t.Errorf("silence of a worker %v off that just sent a heartbeat: %v, want under %v", skew, got, lostAfter)
			}
			// Its last heartbeat, as if it had stopped sending them 40 s ago.
			if err := server.db.Exec(`UPDATE workers SET heartbeat_at = heartbeat_at - interval '40 seconds' WHERE id = ?`, w.ID).Error; err != nil {
				t.Fatal(err)
			}
			if isLive() {
				t.Errorf("a worker %v off silent for 40 s is still live", skew)
			}
			if got := silence(); got < 40*time.Second {
				t.Errorf("silence of a worker %v off silent for 40 s: %v", skew, got)
			}
			if err := ws.Heartbeat(ctx, w.ID); err != nil {
				t.Fatal(err)
			}
			if !isLive() {
				t.Errorf("a worker %v off is not live after a new heartbeat", skew)
			}
			if err := ws.StopWorker(ctx, w.ID); err != nil {
				t.Fatal(err)
			}
			if isLive() {
				t.Errorf("a worker %v off that stopped is live", skew)
			}
		})
	}
}
