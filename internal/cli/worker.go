package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/targets"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// Worker is `kbench worker`.
var Worker = &Command{
	Name:      "worker",
	UsageLine: "worker --database URL --queue Q",
	Short:     "a benchmark machine: runs from a queue of serve's PostgreSQL store",
	Run:       cmdWorker,
}

// workerSettings is what `kbench worker` runs with once its flags and
// KBENCH_* variables are read and checked.
type workerSettings struct {
	Database    string // a postgres:// URL
	Queue       string
	DataDir     string
	Concurrency int
	RunTimeout  time.Duration
	// Targets is --allow-target's policy: the servers this worker lets
	// a run target besides the embedded broker (nil: none).
	Targets *targets.Policy
	// Clusters are the clusters this worker names (--cluster NAME=FILE),
	// their files on this machine only.
	Clusters *clusters.Set
	// Tools are the Kafka tools this worker offers (--tool NAME=PATH),
	// their programs on this machine only.
	Tools *toolcatalog.Set
	// AllowToolClassProps is --allow-tool-class-props: tool runs may
	// have class-name and config-provider properties.
	AllowToolClassProps bool
}

// workWith is work; tests of the flags replace it to see what they
// resolved to.
var workWith = work

// cmdWorker runs `kbench worker`: a benchmark machine's worker, which
// takes runs from one queue of a shared PostgreSQL store and executes
// them as kbench serve's own worker does. It serves no HTTP. Every flag
// can also be set with its KBENCH_* variable, as serve's.
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("kbench worker", "Usage: kbench worker --database postgres://… [--queue NAME] [flags]\n\n"+
		"Takes runs from a queue of the shared PostgreSQL store a kbench serve --database uses, and executes\n"+
		"them on this machine. Every flag can also be set with an environment variable, as serve's\n"+
		"(KBENCH_DATABASE, KBENCH_QUEUE, …).\n\n", stderr)
	database := fs.String("database", "", "the shared store: a postgres:// (or postgresql://) URL, the one kbench serve --database uses")
	queue := fs.String("queue", jobs.DefaultQueue, "the queue to take runs from (runs choose one with \"queue\"; local is also kbench serve's own worker's)")
	data := fs.String("data", "./kbench-data", "directory for the run files (spec, result, profiles, stderr.log of each run); results and profiles are stored in the database")
	ex := addExecFlags(fs.FlagSet, "host:port pattern a run may target besides the embedded broker (repeatable; * matches within one DNS label, never a dot; port * for any); runs targeting others fail")
	fs.env, fs.envChecks = everyFlag, ex.envChecks()
	if code, ok := fs.parse(args); !ok {
		return code
	}
	from := fs.from
	switch {
	case *database == "":
		return fs.usageError("a worker needs the shared PostgreSQL store: set --database postgres://… (or KBENCH_DATABASE), the database kbench serve --database uses")
	case !store.IsPostgresURL(*database):
		return fs.usageError("%s %s is an SQLite file, one machine's store: a worker needs the shared PostgreSQL store (--database postgres://…) that kbench serve --database uses", from["database"], *database)
	}
	if err := jobs.ValidQueue(*queue); err != nil {
		return fs.usageError("%s: %v", from["queue"], err)
	}
	named, ok := ex.check("kbench worker", from, stderr)
	if !ok {
		return 2
	}
	return workWith(ctx, workerSettings{Database: *database, Queue: *queue, DataDir: *data, Concurrency: *ex.concurrency,
		RunTimeout: *ex.runTimeout, Targets: ex.targets, Clusters: named, Tools: ex.toolSet, AllowToolClassProps: *ex.classProps}, stdout, stderr)
}

// work takes runs from the queue until ctx ends (SIGINT or SIGTERM):
// then it takes no more, interrupts the running children as serve's
// shutdown does (they are stored interrupted), and returns; runs still
// waiting stay queued for the next worker.
func work(ctx context.Context, set workerSettings, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "kbench worker: find the kbench binary: %v\n", err)
		return 1
	}
	if err := os.MkdirAll(filepath.Join(set.DataDir, "runs"), 0o755); err != nil {
		fmt.Fprintf(stderr, "kbench worker: data directory: %v\n", err)
		return 1
	}
	// The store's errors show the URL with its password redacted.
	st, err := store.Open(set.Database)
	if err != nil {
		fmt.Fprintf(stderr, "kbench worker: %v\n", err)
		if errors.Is(err, store.ErrForeignDatabase) || errors.Is(err, store.ErrNewerSchema) {
			fmt.Fprintln(stderr, "kbench worker: nothing was changed in the database; choose another --database")
		}
		return 1
	}
	defer st.Close()
	l := lifecycle.NewManager(st, workerOptions(set, []string{exe}, logger))
	if err := l.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "kbench worker: %v\n", err)
		return 1
	}
	host, _ := os.Hostname()
	fmt.Fprintf(stdout, "kbench worker on %s taking runs from queue %s (database %s, run files in %s)\n",
		host, set.Queue, store.Redact(set.Database), set.DataDir)
	<-ctx.Done()
	fmt.Fprintf(stderr, "kbench worker: stopping (%v): running runs are interrupted, queued ones stay for the next worker\n", context.Cause(ctx))
	l.Close()
	return 0
}

// workerOptions are a worker's lifecycle options. Its --allow-target
// policy is asked about each run as the worker takes it (Options.Allow),
// which fails a run this worker may not execute, and never at Start
// (Options.Recheck): the runs queued then are the queue's, which another
// worker, allowed more, may execute.
func workerOptions(set workerSettings, command []string, logger *slog.Logger) lifecycle.Options {
	return lifecycle.Options{Command: command, DataDir: set.DataDir, Concurrency: set.Concurrency,
		RunTimeout: set.RunTimeout, Queue: set.Queue, Allow: workerAllows(set.Targets), Clusters: set.Clusters, Tools: set.Tools,
		AllowToolClassProps: set.AllowToolClassProps, Logger: logger}
}

// workerAllows checks a stored run's spec against the worker's
// --allow-target policy, just before the worker executes it.
func workerAllows(p *targets.Policy) func(spec string) error { return allowsStored(p, "kbench worker") }
