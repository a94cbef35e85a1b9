// Package jobs puts kbench's launched runs on River
// (github.com/riverqueue/river), a maintained job engine, instead of a
// queue of kbench's own: one job a run, holding nothing but the run's id
// (its spec is in the store, its secrets never leave the server's
// memory), in a named queue (DefaultQueue unless the run says otherwise).
// River persists the jobs, so a restarted server loses no queued run,
// takes each job once however many workers listen on its queue, and
// cancels a job through the database.
//
// The same code runs on both of kbench's stores: SQLite through River's
// database/sql driver over a one-connection pool opened with the store's
// own SQLite driver (store.OpenJobsDB), and PostgreSQL through River's pgx
// driver. River's tables are created and upgraded by its own migrations
// (rivermigrate) when a Queue is made.
//
// A job's state is not a run's state: the store's status stays the one
// truth about a run (package lifecycle changes it), and a job only says
// which run a worker should take next.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// DefaultQueue is the queue of runs that name none: the one the server's
// own worker takes runs from.
const DefaultQueue = "local"

// fetchCooldown is the least time between two fetches of jobs (see New).
const fetchCooldown = 5 * time.Millisecond

// runKind is the River job kind of a run.
const runKind = "kbench_run"

// RunArgs are a run job's arguments: the id of the run in the store and
// nothing else. A worker reads the spec from the store; secrets are never
// put in a job (they would be stored in the database).
type RunArgs struct {
	RunID uint `json:"run_id"`
}

// Kind is River's name for run jobs.
func (RunArgs) Kind() string { return runKind }

// Backend is the database River keeps its jobs in: SQLite or PostgreSQL.
type Backend struct {
	sqlite *sql.DB
	pg     *pgxpool.Pool
}

// SQLite keeps the jobs in the SQLite database db, which must be a pool of
// one connection opened with the store's driver (store.OpenJobsDB).
func SQLite(db *sql.DB) Backend { return Backend{sqlite: db} }

// Postgres keeps the jobs in the PostgreSQL database of pool.
func Postgres(pool *pgxpool.Pool) Backend { return Backend{pg: pool} }

// Executor executes run id. Its context is canceled when the run's job is
// canceled through River (Canceled then reports true) or when the queue
// stops without waiting. It returns an error only when the run could not
// be handled at all; a run that failed is a run handled.
type Executor func(ctx context.Context, id uint) error

// Config configures a Queue.
type Config struct {
	// Queue is the queue this Queue's workers take runs from (default
	// DefaultQueue).
	Queue string
	// Workers is how many runs execute at once (default 1: runs must not
	// share the machine's CPU). Ignored without Execute.
	Workers int
	// Execute executes a run a worker has taken. Without it the Queue only
	// submits and cancels, and executes nothing.
	Execute Executor
	// RescueAfter is how long a job may stay running before River takes it
	// for one whose worker vanished (River's default is an hour). It must
	// outlast the longest run.
	RescueAfter time.Duration
	// PollInterval is how often workers look for jobs other processes
	// submitted (default 1 s; jobs submitted through this Queue wake its
	// workers at once).
	PollInterval time.Duration
	Logger       *slog.Logger
}

// queueName is what River accepts as a queue name.
var queueName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,127}$`)

// ValidQueue reports whether name can name a queue: lower-case letters,
// digits, '-' and '_', at most 128 characters.
func ValidQueue(name string) error {
	if !queueName.MatchString(name) {
		return fmt.Errorf("queue %q: use lower-case letters, digits, '-' and '_' (at most 128)", name)
	}
	return nil
}

// engine is River's client on either backend; River's is generic in its
// transaction type, which nothing here needs.
type engine interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
}

// Queue submits runs as River jobs and, with Config.Execute, works them.
type Queue struct {
	river engine
	queue string
	// runIs is the Where predicate that selects a run's jobs, in the
	// backend's SQL (JSON access differs).
	runIs string
	// pg is the PostgreSQL backend's pool (nil on SQLite), for EndLost.
	pg *pgxpool.Pool
}

// New applies River's migrations to the backend's database (a no-op when
// they are applied already) and returns a Queue on it; Start starts its
// workers.
func New(ctx context.Context, b Backend, cfg Config) (*Queue, error) {
	if cfg.Queue == "" {
		cfg.Queue = DefaultQueue
	}
	if err := ValidQueue(cfg.Queue); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	rc := &river.Config{
		// A run is tried once: its outcome, failed or not, is in the store.
		MaxAttempts: 1,
		// A run has its own timeout (lifecycle's RunTimeout), after which its
		// process is stopped and what it measured kept; River's (a minute by
		// default) would cancel it without that.
		JobTimeout:           -1,
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchPollInterval:    cfg.PollInterval,
		// River's informational logs (elections, maintenance) would drown the
		// server's; its warnings and errors stay.
		Logger: slog.New(warnings{cfg.Logger.Handler()}),
	}
	// River fetches at most once a cooldown (100 ms by default), which
	// would be most of a run's wait for an idle worker; runs are few and
	// long, so fetching sooner costs nothing that matters.
	rc.FetchCooldown = fetchCooldown
	if rc.FetchPollInterval > 0 && rc.FetchPollInterval < rc.FetchCooldown {
		rc.FetchCooldown = rc.FetchPollInterval
	}
	if cfg.Execute != nil {
		workers := river.NewWorkers()
		if err := river.AddWorkerSafely(workers, &runWorker{exec: cfg.Execute}); err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		rc.Workers = workers
		rc.Queues = map[string]river.QueueConfig{cfg.Queue: {MaxWorkers: cfg.Workers}}
	}
	q := &Queue{queue: cfg.Queue}
	var err error
	switch {
	case b.sqlite != nil:
		q.runIs = "json_extract(args, '$.run_id') = @run_id"
		q.river, err = open(ctx, riversqlite.New(b.sqlite), rc)
	case b.pg != nil:
		q.runIs = "(args->>'run_id')::bigint = @run_id"
		q.pg = b.pg
		q.river, err = open(ctx, riverpgxv5.New(b.pg), rc)
	default:
		return nil, errors.New("jobs: no database")
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return q, nil
}

// open migrates River's tables and makes its client on driver.
func open[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], rc *river.Config) (engine, error) {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: rc.Logger})
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	c, err := river.NewClient(driver, rc)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return c, nil
}

// Compile-time checks that River's clients are engines.
var (
	_ engine = (*river.Client[*sql.Tx])(nil)
	_ engine = (*river.Client[pgx.Tx])(nil)
)

// Start starts the workers (when the Queue has Execute) and River's
// maintenance (pruning old jobs, rescuing stuck ones).
func (q *Queue) Start(ctx context.Context) error {
	if err := q.river.Start(ctx); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	return nil
}

// Stop stops taking jobs and waits for the running ones to return (or for
// ctx to end).
func (q *Queue) Stop(ctx context.Context) error {
	if err := q.river.Stop(ctx); err != nil {
		return fmt.Errorf("jobs: stop: %w", err)
	}
	return nil
}

// Submit puts run id in queue (the Queue's own when empty), behind the
// runs already waiting there; a run that already has a job waiting or
// running is not given a second one (and keeps its place).
func (q *Queue) Submit(ctx context.Context, id uint, queue string) error {
	if queue == "" {
		queue = q.queue
	}
	if err := ValidQueue(queue); err != nil {
		return fmt.Errorf("jobs: submit run %d: %w", id, err)
	}
	opts := &river.InsertOpts{Queue: queue, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{
		ByArgs: true,
		// Not the final states: a run whose job ended without running it
		// (a server stopping) can be given a new one.
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled},
	}}
	if _, err := q.river.Insert(ctx, RunArgs{RunID: id}, opts); err != nil {
		return fmt.Errorf("jobs: submit run %d: %w", id, err)
	}
	return nil
}

// Cancel cancels run id's job: one still waiting is never worked, and a
// running one has its worker's context canceled (in this process at once,
// in another one within River's polling of cancellations). It reports
// whether the run had a job that was not final.
func (q *Queue) Cancel(ctx context.Context, id uint) (bool, error) {
	live, err := q.live(ctx, id)
	if err != nil {
		return false, err
	}
	found := false
	for _, j := range live {
		if _, err := q.river.JobCancel(ctx, j.ID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return found, fmt.Errorf("jobs: cancel run %d: %w", id, err)
		}
		found = true
	}
	return found, nil
}

// EndLost ends run id's job whose worker was lost (killed, its machine
// gone), so that River does not hold it running until its rescue of stuck
// jobs, hours later. It cancels the job as Cancel does, which stops the
// run in a worker that is in fact still alive, and on PostgreSQL then
// stores a job still running as cancelled: no client will ever finish
// it. River has no call that finalizes another client's running job
// (JobCancel only marks it for its worker, and JobCompleteTx works only
// inside the worker), so this is one conditional update of River's
// river_job table, harmless to race: a job no longer running is left as
// it is. It reports whether a running job was ended so.
func (q *Queue) EndLost(ctx context.Context, id uint) (bool, error) {
	if _, err := q.Cancel(ctx, id); err != nil {
		return false, err
	}
	if q.pg == nil {
		return false, nil
	}
	tag, err := q.pg.Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now()
		WHERE kind = $1 AND state = 'running' AND (args->>'run_id')::bigint = $2`, runKind, int64(id))
	if err != nil {
		return false, fmt.Errorf("jobs: end the lost job of run %d: %w", id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// liveStates are the states of a job not final.
var liveStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}

// live returns run id's jobs that are not final (at most one, with
// Submit's uniqueness). An error is returned, never read as no job: a
// cancel during a database outage must fail, not answer that the run has
// no job to cancel.
func (q *Queue) live(ctx context.Context, id uint) ([]*rivertype.JobRow, error) {
	res, err := q.river.JobList(ctx, river.NewJobListParams().Kinds(runKind).States(liveStates...).
		Where(q.runIs, river.NamedArgs{"run_id": int64(id)}).First(10))
	if err != nil {
		return nil, fmt.Errorf("jobs: jobs of run %d: %w", id, err)
	}
	return res.Jobs, nil
}

// Waiting returns the runs waiting in queue (the Queue's own when empty),
// in the order workers will take them.
func (q *Queue) Waiting(ctx context.Context, queue string) ([]uint, error) {
	if queue == "" {
		queue = q.queue
	}
	var ids []uint
	params := river.NewJobListParams().Kinds(runKind).Queues(queue).
		States(rivertype.JobStateAvailable).OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1000)
	for {
		res, err := q.river.JobList(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("jobs: waiting runs: %w", err)
		}
		for _, j := range res.Jobs {
			id, err := runID(j)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		if len(res.Jobs) < 1000 {
			return ids, nil
		}
		params = params.After(res.LastCursor)
	}
}

// Canceled reports whether an Executor's ctx ended because its job was
// canceled (Queue.Cancel, from any process), rather than the queue
// stopping.
func Canceled(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely)
}

// runWorker is River's worker of run jobs.
type runWorker struct {
	river.WorkerDefaults[RunArgs]
	exec Executor
}

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	err := w.exec(ctx, job.Args.RunID)
	if sn, ok := errors.AsType[*Snooze](err); ok {
		return river.JobSnooze(sn.After)
	}
	return err
}

// Snooze is an Executor's answer for a run it may not execute yet (a
// fleet's shard: see store.TakeShard): River makes the job available
// again After later, to any worker of its queue, without counting an
// attempt, so the run keeps its job and its place in no queue order but
// River's.
type Snooze struct {
	After time.Duration
	Why   string
}

func (s *Snooze) Error() string { return fmt.Sprintf("wait %v: %s", s.After, s.Why) }

// Timeout: none (see Config.JobTimeout in New).
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return -1 }

// warnings passes on records of level Warn and above.
type warnings struct{ slog.Handler }

func (h warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnings) WithAttrs(as []slog.Attr) slog.Handler {
	return warnings{h.Handler.WithAttrs(as)}
}

func (h warnings) WithGroup(name string) slog.Handler { return warnings{h.Handler.WithGroup(name)} }

// runID reads the run id of a run job.
func runID(j *rivertype.JobRow) (uint, error) {
	var args RunArgs
	if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
		return 0, fmt.Errorf("jobs: job %d: arguments: %w", j.ID, err)
	}
	return args.RunID, nil
}
