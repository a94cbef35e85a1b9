package lifecycle

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/childproc"
	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/tailbuf"
	"github.com/kbench/kbench/internal/toolcatalog"

	"github.com/kbench/kbench/internal/store"
)

// cancelGrace is how long a canceled run's process gets to write its
// partial result after SIGINT before it is killed.
const cancelGrace = 15 * time.Second

// A result that could not be stored because the database was
// unreachable is tried again after storeRetryFirst, then after twice as
// long each time, up to storeRetryMax between tries. Variables so that
// tests can shorten them.
var (
	storeRetryFirst = time.Second
	storeRetryMax   = 30 * time.Second
)

// Manager is the lifecycle of the runs in one store, as one process sees
// it: kbench serve's, and each kbench worker's on a shared PostgreSQL
// store. It submits runs to River, cancels them, streams their events,
// reaps the runs of lost workers, and (unless Options.NoWorker) executes
// the runs of its queue in order, Options.Concurrency at a time, each as a
// `kbench run` child process: Go's CPU profiler is process-wide, and a
// crash or SIGKILL of a run cannot take the server down. The queue is
// River's (package jobs): a submitted run is a job there, persisted, so
// a restarted server loses none, and River's worker executes it here.
//
// A run's state is its status in the store, and only there: every change
// is one conditional update (queued→running by the worker that starts
// it, queued→canceled by a cancel, running→final by the worker once its
// process has exited), so of two racing changes exactly one applies and
// the other sees store.ErrConflict. A job only says which run to take
// next. What Local keeps in memory is what neither can hold: the runs'
// secrets, and for each run a worker has taken its process and the
// reason it is asked to stop.
type Manager struct {
	st   *store.Store
	opts Options
	log  *slog.Logger
	hub  *Hub

	mu            sync.Mutex
	jobs          *jobs.Queue                // from Start to Close
	closeJobsConn func()                     // closes the connection Start opened for jobs, if any
	secrets       map[uint]map[string]string // held in memory only, never stored
	// taken are the runs workers have taken, until their outcome is
	// stored.
	taken   map[uint]*execution
	stopped bool
	// shutdown is closed by Close: a worker retrying to store a result
	// gives up.
	shutdown chan struct{}
	// worker is this process's row in the workers table, from Start (nil
	// with Options.NoWorker); stopHeartbeat ends its heartbeat.
	worker        *store.Worker
	stopHeartbeat func()
	// stopReap ends the reap of runs whose workers were lost (nil on
	// SQLite).
	stopReap func()

	// hook, when a test sets it (SetHook), is called by the worker at
	// named points of a run's life.
	hook func(point string, id uint)

	// origin names this process's events in run_events; out shares them
	// (nil on SQLite, where none are shared). following are the runs a
	// follower replays into the hub (see shared.go), until followCtx ends.
	origin       string
	out          *outbox
	following    map[uint]*follower
	followers    sync.WaitGroup
	followCtx    context.Context
	followCancel context.CancelFunc
}

// execution is one run a worker has taken, from then until its outcome
// is stored: its process, once started, and why it is asked to stop. It
// holds no status. Its process is started only if no stop was asked for
// by then, and one asked for later signals the process. mu is held by
// the worker from reading the stop reason to storing the outcome, so a
// cancel either comes before (and decides the status) or finds the run
// final in the store.
type execution struct {
	mu       sync.Mutex
	cmd      *exec.Cmd // nil until the process is started
	reason   string    // why it was stopped early: "canceled", "timeout", "shutdown", "failed"
	failure  string    // with reason "failed": why the run cannot go on (fail)
	signaled bool
	done     chan struct{} // closed when the process has exited
	grace    time.Duration // from SIGINT to SIGKILL
}

// NewManager returns the lifecycle of the runs stored in st. Call Start
// to recover and start its workers, Close to stop.
func NewManager(st *store.Store, opts Options) *Manager {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 1
	}
	if opts.RunTimeout <= 0 {
		opts.RunTimeout = 2 * time.Hour
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = cancelGrace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Queue == "" {
		opts.Queue = jobs.DefaultQueue
	}
	if opts.Host == "" {
		opts.Host, _ = os.Hostname()
	}
	if opts.Version == "" {
		opts.Version = moduleVersion()
	}
	q := &Manager{st: st, opts: opts, log: opts.Logger, hub: NewHub(), secrets: map[uint]map[string]string{}, taken: map[uint]*execution{},
		origin: newOrigin(), following: map[uint]*follower{}, shutdown: make(chan struct{})}
	q.followCtx, q.followCancel = context.WithCancel(context.Background())
	if st.Postgres() {
		q.out = newOutbox(q)
	}
	return q
}

// Hub is the hub of the runs' live events.
func (q *Manager) Hub() *Hub { return q.hub }

// Subscribe returns a channel of run id's live events and the events that
// catch a new subscriber up (see Hub.Subscribe). On PostgreSQL the events
// of a run another process executes come through the database (see
// follow): they reach the channel as the follower replays them.
func (q *Manager) Subscribe(id uint) (<-chan Event, []Event, func()) { return q.subscribe(id) }

// Series returns the interval points run id has reported so far (see
// Hub.Series).
func (q *Manager) Series(id uint) ([]rundoc.SeriesPoint, bool) { return q.hub.Series(id) }

// SetHook sets a function the workers call at named points of a run's
// life, so that a test can act exactly there: "taken" (its job taken by a
// worker, not yet started in the store), "started" (started in the store,
// no process yet), "exited" (its process has exited, its outcome is
// not stored yet), "store-retry" (storing its outcome failed with the
// database unreachable; it will be tried again) and "stored" (its outcome
// is stored, its job not yet done); and Cancel at "remote-cancel" (it
// found the run running in another process, and has not yet canceled its
// job). nil removes it.
func (q *Manager) SetHook(hook func(point string, id uint)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.hook = hook
}

// Pending returns the runs waiting for a worker in this server's queue,
// in the order they will be taken (nil if it cannot be read).
func (q *Manager) Pending() []uint {
	q.mu.Lock()
	jq := q.jobs
	q.mu.Unlock()
	if jq == nil {
		return nil
	}
	ids, err := jq.Waiting(context.Background(), "")
	if err != nil {
		q.log.Error("pending runs", "err", err)
		return nil
	}
	return ids
}

// Executing reports whether this process is executing a run: a worker
// has taken one and its outcome is not stored yet. Background CPU work
// of the server (naming the functions of regressions) waits while it
// does, so that a benchmark never shares its cores with it.
func (q *Manager) Executing() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.taken) > 0
}

// Submit queues stored run id to be executed after those submitted
// before it, with secrets (held in memory only) for its child process.
// It fails before Start and after Close; the run then stays queued in
// the store, and the next Start submits it.
func (q *Manager) Submit(ctx context.Context, id uint, secrets map[string]string) error {
	q.mu.Lock()
	jq := q.jobs
	if jq != nil && secrets != nil {
		// Before the job exists, so the worker that takes it finds them.
		q.secrets[id] = secrets
	}
	q.mu.Unlock()
	if jq == nil {
		return fmt.Errorf("lifecycle: submit run %d: not started", id)
	}
	queue, err := q.st.RunQueue(ctx, id)
	if err == nil && len(secrets) > 0 && (q.opts.NoWorker || queue != q.opts.Queue) {
		// Secrets live in this process's memory, for its own worker only.
		err = fmt.Errorf("run %d: a run with a per-run password runs only on this server's own worker; for queue %s name a cluster the worker holds", id, queue)
	}
	if err == nil {
		err = jq.Submit(ctx, id, queue)
	}
	if err != nil {
		q.mu.Lock()
		delete(q.secrets, id)
		q.mu.Unlock()
		return fmt.Errorf("lifecycle: %w", err)
	}
	return nil
}

// HeldSecrets returns the secrets held for the first of ids still pending
// that has every one of keys, nil when none has: a run's secrets leave
// memory when a worker takes it.
func (q *Manager) HeldSecrets(ids []uint, keys []string) map[string]string {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		sec := q.secrets[id]
		complete := sec != nil
		for _, k := range keys {
			complete = complete && sec[k] != ""
		}
		if complete {
			return sec
		}
	}
	return nil
}

// work is River's worker of a run job (jobs.Executor). Its context ends
// when the job is canceled through River, which stops the run as a
// user's cancel does, or when River stops without waiting, which stops it
// as a shutdown does.
func (q *Manager) work(ctx context.Context, id uint) error {
	q.mu.Lock()
	if q.stopped {
		// Taken while the server stops: the run stays queued in the store
		// and the next Start submits it again.
		q.mu.Unlock()
		return nil
	}
	q.mu.Unlock()
	// A fleet's shard may have to wait for another worker (see
	// store.TakeShard): its job is snoozed before anything is taken.
	if err := q.takeShard(ctx, id); err != nil {
		return err
	}
	q.mu.Lock()
	secrets := q.secrets[id]
	delete(q.secrets, id)
	// Registered in the same critical section that takes its secrets: a
	// cancel that finds the run no longer queued in the store finds its
	// execution here until its outcome is stored.
	ex := &execution{done: make(chan struct{}), grace: q.opts.KillGrace}
	q.taken[id] = ex
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		delete(q.taken, id)
		q.mu.Unlock()
	}()
	stopWatching := context.AfterFunc(ctx, func() {
		if jobs.Canceled(ctx) {
			ex.stop("canceled")
		} else {
			ex.stop("shutdown")
		}
	})
	defer stopWatching()
	q.at("taken", id)
	q.run(id, secrets, ex)
	return nil
}

// at calls the test hook, if any.
func (q *Manager) at(point string, id uint) {
	q.mu.Lock()
	hook := q.hook
	q.mu.Unlock()
	if hook != nil {
		hook(point, id)
	}
}

// Close interrupts running children and waits for their results to be
// stored (as interrupted), then stops the workers: nothing is left in a
// running state. Runs still queued stay queued, their jobs in River, for
// the next Start.
func (q *Manager) Close() {
	q.mu.Lock()
	if !q.stopped {
		close(q.shutdown)
	}
	q.stopped = true
	for _, ex := range q.taken {
		ex.stop("shutdown")
	}
	jq, closeConn := q.jobs, q.closeJobsConn
	q.jobs, q.closeJobsConn = nil, nil
	w, stopHeartbeat, stopReap := q.worker, q.stopHeartbeat, q.stopReap
	q.worker, q.stopHeartbeat, q.stopReap = nil, nil, nil
	q.mu.Unlock()
	if stopReap != nil {
		stopReap()
	}
	if jq != nil {
		// Waits for the workers, whose runs were just told to stop.
		if err := jq.Stop(context.Background()); err != nil {
			q.log.Error("stop the queue", "err", err)
		}
	}
	if stopHeartbeat != nil {
		stopHeartbeat()
	}
	if w != nil {
		if err := q.st.StopWorker(context.Background(), w.ID); err != nil {
			q.log.Error("record the worker stopped", "err", err)
		}
	}
	if closeConn != nil {
		closeConn()
	}
	q.followCancel()
	q.followers.Wait()
	if q.out != nil {
		// After the workers: their runs' last events are written too.
		q.out.close()
	}
}

// Cancel stops a queued or running run. A queued one, pending or taken
// by a worker that has not started it yet, is canceled in the store at
// once (queued→canceled) and never starts. A running one has its process
// stopped, and its worker stores it canceled with what it measured; one
// running in another process (a kbench worker elsewhere) is canceled
// through River's cancellation of its job (see cancelRemote). It
// reports store.ErrConflict (wrapped) when the run is already final, and
// store.ErrNotFound when there is no such run.
func (q *Manager) Cancel(ctx context.Context, id uint) error {
	err := q.st.CancelQueued(ctx, id, "canceled before it started")
	if err == nil {
		q.mu.Lock()
		delete(q.secrets, id)
		jq := q.jobs
		q.mu.Unlock()
		// Its job would find the run canceled and do nothing; canceling it
		// takes it out of the queue at once.
		if jq != nil {
			if _, err := jq.Cancel(ctx, id); err != nil {
				q.log.Warn("cancel the job of a canceled run", "run", id, "err", err)
			}
		}
		q.publish(id, Event{"done", map[string]string{"status": string(rundoc.StatusCanceled)}})
		return nil
	}
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	// Not queued: running (its worker has it) or final.
	q.mu.Lock()
	ex := q.taken[id]
	jq := q.jobs
	q.mu.Unlock()
	if ex == nil {
		// Final, or running in another process: a worker elsewhere (or a
		// previous process of this server's, gone).
		return q.cancelRemote(ctx, id, jq, err)
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	// The worker stores the outcome under ex.mu: the status read here is
	// the final one, or the run's worker has yet to read the reason.
	status, gerr := q.st.RunStatus(ctx, id)
	if gerr != nil {
		return gerr
	}
	if status.Final() {
		return err
	}
	ex.stopLocked("canceled")
	return nil
}

// cancelRemote cancels run id, running in another process, through
// River's cancellation of its job: River delivers it to the job's
// context in the worker that executes it (at once by LISTEN/NOTIFY on
// PostgreSQL, within its polling otherwise), and that worker stops the
// child as for a cancel here and stores the run canceled with what it
// measured. It answers conflict (the error of the cancel of a queued run)
// when the run is final or has no job River still runs: then no worker
// would stop it.
//
// A run that ends on its own after the status read here and before its
// worker receives the cancellation keeps the status it ends with (its
// worker stored it first; nothing overwrites a final run). So that the
// answer says what happened, cancelRemote then waits, up to
// remoteCancelWait, for the run to end: one that ends other than
// canceled is a conflict naming its status; nil means it ended canceled,
// or still runs after remoteCancelWait, by when its worker has had the
// cancellation (River delivers it in milliseconds) and stops it: only a
// worker that has not received it by then could still store another
// status.
func (q *Manager) cancelRemote(ctx context.Context, id uint, jq *jobs.Queue, conflict error) error {
	if jq == nil {
		return conflict
	}
	state, err := q.st.RunStatus(ctx, id)
	if err != nil {
		return err
	}
	if state.Status != rundoc.StatusRunning {
		return conflict
	}
	q.at("remote-cancel", id)
	found, err := jq.Cancel(ctx, id)
	if err != nil {
		return fmt.Errorf("lifecycle: cancel run %d: %w", id, err)
	}
	if !found {
		return conflict
	}
	deadline := time.Now().Add(remoteCancelWait)
	for {
		state, err := q.st.RunStatus(ctx, id)
		if err != nil {
			return err
		}
		status := state.Status
		switch {
		case status == rundoc.StatusCanceled:
			return nil
		case status.Final():
			return fmt.Errorf("cancel run %d: status is %s: it ended before the cancel reached its worker: %w", id, status, store.ErrConflict)
		case time.Now().After(deadline):
			return nil
		}
		select {
		case <-ctx.Done():
			return nil // the cancellation is sent; the caller has gone
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// remoteCancelWait bounds how long cancelRemote waits for a remote run
// to end: River delivers the cancellation in milliseconds, and a run the
// worker stops writes what it measured and ends within about as long
// (81 ms from the request to canceled, measured), unless its child takes
// its grace period.
const remoteCancelWait = 2 * time.Second

// stop asks the run's process to stop (see stopLocked).
func (ex *execution) stop(reason string) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.stopLocked(reason)
}

// stopLocked asks the child to stop: SIGINT lets it write what it
// measured and stop its broker; SIGKILL of the whole process group
// follows if it does not exit within the grace time. The first reason
// is kept, but a user's cancel overrides a timeout or a shutdown: the
// cancel was accepted, so the run ends canceled.
func (ex *execution) stopLocked(reason string) {
	if ex.reason == "" || reason == "canceled" {
		ex.reason = reason
	}
	if ex.signaled || ex.cmd == nil || ex.cmd.Process == nil {
		return // not started: the worker sees the reason and does not start it
	}
	ex.signaled = true
	ex.cmd.Process.Signal(os.Interrupt)
	go func() {
		select {
		case <-ex.done:
		case <-time.After(ex.grace):
			syscall.Kill(-ex.cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
}

// fail stops the child because the run cannot go on (its fleet's
// barrier failed): the run ends failed with why, unless it was stopped
// for another reason first.
func (ex *execution) fail(why string) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.reason == "" {
		ex.failure = why
	}
	ex.stopLocked("failed")
}

func (ex *execution) stopReason() string {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.reason
}

// run executes one run and stores its outcome, whatever happens.
func (q *Manager) run(id uint, secrets map[string]string, ex *execution) {
	ctx := context.Background()
	log := q.log.With("run", id)
	if ex.stopReason() == "shutdown" {
		return // still queued: the next start queues it again
	}
	// A run canceled since it was submitted is no longer queued: the
	// store refuses to start it, and its cancel has said it is done.
	q.mu.Lock()
	w := q.worker
	q.mu.Unlock()
	if err := q.st.StartRunOn(ctx, id, time.Now().UTC(), w); err != nil {
		if !errors.Is(err, store.ErrConflict) {
			log.Error("start run", "err", err)
		}
		return
	}
	q.publish(id, Event{"status", map[string]any{"status": rundoc.StatusRunning}})
	q.at("started", id)
	end := q.execute(ctx, id, secrets, ex)
	q.at("exited", id)
	outcome := q.finish(ctx, id, end, ex)
	q.at("stored", id)
	log.Info("run finished", "status", outcome.Status)
	q.publish(id, Event{"done", map[string]string{"status": string(outcome.Status), "error": outcome.Error}})
}

// finish stores a run's outcome (running→final). It holds ex.mu from
// reading the stop reason until the outcome is first tried, so a cancel
// either comes before and the run ends canceled, or finds it decided.
// When the database cannot be reached the outcome is tried again (see
// storeRetry) until it is stored or this process stops: the child's
// work is done and its result is on disk, so a database that comes back
// gets it, rather than an error in its place.
func (q *Manager) finish(ctx context.Context, id uint, end ending, ex *execution) store.Outcome {
	ex.mu.Lock()
	reason := ex.reason
	if reason == "failed" {
		end.failure, reason = ex.failure, ""
	}
	outcome := end.outcome(reason, q.opts.RunTimeout)
	q.mu.Lock()
	if q.worker != nil && ex.reason == "" {
		// A run that ended on its own replaces an interruption by a reap
		// that took this worker for lost while it could not reach the
		// database. One stopped early does not: the reap's cancel of its
		// job is what stopped it, and "interrupted" says why.
		outcome.Worker = q.worker.ID
	}
	shutdown := q.shutdown
	q.mu.Unlock()
	err := q.st.FinishRun(ctx, id, outcome)
	ex.mu.Unlock()
	for attempt := 1; store.Unavailable(err); attempt++ {
		wait := min(storeRetryFirst<<min(attempt-1, 10), storeRetryMax)
		q.log.Warn("store the result: the database is unreachable; trying again", "run", id, "attempt", attempt, "retry_in", wait, "err", err)
		q.at("store-retry", id)
		select {
		case <-time.After(wait):
		case <-shutdown:
			q.log.Error("gave up storing the result: shutting down with the database unreachable; a reap will interrupt the run",
				"run", id, "result", filepath.Join(q.opts.DataDir, "runs", strconv.FormatUint(uint64(id), 10)), "err", err)
			return store.Outcome{Status: rundoc.StatusInterrupted, Error: "the worker could not store the result: " + err.Error()}
		}
		err = q.st.FinishRun(ctx, id, outcome)
	}
	if err != nil {
		q.log.Error("store result", "run", id, "err", err)
		if errors.Is(err, store.ErrConflict) {
			// Final meanwhile (a reap took this worker for lost before it
			// had registered, or a recovery): the stored status stands.
			if st, err := q.st.RunStatus(ctx, id); err == nil {
				return store.Outcome{Status: st.Status, Error: st.Error}
			}
			return outcome
		}
		// Never leave a run running: record at least the failure.
		fallback := store.Outcome{Status: rundoc.StatusFailed, Error: "storing the result failed: " + err.Error(), FinishedAt: time.Now().UTC()}
		if err := q.st.FinishRun(ctx, id, fallback); err != nil {
			q.log.Error("store failure", "run", id, "err", err)
		}
		outcome = fallback
	}
	return outcome
}

// execute runs the child process and reads what it left behind. A run
// asked to stop before its process started never starts it.
func (q *Manager) execute(ctx context.Context, id uint, secrets map[string]string, ex *execution) ending {
	failed := func(format string, args ...any) ending {
		return ending{failure: fmt.Sprintf(format, args...)}
	}
	run, err := q.st.GetRun(ctx, id)
	if err != nil {
		return failed("load run: %v", err)
	}
	file, err := rundoc.ParseSpecFile([]byte(run.Spec))
	if err != nil {
		return failed("stored spec: %v", err)
	}
	spec, err := rundoc.SpecFromParams(file.Workload, file.Params)
	if err != nil {
		return failed("stored spec: %v", err)
	}
	// The stored spec holds "[redacted]" where a secret was; the child gets
	// the real value through its environment. Without it the run would
	// authenticate with the placeholder: refuse instead.
	for k, v := range spec.Props {
		if strings.Contains(v, rundoc.Redacted) && secrets[k] == "" {
			return failed("stored spec: %s: its secret is not in memory (secrets are never stored); start the run again", k)
		}
	}
	if q.opts.Allow != nil {
		// A worker runs only what its own --allow-target allows, whatever
		// the server that queued the run allows.
		if err := q.opts.Allow(run.Spec); err != nil {
			return failed("refused by the worker on %s: %v", q.opts.Host, err)
		}
	}
	if spec.Tool != "" {
		tool, ok := q.opts.Tools.Get(spec.Tool)
		switch {
		case !ok:
			return failed("%s on %s", toolcatalog.UnknownMessage(spec.Tool, q.opts.Tools.Names()), q.opts.Host)
		case tool.Kind.Workload() != spec.Workload:
			return failed("tool %s on %s is a %s, not a %s run", spec.Tool, q.opts.Host, tool.Kind, spec.Workload)
		}
		if k := rundoc.FirstClassProp(spec.Props); k != "" && !q.opts.AllowToolClassProps {
			// The worker runs the tool, so its own flag decides.
			return failed("refused by the worker on %s: property %s makes the Java client load a class or run a command; start kbench worker (or kbench serve, for its own queue) with --allow-tool-class-props to allow it", q.opts.Host, k)
		}
	}
	if spec.Shard != nil {
		if err := q.shardEnded(ctx, id); err != nil {
			return failed("%v", err)
		}
	}
	if spec.Cluster != "" {
		// Read now, so an edited file applies; its secrets go to the
		// child's environment with the run's own, never to a file.
		if spec, secrets, err = q.withCluster(spec, secrets); err != nil {
			return failed("%v", err)
		}
	}
	dir := filepath.Join(q.opts.DataDir, "runs", strconv.FormatUint(uint64(id), 10))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed("run directory: %v", err)
	}
	specPath := filepath.Join(dir, "spec.json")
	if err := rundoc.WriteSpecFile(specPath, spec); err != nil {
		return failed("%v", err)
	}

	args := append(append([]string(nil), q.opts.Command[1:]...), "run", "--spec", specPath, "--out", dir, "--progress", "json")
	cmd := exec.Command(q.opts.Command[0], args...)
	cmd.Env = childEnv(secrets, q.opts.Tools)
	// Its own process group, so a kill reaches the broker child too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return failed("start: %v", err)
	}
	// A shard waits, ready, for its start on stdin (startShard).
	var stdin io.WriteCloser
	if spec.Shard != nil {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return failed("start: %v", err)
		}
	}
	barrier, endBarrier := context.WithCancel(ctx)
	defer endBarrier()
	stderrTail := tailbuf.New(8 << 10)
	stderrLog, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return failed("start: %v", err)
	}
	defer stderrLog.Close()
	cmd.Stderr = io.MultiWriter(stderrLog, stderrTail)
	// Under ex.mu, a stop asked for meanwhile is either seen here, and the
	// process never starts, or comes after ex.cmd is set and signals it.
	ex.mu.Lock()
	if ex.reason != "" {
		ex.mu.Unlock()
		return ingest(dir, nil, "")
	}
	// childproc: the run (and its broker) die with this process, even on SIGKILL.
	if err := childproc.Start(cmd); err != nil {
		ex.mu.Unlock()
		return failed("start kbench run: %v", err)
	}
	ex.cmd = cmd
	ex.mu.Unlock()
	timer := time.AfterFunc(q.opts.RunTimeout, func() { ex.stop("timeout") })
	defer timer.Stop()

	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var ev rundoc.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			stderrTail.Write(append(sc.Bytes(), '\n'))
			continue
		}
		if ev.Type == rundoc.EventReady && stdin != nil {
			go q.startShard(barrier, id, stdin, ex)
			stdin = nil // one barrier per run
		}
		q.publishRunner(id, ev)
	}
	waitErr := cmd.Wait()
	close(ex.done)
	return ingest(dir, waitErr, stderrTail.String())
}

// withCluster merges the properties of the named cluster spec targets,
// read from its file now, into spec: the public ones into its
// properties, which the child's spec file holds, the secret ones into a
// copy of secrets, which its environment carries. A run's own property
// never overrides the cluster's connection (the server refuses them), and
// the file's are all connection properties.
func (q *Manager) withCluster(spec rundoc.Spec, secrets map[string]string) (rundoc.Spec, map[string]string, error) {
	props, err := q.opts.Clusters.Props(spec.Cluster)
	if err != nil {
		return spec, secrets, fmt.Errorf("target: %w", err)
	}
	merged := maps.Clone(spec.Props)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, props)
	spec.Props = merged
	public, clusterSecrets := rundoc.SplitSecrets(spec)
	all := maps.Clone(secrets)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, clusterSecrets)
	return public, all, nil
}

// childEnv is the server's environment plus the run's secrets, which the
// child reads from rundoc.SecretPropsEnv, and the machine's Kafka tools
// (toolcatalog.EnvVar); inherited values of either are dropped.
func childEnv(secrets map[string]string, tools *toolcatalog.Set) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, rundoc.SecretPropsEnv+"=") && !strings.HasPrefix(kv, toolcatalog.EnvVar+"=") {
			env = append(env, kv)
		}
	}
	if v := tools.Env(); v != "" {
		env = append(env, toolcatalog.EnvVar+"="+v)
	}
	if len(secrets) > 0 {
		b, _ := json.Marshal(secrets)
		env = append(env, rundoc.SecretPropsEnv+"="+string(b))
	}
	return env
}

// moduleVersion is kbench's version as the build recorded it ("(devel)"
// for a build from a checkout).
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
