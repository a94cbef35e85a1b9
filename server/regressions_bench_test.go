package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// seedRegressions stores series series of n finished producer runs each,
// as kbench records them: the five headline metrics and 25 others, a
// full environment, 30 interval points and an output; every other series
// drops its throughput by 8.7% half-way.
func seedRegressions(b *testing.B, ts *testServer, series, n int) {
	rng := rand.New(rand.NewPCG(2, 200))
	env := benchEnvironment()
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	noise := func() float64 { return 1 + 0.02*(2*rng.Float64()-1) }
	for s := range series {
		var runs []*store.Run
		for i := range n {
			rate := 115000.0
			if s%2 == 0 && i >= n/2 {
				rate = 105000
			}
			rate *= noise()
			o := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Environment: env, Output: "1000000 records sent.\n",
				Metrics: []rundoc.Metric{
					{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter},
					{Name: "mb-per-sec", Value: rate * 512 / 1e6, Unit: "MB/s", Better: rundoc.HigherIsBetter},
					{Name: "record-latency-p50", Value: 2 * noise(), Unit: "ms", Better: rundoc.LowerIsBetter},
					{Name: "record-latency-p99", Value: 14 * noise(), Unit: "ms", Better: rundoc.LowerIsBetter},
					{Name: "record-latency-p999", Value: 40 * noise(), Unit: "ms", Better: rundoc.LowerIsBetter}}}
			for j := range 25 {
				o.Metrics = append(o.Metrics, rundoc.Metric{Name: fmt.Sprintf("metric-%02d", j), Value: float64(j), Unit: "ms", Better: rundoc.LowerIsBetter})
			}
			for k := range 30 {
				o.Series = append(o.Series, rundoc.SeriesPoint{T: float64(k), RecordsPerSec: rate})
			}
			r := &store.Run{Label: "trunk", Workload: rundoc.Producer, Fingerprint: fmt.Sprintf("fp%03d", s), RunAt: t0.Add(time.Duration(i) * time.Hour),
				Meta: store.Meta{"commit": fmt.Sprintf("%040x", i), "branch": "trunk"}}
			if err := r.Record(o); err != nil {
				b.Fatal(err)
			}
			runs = append(runs, r)
		}
		if err := ts.st.CreateRuns(context.Background(), runs); err != nil {
			b.Fatal(err)
		}
	}
	settleDatabase(b, ts)
}

// BenchmarkRegressions: GET /api/regressions over 100 series of 200 runs
// (20,000 runs, 50 of the series with a regression): "uncached" is the
// first request after a start (every series read and detected),
// "one-series-changed" the first after a write to one series the store
// cannot name (one ListSeries and that series' detection),
// "one-run-stored" the first after a succeeded run is stored into one
// series (that series' SeriesInfo and detection; the write untimed),
// "warm" any other (the list kept for the store's generation). The runs
// list, which badges runs from the same list, is measured after a write
// to one series.
func BenchmarkRegressions(b *testing.B) {
	ts := newTestServer(b, nil)
	seedRegressions(b, ts, 100, 200)
	// The server's cache reads the store through forgetful, which can
	// make it see a write the store cannot name (forgetSeries).
	src := &forgetful{Store: ts.st, forgot: map[string]uint64{}}
	ts.regressions.Close()
	ts.regressions = regressions.New(src, ui.RegressionLinks(), nil)
	regs, err := ts.regressions.Default(context.Background())
	if err != nil || len(regs) < 50 {
		b.Fatalf("%d regressions (%v), want at least 50", len(regs), err)
	}
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			ts.regressions = regressions.New(src, ui.RegressionLinks(), nil)
			benchGetOnce(b, ts, "/api/regressions?threshold=5")
		}
	})
	b.Run("one-series-changed", func(b *testing.B) {
		for b.Loop() {
			src.forgetSeries("fp050@trunk")
			benchGetOnce(b, ts, "/api/regressions?threshold=5")
		}
	})
	b.Run("one-run-stored", func(b *testing.B) {
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for b.Loop() {
			b.StopTimer()
			at = at.Add(time.Hour)
			r := &store.Run{Label: "trunk", Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, Fingerprint: "fp050", RunAt: at,
				Meta: store.Meta{"branch": "trunk"}, Metrics: []store.Metric{{Name: "record-send-rate", Value: 105000, Unit: "records/s", Better: rundoc.HigherIsBetter}}}
			if err := ts.st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			benchGetOnce(b, ts, "/api/regressions?threshold=5")
		}
	})
	b.Run("warm", func(b *testing.B) { benchGet(b, ts, "/api/regressions?threshold=5", false) })
	b.Run("runs-list-one-series-changed", func(b *testing.B) {
		for b.Loop() {
			src.forgetSeries("fp050@trunk")
			ts.pages = newLRU[string, cachedPage](maxCachedPages)
			benchGetOnce(b, ts, "/")
		}
	})
}

// forgetful is the store as the regressions cache reads it, but for
// writes to a series that the store cannot name (forgetSeries): the
// cache then lists every series once and detects that series again.
type forgetful struct {
	*store.Store
	mu sync.Mutex
	// forgets counts forgetSeries; forgot its count by series, added to
	// their signatures' SumID so that they read as changed.
	forgets uint64
	forgot  map[string]uint64
}

// forgetScale makes room in the generations forgetful reports for the
// forgets (fewer than it per benchmark).
const forgetScale = 1 << 20

// forgetSeries makes the regressions cache see a write to series: the
// list is stale and the series' detection must be redone.
func (f *forgetful) forgetSeries(series string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgets++
	f.forgot[series]++
}

func (f *forgetful) SeriesGeneration() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Store.SeriesGeneration()*forgetScale + f.forgets
}

// SeriesChangedSince cannot name the series of a generation before a
// forget, and asks the store otherwise.
func (f *forgetful) SeriesChangedSince(gen uint64) ([]string, bool) {
	f.mu.Lock()
	forgets := f.forgets
	f.mu.Unlock()
	if gen%forgetScale != forgets {
		return nil, false
	}
	return f.Store.SeriesChangedSince(gen / forgetScale)
}

func (f *forgetful) ListSeries(ctx context.Context) ([]store.SeriesInfo, error) {
	return f.mark(f.Store.ListSeries(ctx))
}

func (f *forgetful) SeriesInfos(ctx context.Context, keys []string) ([]store.SeriesInfo, error) {
	return f.mark(f.Store.SeriesInfos(ctx, keys))
}

func (f *forgetful) mark(list []store.SeriesInfo, err error) ([]store.SeriesInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range list {
		list[i].SumID += f.forgot[list[i].Key]
	}
	return list, err
}

func benchGetOnce(b *testing.B, ts *testServer, target string) {
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s = %d", target, rec.Code)
	}
}
