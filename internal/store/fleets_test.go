package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// newFleet stores a fleet of n shards on queue q.
func newFleet(t *testing.T, s *Store, q string, n int) (*Fleet, *Run, []*Run) {
	t.Helper()
	spec := `{"workload":"producer","params":{"num-records":"1000"}}`
	parent := &Run{Label: "fleet", Workload: rundoc.Producer, Spec: spec, Queue: q}
	shards := make([]*Run, n)
	for i := range shards {
		shards[i] = &Run{Label: "fleet shard", Workload: rundoc.Producer, Spec: spec, Queue: q}
	}
	f := &Fleet{Queue: q, Shards: n, BarrierTimeoutS: 30, LeadS: 2}
	if err := s.CreateFleet(context.Background(), f, parent, shards); err != nil {
		t.Fatal(err)
	}
	return f, parent, shards
}

func worker(t *testing.T, s *Store, q string) uint {
	t.Helper()
	w := &Worker{Host: "h", Queue: q, PID: 1}
	if err := s.RegisterWorker(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w.ID
}

// TestFleetBarrier: the fleet gathers when its first shard is taken, a
// worker never holds two of its shards, another fleet of the queue
// waits, and the last check-in sets the start LeadS after it.
func TestFleetBarrier(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		s := newStore(t)
		f, parent, shards := newFleet(t, s, "lab", 2)
		other, _, otherShards := newFleet(t, s, "lab", 2)
		w1, w2 := worker(t, s, "lab"), worker(t, s, "lab")

		// The parent is no worker's: never queued for one.
		queued, err := s.QueuedRunsIn(ctx, "lab")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range queued {
			if r.ID == parent.ID {
				t.Errorf("the parent is among the queued runs a worker takes")
			}
		}
		if len(queued) != 4 {
			t.Errorf("%d queued runs, want the 4 shards", len(queued))
		}

		if is, err := s.IsShard(ctx, shards[0].ID); !is || err != nil {
			t.Errorf("IsShard(shard) = %v, %v", is, err)
		}
		if is, err := s.IsShard(ctx, parent.ID); is || err != nil {
			t.Errorf("IsShard(parent) = %v, %v", is, err)
		}
		got, err := s.TakeShard(ctx, shards[0].ID, w1)
		if err != nil || got.Phase != FleetGathering {
			t.Fatalf("take shard 0: %+v, %v; want gathering", got, err)
		}
		if _, err := s.TakeShard(ctx, shards[1].ID, w1); !errors.Is(err, ErrShardMustWait) {
			t.Errorf("a second shard for the same worker: %v, want ErrShardMustWait", err)
		}
		if _, err := s.TakeShard(ctx, otherShards[0].ID, w2); !errors.Is(err, ErrShardMustWait) {
			t.Errorf("another fleet's shard while one gathers: %v, want ErrShardMustWait", err)
		}
		if _, err := s.TakeShard(ctx, parent.ID, w2); !errors.Is(err, ErrNotFound) {
			t.Errorf("the parent as a shard: %v, want ErrNotFound", err)
		}
		if _, err := s.TakeShard(ctx, shards[1].ID, w2); err != nil {
			t.Fatal(err)
		}

		got, err = s.CheckInShard(ctx, shards[0].ID, 1.5, 0.4)
		if err != nil || got.Phase != FleetGathering || got.FirstCheckInAt == nil || got.StartAt != nil {
			t.Fatalf("first check-in: %+v, %v; want gathering with its time and no start", got, err)
		}
		got, err = s.CheckInShard(ctx, shards[1].ID, -2, 0.3)
		if err != nil || got.Phase != FleetStarted || got.StartAt == nil {
			t.Fatalf("last check-in: %+v, %v; want started", got, err)
		}
		_, rows, err := s.GetFleet(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		last := *rows[1].CheckedInAt
		if lead := got.StartAt.Sub(last); lead < 2*time.Second || lead > 3*time.Second {
			t.Errorf("start %v is %v after the last check-in, want the lead of 2 s", got.StartAt, lead)
		}
		if *rows[0].ClockOffsetMs != 1.5 || *rows[1].ClockOffsetMs != -2 || *rows[0].WorkerID != w1 || *rows[1].WorkerID != w2 {
			t.Errorf("shards %+v %+v", rows[0], rows[1])
		}
		// A started fleet no longer gathers: the other may.
		if _, err := s.TakeShard(ctx, otherShards[0].ID, w1); err != nil {
			t.Errorf("the other fleet once the first started: %v", err)
		}

		if err := s.EndFleet(ctx, other.ID, FleetFailed, "shard 1 never checked in"); err != nil {
			t.Fatal(err)
		}
		if err := s.EndFleet(ctx, other.ID, FleetCanceled, "late"); !errors.Is(err, ErrConflict) {
			t.Errorf("ending an ended fleet: %v, want ErrConflict", err)
		}
		ended, _, err := s.FleetOfShard(ctx, otherShards[1].ID)
		if err != nil || ended.Phase != FleetFailed || ended.Error != "shard 1 never checked in" || ended.EndedAt == nil {
			t.Errorf("ended fleet %+v, %v", ended, err)
		}
		if got, err := s.CheckInShard(ctx, otherShards[0].ID, 0, 0); err != nil || got.Phase != FleetFailed {
			t.Errorf("check-in to an ended fleet: %+v, %v; want it unchanged", got, err)
		}
		if pf, _, err := s.FleetOfParent(ctx, parent.ID); err != nil || pf.ID != f.ID {
			t.Errorf("fleet of the parent: %+v, %v", pf, err)
		}
		if _, _, err := s.FleetOfShard(ctx, parent.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("fleet of a parent as a shard: %v, want ErrNotFound", err)
		}
	})
}

// TestFleetCheckInRace: shards checking in at once set the start once,
// after the last of them.
func TestFleetCheckInRace(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		s := newStore(t)
		const n = 6
		f, _, shards := newFleet(t, s, "lab", n)
		for _, r := range shards {
			if _, err := s.TakeShard(ctx, r.ID, worker(t, s, "lab")); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for _, r := range shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.CheckInShard(ctx, r.ID, 0, 0); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got, rows, err := s.GetFleet(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Phase != FleetStarted || got.StartAt == nil {
			t.Fatalf("fleet %+v, want started", got)
		}
		for _, r := range rows {
			if r.CheckedInAt == nil || got.StartAt.Sub(*r.CheckedInAt) < 2*time.Second {
				t.Errorf("shard %d checked in at %v, start %v: less than the lead after it", r.ShardIndex, r.CheckedInAt, got.StartAt)
			}
		}
	})
}

// TestFleetTakeRace: workers taking the first shards of two fleets of
// one queue at once never leave both gathering.
func TestFleetTakeRace(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		s := newStore(t)
		for round := range 5 {
			_, _, a := newFleet(t, s, "lab", 2)
			_, _, b := newFleet(t, s, "lab", 2)
			w1, w2 := worker(t, s, "lab"), worker(t, s, "lab")
			var wg sync.WaitGroup
			took := make([]error, 2)
			for i, r := range []*Run{a[0], b[0]} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, took[i] = s.TakeShard(ctx, r.ID, []uint{w1, w2}[i])
				}()
			}
			wg.Wait()
			var gathering int64
			if err := s.db.Model(&Fleet{}).Where("phase = ?", FleetGathering).Count(&gathering).Error; err != nil {
				t.Fatal(err)
			}
			if gathering != 1 || (took[0] == nil) == (took[1] == nil) {
				t.Fatalf("round %d: %d fleets gathering, takes %v", round, gathering, took)
			}
			// Both fleets end, so the next round starts clean.
			var open []Fleet
			if err := s.db.Where("phase <> ?", FleetFailed).Find(&open).Error; err != nil {
				t.Fatal(err)
			}
			for _, f := range open {
				if err := s.EndFleet(ctx, f.ID, FleetFailed, "test"); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
