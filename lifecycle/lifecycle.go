// Package lifecycle runs kbench's launched runs from queued to final: the
// queue (River's, through package jobs) and its workers, supervision of each run's `kbench run` child
// process (timeouts, cancel and shutdown by SIGINT then SIGKILL of its
// process group, secrets held in memory only), the ingestion of what a
// finished run left in its output directory into the store, recovery at
// start-up, and the hub of live events pages follow.
//
// It knows neither HTTP nor the database: it talks to the store through
// the store's exported methods, and the server calls it through an
// interface of its own (server.Runs), so that handlers know nothing of
// the job engine behind it.
package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kbench/kbench/clusters"
	"github.com/kbench/kbench/jobs"
	"github.com/kbench/kbench/rundoc"
	"github.com/kbench/kbench/store"
)

// Options configure a Local lifecycle.
type Options struct {
	// Command starts kbench for a run; "run --spec … --out … --progress
	// json" is appended.
	Command []string
	// DataDir holds one directory per run, runs/<id>, with its spec,
	// result, profiles and stderr.log.
	DataDir string
	// Concurrency is how many runs execute at once (default 1).
	Concurrency int
	// RunTimeout bounds one run's wall time (default 2h).
	RunTimeout time.Duration
	// KillGrace is how long a stopped run's process gets to write its
	// partial result after SIGINT before its process group is killed
	// (default 15 s).
	KillGrace time.Duration
	// Recheck, when set, is asked at Start about each run left queued by
	// a previous process, with its stored spec: a run it refuses (e.g. a
	// target --allow-target no longer allows) is canceled with its error.
	Recheck func(spec string) error
	// Clusters are the clusters this machine names (--cluster
	// NAME=FILE): a run on one gets its properties, secrets included,
	// from its file when it starts; a run on a cluster not named here
	// fails, and one left queued by a previous process is canceled at
	// Start. nil names none.
	Clusters *clusters.Set
	// Queue is the queue this server's workers take runs from and submits
	// runs to (default jobs.DefaultQueue).
	Queue string
	// Jobs is the database of the queue; nil keeps it in the store's
	// SQLite file, through a one-connection pool of the store's driver.
	Jobs   *jobs.Backend
	Logger *slog.Logger
}

// NeedsSecrets reports whether a stored spec had secrets removed: its
// run can execute only while the secrets are held in memory.
func NeedsSecrets(spec string) bool { return strings.Contains(spec, rundoc.Redacted) }

// storedCluster is the named cluster a stored spec targets, "" for none
// (or a spec that does not parse, which its run's execution reports).
func storedCluster(spec string) string {
	var file struct {
		Params struct {
			Cluster string `json:"cluster"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(spec), &file) != nil {
		return ""
	}
	return file.Params.Cluster
}

// Start recovers from a previous process and starts executing runs: runs
// left running are marked interrupted (their process died with the old
// server), and queued runs are queued again, but for those whose secrets
// were lost with the old process or that Options.Recheck refuses, which
// are canceled with the reason. A queued run keeps the job it had in
// River, in its place; one without (stored by a kbench before River, or
// whose submit failed) gets one, behind them, in id order.
func (q *Local) Start(ctx context.Context) error {
	n, err := q.st.MarkInterrupted(ctx, "interrupted: the kbench server stopped while this run was in progress")
	if err != nil {
		return fmt.Errorf("recover runs: %w", err)
	}
	if n > 0 {
		q.log.Info("marked runs left running as interrupted", "count", n)
	}
	jq, err := q.openJobs(ctx)
	if err != nil {
		return fmt.Errorf("recover queue: %w", err)
	}
	queued, err := q.st.QueuedRuns(ctx)
	if err != nil {
		return fmt.Errorf("recover queue: %w", err)
	}
	for _, r := range queued {
		if NeedsSecrets(r.Spec) {
			// Secrets live only in memory; after a restart they are gone.
			reason := "canceled: the server restarted and this run's credentials were only held in memory; launch it again"
			if err := q.st.CancelQueued(ctx, r.ID, reason); err != nil && !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("recover queue: %w", err)
			}
			if _, err := jq.Cancel(ctx, r.ID); err != nil {
				return fmt.Errorf("recover queue: %w", err)
			}
			continue
		}
		if name := storedCluster(r.Spec); name != "" && !q.opts.Clusters.Has(name) {
			// The operator no longer names the cluster: nothing says where
			// the run would go or how it would log in.
			reason := "canceled when the server restarted: " + clusters.UnknownMessage(name, q.opts.Clusters.Names())
			if err := q.st.CancelQueued(ctx, r.ID, reason); err != nil && !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("recover queue: %w", err)
			}
			if _, err := jq.Cancel(ctx, r.ID); err != nil {
				return fmt.Errorf("recover queue: %w", err)
			}
			continue
		}
		if q.opts.Recheck != nil {
			if err := q.opts.Recheck(r.Spec); err != nil {
				// --allow-target may have narrowed since the run was queued.
				if err := q.st.CancelQueued(ctx, r.ID, "canceled when the server restarted: "+err.Error()); err != nil && !errors.Is(err, store.ErrConflict) {
					return fmt.Errorf("recover queue: %w", err)
				}
				if _, err := jq.Cancel(ctx, r.ID); err != nil {
					return fmt.Errorf("recover queue: %w", err)
				}
				continue
			}
		}
		// A run that has its job keeps it (Submit gives a run one job).
		if err := jq.Submit(ctx, r.ID, q.opts.Queue); err != nil {
			return fmt.Errorf("recover queue: %w", err)
		}
	}
	// River's own context: Close, not the caller's ctx, stops the workers.
	if err := jq.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start queue: %w", err)
	}
	return nil
}

// openJobs opens the queue (creating or upgrading River's tables) on
// Options.Jobs, or on the store's database (its SQLite file through a
// pool of its own, or a pgx pool on its PostgreSQL database), and keeps it
// for Submit, Cancel and Close.
func (q *Local) openJobs(ctx context.Context) (*jobs.Queue, error) {
	var backend jobs.Backend
	var closeConn func()
	switch {
	case q.opts.Jobs != nil:
		backend = *q.opts.Jobs
	case q.st.Postgres():
		pool, err := q.st.OpenJobsPool(ctx)
		if err != nil {
			return nil, err
		}
		backend, closeConn = jobs.Postgres(pool), pool.Close
	default:
		db, err := q.st.OpenJobsDB(ctx)
		if err != nil {
			return nil, err
		}
		backend, closeConn = jobs.SQLite(db), func() { db.Close() }
	}
	jq, err := jobs.New(ctx, backend, jobs.Config{Queue: q.opts.Queue, Workers: q.opts.Concurrency, Execute: q.work,
		// Past the longest run (its timeout, then the grace to stop it), a
		// job still running is one whose worker vanished.
		RescueAfter: q.opts.RunTimeout + q.opts.KillGrace + 10*time.Minute,
		Logger:      q.log})
	if err != nil {
		if closeConn != nil {
			closeConn()
		}
		return nil, err
	}
	q.mu.Lock()
	q.jobs, q.closeJobsConn, q.stopped = jq, closeConn, false
	q.mu.Unlock()
	return jq, nil
}
