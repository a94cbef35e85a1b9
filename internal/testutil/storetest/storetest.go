// Package storetest stores runs for the tests of the packages that delete
// and prune them (server, lifecycle): a finished run with a file in its
// run directory under the data directory, as a launched run leaves one.
package storetest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// FinishedRun stores a producer run labelled label that succeeded at
// finished, with one metric, and writes a stderr.log in its run directory
// under dataDir.
func FinishedRun(t testing.TB, st *store.Store, dataDir, label string, finished time.Time) *store.Run {
	t.Helper()
	r := &store.Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, CreatedAt: finished.Add(-time.Minute), FinishedAt: &finished,
		Metrics: []store.Metric{{Name: "records-per-sec", Value: 1}}}
	if err := st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	dir := RunDir(dataDir, r.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stderr.log"), []byte("log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// RunDir is run id's directory under dataDir, where a launched run's files
// go.
func RunDir(dataDir string, id uint) string {
	return filepath.Join(dataDir, "runs", strconv.FormatUint(uint64(id), 10))
}
