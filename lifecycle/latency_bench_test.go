package lifecycle

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

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
