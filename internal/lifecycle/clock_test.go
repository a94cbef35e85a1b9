package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestReapSkewedWorkerClock: a worker whose machine's clock is hours off
// (behind or ahead of the database server's and of the reaping
// process's) is judged by the database's clock alone. While it sends
// heartbeats, neither the reap nor a new worker of its queue starting
// takes its run for lost; once it has been silent longer than
// WorkerLostAfter, the reap interrupts its run.
func TestReapSkewedWorkerClock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	st, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	server, _ := openPG(t, st, "succeed", "", "server-host")
	for _, skew := range []time.Duration{-3 * time.Hour, 3 * time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			// The worker's process: its own store, its machine's clock off.
			ws, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close() })
			ws.SetClock(func() time.Time { return time.Now().Add(skew) })
			queue := "lab-skew" + map[bool]string{true: "-ahead", false: "-behind"}[skew > 0]
			w := &store.Worker{Host: "host-skewed", Queue: queue, PID: 4242}
			if err := ws.RegisterWorker(ctx, w); err != nil {
				t.Fatal(err)
			}
			r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: queue}
			if err := ws.CreateRuns(ctx, []*store.Run{r}); err != nil {
				t.Fatal(err)
			}
			if err := ws.StartRunOn(ctx, r.ID, time.Time{}, w); err != nil {
				t.Fatal(err)
			}
			if err := ws.Heartbeat(ctx, w.ID); err != nil {
				t.Fatal(err)
			}
			status := func() *rundoc.Run {
				t.Helper()
				got, err := st.GetRun(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}

			if n, err := server.reap(ctx); err != nil || n != 0 {
				t.Errorf("reap while the worker %v off sends heartbeats: %d runs interrupted, %v; want none", skew, n, err)
			}
			// Another worker of the queue starts (on another host): its
			// recovery leaves a live worker's run alone.
			other, _ := openPG(t, st, "succeed", queue, "host-other")
			other.Close()
			if got := status(); got.Status != rundoc.StatusRunning {
				t.Fatalf("the run of a live worker %v off: %s %q, want running", skew, got.Status, got.Error)
			}

			// As if its last heartbeat were 40 s old: it stopped sending them.
			agePG(t, url, w.ID, 40*time.Second)
			if n, err := server.reap(ctx); err != nil || n != 1 {
				t.Errorf("reap after the worker %v off went silent: %d runs interrupted, %v; want 1", skew, n, err)
			}
			if got := status(); got.Status != rundoc.StatusInterrupted || !strings.Contains(got.Error, "host-skewed") || !strings.Contains(got.Error, "was lost") {
				t.Errorf("the run of a silent worker %v off: %s %q, want interrupted, its worker lost", skew, got.Status, got.Error)
			}
		})
	}
}

// agePG moves worker id's last heartbeat by back in the database at url.
func agePG(t *testing.T, url string, id uint, by time.Duration) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `UPDATE workers SET heartbeat_at = heartbeat_at - make_interval(secs => $1) WHERE id = $2`,
		by.Seconds(), int64(id))
	if err != nil {
		t.Fatal(err)
	}
}
