package lifecycle

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/runner/kafkasec"
	"github.com/kbench/kbench/store"
)

// cancelGrace is how long a canceled run's process gets to write its
// partial result after SIGINT before it is killed.
const cancelGrace = 15 * time.Second

// Local executes runs in order, Options.Concurrency at a time, each as a
// `kbench run` child process: Go's CPU profiler is process-wide, and a
// crash or SIGKILL of a run cannot take the server down.
type Local struct {
	st   *store.Store
	opts Options
	log  *slog.Logger
	hub  *Hub

	mu      sync.Mutex
	cond    *sync.Cond
	pending []uint
	secrets map[uint]map[string]string // held in memory only, never stored
	running map[uint]*execution
	stopped bool
	wg      sync.WaitGroup

	// hook, when a test sets it, is called by the worker at named points
	// of starting a run ("taken": off the pending list, not yet started in
	// the store; "started": started in the store, no process yet), so a
	// test can act exactly there.
	hook func(point string, id uint)
}

// execution is one run a worker has taken off the pending list, from
// then until its outcome is stored. It is registered in queue.running
// before the store starts the run, so a cancel always finds a run either
// pending or here; its process is started only if no stop was asked for
// by then, and one asked for later signals the process.
type execution struct {
	mu       sync.Mutex
	cmd      *exec.Cmd // nil until the process is started
	reason   string    // why it was stopped early: "canceled", "timeout", "shutdown"
	signaled bool
	done     chan struct{} // closed when the process has exited
	grace    time.Duration // from SIGINT to SIGKILL
}

// NewLocal returns the lifecycle of runs stored in st, executed on this
// machine. Call Start to recover and start the workers, Close to stop.
func NewLocal(st *store.Store, opts Options) *Local {
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
	q := &Local{st: st, opts: opts, log: opts.Logger, hub: NewHub(), secrets: map[uint]map[string]string{}, running: map[uint]*execution{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Hub is the hub of the runs' live events.
func (q *Local) Hub() *Hub { return q.hub }

// Subscribe returns a channel of run id's live events and the events that
// catch a new subscriber up (see Hub.Subscribe).
func (q *Local) Subscribe(id uint) (<-chan Event, []Event, func()) { return q.hub.Subscribe(id) }

// Series returns the interval points run id has reported so far (see
// Hub.Series).
func (q *Local) Series(id uint) ([]runner.SeriesPoint, bool) { return q.hub.Series(id) }

// SetHook sets a function the workers call at named points of a run's
// life, so that a test can act exactly there: "taken" (off the pending
// list, not yet started in the store), "started" (started in the store,
// no process yet) and "exited" (its process has exited, its outcome is
// not stored yet). nil removes it.
func (q *Local) SetHook(hook func(point string, id uint)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.hook = hook
}

// Pending returns the runs waiting for a worker, in the order they will
// be taken.
func (q *Local) Pending() []uint {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.pending)
}

// Submit queues stored run id to be executed after those submitted
// before it, with secrets (held in memory only) for its child process.
func (q *Local) Submit(_ context.Context, id uint, secrets map[string]string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, id)
	if secrets != nil {
		q.secrets[id] = secrets
	}
	q.cond.Signal()
	return nil
}

// HeldSecrets returns the secrets held for the first of ids still pending
// that has every one of keys, nil when none has: a run's secrets leave
// memory when a worker takes it.
func (q *Local) HeldSecrets(ids []uint, keys []string) map[string]string {
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

func (q *Local) startWorkers(workers int) {
	for i := 0; i < workers; i++ {
		q.wg.Add(1)
		go q.work()
	}
}

func (q *Local) work() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.stopped {
			q.cond.Wait()
		}
		if q.stopped {
			q.mu.Unlock()
			return
		}
		id := q.pending[0]
		q.pending = q.pending[1:]
		secrets := q.secrets[id]
		delete(q.secrets, id)
		// Registered in the same critical section that takes it off the
		// pending list: a cancel finds it in one or the other.
		ex := &execution{done: make(chan struct{}), grace: q.opts.KillGrace}
		q.running[id] = ex
		q.mu.Unlock()
		q.at("taken", id)
		q.run(id, secrets, ex)
		q.mu.Lock()
		delete(q.running, id)
		q.mu.Unlock()
	}
}

// at calls the test hook, if any.
func (q *Local) at(point string, id uint) {
	q.mu.Lock()
	hook := q.hook
	q.mu.Unlock()
	if hook != nil {
		hook(point, id)
	}
}

// Close interrupts running children and waits for their results to be
// stored (as interrupted), then stops the workers: nothing is left in a
// running state. Runs still queued stay queued for the next Start.
func (q *Local) Close() {
	q.mu.Lock()
	q.stopped = true
	for _, ex := range q.running {
		ex.interrupt("shutdown")
	}
	q.cond.Broadcast()
	q.mu.Unlock()
	q.wg.Wait()
}

// Cancel stops a queued or running run: one still pending is canceled in
// the store at once; one a worker has taken is stopped by the worker,
// whether its process has started yet or not. It reports ErrConflict
// (wrapped) when the run already finished.
func (q *Local) Cancel(ctx context.Context, id uint) error {
	q.mu.Lock()
	if ex := q.running[id]; ex != nil {
		q.mu.Unlock()
		ex.interrupt("canceled")
		return nil
	}
	for i, p := range q.pending {
		if p == id {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			delete(q.secrets, id)
			break
		}
	}
	q.mu.Unlock()
	if err := q.st.CancelQueued(ctx, id, "canceled before it started"); err != nil {
		return err
	}
	q.hub.Publish(id, Event{"done", map[string]string{"status": store.StatusCanceled}})
	return nil
}

// interrupt asks the child to stop: SIGINT lets it write what it measured
// and stop its broker; SIGKILL of the whole process group follows if it
// does not exit within cancelGrace.
func (ex *execution) interrupt(reason string) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.reason == "" {
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

func (ex *execution) stopReason() string {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.reason
}

// run executes one run and stores its outcome, whatever happens.
func (q *Local) run(id uint, secrets map[string]string, ex *execution) {
	ctx := context.Background()
	log := q.log.With("run", id)
	switch ex.stopReason() {
	case "canceled":
		// Canceled after it left the pending list, before it started.
		if err := q.st.CancelQueued(ctx, id, "canceled before it started"); err != nil {
			if !errors.Is(err, store.ErrConflict) {
				log.Error("cancel run", "err", err)
			}
			return
		}
		q.hub.Publish(id, Event{"done", map[string]string{"status": store.StatusCanceled}})
		return
	case "shutdown":
		return // still queued: the next server start queues it again
	}
	if err := q.st.StartRun(ctx, id, time.Now().UTC()); err != nil {
		if !errors.Is(err, store.ErrConflict) { // canceled meanwhile: nothing to do
			log.Error("start run", "err", err)
		}
		return
	}
	q.hub.Publish(id, Event{"status", map[string]any{"status": store.StatusRunning}})
	q.at("started", id)
	outcome := q.execute(ctx, id, secrets, ex)
	q.at("exited", id)
	if err := q.st.FinishRun(ctx, id, outcome); err != nil {
		log.Error("store result", "err", err)
		// Never leave a run running: record at least the failure.
		fallback := store.Outcome{Status: store.StatusFailed, Error: "storing the result failed: " + err.Error(), FinishedAt: time.Now().UTC()}
		if err := q.st.FinishRun(ctx, id, fallback); err != nil {
			log.Error("store failure", "err", err)
		}
		outcome = fallback
	}
	log.Info("run finished", "status", outcome.Status)
	q.hub.Publish(id, Event{"done", map[string]string{"status": outcome.Status, "error": outcome.Error}})
}

// execute runs the child process and turns what it left behind into an
// outcome. It never returns a running status.
func (q *Local) execute(ctx context.Context, id uint, secrets map[string]string, ex *execution) store.Outcome {
	failed := func(format string, args ...any) store.Outcome {
		return store.Outcome{Status: store.StatusFailed, Error: fmt.Sprintf(format, args...), FinishedAt: time.Now().UTC()}
	}
	run, err := q.st.GetRun(ctx, id)
	if err != nil {
		return failed("load run: %v", err)
	}
	file, err := runner.ParseSpecFile([]byte(run.Spec))
	if err != nil {
		return failed("stored spec: %v", err)
	}
	spec, err := runner.SpecFromParams(file.Workload, file.Params)
	if err != nil {
		return failed("stored spec: %v", err)
	}
	// The stored spec holds "[redacted]" where a secret was; the child gets
	// the real value through its environment. Without it the run would
	// authenticate with the placeholder: refuse instead.
	for k, v := range spec.Props {
		if strings.Contains(v, kafkasec.Redacted) && secrets[k] == "" {
			return failed("stored spec: %s: its secret is not in memory (secrets are never stored); start the run again", k)
		}
	}
	dir := filepath.Join(q.opts.DataDir, "runs", strconv.FormatUint(uint64(id), 10))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed("run directory: %v", err)
	}
	specPath := filepath.Join(dir, "spec.json")
	if err := runner.WriteSpecFile(specPath, spec); err != nil {
		return failed("%v", err)
	}

	args := append(append([]string(nil), q.opts.Command[1:]...), "run", "--spec", specPath, "--out", dir, "--progress", "json")
	cmd := exec.Command(q.opts.Command[0], args...)
	cmd.Env = childEnv(secrets)
	// Its own process group, so a kill reaches the broker child too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return failed("start: %v", err)
	}
	stderrTail := runner.NewTailBuffer(8 << 10)
	stderrLog, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return failed("start: %v", err)
	}
	defer stderrLog.Close()
	cmd.Stderr = io.MultiWriter(stderrLog, stderrTail)
	// Under ex.mu, a stop asked for meanwhile is either seen here, and the
	// process never starts, or comes after ex.cmd is set and signals it.
	ex.mu.Lock()
	if reason := ex.reason; reason != "" {
		ex.mu.Unlock()
		return q.outcome(dir, nil, reason, "")
	}
	if err := cmd.Start(); err != nil {
		ex.mu.Unlock()
		return failed("start kbench run: %v", err)
	}
	ex.cmd = cmd
	ex.mu.Unlock()
	timer := time.AfterFunc(q.opts.RunTimeout, func() { ex.interrupt("timeout") })
	defer timer.Stop()

	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var ev runner.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			stderrTail.Write(append(sc.Bytes(), '\n'))
			continue
		}
		q.hub.PublishRunner(id, ev)
	}
	waitErr := cmd.Wait()
	close(ex.done)
	return q.outcome(dir, waitErr, ex.stopReason(), stderrTail.String())
}

// outcome reads what a finished child left in dir.
func (q *Local) outcome(dir string, waitErr error, stopReason, stderr string) store.Outcome {
	o := store.Outcome{FinishedAt: time.Now().UTC()}
	res, readErr := runner.ReadResult(dir)
	switch stopReason {
	case "canceled":
		o.Status, o.Error = store.StatusCanceled, "canceled by a user"
	case "shutdown":
		o.Status, o.Error = store.StatusInterrupted, "interrupted: the kbench server stopped during the run"
	case "timeout":
		o.Status, o.Error = store.StatusFailed, fmt.Sprintf("stopped after the server's run timeout (%v)", q.opts.RunTimeout)
	default:
		switch {
		case waitErr == nil && readErr == nil && res.Complete:
			o.Status = store.StatusSucceeded
		case readErr == nil && res.Error != "":
			o.Status, o.Error = store.StatusFailed, res.Error
		default:
			o.Status = store.StatusFailed
			o.Error = "the run process failed"
			if waitErr != nil {
				o.Error = "the run process failed: " + waitErr.Error()
			}
			if tail := strings.TrimSpace(stderr); tail != "" {
				o.Error += "\n" + tail
			}
		}
	}
	if readErr != nil {
		return o // nothing measured to keep
	}
	o.Complete = res.Complete && o.Status == store.StatusSucceeded
	o.Output = res.Output
	if b, err := json.Marshal(res.Environment); err == nil {
		o.Environment = string(b)
	}
	if b, err := json.Marshal(res.Measurement); err == nil {
		o.Measurement = string(b)
	}
	for _, m := range res.Metrics {
		o.Metrics = append(o.Metrics, store.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help})
	}
	for i, p := range res.Series {
		o.Series = append(o.Series, store.SeriesPoint{Seq: i, T: p.T, Records: p.Records, Bytes: p.Bytes, RecordsPerSec: p.RecordsPerSec,
			MBPerSec: p.MBPerSec, LatencyAvgMs: p.LatencyAvgMs, LatencyMaxMs: p.LatencyMaxMs, CPUPercent: p.CPUPercent})
	}
	for _, pf := range res.Profiles {
		data, err := os.ReadFile(filepath.Join(dir, filepath.Base(pf.File)))
		if err != nil {
			o.Error = strings.TrimSpace(o.Error + "\nprofile " + pf.File + " missing: " + err.Error())
			continue
		}
		sum, err := profiles.Summarize(data)
		if err != nil {
			o.Error = strings.TrimSpace(o.Error + "\nprofile " + pf.File + " unreadable: " + err.Error())
			continue
		}
		o.Profiles = append(o.Profiles, store.Profile{Role: pf.Role, Kind: pf.Kind, Data: data, Samples: sum.Samples})
	}
	return o
}

// childEnv is the server's environment plus the run's secrets, which the
// child reads from runner.SecretPropsEnv; an inherited value is dropped.
func childEnv(secrets map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, runner.SecretPropsEnv+"=") {
			env = append(env, kv)
		}
	}
	if len(secrets) > 0 {
		b, _ := json.Marshal(secrets)
		env = append(env, runner.SecretPropsEnv+"="+string(b))
	}
	return env
}
