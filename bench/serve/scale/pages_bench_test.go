// These in-process benchmarks of the serve benchmark (run.sh, seed/,
// loadgen/) render the same pages through server.New with httptest, so
// they can be profiled without a network or a load generator in the way.
// They live beside scale, the one program outside the command line that
// imports server:
//
//	go test ./bench/serve/scale -run '^$' -bench . -benchtime 3s -cpuprofile cpu.prof
//	go tool pprof -top -cum cpu.prof
//
// The fixture (10,000 runs, bench/serve/fixture; KBENCH_SERVE_RUNS=N for
// another size) is seeded once, on the first benchmark, into a temporary
// directory; `go test` without -bench seeds nothing.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/bench/serve/fixture"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/server"
	"github.com/kbench/kbench/static"
	"github.com/kbench/kbench/templates"
	"github.com/kbench/kbench/ui"
)

// env is the seeded store and server every benchmark shares.
var env struct {
	once    sync.Once
	err     error
	dir     string
	st      *store.Store
	srv     *server.Server
	stats   fixture.Stats
	liveID  uint
	seedDur time.Duration
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env.st != nil {
		env.st.Close()
	}
	if env.dir != "" {
		os.RemoveAll(env.dir)
	}
	os.Exit(code)
}

// setup seeds the fixture and builds the server, once.
func setup(b *testing.B) {
	b.Helper()
	env.once.Do(func() {
		env.err = func() error {
			dir, err := os.MkdirTemp("", "kbench-serve-pages")
			if err != nil {
				return err
			}
			env.dir = dir
			st, err := store.Open(filepath.Join(dir, "kbench.db"))
			if err != nil {
				return err
			}
			env.st = st
			start := time.Now()
			runs := 10_000
			if v := os.Getenv("KBENCH_SERVE_RUNS"); v != "" {
				if runs, err = strconv.Atoi(v); err != nil || runs < 1 {
					return fmt.Errorf("KBENCH_SERVE_RUNS=%q: want a positive number", v)
				}
			}
			env.stats, err = fixture.Seed(context.Background(), st, fixture.Options{Runs: runs})
			if err != nil {
				return err
			}
			env.seedDur = time.Since(start)
			// A run in progress, as the server records one: created
			// queued, then started. No process runs it; its page is the
			// live one all the same.
			live := &store.Run{Label: "serve-bench-live", Workload: "producer",
				Spec: `{"workload":"producer","params":{"num-records":50000000,"throughput":20000,"profile":["cpu"]}}`}
			if err := st.CreateRuns(context.Background(), []*store.Run{live}); err != nil {
				return err
			}
			if err := st.StartRun(context.Background(), live.ID, time.Time{}); err != nil {
				return err
			}
			env.liveID = live.ID
			// The real server logs one line per request; so does this one,
			// into nothing.
			// The lifecycle is never started: no process runs a run.
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			lc := lifecycle.NewManager(st, lifecycle.Options{DataDir: dir, Logger: quiet})
			env.srv, err = server.New(server.Config{DataDir: dir, Logger: quiet},
				server.Deps{Store: st, Runs: lc, Validate: runner.Validate, ImportMetrics: runner.ImportMetrics})
			return err
		}()
	})
	if env.err != nil {
		b.Fatalf("setup: %v", env.err)
	}
}

// pages are the URLs run.sh loads.
func pages() []struct{ name, url string } {
	return []struct{ name, url string }{
		{"runs", "/"},
		{"runs-page150", "/?page=150"},
		{"run", fmt.Sprintf("/runs/%d", env.stats.SampleRunID)},
		{"run-live", fmt.Sprintf("/runs/%d", env.liveID)},
	}
}

func get(b *testing.B, url string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, url, nil)
	req.RemoteAddr = "127.0.0.1:40000"
	w := httptest.NewRecorder()
	env.srv.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", url, w.Code, w.Body.String())
	}
	return w
}

// BenchmarkPages serves each page through the whole handler chain (gin,
// middleware, store, view, template), one request at a time.
func BenchmarkPages(b *testing.B) {
	setup(b)
	for _, p := range pages() {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			n := get(b, p.url).Body.Len()
			b.SetBytes(int64(n))
			for b.Loop() {
				get(b, p.url)
			}
		})
	}
}

// BenchmarkPagesParallel serves the pages as run.sh does: many requests at
// once (GOMAXPROCS×-cpu goroutines; -cpu 2 with SetParallelism 25 is 50).
func BenchmarkPagesParallel(b *testing.B) {
	setup(b)
	ps := pages()
	b.ReportAllocs()
	b.SetParallelism(25)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			get(b, ps[i%len(ps)].url)
			i++
		}
	})
}

// BenchmarkRunsPageParts splits the runs page into the steps runsPage
// takes, so each one's cost is seen alone.
func BenchmarkRunsPageParts(b *testing.B) {
	setup(b)
	ctx := context.Background()
	u, err := ui.New(templates.FS, static.FS)
	if err != nil {
		b.Fatal(err)
	}
	for _, pg := range []struct {
		name string
		page int
	}{{"page1", 1}, {"page150", 150}} {
		q := ui.RunsQuery{Page: pg.page, PerPage: ui.DefaultPerPage}
		f := store.RunFilter{Offset: q.Offset(), Limit: q.PerPage}
		b.Run("ListRuns/"+pg.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := env.st.ListRuns(ctx, f); err != nil {
					b.Fatal(err)
				}
			}
		})
		runs, total, err := env.st.ListRuns(ctx, f)
		if err != nil {
			b.Fatal(err)
		}
		labels, err := env.st.Labels(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("NewRunsView/"+pg.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ui.NewRunsView(runs, total, q, labels)
			}
		})
		v := ui.NewRunsView(runs, total, q, labels)
		b.Run("Render/"+pg.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := u.Render(&buf, "runs", v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("Labels", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := env.st.Labels(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CountRuns", func(b *testing.B) {
		for b.Loop() {
			if _, err := env.st.CountRuns(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRunPageParts does the same for a stored run's page.
func BenchmarkRunPageParts(b *testing.B) {
	setup(b)
	ctx := context.Background()
	u, err := ui.New(templates.FS, static.FS)
	if err != nil {
		b.Fatal(err)
	}
	id := env.stats.SampleRunID
	b.Run("GetRun", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := env.st.GetRun(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("QueuePosition", func(b *testing.B) {
		for b.Loop() {
			if _, err := env.st.QueuePosition(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	run, err := env.st.GetRun(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("NewRunView", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ui.NewRunView(run, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	v, err := ui.NewRunView(run, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Render", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := u.Render(&buf, "run", v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
