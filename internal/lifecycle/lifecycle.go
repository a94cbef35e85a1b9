// Package lifecycle runs kbench's launched runs from queued to final: the
// queue (River's, through package jobs) and its workers, supervision of each run's `kbench run` child
// process (timeouts, cancel and shutdown by SIGINT then SIGKILL of its
// process group, secrets held in memory only), the ingestion of what a
// finished run left in its output directory into the store, recovery at
// start-up, the hub of live events pages follow, and the pruning of
// finished runs past kbench serve's --retain.
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
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// Options configure a Manager.
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
	// Tools are the Kafka tools this machine offers (--tool NAME=PATH):
	// a run naming one gets its program through the child's environment
	// (toolcatalog.EnvVar), never through the spec; a run naming a tool
	// not offered here fails. nil offers none.
	Tools *toolcatalog.Set
	// AllowToolClassProps lets a Kafka tool's run have the properties
	// that make the Java client load classes or run a command
	// (rundoc.ClassProp); without it such a run fails unstarted
	// (serve's and worker's --allow-tool-class-props).
	AllowToolClassProps bool
	// Allow, when set, is asked about each run's stored spec before its
	// process starts: a run it refuses fails with its error (kbench
	// worker's --allow-target, which the server that queued the run
	// does not know).
	Allow func(spec string) error
	// Queue is the queue this server's workers take runs from and submits
	// runs to (default jobs.DefaultQueue).
	Queue string
	// Jobs is the database of the queue; nil keeps it in the store's
	// SQLite file, through a one-connection pool of the store's driver.
	Jobs *jobs.Backend
	// NoWorker makes a lifecycle that submits and cancels runs but executes
	// none (kbench serve --local-worker=false): runs wait in their queues
	// for workers elsewhere, and Start recovers nothing, since no run of
	// any queue is this process's to recover.
	NoWorker bool
	// Host and Version describe this worker in the workers table and on
	// the runs it takes (default: the machine's host name and kbench's
	// module version).
	Host, Version string
	Logger        *slog.Logger
}

// Heartbeats: a worker refreshes its row every HeartbeatEvery; one whose
// heartbeat is older than WorkerLostAfter is taken for gone. On
// PostgreSQL every lifecycle (a worker, or a server that executes
// nothing) reaps every ReapEvery: the runs of any queue whose worker
// is gone are interrupted then, within WorkerLostAfter + HeartbeatEvery +
// ReapEvery of the worker's death; on SQLite the next start does it.
const (
	HeartbeatEvery  = 5 * time.Second
	WorkerLostAfter = 30 * time.Second
	ReapEvery       = 10 * time.Second
)

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

// Start registers this worker, recovers what previous processes left in
// its queue and starts executing runs: runs of its queue left running by
// a worker that is gone (see gone) are marked interrupted, and its queued
// runs are queued again, but for those whose secrets were lost with the
// old process, that Options.Recheck refuses or whose named cluster this
// machine no longer names, which are canceled with the reason. A queued run keeps the job it had in River, in its place;
// one without (stored by a kbench before River, or whose submit failed)
// gets one, behind them, in id order. Runs of other queues are other
// workers' and left alone. With Options.NoWorker it only opens the queue.
func (q *Manager) Start(ctx context.Context) error {
	if q.opts.NoWorker {
		if _, err := q.openJobs(ctx); err != nil {
			return fmt.Errorf("open queue: %w", err)
		}
		q.startReap()
		return nil
	}
	w := &store.Worker{Host: q.opts.Host, Queue: q.opts.Queue, PID: os.Getpid(), Version: q.opts.Version,
		Clusters: strings.Join(q.opts.Clusters.Names(), ","), Tools: q.opts.Tools.Offered()}
	if err := q.st.RegisterWorker(ctx, w); err != nil {
		return fmt.Errorf("register worker: %w", err)
	}
	q.mu.Lock()
	q.worker = w
	q.mu.Unlock()
	running, err := q.st.RunningIn(ctx, q.opts.Queue)
	if err != nil {
		return fmt.Errorf("recover runs: %w", err)
	}
	n := 0
	for _, r := range running {
		if !q.gone(r.Worker, r.Silence) {
			continue // another live worker's run
		}
		err := q.st.InterruptRun(ctx, r.ID, "interrupted: the kbench server stopped while this run was in progress")
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("recover runs: %w", err)
		}
		if err == nil {
			n++
		}
	}
	if n > 0 {
		q.log.Info("marked runs left running as interrupted", "count", n)
	}
	jq, err := q.openJobs(ctx)
	if err != nil {
		return fmt.Errorf("recover queue: %w", err)
	}
	queued, err := q.st.QueuedRunsIn(ctx, q.opts.Queue)
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
	q.startHeartbeat(w.ID)
	q.startReap()
	return nil
}

// reap interrupts the running runs, of any queue, whose worker was lost:
// it stopped (cleanly, yet left the run running) or sent no heartbeat for
// WorkerLostAfter. A run with no worker recorded is left to Start's rule.
// Each run is one conditional update, so of reapers racing one stores
// it and the others get store.ErrConflict, which they skip. The run's job
// is ended too (jobs.Queue.EndLost), so River does not hold it running.
// It returns how many runs it interrupted.
func (q *Manager) reap(ctx context.Context) (int, error) {
	running, err := q.st.RunningRuns(ctx)
	if err != nil {
		return 0, err
	}
	q.mu.Lock()
	jq := q.jobs
	q.mu.Unlock()
	n := 0
	for _, r := range running {
		w := r.Worker
		if w == nil || !lost(w, r.Silence) {
			continue
		}
		reason := lostReason(w)
		err := q.st.InterruptRun(ctx, r.ID, reason)
		if errors.Is(err, store.ErrConflict) {
			continue // final meanwhile, or another reaper's
		}
		if err != nil {
			return n, err
		}
		n++
		q.log.Warn("interrupted a run whose worker was lost", "run", r.ID, "worker", w.ID, "host", w.Host, "pid", w.PID)
		q.publish(r.ID, Event{"done", map[string]string{"status": string(rundoc.StatusInterrupted), "error": reason}})
		if jq != nil {
			if _, err := jq.EndLost(ctx, r.ID); err != nil {
				q.log.Warn("end the job of a run whose worker was lost", "run", r.ID, "err", err)
			}
		}
	}
	return n, nil
}

// lost reports whether worker w is gone as the reap sees it, from any
// machine: stopped, or silent for more than WorkerLostAfter (silence is
// measured by the database's clock, store.RunningRun).
func lost(w *store.Worker, silence time.Duration) bool {
	return w.StoppedAt != nil || silence > WorkerLostAfter
}

// lostReason is the error of a run whose worker w was lost.
func lostReason(w *store.Worker) string {
	why := fmt.Sprintf("no heartbeat since %s", w.HeartbeatAt.UTC().Format(time.RFC3339))
	if w.StoppedAt != nil {
		why = fmt.Sprintf("it stopped at %s with this run still running", w.StoppedAt.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("interrupted: the worker on %s (pid %d, queue %s) was lost: %s", w.Host, w.PID, w.Queue, why)
}

// startReap reaps (see reap) every ReapEvery until Close, on
// PostgreSQL only: on SQLite one server is the only worker, and its Start
// recovers what a previous process left.
func (q *Manager) startReap() {
	if !q.st.Postgres() {
		return
	}
	stop := every(ReapEvery, func(ctx context.Context) {
		if _, err := q.reap(ctx); err != nil && ctx.Err() == nil {
			q.log.Warn("reap runs of lost workers", "err", err)
		}
		if _, err := q.st.PruneRunEvents(ctx, eventsKeptFor); err != nil && ctx.Err() == nil {
			q.log.Warn("prune the live events of ended runs", "err", err)
		}
	})
	q.mu.Lock()
	q.stopReap = stop
	q.mu.Unlock()
}

// gone reports whether the worker that took a running run is gone, so
// that nothing will ever finish the run. On SQLite, one machine's store
// with one server, it always is: the run was left by a previous process.
// On a shared PostgreSQL store a run another live worker executes is
// not: its worker is gone if it recorded none (a kbench from before
// workers), stopped, ran on this host as a process that no longer exists
// (or whose pid this process now has), or stopped sending heartbeats
// (silence, by the database's clock, over WorkerLostAfter).
func (q *Manager) gone(w *store.Worker, silence time.Duration) bool {
	if !q.st.Postgres() || w == nil {
		return true
	}
	if w.Host == q.opts.Host && (w.PID == os.Getpid() || !processAlive(w.PID)) {
		return true
	}
	return lost(w, silence)
}

// processAlive reports whether a process with this pid exists on this
// machine.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// startHeartbeat refreshes worker id's heartbeat every HeartbeatEvery
// until Close.
func (q *Manager) startHeartbeat(id uint) {
	stop := every(HeartbeatEvery, func(ctx context.Context) {
		if err := q.st.Heartbeat(ctx, id); err != nil && ctx.Err() == nil {
			q.log.Warn("worker heartbeat", "worker", id, "err", err)
		}
	})
	q.mu.Lock()
	q.stopHeartbeat = stop
	q.mu.Unlock()
}

// every calls fn every interval on a goroutine of its own until the stop
// it returns is called; stop cancels fn's context and waits for it to
// return, so nothing runs after Close.
func every(interval time.Duration, fn func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// openJobs opens the queue (creating or upgrading River's tables) on
// Options.Jobs, or on the store's database (its SQLite file through a
// pool of its own, or a pgx pool on its PostgreSQL database), and keeps it
// for Submit, Cancel and Close.
func (q *Manager) openJobs(ctx context.Context) (*jobs.Queue, error) {
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
	execute := q.work
	if q.opts.NoWorker {
		execute = nil
	}
	// River migrates its tables first, under the store's migration lock:
	// workers starting together on a new database would race otherwise.
	unlock, err := q.st.MigrationLock()
	if err != nil {
		if closeConn != nil {
			closeConn()
		}
		return nil, err
	}
	jq, err := jobs.New(ctx, backend, jobs.Config{Queue: q.opts.Queue, Workers: q.opts.Concurrency, Execute: execute,
		// Past the longest run (its timeout, then the grace to stop it), a
		// job still running is one whose worker vanished.
		RescueAfter: q.opts.RunTimeout + q.opts.KillGrace + 10*time.Minute,
		Logger:      q.log})
	unlock()
	if err != nil {
		if closeConn != nil {
			closeConn()
		}
		return nil, err
	}
	q.mu.Lock()
	if q.stopped {
		q.shutdown = make(chan struct{})
	}
	q.jobs, q.closeJobsConn, q.stopped = jq, closeConn, false
	q.mu.Unlock()
	return jq, nil
}
