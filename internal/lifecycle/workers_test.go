package lifecycle

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// openPG opens a lifecycle on st as a worker of queue (or, for queue "",
// one that executes nothing), with its own data directory and host name.
func openPG(t *testing.T, st *store.Store, mode, queue, host string) (*Manager, string) {
	t.Helper()
	dir := t.TempDir()
	opts := Options{Command: []string{os.Args[0], helperArg, mode}, DataDir: dir, Queue: queue, Host: host,
		NoWorker: queue == "", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	l := NewManager(st, opts)
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l, dir
}

// TestQueuesOnSharedDatabase: on one PostgreSQL database, a lifecycle
// that only submits puts runs in their queues, and each is executed by
// the worker of its queue (its files in that worker's directory, its host
// on the run); a worker starting meanwhile on the same queue leaves the
// run another live worker executes alone; a run of a gone worker is
// interrupted by the next worker of its queue; a per-run password is
// refused for any queue but the submitter's own worker's.
func TestQueuesOnSharedDatabase(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	create := func(queue, spec string) uint {
		t.Helper()
		r := &store.Run{Workload: "producer", Spec: spec, Queue: queue}
		if err := st.CreateRuns(ctx, []*store.Run{r}); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}

	server, _ := openPG(t, st, "succeed", "", "server-host")
	_, dirA := openPG(t, st, "succeed", "lab-a", "host-a")
	_, dirB := openPG(t, st, "succeed", "lab-b", "host-b")
	for _, tc := range []struct{ queue, host, dir, other string }{
		{"lab-a", "host-a", dirA, dirB},
		{"lab-b", "host-b", dirB, dirA},
	} {
		id := create(tc.queue, plainSpec)
		if err := server.Submit(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
		r := waitRun(t, st, id, "final", isFinal)
		if r.Status != rundoc.StatusSucceeded || r.Worker != tc.host || r.Queue != tc.queue {
			t.Errorf("run of %s: %s %q on %q in %q, want succeeded on %s", tc.queue, r.Status, r.Error, r.Worker, r.Queue, tc.host)
		}
		runDir := filepath.Join("runs", uintString(id))
		if _, err := os.Stat(filepath.Join(tc.dir, runDir, startedMarker)); err != nil {
			t.Errorf("run of %s: not in its worker's directory: %v", tc.queue, err)
		}
		if _, err := os.Stat(filepath.Join(tc.other, runDir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("run of %s: the other worker has its directory (%v)", tc.queue, err)
		}
	}

	_, secrets := secretSpec(t, "hunter2")
	id := create("lab-a", plainSpec)
	if err := server.Submit(ctx, id, secrets); err == nil {
		t.Error("a per-run password for queue lab-a was submitted")
	}

	// A run running on a live worker of lab-c; another lab-c worker starts.
	_, dirC := openPG(t, st, "wait", "lab-c", "host-c")
	long := create("lab-c", plainSpec)
	if err := server.Submit(ctx, long, nil); err != nil {
		t.Fatal(err)
	}
	waitRun(t, st, long, "running", func(r *rundoc.Run) bool { return r.Status == rundoc.StatusRunning })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dirC, "runs", uintString(long), startedMarker)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lab-c run's process never started")
		}
	}
	openPG(t, st, "succeed", "lab-c", "host-c2")
	if r, _ := st.GetRun(ctx, long); r.Status != rundoc.StatusRunning {
		t.Errorf("a second lab-c worker's start left the first one's run %s %q", r.Status, r.Error)
	}

	// A run a gone worker of this host left running.
	gone := &store.Worker{Host: "host-d", Queue: "lab-d", PID: deadPID(t)}
	if err := st.RegisterWorker(ctx, gone); err != nil {
		t.Fatal(err)
	}
	left := create("lab-d", plainSpec)
	if err := st.StartRunOn(ctx, left, time.Time{}, gone); err != nil {
		t.Fatal(err)
	}
	openPG(t, st, "succeed", "lab-d", "host-d")
	if r, _ := st.GetRun(ctx, left); r.Status != rundoc.StatusInterrupted {
		t.Errorf("run of a gone worker after its queue's next worker started: %s, want interrupted", r.Status)
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess(os.Args[0], []string{os.Args[0], "-test.run=^$"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}

func uintString(id uint) string { return strconv.FormatUint(uint64(id), 10) }
