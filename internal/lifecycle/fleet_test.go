package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestClockOffset: the offset estimated from round trips is within half
// the shortest round trip of the true one, whatever the skew's sign.
func TestClockOffset(t *testing.T) {
	for _, skew := range []time.Duration{0, 250 * time.Millisecond, -3 * time.Second} {
		calls := 0
		read := func(context.Context) (time.Time, error) {
			calls++
			if calls%2 == 0 {
				time.Sleep(time.Millisecond) // a slow round trip, never the one kept
			}
			return time.Now().Add(-skew), nil // this clock is skew ahead
		}
		offset, rt, err := clockOffset(context.Background(), read, 6)
		if err != nil {
			t.Fatal(err)
		}
		if calls != 6 || rt >= time.Millisecond {
			t.Errorf("skew %v: %d reads, shortest round trip %v", skew, calls, rt)
		}
		if diff := offset - skew; diff.Abs() > rt/2+time.Microsecond {
			t.Errorf("skew %v: offset %v, off by %v, more than half the round trip %v", skew, offset, diff, rt)
		}
	}
}

// fleetFixture is a PostgreSQL store with a fleet of n producer shards on
// queue "lab", whose barrier times out after timeoutS. Its shards are
// stored queued and have no jobs yet.
func fleetFixture(t *testing.T, st *store.Store, n int, timeoutS float64) (*store.Fleet, []uint) {
	t.Helper()
	spec, err := rundoc.ParseArgs(rundoc.Producer, []string{"--bootstrap-server", "127.0.0.1:9", "--topic", "fleet",
		"--partitions", fmt.Sprint(2 * n), "--threads", fmt.Sprint(n), "--throughput", "1000", "--duration", "5", "--profile", "none"})
	if err != nil {
		t.Fatal(err)
	}
	divided, err := rundoc.DivideFleet(&spec, n)
	if err != nil {
		t.Fatal(err)
	}
	stored := func(s rundoc.Spec) string {
		params, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rundoc.SpecFile{Workload: s.Workload, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	parent := &store.Run{Workload: rundoc.Producer, Spec: stored(spec), Queue: "lab"}
	shards := make([]*store.Run, n)
	for i, sh := range divided {
		shards[i] = &store.Run{Workload: rundoc.Producer, Spec: stored(spec.ShardSpec(sh)), Queue: "lab"}
	}
	f := &store.Fleet{Queue: "lab", Shards: n, BarrierTimeoutS: timeoutS, LeadS: 1}
	if err := st.CreateFleet(context.Background(), f, parent, shards); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, n)
	for i, r := range shards {
		ids[i] = r.ID
	}
	return f, ids
}

// fleetEnv is a PostgreSQL store and a lifecycle on it that submits
// runs and executes none, for the tests of fleets, which start workers
// and their children: skipped under -short and in the PostgreSQL pass.
func fleetEnv(t *testing.T) (*store.Store, *Manager) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts workers and their children on PostgreSQL")
	}
	pgOnce(t)
	st, err := store.Open(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	server, _ := openPG(t, st, "succeed", "", "server")
	return st, server
}

// pgOnce skips t in test.sh's PostgreSQL pass (KBENCH_TEST_BACKEND=
// postgres): t opens PostgreSQL itself whatever the backend, so the
// first pass ran it already.
func pgOnce(t *testing.T) {
	t.Helper()
	if pgtest.OnPostgres() {
		t.Skip("opens PostgreSQL itself: the first pass ran it")
	}
}

// TestFleetBarrier: three workers each take one shard of a fleet, check
// in, and start their shards at the fleet's start in their own clocks:
// the database's start plus the offset each measured.
func TestFleetBarrier(t *testing.T) {
	ctx := context.Background()
	st, server := fleetEnv(t)
	for i := range 3 {
		openPG(t, st, "shard", "lab", fmt.Sprintf("host-%d", i))
	}
	f, ids := fleetFixture(t, st, 3, 30)
	for _, id := range ids {
		if err := server.Submit(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	runs := make([]*rundoc.Run, len(ids))
	for i, id := range ids {
		runs[i] = waitRun(t, st, id, "final", isFinal)
	}
	got, shards, err := st.GetFleet(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != store.FleetStarted || got.StartAt == nil {
		t.Fatalf("fleet %+v, want started", got)
	}
	workers := map[uint]bool{}
	for i, r := range runs {
		sh := shards[i]
		if r.Status != rundoc.StatusSucceeded {
			t.Errorf("shard %d: %s %q", i, r.Status, r.Error)
			continue
		}
		if sh.WorkerID == nil || sh.CheckedInAt == nil || sh.ClockOffsetMs == nil || sh.RoundTripMs == nil {
			t.Fatalf("shard %d: %+v", i, sh)
		}
		workers[*sh.WorkerID] = true
		if !got.StartAt.After(*sh.CheckedInAt) {
			t.Errorf("shard %d checked in at %v, after the start %v", i, sh.CheckedInAt, got.StartAt)
		}
		ss := r.Measurement.ShardStart
		if ss == nil {
			t.Fatalf("shard %d: no shard_start in its measurement", i)
		}
		want := got.StartAt.Add(time.Duration(math.Round(*sh.ClockOffsetMs * 1e6)))
		if d := ss.T0.Sub(want).Abs(); d > time.Microsecond {
			t.Errorf("shard %d started at %v, want the fleet's start %v plus its offset %v ms (%v)", i, ss.T0, got.StartAt, *sh.ClockOffsetMs, want)
		}
		if ss.Window.Before(ss.T0) {
			t.Errorf("shard %d: window %v opened before its start %v", i, ss.Window, ss.T0)
		}
	}
	if len(workers) != 3 {
		t.Errorf("the shards ran on %d workers, want 3: %+v", len(workers), shards)
	}
}

// TestFleetPlacement: two fleets of two shards on two workers that each
// take two runs at once. Were both workers to take one shard of each
// fleet, every barrier would wait for a worker it cannot get; instead
// one fleet gathers at a time, the other's shards wait (their jobs
// snoozed), and every fleet ends with its shards on two workers.
func TestFleetPlacement(t *testing.T) {
	ctx := context.Background()
	st, server := fleetEnv(t)
	for i := range 2 {
		dir := t.TempDir()
		l := NewManager(st, Options{Command: []string{os.Args[0], helperArg, "shard"}, DataDir: dir, Queue: "lab", Host: fmt.Sprintf("host-%d", i),
			Concurrency: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Close)
	}
	var fleets []*store.Fleet
	var all []uint
	for range 2 {
		f, ids := fleetFixture(t, st, 2, 30)
		fleets = append(fleets, f)
		all = append(all, ids...)
	}
	// Interleaved, so that a worker taking runs in order would take one
	// shard of each fleet.
	for _, id := range []uint{all[0], all[2], all[1], all[3]} {
		if err := server.Submit(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range all {
		if r := waitRun(t, st, id, "final", isFinal); r.Status != rundoc.StatusSucceeded {
			t.Errorf("shard run %d: %s %q", id, r.Status, r.Error)
		}
	}
	for i, f := range fleets {
		got, shards, err := st.GetFleet(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Phase != store.FleetStarted || shards[0].WorkerID == nil || shards[1].WorkerID == nil || *shards[0].WorkerID == *shards[1].WorkerID {
			t.Errorf("fleet %d: %s, shards on workers %v and %v", i+1, got.Phase, shards[0].WorkerID, shards[1].WorkerID)
		}
	}
}

// TestFleetBarrierTimeout: a shard no worker takes in time (the only
// other worker is busy with a run that waits) fails the fleet with an
// error naming it, which fails the shard that was waiting; the missing
// shard, taken once its worker is free, fails without starting.
func TestFleetBarrierTimeout(t *testing.T) {
	ctx := context.Background()
	st, server := fleetEnv(t)
	busyWorker, _ := openPG(t, st, "wait", "lab", "busy")
	busy := &store.Run{Workload: rundoc.Producer, Spec: plainSpec, Queue: "lab"}
	if err := st.CreateRuns(ctx, []*store.Run{busy}); err != nil {
		t.Fatal(err)
	}
	if err := server.Submit(ctx, busy.ID, nil); err != nil {
		t.Fatal(err)
	}
	waitRun(t, st, busy.ID, "running", func(r *rundoc.Run) bool { return r.Status == rundoc.StatusRunning })
	openPG(t, st, "shard", "lab", "free")

	f, ids := fleetFixture(t, st, 2, 2)
	for _, id := range ids {
		if err := server.Submit(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	waiting := waitRun(t, st, ids[0], "final", isFinal)
	want := fmt.Sprintf("shard 2 of 2 (run %d: no worker took it) did not check in within the barrier timeout of 2 s", ids[1])
	if waiting.Status != rundoc.StatusFailed || !strings.Contains(waiting.Error, want) {
		t.Errorf("the shard at the barrier: %s %q, want failed saying %q", waiting.Status, waiting.Error, want)
	}
	got, _, err := st.GetFleet(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != store.FleetFailed || !strings.Contains(got.Error, want) {
		t.Errorf("fleet %s %q, want failed saying %q", got.Phase, got.Error, want)
	}

	if err := busyWorker.Cancel(ctx, busy.ID); err != nil {
		t.Fatal(err)
	}
	missing := waitRun(t, st, ids[1], "final", isFinal)
	if missing.Status != rundoc.StatusFailed || !strings.Contains(missing.Error, "failed before this shard started") {
		t.Errorf("the missing shard once taken: %s %q, want failed without starting", missing.Status, missing.Error)
	}
}
