package acceptance

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestE2ERemoteCancelAndLostWorker: kbench serve on PostgreSQL with no
// local worker, and a kbench worker on queue lab-k running a long run on
// the embedded broker.
//
// Cancel through the server's API answers 202, reaches the worker's child
// through River's cancellation of the run's job, and the run ends
// canceled with what it measured; the worker then takes the next run.
//
// SIGKILL of the worker mid-run takes its children with it, and the
// server's reap stores the run interrupted, saying its worker was lost,
// within 60 s (heartbeats stop; 30 s later the worker counts as lost;
// the reap runs every 10 s); a new worker on the queue takes new runs.
func TestE2ERemoteCancelAndLostWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench and starts processes")
	}
	// Most of it is waiting for the reap, which TestE2EFleet's overlaps.
	t.Parallel()
	database := pgtest.URL(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	_, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(),
		"--database", database, "--local-worker=false")
	srv := &e2eServer{URL: m[1], http: e2eHTTPClient()}
	worker, _ := startE2EWorker(t, database, "lab-k")
	long := map[string]any{"workload": "producer", "queue": "lab-k", "params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}}
	tiny := map[string]any{"workload": "producer", "queue": "lab-k", "params": map[string]any{"num-records": 2000, "record-size": 100, "throughput": -1}}
	final := func(r e2eWorkerRun) bool { return r.Status != "queued" && r.Status != "running" }
	// runningChild waits for run id to be running with its measurement
	// under way (its child started), and returns the child.
	runningChild := func(id uint) e2eProc {
		t.Helper()
		waitRun(t, srv, id, "running", func(r e2eWorkerRun) bool { return r.Status == "running" })
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			if p, ok := e2eChild(worker.cmd.Process.Pid, "run"); ok {
				// Some records measured: the first interval point of the
				// run's live events (a fixed sleep was too short under load).
				waitEvent(t, srv, id, "interval")
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d: no kbench run child of the worker", id)
			}
		}
	}

	// Cancel of the remote run.
	id := srv.createRun(t, long)
	runningChild(id)
	var answer client.Canceling
	canceled := time.Now()
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", id), nil, http.StatusAccepted, &answer)
	r := waitRun(t, srv, id, "final", final)
	t.Logf("cancel → canceled in %v", time.Since(canceled).Round(time.Millisecond))
	if r.Status != "canceled" || len(r.Metrics) == 0 || r.Worker != host {
		t.Errorf("the remote run after its cancel: %s %q, %d metrics, on %q; want canceled with its partial result", r.Status, r.Error, len(r.Metrics), r.Worker)
	}
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", id), nil, http.StatusConflict, nil)
	next := srv.createRun(t, tiny)
	if r := waitRun(t, srv, next, "final", final); r.Status != "succeeded" {
		t.Errorf("the run after the cancel: %s %q, want succeeded", r.Status, r.Error)
	}

	// SIGKILL of the worker mid-run.
	id = srv.createRun(t, long)
	child := runningChild(id)
	if err := worker.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-worker.exited
	killed := time.Now()
	for deadline := time.Now().Add(10 * time.Second); child.alive(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed worker's kbench run (pid %d) still runs 10 s later", child.pid)
		}
	}
	r = waitRun(t, srv, id, "final", final)
	lostIn := time.Since(killed)
	t.Logf("SIGKILL → interrupted in %v", lostIn.Round(time.Millisecond))
	if r.Status != "interrupted" || !strings.Contains(r.Error, "was lost") || !strings.Contains(r.Error, host) {
		t.Errorf("the killed worker's run: %s %q, want interrupted saying its worker on %s was lost", r.Status, r.Error, host)
	}
	if lostIn > 60*time.Second {
		t.Errorf("the killed worker's run was interrupted %v after the kill, want within 60 s", lostIn)
	}
	startE2EWorker(t, database, "lab-k")
	next = srv.createRun(t, tiny)
	if r := waitRun(t, srv, next, "final", final); r.Status != "succeeded" {
		t.Errorf("a run for the queue's new worker: %s %q, want succeeded", r.Status, r.Error)
	}
}
