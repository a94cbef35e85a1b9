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
	"github.com/kbench/kbench/internal/testutil/storetest"
)

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
	oldRun := storetest.FinishedRun(t, st, dir, "old", old)
	oldRun2 := storetest.FinishedRun(t, st, dir, "old too", old.Add(-time.Hour))
	oldReported := storetest.FinishedRun(t, st, dir, "old, in a report", old)
	recent := storetest.FinishedRun(t, st, dir, "recent", now.Add(-29*24*time.Hour))
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
		if _, err := os.Stat(storetest.RunDir(dir, r.ID)); !os.IsNotExist(err) {
			t.Errorf("files of pruned run %q: %v", r.Label, err)
		}
	}
	for _, r := range []*store.Run{oldReported, recent} {
		if _, err := st.GetRun(ctx, r.ID); err != nil {
			t.Errorf("run %q was pruned: %v", r.Label, err)
		}
		if _, err := os.Stat(storetest.RunDir(dir, r.ID)); err != nil {
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
	ancient := storetest.FinishedRun(t, st, dir, "ancient", time.Now().Add(-3650*24*time.Hour))
	m := NewManager(st, Options{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	m.StartPruning(context.Background(), 0)()
	if _, err := st.GetRun(context.Background(), ancient.ID); err != nil {
		t.Errorf("a run was pruned without Retain: %v", err)
	}
}
