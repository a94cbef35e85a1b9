package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kbench/kbench/internal/store"
)

// backends are the databases every test runs on: the store's SQLite file
// (through store.OpenJobsDB, as the server does) and, when
// KBENCH_TEST_POSTGRES names a server, a fresh PostgreSQL database.
var backends = []struct {
	name string
	open func(t *testing.T) Backend
}{
	{"sqlite", openSQLite},
	{"postgres", openPostgres},
}

func openSQLite(t *testing.T) Backend {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := st.OpenJobsDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return SQLite(db)
}

func openPostgres(t *testing.T) Backend {
	t.Helper()
	url := os.Getenv("KBENCH_TEST_POSTGRES")
	if url == "" {
		if os.Getenv("KBENCH_REQUIRE_POSTGRES") == "1" {
			t.Fatal("KBENCH_REQUIRE_POSTGRES=1 but KBENCH_TEST_POSTGRES is not set")
		}
		t.Skip("KBENCH_TEST_POSTGRES is not set: no PostgreSQL server to test against")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	b := make([]byte, 6)
	rand.Read(b)
	name := "kbench_jobs_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Database = name
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return Postgres(pool)
}

// recorder is an Executor that records the runs it executes; a run in
// hold waits until its context ends or it is released.
type recorder struct {
	mu      sync.Mutex
	ran     []uint
	running int
	most    int // most runs executing at once
	started chan uint
	ended   chan ended
	hold    map[uint]chan struct{}
}

type ended struct {
	id       uint
	canceled bool // the context ended through a job cancel
}

func newRecorder() *recorder {
	return &recorder{started: make(chan uint, 100), ended: make(chan ended, 100), hold: map[uint]chan struct{}{}}
}

func (r *recorder) holdRun(id uint) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan struct{})
	r.hold[id] = ch
	return ch
}

func (r *recorder) execute(ctx context.Context, id uint) error {
	r.mu.Lock()
	r.ran = append(r.ran, id)
	r.running++
	r.most = max(r.most, r.running)
	hold := r.hold[id]
	r.mu.Unlock()
	r.started <- id
	canceled := false
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			canceled = Canceled(ctx)
		}
	}
	r.mu.Lock()
	r.running--
	r.mu.Unlock()
	r.ended <- ended{id, canceled}
	return nil
}

func (r *recorder) runs() []uint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ran)
}

func newQueue(t *testing.T, b Backend, cfg Config) *Queue {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	q, err := New(context.Background(), b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func start(t *testing.T, q *Queue) {
	t.Helper()
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop(context.Background()) })
}

// wait reads from ch; the deadline only keeps a broken queue from hanging
// the test.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("no %s within a minute", what)
		panic("unreachable")
	}
}

// TestQueue: runs submitted are executed one at a time, in order; a run
// submitted twice while waiting has one job; a waiting run canceled is
// never executed; a running run canceled has its context canceled as a
// cancel; Waiting lists the waiting runs in order.
func TestQueue(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			b := be.open(t)
			rec := newRecorder()
			q := newQueue(t, b, Config{Execute: rec.execute, PollInterval: 50 * time.Millisecond})
			release1 := rec.holdRun(1)
			rec.holdRun(4)
			for _, id := range []uint{1, 2, 3, 2, 4, 5} {
				if err := q.Submit(ctx, id, ""); err != nil {
					t.Fatal(err)
				}
			}
			start(t, q)
			if got := wait(t, rec.started, "start"); got != 1 {
				t.Fatalf("first run executed %d, want 1", got)
			}
			waiting, err := q.Waiting(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if want := []uint{2, 3, 4, 5}; !slices.Equal(waiting, want) {
				t.Errorf("waiting %v, want %v", waiting, want)
			}
			if found, err := q.Cancel(ctx, 3); err != nil || !found {
				t.Fatalf("cancel of waiting run 3 = %v, %v", found, err)
			}
			close(release1)
			for _, want := range []uint{1, 2} {
				if e := wait(t, rec.ended, "end"); e.id != want || e.canceled {
					t.Fatalf("ended %+v, want run %d not canceled", e, want)
				}
			}
			if got := wait(t, rec.started, "start"); got != 2 {
				t.Fatalf("executed %d, want 2", got)
			}
			if got := wait(t, rec.started, "start"); got != 4 {
				t.Fatalf("executed %d, want 4", got)
			}
			if found, err := q.Cancel(ctx, 4); err != nil || !found {
				t.Fatalf("cancel of running run 4 = %v, %v", found, err)
			}
			if e := wait(t, rec.ended, "end"); e.id != 4 || !e.canceled {
				t.Fatalf("ended %+v, want run 4 canceled through its job", e)
			}
			if e := wait(t, rec.ended, "end"); e.id != 5 {
				t.Fatalf("ended %+v, want run 5", e)
			}
			if got, want := rec.runs(), []uint{1, 2, 4, 5}; !slices.Equal(got, want) {
				t.Errorf("executed %v, want %v", got, want)
			}
			if rec.most != 1 {
				t.Errorf("%d runs executed at once, want 1", rec.most)
			}
			if found, err := q.Cancel(ctx, 99); err != nil || found {
				t.Errorf("cancel of a run never submitted = %v, %v; want no job found", found, err)
			}
		})
	}
}

// TestQueueSurvivesRestart: runs submitted through one Queue (no worker,
// as a server that only serves) are executed by another made later on
// the same database, and a run whose job ended unworked can be submitted
// again.
func TestQueueSurvivesRestart(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			b := be.open(t)
			first := newQueue(t, b, Config{})
			for _, id := range []uint{7, 8} {
				if err := first.Submit(ctx, id, ""); err != nil {
					t.Fatal(err)
				}
			}
			// Submitted again: it keeps its one job, and its place.
			if err := first.Submit(ctx, 7, ""); err != nil {
				t.Fatal(err)
			}
			rec := newRecorder()
			second := newQueue(t, b, Config{Execute: rec.execute, PollInterval: 50 * time.Millisecond})
			start(t, second)
			for range 2 {
				wait(t, rec.ended, "end")
			}
			if got, want := rec.runs(), []uint{7, 8}; !slices.Equal(got, want) {
				t.Errorf("executed %v, want %v", got, want)
			}
			// Stopped, its jobs' ends are stored; a job that ended is no
			// longer the run's, and the run can have a new one.
			if err := second.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := first.Submit(ctx, 7, ""); err != nil {
				t.Fatal(err)
			}
			start(t, newQueue(t, b, Config{Execute: rec.execute, PollInterval: 50 * time.Millisecond}))
			if e := wait(t, rec.ended, "end"); e.id != 7 {
				t.Errorf("ended %+v, want run 7 again", e)
			}
		})
	}
}

// TestQueueNames: a run goes to the queue it names, whose workers alone
// take it; a bad name is refused.
func TestQueueNames(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			b := be.open(t)
			local, lab := newRecorder(), newRecorder()
			start(t, newQueue(t, b, Config{Execute: local.execute, PollInterval: 50 * time.Millisecond}))
			labQ := newQueue(t, b, Config{Queue: "lab-a", Execute: lab.execute, PollInterval: 50 * time.Millisecond})
			start(t, labQ)
			if err := labQ.Submit(ctx, 1, DefaultQueue); err != nil {
				t.Fatal(err)
			}
			if err := labQ.Submit(ctx, 2, ""); err != nil {
				t.Fatal(err)
			}
			if got := wait(t, local.ended, "end on local").id; got != 1 {
				t.Errorf("the local queue executed %d, want 1", got)
			}
			if got := wait(t, lab.ended, "end on lab-a").id; got != 2 {
				t.Errorf("lab-a executed %d, want 2", got)
			}
			for _, bad := range []string{"Lab", "", "a b", "x;drop"} {
				if err := labQ.Submit(ctx, 3, bad+"!"); err == nil {
					t.Errorf("queue %q accepted", bad+"!")
				}
			}
			if _, err := New(ctx, b, Config{Queue: "UPPER"}); err == nil {
				t.Error("a Queue named UPPER was made")
			}
		})
	}
}

// TestNoBackend: a Queue needs a database.
func TestNoBackend(t *testing.T) {
	if _, err := New(context.Background(), Backend{}, Config{}); err == nil {
		t.Fatal("a Queue without a database was made")
	}
}

// TestCancelWithoutDatabase: a cancel that cannot list the run's jobs
// fails with the error rather than reporting that the run has no job.
func TestCancelWithoutDatabase(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := st.OpenJobsDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	q := newQueue(t, SQLite(db), Config{})
	if err := q.Submit(context.Background(), 7, ""); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if found, err := q.Cancel(context.Background(), 7); err == nil {
		t.Errorf("Cancel on a closed database: found %v, no error; want the error", found)
	}
}
