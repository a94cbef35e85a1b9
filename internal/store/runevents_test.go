package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

func TestRunEventsAppendAndRead(t *testing.T) { eachBackend(t, testRunEventsAppendAndRead) }

func testRunEventsAppendAndRead(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, b := &Run{Workload: "producer", Spec: "{}"}, &Run{Workload: "producer", Spec: "{}"}
	create(t, s, a, b)
	var batch []RunEvent
	for i := range 5 {
		batch = append(batch, RunEvent{RunID: a.ID, Origin: "w1", Data: fmt.Sprintf(`{"n":%d}`, i)})
		if i%2 == 0 {
			batch = append(batch, RunEvent{RunID: b.ID, Origin: "w1", Data: fmt.Sprintf(`{"b":%d}`, i)})
		}
	}
	if err := s.AppendRunEvents(ctx, batch); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunEventsAfter(ctx, a.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("events of run a: got %d, want 5", len(got))
	}
	for i, e := range got {
		if want := fmt.Sprintf(`{"n":%d}`, i); e.Data != want || e.RunID != a.ID || e.Origin != "w1" {
			t.Errorf("event %d: got %+v, want data %s of run %d from w1", i, e, want, a.ID)
		}
		if i > 0 && e.ID <= got[i-1].ID {
			t.Errorf("event %d: id %d not after %d", i, e.ID, got[i-1].ID)
		}
		if e.CreatedAt.IsZero() {
			t.Errorf("event %d: no created_at", i)
		}
	}
	// A cursor and a limit page through them.
	page, err := s.RunEventsAfter(ctx, a.ID, got[1].ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].ID != got[2].ID || page[1].ID != got[3].ID {
		t.Errorf("after event 1, two: got %+v, want events 2 and 3", page)
	}
	other, err := s.RunEventsAfter(ctx, b.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(other) != 3 {
		t.Errorf("events of run b: got %d, want 3", len(other))
	}
	// Appending is not a write pages see.
	gen := s.Generation()
	if err := s.AppendRunEvents(ctx, []RunEvent{{RunID: a.ID, Data: "{}"}}); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen {
		t.Errorf("appending run events changed the generation")
	}
}

func TestPruneRunEvents(t *testing.T) { eachBackend(t, testPruneRunEvents) }

func testPruneRunEvents(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	queued, running, ended := &Run{Workload: "producer", Spec: "{}"}, &Run{Workload: "producer", Spec: "{}"}, &Run{Workload: "producer", Spec: "{}"}
	create(t, s, queued, running, ended)
	if err := s.StartRun(ctx, running.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.StartRun(ctx, ended.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, ended.ID, Outcome{Status: rundoc.StatusSucceeded, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	const gone = 1 << 20 // a run deleted since, or never stored
	var evs []RunEvent
	for _, id := range []uint{queued.ID, running.ID, ended.ID, gone} {
		evs = append(evs, RunEvent{RunID: id, Data: "{}"}, RunEvent{RunID: id, Data: "{}"})
	}
	if err := s.AppendRunEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	count := func(id uint) int {
		got, err := s.RunEventsAfter(ctx, id, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	// Younger than the age: all kept.
	if n, err := s.PruneRunEvents(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("prune events older than an hour: got %d, %v; want 0", n, err)
	}
	// Seconds are the database's: wait for them to pass.
	time.Sleep(1100 * time.Millisecond)
	n, err := s.PruneRunEvents(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("pruned %d events, want 4 (of the ended run and the gone one)", n)
	}
	for _, tc := range []struct {
		name string
		id   uint
		want int
	}{{"queued", queued.ID, 2}, {"running", running.ID, 2}, {"ended", ended.ID, 0}, {"gone", gone, 0}} {
		if got := count(tc.id); got != tc.want {
			t.Errorf("%s run: %d events left, want %d", tc.name, got, tc.want)
		}
	}
}

// TestWatchAcrossStores: on PostgreSQL a store hears of run events and
// writes another process commits (two stores on one database stand for
// a worker and a server): the watcher of the run wakes, the watcher of
// another run does not, and the server's Generation moves.
func TestWatchAcrossStores(t *testing.T) {
	dsn := pgtest.URL(t)
	open := func() *Store {
		s, err := Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	worker, server := open(), open()
	ctx := context.Background()
	r, other := &Run{Workload: "producer", Spec: "{}"}, &Run{Workload: "producer", Spec: "{}"}
	create(t, worker, r, other)

	wake, stop := server.WatchRunEvents(r.ID)
	defer stop()
	wakeOther, stopOther := server.WatchRunEvents(other.ID)
	defer stopOther()
	if err := worker.AppendRunEvents(ctx, []RunEvent{{RunID: r.ID, Origin: "w", Data: `{"x":1}`}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher of the run was not woken by another store's events")
	}
	select {
	case <-wakeOther:
		t.Error("the watcher of another run was woken")
	default:
	}

	gen := server.Generation()
	if err := worker.StartRun(ctx, r.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for server.Generation() == gen {
		if time.Now().After(deadline) {
			t.Fatal("the server's Generation never saw the worker's write")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Its own writes count once: its own notification is not another one.
	time.Sleep(200 * time.Millisecond)
	gen = server.Generation()
	if err := server.CancelQueued(ctx, other.ID, "test"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if got := server.Generation(); got != gen+1 {
		t.Errorf("after one own write: generation %d, want %d", got, gen+1)
	}
}

// TestWatchOnSQLite: on SQLite nothing wakes a watcher, and Generation
// counts only the store's own writes.
func TestWatchOnSQLite(t *testing.T) {
	sqliteOnly(t)
	s := newStore(t)
	wake, stop := s.WatchRunEvents(1)
	defer stop()
	if err := s.AppendRunEvents(context.Background(), []RunEvent{{RunID: 1, Data: "{}"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
		t.Error("woken on SQLite")
	case <-time.After(100 * time.Millisecond):
	}
}

// TestFinishReplacesLostInterruption: the worker that executed a run
// stores its result over an interruption (a sweep took it for lost);
// another worker, or no worker, gets ErrConflict, and so does a run
// that ended otherwise.
func TestFinishReplacesLostInterruption(t *testing.T) {
	eachBackend(t, testFinishReplacesLostInterruption)
}

func testFinishReplacesLostInterruption(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	w, other := &Worker{Host: "a", Queue: "lab-a", PID: 1}, &Worker{Host: "b", Queue: "lab-a", PID: 2}
	for _, x := range []*Worker{w, other} {
		if err := s.RegisterWorker(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	lost, canceled := &Run{Workload: "producer", Spec: "{}"}, &Run{Workload: "producer", Spec: "{}"}
	create(t, s, lost, canceled)
	for _, r := range []*Run{lost, canceled} {
		if err := s.StartRunOn(ctx, r.ID, time.Now(), w); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.InterruptRun(ctx, lost.ID, "interrupted: the worker on a was lost"); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, canceled.ID, Outcome{Status: rundoc.StatusCanceled, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	result := func(worker uint) Outcome {
		return Outcome{Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: time.Now(), Worker: worker,
			Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: 10, Unit: "records/s", Better: rundoc.HigherIsBetter}}}
	}
	for _, tc := range []struct {
		name   string
		id     uint
		worker uint
	}{{"no worker", lost.ID, 0}, {"another worker", lost.ID, other.ID}, {"a canceled run", canceled.ID, w.ID}} {
		if err := s.FinishRun(ctx, tc.id, result(tc.worker)); !errors.Is(err, ErrConflict) {
			t.Errorf("%s: got %v, want ErrConflict", tc.name, err)
		}
	}
	if err := s.FinishRun(ctx, lost.ID, result(w.ID)); err != nil {
		t.Fatalf("its own worker: %v", err)
	}
	got := get(t, s, lost.ID)
	if got.Status != rundoc.StatusSucceeded || got.Error != "" || len(got.Metrics) != 1 {
		t.Errorf("after its worker's result: %s %q, %d metrics; want succeeded with the metric", got.Status, got.Error, len(got.Metrics))
	}
	if c := get(t, s, canceled.ID); c.Status != rundoc.StatusCanceled {
		t.Errorf("the canceled run: %s", c.Status)
	}
}

func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", fmt.Errorf("store: x: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"connection broken", fmt.Errorf("store: x: %w", io.ErrUnexpectedEOF), true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"server shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"conflict", fmt.Errorf("store: x: %w", ErrConflict), false},
		{"not found", ErrNotFound, false},
		{"canceled", context.Canceled, false},
	} {
		if got := Unavailable(tc.err); got != tc.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
