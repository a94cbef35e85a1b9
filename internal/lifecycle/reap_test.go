package lifecycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// reapEnv is a PostgreSQL store, a direct connection to its database
// (to age heartbeats and read River's jobs, which the store does not
// expose) and helpers.
type reapEnv struct {
	t   *testing.T
	st  *store.Store
	raw *pgx.Conn
}

func newReapEnv(t *testing.T) *reapEnv {
	t.Helper()
	url := pgtest.URL(t)
	st, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	raw, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close(context.Background()) })
	return &reapEnv{t: t, st: st, raw: raw}
}

func (e *reapEnv) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.raw.Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatal(err)
	}
}

func (e *reapEnv) create(queue string) uint {
	e.t.Helper()
	r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: queue}
	if err := e.st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
		e.t.Fatal(err)
	}
	return r.ID
}

// worker registers a worker row for host on queue, and starts a run on it.
func (e *reapEnv) workerWithRun(host, queue string) (*store.Worker, uint) {
	e.t.Helper()
	w := &store.Worker{Host: host, Queue: queue, PID: 4242}
	if err := e.st.RegisterWorker(context.Background(), w); err != nil {
		e.t.Fatal(err)
	}
	id := e.create(queue)
	if err := e.st.StartRunOn(context.Background(), id, time.Time{}, w); err != nil {
		e.t.Fatal(err)
	}
	return w, id
}

func (e *reapEnv) run(id uint) *rundoc.Run {
	e.t.Helper()
	r, err := e.st.GetRun(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *reapEnv) waitFor(id uint, ok func(*rundoc.Run) bool, what string) *rundoc.Run {
	e.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		r := e.run(id)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %d: %s %q, still not %s", id, r.Status, r.Error, what)
		}
	}
}

// jobState is the state of run id's River job.
func (e *reapEnv) jobState(id uint) string {
	e.t.Helper()
	var state string
	err := e.raw.QueryRow(context.Background(),
		`SELECT state::text FROM river_job WHERE (args->>'run_id')::bigint = $1 ORDER BY id DESC LIMIT 1`, int64(id)).Scan(&state)
	if err != nil {
		e.t.Fatal(err)
	}
	return state
}

// waitStarted waits for run id's process to start under dir.
func waitStarted(t *testing.T, dir string, id uint) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "runs", uintString(id), startedMarker)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d's process never started", id)
		}
	}
}

// TestReapLostWorkers: the reap of a lifecycle that executes nothing
// interrupts the running runs of any queue whose worker sent no heartbeat
// for WorkerLostAfter or stopped, with an error naming the worker's host
// and saying it was lost; it leaves alone a run whose worker is alive and
// one with no worker recorded (Start's rule); a second reap changes
// nothing. A run a live worker's River job holds is ended in River too,
// and that worker, which the database takes for lost, stops its child.
func TestReapLostWorkers(t *testing.T) {
	ctx := context.Background()
	e := newReapEnv(t)
	server, _ := openPG(t, e.st, "succeed", "", "server-host")

	stale, staleRun := e.workerWithRun("host-stale", "lab-a")
	e.exec(`UPDATE workers SET heartbeat_at = $1 WHERE id = $2`, time.Now().UTC().Add(-WorkerLostAfter-5*time.Second), stale.ID)
	_, freshRun := e.workerWithRun("host-fresh", "lab-b")
	stopped, stoppedRun := e.workerWithRun("host-stopped", "lab-c")
	if err := e.st.StopWorker(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	noWorker := e.create("lab-d")
	if err := e.st.StartRunOn(ctx, noWorker, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}

	n, err := server.reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("reap interrupted %d runs, want 2", n)
	}
	for id, host := range map[uint]string{staleRun: "host-stale", stoppedRun: "host-stopped"} {
		r := e.run(id)
		if r.Status != rundoc.StatusInterrupted || !strings.Contains(r.Error, host) || !strings.Contains(r.Error, "was lost") {
			t.Errorf("run of %s: %s %q, want interrupted naming the host and that it was lost", host, r.Status, r.Error)
		}
	}
	for id, what := range map[uint]string{freshRun: "a live worker's", noWorker: "a run with no worker's"} {
		if r := e.run(id); r.Status != rundoc.StatusRunning {
			t.Errorf("%s run after the reap: %s %q, want running", what, r.Status, r.Error)
		}
	}
	if n, err := server.reap(ctx); err != nil || n != 0 {
		t.Errorf("second reap: %d runs, %v; want none", n, err)
	}

	// A run held by a River job of a worker the database takes for lost.
	_, dir := openPG(t, e.st, "wait", "lab-e", "host-e")
	held := e.create("lab-e")
	if err := server.Submit(ctx, held, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor(held, func(r *rundoc.Run) bool { return r.Status == rundoc.StatusRunning }, "running")
	waitStarted(t, dir, held)
	if got := e.jobState(held); got != "running" {
		t.Fatalf("job of the held run: %s, want running", got)
	}
	e.exec(`UPDATE workers SET stopped_at = $1 WHERE host = 'host-e'`, time.Now().UTC())
	if n, err := server.reap(ctx); err != nil || n != 1 {
		t.Fatalf("reap of the held run: %d runs, %v; want 1", n, err)
	}
	if got := e.jobState(held); got != "cancelled" {
		t.Errorf("job of the run after the reap: %s, want cancelled", got)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "runs", uintString(held), "result.json")); err == nil {
			break // the helper wrote its result: it was stopped
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker taken for lost did not stop its child")
		}
	}
	if r := e.run(held); r.Status != rundoc.StatusInterrupted || !strings.Contains(r.Error, "host-e") {
		t.Errorf("the held run: %s %q, want interrupted by the reap", r.Status, r.Error)
	}
}

// TestCancelRemoteRun: a lifecycle that executes nothing cancels a run
// another process's worker is running, through River: the worker stops
// its child with SIGINT and stores the run canceled with its partial
// result, and it takes the next run; a final run's cancel is a conflict.
func TestCancelRemoteRun(t *testing.T) {
	ctx := context.Background()
	e := newReapEnv(t)
	server, _ := openPG(t, e.st, "succeed", "", "server-host")
	_, dir := openPG(t, e.st, "wait", "lab-r", "host-r")
	id := e.create("lab-r")
	if err := server.Submit(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor(id, func(r *rundoc.Run) bool { return r.Status == rundoc.StatusRunning }, "running")
	waitStarted(t, dir, id)
	if err := server.Cancel(ctx, id); err != nil {
		t.Fatalf("cancel of a run running on another worker: %v", err)
	}
	r := e.waitFor(id, func(r *rundoc.Run) bool { return r.Final() }, "final")
	if r.Status != rundoc.StatusCanceled || len(r.Metrics) == 0 {
		t.Errorf("the canceled remote run: %s %q with %d metrics, want canceled with its partial result", r.Status, r.Error, len(r.Metrics))
	}
	if err := server.Cancel(ctx, id); !errors.Is(err, store.ErrConflict) {
		t.Errorf("cancel of a final remote run: %v, want a conflict", err)
	}
	next := e.create("lab-r")
	if err := server.Submit(ctx, next, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor(next, func(r *rundoc.Run) bool { return r.Status == rundoc.StatusRunning }, "running")
}
