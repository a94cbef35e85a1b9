package lifecycle

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// BenchmarkSubmitToStart measures the time from Submit to the first event
// of the run's child process (its phase), with an idle worker: the
// queue's share of a run's start-up, plus starting the process, which is
// the same for any queue. ns/op is that latency; compare it with the
// same benchmark at another revision in the same session, medians of
// several -count, and with BenchmarkSubmitToStartPostgres.
func BenchmarkSubmitToStart(b *testing.B) {
	dir := b.TempDir()
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		b.Fatal(err)
	}
	// A cleanup, not a defer: it runs after the lifecycle's (LIFO), which
	// still writes to the store as it stops.
	b.Cleanup(func() { st.Close() })
	l := benchLocal(b, st, Options{DataDir: dir})
	benchSubmitToStart(b, st, l, l, "")
}

// BenchmarkSubmitToStartPostgres is BenchmarkSubmitToStart on a
// PostgreSQL database of its own (KBENCH_TEST_POSTGRES; skipped without
// it): "local" is serve's own worker on PostgreSQL (one lifecycle submits
// and executes), "worker" a server that executes nothing
// (--local-worker=false) and a kbench worker's lifecycle on queue
// "bench", in the same process but sharing nothing else than the
// database, as on two machines: the new job reaches the worker through
// PostgreSQL.
func BenchmarkSubmitToStartPostgres(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		st := benchPGStore(b, pgtest.URL(b))
		l := benchLocal(b, st, Options{DataDir: b.TempDir()})
		benchSubmitToStart(b, st, l, l, "")
	})
	b.Run("worker", func(b *testing.B) {
		url := pgtest.URL(b)
		st := benchPGStore(b, url)
		server := benchLocal(b, st, Options{DataDir: b.TempDir(), NoWorker: true, Host: "server-host"})
		// The worker opens its own store, as another process would.
		wst := benchPGStore(b, url)
		worker := benchLocal(b, wst, Options{DataDir: b.TempDir(), Queue: "bench", Host: "worker-host"})
		benchSubmitToStart(b, st, server, worker, "bench")
	})
}

// benchPGStore opens the store on url, closed when b ends (before
// pgtest drops the database).
func benchPGStore(b *testing.B, url string) *store.Store {
	st, err := store.Open(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// benchLocal starts a lifecycle whose children are this test binary's
// helper ("succeed"), closed when b ends.
func benchLocal(b *testing.B, st *store.Store, opts Options) *Manager {
	opts.Command = []string{os.Args[0], helperArg, "succeed"}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	l := NewManager(st, opts)
	if err := l.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.Close)
	return l
}

// benchSubmitToStart times submitter.Submit of a run of queue to the
// first event of its child, which executor publishes.
func benchSubmitToStart(b *testing.B, st *store.Store, submitter, executor *Manager, queue string) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: queue}
		if err := st.CreateRuns(ctx, []*store.Run{r}); err != nil {
			b.Fatal(err)
		}
		ch, _, cancel := executor.Subscribe(r.ID)
		// An idle worker: nothing runs, nothing was just submitted.
		time.Sleep(50 * time.Millisecond)
		b.StartTimer()
		if err := submitter.Submit(ctx, r.ID, nil); err != nil {
			b.Fatal(err)
		}
		for ev := range ch {
			if ev.Name == "progress" {
				break
			}
		}
		b.StopTimer()
		for ev := range ch {
			if ev.Name == "done" {
				break
			}
		}
		cancel()
		b.StartTimer()
	}
}

// BenchmarkRemoteEventDelay measures how long a run's live event takes
// to reach a server that executes nothing from the worker executing the
// run in another process (here another lifecycle on its own store, on
// one PostgreSQL database): from the worker's hub to the server's, the
// outbox's batch, the insert, the notification and the follower's read.
// It reports the median and the largest delay of the runs' "output"
// events (ms-median, ms-max); ns/op is a whole run's turn around.
// Skipped without KBENCH_TEST_POSTGRES.
func BenchmarkRemoteEventDelay(b *testing.B) {
	ctx := context.Background()
	dsn := pgtest.URL(b)
	open := func(queue string) *Manager {
		st, err := store.Open(dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		l := NewManager(st, Options{Command: []string{os.Args[0], helperArg, "succeed"}, DataDir: b.TempDir(), Queue: queue,
			NoWorker: queue == "", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := l.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(l.Close)
		return l
	}
	server, worker := open(""), open("lab-a")
	arrival := func(ch <-chan Event, at chan<- time.Time) {
		for ev := range ch {
			if ev.Name == "output" {
				at <- time.Now()
			}
			if ev.Name == "done" {
				return
			}
		}
	}
	var delays []float64
	for b.Loop() {
		r := &store.Run{Workload: "producer", Spec: plainSpec, Queue: "lab-a"}
		if err := server.st.CreateRuns(ctx, []*store.Run{r}); err != nil {
			b.Fatal(err)
		}
		there, _, cancelThere := worker.Subscribe(r.ID)
		here, _, cancelHere := server.Subscribe(r.ID)
		atWorker, atServer := make(chan time.Time, 1), make(chan time.Time, 1)
		go arrival(there, atWorker)
		go arrival(here, atServer)
		if err := server.Submit(ctx, r.ID, nil); err != nil {
			b.Fatal(err)
		}
		w, s := <-atWorker, <-atServer
		delays = append(delays, float64(s.Sub(w).Microseconds())/1000)
		cancelThere()
		cancelHere()
	}
	b.ReportMetric(median.Of(delays), "ms-median")
	b.ReportMetric(slices.Max(delays), "ms-max")
}
