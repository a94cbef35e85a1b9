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
	"github.com/kbench/kbench/internal/pgtest"
	"github.com/kbench/kbench/store"
)

// BenchmarkSubmitToStart measures the time from Submit to the first event
// of the run's child process (its phase), with an idle worker: the
// queue's share of a run's start-up, plus starting the process, which is
// the same for any queue. ns/op is that latency; compare it with the
// same benchmark at another revision in the same session, medians of
// several -count.
func BenchmarkSubmitToStart(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	l := NewLocal(st, Options{Command: []string{os.Args[0], helperArg, "succeed"}, DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := l.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		b.StopTimer()
		r := &store.Run{Workload: "producer", Spec: plainSpec}
		if err := st.CreateRuns(ctx, []*store.Run{r}); err != nil {
			b.Fatal(err)
		}
		ch, _, cancel := l.Subscribe(r.ID)
		// An idle worker: nothing runs, nothing was just submitted.
		time.Sleep(50 * time.Millisecond)
		b.StartTimer()
		if err := l.Submit(ctx, r.ID, nil); err != nil {
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
	open := func(queue string) *Local {
		st, err := store.Open(dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		l := NewLocal(st, Options{Command: []string{os.Args[0], helperArg, "succeed"}, DataDir: b.TempDir(), Queue: queue,
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
