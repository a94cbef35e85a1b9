package regressions

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// stepRuns is n succeeded producer runs of series fp@trunk, a day apart
// from t0, record-send-rate at from for the first half and to after
// (±1% of alternating noise).
func stepRuns(fp string, t0 time.Time, n int, from, to float64) []*store.Run {
	var runs []*store.Run
	for i := range n {
		v := from
		if i >= n/2 {
			v = to
		}
		v *= 1 + 0.01*float64(i%3-1)
		at := t0.Add(time.Duration(i) * 24 * time.Hour)
		runs = append(runs, &store.Run{Label: fp, Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, Fingerprint: fp,
			FinishedAt: &at, RunAt: at, Meta: store.Meta{"branch": "trunk", "commit": fmt.Sprintf("%s-%d", fp, i)},
			Metrics: []store.Metric{{Name: "record-send-rate", Value: v, Unit: "records/s", Better: rundoc.HigherIsBetter}}})
	}
	return runs
}

// TestRegressionsIncremental: the regressions behind the runs list's
// badges, brought up to date series by series after each write, equal
// those computed from scratch, through writes interleaved as a server
// sees them: succeeded runs stored into existing and new series, a run
// finished succeeded and one failed, deletions that empty a series and
// that remove a change point, a prune, and on PostgreSQL another store on
// the same database writing. None of them reads every series again
// (ListSeries) but a notification that names no series, as an older
// kbench sends.
func TestRegressionsIncremental(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dsn := ""
			if backend == "postgres" {
				if testing.Short() {
					t.Skip("PostgreSQL: not under -short")
				}
				dsn = pgtest.URL(t)
			}
			st := openStore(t, dsn)
			testRegressionsIncremental(t, st, New(st, testLinks, nil), dsn)
		})
	}
}

func testRegressionsIncremental(t *testing.T, st *store.Store, c *Cache, dsn string) {
	ctx := context.Background()
	lists := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.lists
	}
	// check compares the cache's list with one computed from scratch
	// and returns it.
	check := func(name string) []Regression {
		t.Helper()
		got, err := c.All(ctx, changepoint.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.mu.Lock()
		sets, n := c.sets, c.lists
		c.sets = nil
		c.mu.Unlock()
		want, err := c.All(ctx, changepoint.Options{})
		if err != nil {
			t.Fatalf("%s, from scratch: %v", name, err)
		}
		c.mu.Lock()
		fresh := c.sets
		c.sets, c.lists = sets, n
		c.mu.Unlock()
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			t.Errorf("%s: regressions\n%s\nwant (from scratch)\n%s", name, g, w)
		}
		// The series kept, with their signatures, are those of the store.
		opts := changepoint.Options{}.WithDefaults()
		if g, w := signatures(sets[opts]), signatures(fresh[opts]); g != w {
			t.Errorf("%s: series kept\n%s\nwant (from scratch)\n%s", name, g, w)
		}
		return got
	}
	series := func(regs []Regression) []string {
		var out []string
		for _, r := range regs {
			if !slices.Contains(out, r.Series) {
				out = append(out, r.Series)
			}
		}
		slices.Sort(out)
		return out
	}
	create := func(st *store.Store, runs []*store.Run) []*store.Run {
		t.Helper()
		if err := st.CreateRuns(ctx, runs); err != nil {
			t.Fatal(err)
		}
		return runs
	}
	t0 := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)

	a := create(st, stepRuns("fp-a", t0, 40, 1000, 800))
	create(st, stepRuns("fp-b", t0, 30, 100, 100))
	// fp-e, a year older, is pruned whole at the end.
	create(st, stepRuns("fp-e", t0.AddDate(-1, 0, 0), 40, 1000, 600))
	if got := series(check("three series")); !slices.Equal(got, []string{"fp-a@trunk", "fp-e@trunk"}) {
		t.Errorf("regressions of %q, want fp-a@trunk's and fp-e@trunk's", got)
	}
	lists0 := lists()

	create(st, stepRuns("fp-a", t0.AddDate(0, 0, 40), 1, 800, 800))
	check("a succeeded run in an existing series")
	create(st, stepRuns("fp-b", t0.AddDate(0, 0, 30), 30, 50, 50))
	if got := series(check("fp-b regresses")); !slices.Equal(got, []string{"fp-a@trunk", "fp-b@trunk", "fp-e@trunk"}) {
		t.Errorf("regressions of %q, want fp-a's, fp-b's and fp-e's", got)
	}
	cRuns := create(st, stepRuns("fp-c", t0.AddDate(0, 1, 0), 40, 1000, 700))
	if got := series(check("a new series")); !slices.Contains(got, "fp-c@trunk") {
		t.Errorf("regressions of %q, want fp-c's among them", got)
	}

	// A run queued, then finished succeeded; another finished failed.
	queued := []*store.Run{{Label: "fp-b", Workload: rundoc.Producer, Fingerprint: "fp-b", Meta: store.Meta{"branch": "trunk"}},
		{Label: "fp-b", Workload: rundoc.Producer, Fingerprint: "fp-b", Meta: store.Meta{"branch": "trunk"}}}
	create(st, queued)
	check("queued runs")
	if err := st.FinishRun(ctx, queued[0].ID, store.Outcome{Status: rundoc.StatusSucceeded,
		Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: 50, Unit: "records/s", Better: rundoc.HigherIsBetter}}}); err != nil {
		t.Fatal(err)
	}
	check("a run finished succeeded")
	if err := st.FinishRun(ctx, queued[1].ID, store.Outcome{Status: rundoc.StatusFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	check("a run finished failed")

	// Deletions: fp-c emptied run by run; fp-a's change point removed.
	for i, r := range cRuns {
		if err := st.DeleteRun(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		if i%8 == 0 || i == len(cRuns)-1 {
			check(fmt.Sprintf("%d of fp-c's runs deleted", i+1))
		}
	}
	if got := series(check("fp-c emptied")); slices.Contains(got, "fp-c@trunk") {
		t.Errorf("regressions of %q after fp-c's runs were all deleted", got)
	}
	for _, r := range a[18:23] {
		if err := st.DeleteRun(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	check("fp-a's change point deleted")
	if _, err := st.PruneRuns(ctx, t0.AddDate(0, 0, 12)); err != nil {
		t.Fatal(err)
	}
	if got := series(check("a prune")); slices.Contains(got, "fp-e@trunk") {
		t.Errorf("regressions of %q after fp-e was pruned", got)
	}

	if dsn != "" {
		other, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		// heard does write on the other store and waits until ts's store
		// has heard of it.
		heard := func(name string, write func() error) {
			t.Helper()
			g := st.SeriesGeneration()
			if err := write(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for deadline := time.Now().Add(30 * time.Second); st.SeriesGeneration() == g; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: the server's store never heard of it", name)
				}
			}
			check(name)
		}
		heard("another store's new series", func() error {
			return other.CreateRuns(ctx, stepRuns("fp-d", t0.AddDate(0, 2, 0), 40, 500, 300))
		})
		if got := series(check("fp-d")); !slices.Contains(got, "fp-d@trunk") {
			t.Errorf("regressions of %q, want fp-d's among them", got)
		}
		heard("another store's deletion", func() error { return other.DeleteRun(ctx, a[30].ID) })
		more := []*store.Run{{Label: "fp-a", Workload: rundoc.Producer, Fingerprint: "fp-a", Meta: store.Meta{"branch": "trunk"}}}
		create(other, more)
		heard("another store's run finished succeeded", func() error {
			return other.FinishRun(ctx, more[0].ID, store.Outcome{Status: rundoc.StatusSucceeded,
				Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: 400, Unit: "records/s", Better: rundoc.HigherIsBetter}}})
		})
		if n := lists(); n != lists0 {
			t.Errorf("ListSeries read %d times after the first, want none", n-lists0)
		}
		// An older kbench's notification, its origin alone: any series may
		// have changed, so every one is read again, once.
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		heard("a notification naming no series", func() error {
			_, err := db.ExecContext(ctx, "SELECT pg_notify('kbench_changes', $1)", strings.Repeat("ab", 8))
			return err
		})
		lists0++
	}
	if n := lists(); n != lists0 {
		t.Errorf("ListSeries read %d times more than expected", n-lists0)
	}
}

// signatures lists a regression set's series and their signatures, by
// key.
func signatures(set *regressionSet) string {
	if set == nil {
		return "none"
	}
	var out []string
	for sig := range set.bySeries.All() {
		out = append(out, fmt.Sprintf("%s %+v", sig.Key, sig))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
