package regressions

import (
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// openStore opens a store on dsn ("": a fresh database of the test
// backend, pgtest.DSN: an SQLite file in a temporary directory, or a
// PostgreSQL database under KBENCH_TEST_BACKEND=postgres), closed when t
// ends.
func openStore(t testing.TB, dsn string) *store.Store {
	t.Helper()
	if dsn == "" {
		dsn = pgtest.DSN(t, filepath.Join(t.TempDir(), "kbench.db"))
	}
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// testLinks stand for the pages' links (ui.RegressionLinks, which this
// package's own tests cannot import: ui imports it): each names what it
// links to, so that a regression's links still differ by change point,
// series and metric.
var testLinks = Links{
	BeforeAfter: func(h history.History, k int) string {
		return fmt.Sprintf("/compare?at=%d", h.ChangePoints[k].RunID)
	},
	History: func(series, metric string, opts changepoint.Options) string {
		return "/history?" + url.Values{"series": {series}, "metric": {metric}, "window": {fmt.Sprint(opts.Window)}}.Encode()
	},
	SeriesName: func(key, label, workload, _ string) string { return label + " (" + workload + ") " + key },
}
