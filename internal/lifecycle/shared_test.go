package lifecycle

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/netcut"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// openStore opens a store on dsn, as a process of its own would: each
// has its own connections and its own listener.
func openStore(t *testing.T, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// countEvents reads a subscription until "done" (or a minute) and counts
// its events by name.
func countEvents(t *testing.T, ch <-chan Event) map[string]int {
	t.Helper()
	n := map[string]int{}
	deadline := time.After(time.Minute)
	for {
		select {
		case ev := <-ch:
			n[ev.Name]++
			if ev.Name == "done" {
				return n
			}
		case <-deadline:
			t.Fatalf("no done within a minute; saw %v", n)
		}
	}
}

func names(evs []Event) map[string]int {
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Name]++
	}
	return n
}

// TestRemoteRunLiveEvents: a server that executes nothing shows the live
// events of a run a worker in another process executes, through the
// database: the subscriber that was there first gets each event once, in
// order; a late joiner on that server and one on a second server get the
// run so far as their catch-up; all of them get "done" when the worker's
// run ends, here by a cancel sent from the server.
func TestRemoteRunLiveEvents(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := context.Background()
	server, _ := openPG(t, openStore(t, dsn), "wait", "", "server-host")
	openPG(t, openStore(t, dsn), "wait", "lab-a", "host-a")
	other, _ := openPG(t, openStore(t, dsn), "wait", "", "other-server")

	st := openStore(t, dsn)
	r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: "lab-a"}
	if err := st.CreateRuns(ctx, []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	first, catchUp, cancel := server.Subscribe(r.ID)
	defer cancel()
	if len(catchUp) != 0 {
		t.Fatalf("catch-up of a run not submitted yet: %v", catchUp)
	}
	if err := server.Submit(ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	w := &watch{id: r.ID, events: first}
	if ev := w.until(t, "status"); ev.Data.(map[string]any)["status"] != "running" {
		t.Errorf("status: %v", ev.Data)
	}
	if ev := w.until(t, "progress"); ev.Data.(map[string]any)["phase"] != "measure" {
		t.Errorf("progress: %v", ev.Data)
	}
	if ev := w.until(t, "interval"); ev.Data.(rundoc.SeriesPoint).Records != 100 {
		t.Errorf("interval: %v", ev.Data)
	}
	if ev := w.until(t, "output"); ev.Data.(map[string]string)["text"] == "" {
		t.Errorf("output: %v", ev.Data)
	}

	// Late joiners: the same server's hub, and another server's, which
	// reads the run's events so far from the database first.
	late, lateCatchUp, cancelLate := server.Subscribe(r.ID)
	defer cancelLate()
	far, farCatchUp, cancelFar := other.Subscribe(r.ID)
	defer cancelFar()
	for who, evs := range map[string][]Event{"late joiner": lateCatchUp, "other server": farCatchUp} {
		n := names(evs)
		if n["status"] != 1 || n["progress"] != 1 || n["interval"] != 1 || n["output"] != 1 {
			t.Errorf("%s: catch-up %v, want the status, the progress, the one interval and the output", who, n)
		}
	}
	if pts, ok := other.Series(r.ID); !ok || len(pts) != 1 {
		t.Errorf("the other server's series: %v %v, want the one point", pts, ok)
	}

	if err := server.Cancel(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	for who, ch := range map[string]<-chan Event{"first": first, "late joiner": late, "other server": far} {
		n := countEvents(t, ch)
		if n["interval"] != 0 || n["output"] != 0 {
			t.Errorf("%s: events after the catch-up repeat it: %v", who, n)
		}
	}
	if got, err := st.GetRun(ctx, r.ID); err != nil || got.Status != rundoc.StatusCanceled {
		t.Errorf("run: %v %v, want canceled", got.Status, err)
	}
}

// TestLocalRunOnPostgresNotDoubled: a server executing a run itself on
// PostgreSQL shares its events and follows the table, and its
// subscribers still get each event once.
func TestLocalRunOnPostgresNotDoubled(t *testing.T) {
	dsn := pgtest.URL(t)
	ctx := context.Background()
	l, _ := openPG(t, openStore(t, dsn), "succeed", "local", "host")
	st := openStore(t, dsn)
	r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: "local"}
	if err := st.CreateRuns(ctx, []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	ch, _, cancel := l.Subscribe(r.ID)
	defer cancel()
	if err := l.Submit(ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	n := countEvents(t, ch)
	if n["interval"] != 1 || n["output"] != 1 || n["progress"] != 1 || n["done"] != 1 {
		t.Errorf("events: %v, want one interval, output, progress and done", n)
	}
	// They were shared for other servers, "done" last (a batch after the
	// hub had it).
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs, err := st.RunEventsAfter(ctx, r.ID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shared %d events, want the status, progress, interval, output and done", len(evs))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFollowerIdleForgets: a follower whose run nobody watches stops
// after followIdle and forgets what it replayed; the next subscriber
// gets the run so far once, not twice.
func TestFollowerIdleForgets(t *testing.T) {
	// Put back after the managers below have closed (cleanups run last
	// first): their followers read both until Close has waited for them.
	// A deferred restore ran while the last follower still read them.
	idle, poll := followIdle, followPoll
	t.Cleanup(func() { followIdle, followPoll = idle, poll })
	followIdle, followPoll = 100*time.Millisecond, 20*time.Millisecond
	dsn := pgtest.URL(t)
	ctx := context.Background()
	server, _ := openPG(t, openStore(t, dsn), "wait", "", "server-host")
	worker, _ := openPG(t, openStore(t, dsn), "wait", "lab-a", "host-a")
	st := openStore(t, dsn)
	r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: "lab-a"}
	if err := st.CreateRuns(ctx, []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	ch, _, cancel := server.Subscribe(r.ID)
	if err := server.Submit(ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	(&watch{id: r.ID, events: ch}).until(t, "output")
	cancel()
	deadline := time.Now().Add(30 * time.Second)
	for {
		server.mu.Lock()
		f := server.following[r.ID]
		server.mu.Unlock()
		if f == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the follower of a run nobody watches never stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := server.hub.Series(r.ID); ok {
		t.Error("the hub kept the state of a run nobody follows")
	}
	_, catchUp, cancel := server.Subscribe(r.ID)
	defer cancel()
	if n := names(catchUp); n["interval"] != 1 || n["output"] != 1 {
		t.Errorf("catch-up after a new follower: %v, want one interval and one output", n)
	}
	worker.Cancel(ctx, r.ID)
}

// TestNoSharingOnSQLite: on SQLite no event goes to the database and
// nothing follows it.
func TestNoSharingOnSQLite(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	sqliteOnly(t)
	e := newEnv(t, "succeed", nil)
	id := e.create(t, plainSpec)
	ch, _, cancel := e.Subscribe(id)
	defer cancel()
	e.submit(t, e.Manager, id, nil)
	countEvents(t, ch)
	evs, err := e.st.RunEventsAfter(context.Background(), id, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 || e.out != nil || len(e.following) != 0 {
		t.Errorf("SQLite: %d events shared, outbox %v, %d followers", len(evs), e.out, len(e.following))
	}
}

// TestResultSurvivesDatabaseLoss: a worker whose database link is cut
// while its run executes lets the run finish, retries storing the result
// until the database answers again, and stores it, even though a reap
// elsewhere took the worker for lost and interrupted the run meanwhile:
// the real result replaces the interruption.
func TestResultSurvivesDatabaseLoss(t *testing.T) {
	defer func(first, most time.Duration) { storeRetryFirst, storeRetryMax = first, most }(storeRetryFirst, storeRetryMax)
	storeRetryFirst, storeRetryMax = 100*time.Millisecond, 500*time.Millisecond
	dsn := pgtest.URL(t)
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	link, err := netcut.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close) // after the worker's Close
	u.Host = link.Addr()
	worker, _ := openPG(t, openStore(t, u.String()), "slow", "lab-a", "host-a")
	retried := make(chan uint, 1)
	worker.SetHook(func(point string, id uint) {
		if point == "store-retry" {
			select {
			case retried <- id:
			default:
			}
		}
	})
	st := openStore(t, dsn)
	server, _ := openPG(t, st, "slow", "", "server-host")
	r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: "lab-a"}
	if err := st.CreateRuns(ctx, []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	ch, _, cancel := server.Subscribe(r.ID)
	defer cancel()
	if err := server.Submit(ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	(&watch{id: r.ID, events: ch}).until(t, "interval")
	link.Cut()
	select {
	case id := <-retried:
		if id != r.ID {
			t.Fatalf("retried run %d, want %d", id, r.ID)
		}
	case <-time.After(time.Minute):
		t.Fatal("the worker never retried storing the result")
	}
	if err := st.InterruptRun(ctx, r.ID, "interrupted: the worker on host-a was lost: no heartbeat"); err != nil {
		t.Fatal(err)
	}
	link.Restore()
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := st.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == rundoc.StatusSucceeded {
			if len(got.Metrics) != 1 || got.Error != "" {
				t.Errorf("stored after the link came back: %d metrics, error %q; want the result", len(got.Metrics), got.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d: %s %q a minute after the link came back, want succeeded", r.ID, got.Status, got.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseTwiceOnPostgres: Close may be called twice (a test's explicit
// Close and its cleanup), whether the outbox ever wrote or not.
func TestCloseTwiceOnPostgres(t *testing.T) {
	dsn := pgtest.URL(t)
	for _, wrote := range []bool{false, true} {
		l, _ := openPG(t, openStore(t, dsn), "succeed", "", "host")
		if wrote {
			l.publish(1, Event{"status", map[string]any{"status": "running"}})
		}
		done := make(chan struct{})
		go func() {
			l.Close()
			l.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("Close twice (outbox written: %v) did not return", wrote)
		}
	}
}

// TestConcurrentStartOnNewDatabase: workers starting together on a new
// PostgreSQL database all start: kbench's migrations and River's run
// once, under one lock, while the others wait.
func TestConcurrentStartOnNewDatabase(t *testing.T) {
	dsn := pgtest.URL(t)
	const n = 4
	errs := make(chan error, n)
	for i := range n {
		go func() {
			st, err := store.Open(dsn)
			if err != nil {
				errs <- err
				return
			}
			t.Cleanup(func() { st.Close() })
			l := NewManager(st, Options{Command: []string{os.Args[0], helperArg, "succeed"}, DataDir: t.TempDir(),
				Queue: fmt.Sprintf("lab-%d", i), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			err = l.Start(context.Background())
			if err == nil {
				t.Cleanup(l.Close)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Start: %v", err)
		}
	}
}
