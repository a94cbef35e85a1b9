package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// seedWide stores n finished runs with m metrics each, in pairs of labels.
func seedWide(b *testing.B, ts *testServer, n, m int) string {
	var runs []*store.Run
	for i := range n {
		r := &store.Run{Label: fmt.Sprintf("l%d", i%2), Workload: "producer", Status: rundoc.StatusSucceeded, Output: "1000 records sent.\n"}
		for j := range m {
			better := []rundoc.Better{rundoc.HigherIsBetter, rundoc.LowerIsBetter, rundoc.Neither}[j%3]
			r.Metrics = append(r.Metrics, store.Metric{Name: fmt.Sprintf("metric-%02d", j), Value: float64(1000 + i*7 + j), Unit: "ms", Better: better})
		}
		for k := range 30 {
			r.Series = append(r.Series, store.SeriesPoint{Seq: k, T: float64(k), RecordsPerSec: float64(1000 + k)})
		}
		runs = append(runs, r)
	}
	if err := ts.st.CreateRuns(context.Background(), runs); err != nil {
		b.Fatal(err)
	}
	q := ""
	for i, r := range runs {
		if i > 0 {
			q += ","
		}
		q += fmt.Sprint(r.ID)
	}
	return q
}

func benchGet(b *testing.B, ts *testServer, target string, uncached bool) {
	b.ReportAllocs()
	for b.Loop() {
		if uncached {
			ts.pages = newLRU[string, cachedPage](maxCachedPages)
		}
		rec := httptest.NewRecorder()
		ts.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s = %d", target, rec.Code)
		}
	}
}

// BenchmarkComparePage: 10 runs × 40 metrics, rendered from the store
// (uncached) and from the page cache.
func BenchmarkComparePage(b *testing.B) {
	ts := newTestServer(b, nil)
	q := seedWide(b, ts, 10, 40)
	b.Run("uncached", func(b *testing.B) { benchGet(b, ts, "/compare?runs="+q, true) })
	b.Run("cached", func(b *testing.B) { benchGet(b, ts, "/compare?runs="+q, false) })
	b.Run("by-label-uncached", func(b *testing.B) { benchGet(b, ts, "/compare?by=label&runs="+q, true) })
}

// BenchmarkReport: the page of a 10-run report and its Markdown export.
func BenchmarkReport(b *testing.B) {
	ts := newTestServer(b, nil)
	seedWide(b, ts, 10, 40)
	ids := make([]uint, 10)
	for i := range ids {
		ids[i] = uint(i + 1)
	}
	rep := &rundoc.Report{Title: "bench", RunIDs: ids, By: "run"}
	if err := ts.st.CreateReport(context.Background(), rep); err != nil {
		b.Fatal(err)
	}
	b.Run("page-uncached", func(b *testing.B) { benchGet(b, ts, "/r/"+rep.Slug, true) })
	b.Run("markdown", func(b *testing.B) { benchGet(b, ts, "/r/"+rep.Slug+".md", false) })
}
