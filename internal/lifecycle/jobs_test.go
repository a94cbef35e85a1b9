package lifecycle

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// jobStates returns the states of run id's River jobs, oldest first, read
// from the store's file as the server's own pool does.
func (e *env) jobStates(t *testing.T, id uint) []string {
	t.Helper()
	db, err := e.st.OpenJobsDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT state FROM river_job WHERE json_extract(args, '$.run_id') = ? ORDER BY id", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var states []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		states = append(states, s)
	}
	return states
}

// remoteQueue is a second client of the queue on the store's file, as
// another kbench process would be; it executes nothing.
func (e *env) remoteQueue(t *testing.T) *jobs.Queue {
	t.Helper()
	db, err := e.st.OpenJobsDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	q, err := jobs.New(context.Background(), jobs.SQLite(db), jobs.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestSubmitIsAJob: a submitted run is a River job, worked once, and the
// run is stored with what its process measured; a run canceled while
// waiting has its job canceled.
func TestSubmitIsAJob(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	sqliteOnly(t)
	e := newEnv(t, "succeed", nil)
	first, id, canceled := e.create(t, plainSpec), e.create(t, plainSpec), e.create(t, plainSpec)
	gate, taken := make(chan struct{}), make(chan struct{})
	e.SetHook(func(p string, got uint) {
		if p == "taken" && got == first {
			close(taken)
			<-gate
		}
	})
	wf, w := e.watch(t, e.Manager, first), e.watch(t, e.Manager, id)
	for _, r := range []uint{first, id, canceled} {
		e.submit(t, e.Manager, r, nil)
	}
	<-taken
	if got := e.jobStates(t, id); !slices.Equal(got, []string{"available"}) {
		t.Errorf("jobs of a waiting run: %v, want one available", got)
	}
	if got, want := e.Pending(), []uint{id, canceled}; !slices.Equal(got, want) {
		t.Errorf("pending %v, want %v", got, want)
	}
	if err := e.Cancel(context.Background(), canceled); err != nil {
		t.Fatal(err)
	}
	if got := e.jobStates(t, canceled); !slices.Equal(got, []string{"cancelled"}) {
		t.Errorf("jobs of a run canceled while waiting: %v, want one cancelled", got)
	}
	close(gate)
	wf.until(t, "done")
	w.until(t, "done")
	r := e.get(t, id)
	if r.Status != rundoc.StatusSucceeded || len(r.Metrics) != 1 || len(r.Profiles) != 1 {
		t.Fatalf("run: %s %q, %d metrics, %d profiles", r.Status, r.Error, len(r.Metrics), len(r.Profiles))
	}
	if e.started(canceled) || e.get(t, canceled).Status != rundoc.StatusCanceled {
		t.Error("a run canceled while waiting started, or is not canceled")
	}
}

// TestCancelThroughTheJob: a running run whose job another process
// cancels through River is stopped as a user's cancel stops it: SIGINT,
// what it measured kept, canceled.
func TestCancelThroughTheJob(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	sqliteOnly(t)
	e := newEnv(t, "wait", nil)
	id := e.create(t, plainSpec)
	w := e.watch(t, e.Manager, id)
	e.submit(t, e.Manager, id, nil)
	w.until(t, "interval")
	found, err := e.remoteQueue(t).Cancel(context.Background(), id)
	if err != nil || !found {
		t.Fatalf("cancel of the run's job = %v, %v", found, err)
	}
	w.until(t, "done")
	if r := e.get(t, id); r.Status != rundoc.StatusCanceled || r.Error != "canceled by a user" || len(r.Metrics) == 0 {
		t.Errorf("run: %s %q with %d metrics, want canceled by a user with what it measured", r.Status, r.Error, len(r.Metrics))
	}
}

// TestRestartKeepsTheQueue: runs waiting when the server stops keep their
// jobs, in order, and the next server executes them in that order, each
// once.
func TestRestartKeepsTheQueue(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	sqliteOnly(t)
	e := newEnv(t, "wait", nil)
	running := e.create(t, plainSpec)
	waiting := []uint{e.create(t, plainSpec), e.create(t, plainSpec), e.create(t, plainSpec)}
	w := e.watch(t, e.Manager, running)
	e.submit(t, e.Manager, running, nil)
	// Submitted in another order than created: the queue's order is the
	// order of submission.
	order := []uint{waiting[2], waiting[0], waiting[1]}
	for _, id := range order {
		e.submit(t, e.Manager, id, nil)
	}
	w.until(t, "interval")
	e.Close()
	for _, id := range waiting {
		if got := e.jobStates(t, id); !slices.Equal(got, []string{"available"}) {
			t.Errorf("run %d's jobs after the server stopped: %v, want one available", id, got)
		}
	}
	var mu sync.Mutex
	var started []uint
	next := NewManager(e.st, Options{Command: e.Manager.opts.Command[:2:2], DataDir: e.dir, Logger: e.Manager.log})
	next.opts.Command = append(next.opts.Command, "succeed")
	next.SetHook(func(p string, id uint) {
		if p == "started" {
			mu.Lock()
			started = append(started, id)
			mu.Unlock()
		}
	})
	watches := make([]*watch, len(order))
	for i, id := range order {
		watches[i] = e.watch(t, next, id)
	}
	if err := next.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Close)
	for i, id := range order {
		if !e.get(t, id).Final() {
			watches[i].until(t, "done")
		}
		if r := e.get(t, id); r.Status != rundoc.StatusSucceeded {
			t.Errorf("run %d after the restart: %s %q", id, r.Status, r.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(started, order) {
		t.Errorf("started %v after the restart, want %v", started, order)
	}
}

// TestOneAtATime: runs submitted concurrently execute one at a time (the
// default), each once, all to the end.
func TestOneAtATime(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "succeed", nil)
	var mu sync.Mutex
	running, most := 0, 0
	seen := map[uint]int{}
	e.SetHook(func(p string, id uint) {
		mu.Lock()
		defer mu.Unlock()
		switch p {
		case "started":
			running++
			most = max(most, running)
			seen[id]++
		case "exited":
			running--
		}
	})
	const n = 4
	ids := make([]uint, n)
	watches := make([]*watch, n)
	for i := range ids {
		ids[i] = e.create(t, plainSpec)
		watches[i] = e.watch(t, e.Manager, ids[i])
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { e.submit(t, e.Manager, id, nil) })
	}
	wg.Wait()
	for i, id := range ids {
		watches[i].until(t, "done")
		if r := e.get(t, id); r.Status != rundoc.StatusSucceeded {
			t.Errorf("run %d: %s %q", id, r.Status, r.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d runs executed at once, want 1", most)
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("run %d executed %d times, want once", id, seen[id])
		}
	}
}
