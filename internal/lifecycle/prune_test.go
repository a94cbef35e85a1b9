package lifecycle

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// finishedRun stores a finished run, with a file in its run directory as a
// launched run leaves one.
func finishedRun(t *testing.T, st *store.Store, dataDir, label string, finished time.Time) *store.Run {
	t.Helper()
	r := &store.Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, CreatedAt: finished.Add(-time.Minute), FinishedAt: &finished,
		Metrics: []store.Metric{{Name: "records-per-sec", Value: 1}}}
	if err := st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	dir := runDir(dataDir, r.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stderr.log"), []byte("log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

func runDir(dataDir string, id uint) string {
	return filepath.Join(dataDir, "runs", uintString(id))
}

// syncBuffer is a bytes.Buffer that a logger may write to while a test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRetainPrunesAtStart: with a retention, StartPruning deletes the
// finished runs older than it that no report uses, with their files, and
// logs how many; recent runs, unfinished runs and runs a report uses stay.
func TestRetainPrunesAtStart(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	now := time.Now().UTC()
	old := now.Add(-31 * 24 * time.Hour)
	oldRun := finishedRun(t, st, dir, "old", old)
	oldRun2 := finishedRun(t, st, dir, "old too", old.Add(-time.Hour))
	oldReported := finishedRun(t, st, dir, "old, in a report", old)
	recent := finishedRun(t, st, dir, "recent", now.Add(-29*24*time.Hour))
	if err := st.CreateReport(ctx, &rundoc.Report{Title: "r", RunIDs: []uint{oldReported.ID}}); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	m := NewManager(st, Options{DataDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	stop := m.StartPruning(ctx, 30*24*time.Hour)
	defer stop()
	for _, r := range []*store.Run{oldRun, oldRun2} {
		if _, err := st.GetRun(ctx, r.ID); err == nil {
			t.Errorf("run %q (finished 31 days ago) was kept", r.Label)
		}
		if _, err := os.Stat(runDir(dir, r.ID)); !os.IsNotExist(err) {
			t.Errorf("files of pruned run %q: %v", r.Label, err)
		}
	}
	for _, r := range []*store.Run{oldReported, recent} {
		if _, err := st.GetRun(ctx, r.ID); err != nil {
			t.Errorf("run %q was pruned: %v", r.Label, err)
		}
		if _, err := os.Stat(runDir(dir, r.ID)); err != nil {
			t.Errorf("files of kept run %q: %v", r.Label, err)
		}
	}
	if !strings.Contains(logs.String(), "pruned runs") || !strings.Contains(logs.String(), "count=2") {
		t.Errorf("log does not say how many runs were pruned:\n%s", logs)
	}
}

// TestRetainZeroKeepsEverything: without a retention nothing is pruned.
func TestRetainZeroKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ancient := finishedRun(t, st, dir, "ancient", time.Now().Add(-3650*24*time.Hour))
	m := NewManager(st, Options{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	m.StartPruning(context.Background(), 0)()
	if _, err := st.GetRun(context.Background(), ancient.ID); err != nil {
		t.Errorf("a run was pruned without Retain: %v", err)
	}
}
