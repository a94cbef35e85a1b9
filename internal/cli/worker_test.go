package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/targets"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// parseTargets is the --allow-target policy of patterns, as serve and
// worker build it from their flags.
func parseTargets(t testing.TB, patterns ...string) *targets.Policy {
	t.Helper()
	p, err := targets.Parse(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWorkerTargetsFailNotCancel: a worker whose --allow-target allows
// less than the server that queued a run leaves the queue's runs queued
// when it starts (another worker of the queue may be allowed them), and
// fails only the run it takes, before starting any process, naming its
// own flag.
func TestWorkerTargetsFailNotCancel(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(pgtest.DSN(t, filepath.Join(dir, "kbench.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := &store.Run{Label: "elsewhere", Workload: "producer", Status: rundoc.StatusQueued, Queue: jobs.DefaultQueue,
		Spec: `{"workload":"producer","params":{"bootstrap-server":"kafka-2:9092","num-records":100}}`}
	if err := st.CreateRuns(ctx, []*store.Run{run}); err != nil {
		t.Fatal(err)
	}
	set := workerSettings{Queue: jobs.DefaultQueue, DataDir: dir, Concurrency: 1, RunTimeout: time.Minute,
		Targets: parseTargets(t, "kafka-1:9092")}
	// No such program: a run the policy let through would fail starting it.
	opts := workerOptions(set, []string{filepath.Join(dir, "no-kbench-here")}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	opts.Host = "bench-7"
	l := lifecycle.NewManager(st, opts)
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err := st.GetRun(ctx, run.ID)
	for deadline := time.Now().Add(time.Minute); err == nil && !got.Final() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got, err = st.GetRun(ctx, run.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	const want = "refused by the worker on bench-7: bootstrap-server: kafka-2:9092 is not an allowed target; start kbench worker with --allow-target 'kafka-2:9092' to allow it"
	if got.Status != rundoc.StatusFailed || got.Error != want {
		t.Errorf("run outside the worker's --allow-target: %s %q, want %s %q", got.Status, got.Error, rundoc.StatusFailed, want)
	}
}
