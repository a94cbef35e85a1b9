package server

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestRegressionBadgesFollowWrites: the runs list's badges, whose
// regressions are kept across the writes that change no series, follow
// the ones that do: a regression appears once the runs that make it
// finish as succeeded, and goes when they are deleted; the writes in
// between (runs queued, started, canceled, failed) leave the badges
// right. On PostgreSQL the same holds when another store (another
// process) writes.
func TestRegressionBadgesFollowWrites(t *testing.T) {
	for _, b := range []string{"sqlite", "postgres", "postgres-other-store"} {
		t.Run(b, func(t *testing.T) {
			dsn := ""
			if b != "sqlite" {
				dsn = pgtest.URL(t)
			}
			ts := newTestServerOn(t, dsn, nil)
			w := ts.st
			if b == "postgres-other-store" {
				var err error
				if w, err = store.Open(dsn); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { w.Close() })
			}
			testRegressionBadgesFollowWrites(t, ts, w)
		})
	}
}

func testRegressionBadgesFollowWrites(t *testing.T, ts *testServer, w *store.Store) {
	ctx := context.Background()
	badge := regexp.MustCompile(`<a class="badge badge-regressed" href="/compare\?[^"]+"[^>]*>regressed: record-send-rate -8\.[0-9]%</a>`)
	row := regexp.MustCompile(`(?s)<tr data-run-id="(\d+)".*?</tr>`)
	badged := func() []string {
		var ids []string
		for _, m := range row.FindAllStringSubmatch(ts.do(t, "GET", "/?per_page=100", "").Body.String(), -1) {
			if badge.MatchString(m[0]) {
				ids = append(ids, m[1])
			}
		}
		return ids
	}
	// eventually waits for the page to show want: another store's
	// writes reach this one's generation within a round trip, not at
	// once.
	eventually := func(what string, want []string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			got := badged()
			if fmt.Sprint(got) == fmt.Sprint(want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: badges on runs %v, want %v", what, got, want)
			}
		}
	}
	t0 := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	// newRuns queues n runs of the series, a day apart from start.
	newRuns := func(start, n int) []*store.Run {
		var runs []*store.Run
		for i := start; i < start+n; i++ {
			runs = append(runs, &store.Run{Label: "fp-follow", Workload: rundoc.Producer, Fingerprint: "fp-follow",
				Meta: store.Meta{"branch": "trunk", "commit": fmt.Sprintf("s%d", i)}, RunAt: t0.Add(time.Duration(i) * 24 * time.Hour)})
		}
		if err := w.CreateRuns(ctx, runs); err != nil {
			t.Fatal(err)
		}
		return runs
	}
	finish := func(runs []*store.Run, start int, v float64) {
		for k, r := range runs {
			i := start + k
			if err := w.FinishRun(ctx, r.ID, store.Outcome{Status: rundoc.StatusSucceeded, FinishedAt: t0.Add(time.Duration(i) * 24 * time.Hour),
				Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: v * (1 + 0.01*float64(i%3-1)), Unit: "records/s", Better: rundoc.HigherIsBetter}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	finish(newRuns(0, 20), 0, 115000)
	eventually("a steady series", nil)

	// Writes that change no series: the badges kept must still be right.
	after := newRuns(20, 22)
	if err := w.StartRun(ctx, after[20].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, after[20].ID, store.Outcome{Status: rundoc.StatusFailed, Error: "broker gone"}); err != nil {
		t.Fatal(err)
	}
	if err := w.CancelQueued(ctx, after[21].ID, "not needed"); err != nil {
		t.Fatal(err)
	}
	eventually("runs queued, failed and canceled", nil)

	finish(after[:20], 20, 105000)
	first := fmt.Sprint(after[0].ID)
	eventually("the runs of a regression stored", []string{first})

	for _, r := range after[:20] {
		if err := w.DeleteRun(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	eventually("the runs of the regression deleted", nil)
}
