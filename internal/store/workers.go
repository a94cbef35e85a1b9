package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/kbench/kbench/internal/rundoc"
)

// DefaultQueue is the queue of a run whose submission named none: the
// one the server's own worker takes runs from (jobs.DefaultQueue, which
// the store does not import).
const DefaultQueue = "local"

// RegisterWorker records a worker process that has started: w's Host,
// Queue, PID and Version, started and heartbeat now by the database's
// clock (dbNow). It fills in w.ID and the times. A worker's row is never
// deleted: runs point at it.
func (s *Store) RegisterWorker(ctx context.Context, w *Worker) error {
	w.ID, w.StoppedAt = 0, nil
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(w).Error; err != nil {
			return err
		}
		now := s.dbNow()
		if err := tx.Model(&Worker{}).Where("id = ?", w.ID).
			Updates(map[string]any{"started_at": now, "heartbeat_at": now}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", w.ID).Take(w).Error
	})
	if err != nil {
		return fmt.Errorf("store: register worker: %w", err)
	}
	return nil
}

// Heartbeat records that worker id is alive, at the database's clock. It
// does not count as a write (Generation): nothing a page shows from the
// cache changes with it, and a heartbeat every few seconds would empty
// the page cache as often.
func (s *Store) Heartbeat(ctx context.Context, id uint) error {
	res := s.db.WithContext(ctx).Model(&Worker{}).Where("id = ?", id).Update("heartbeat_at", s.dbNow())
	if res.Error != nil {
		return fmt.Errorf("store: heartbeat of worker %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: heartbeat of worker %d: %w", id, ErrNotFound)
	}
	return nil
}

// StopWorker records that worker id stopped cleanly, at the database's
// clock.
func (s *Store) StopWorker(ctx context.Context, id uint) error {
	now := s.dbNow()
	err := s.db.WithContext(ctx).Model(&Worker{}).Where("id = ?", id).
		Updates(map[string]any{"stopped_at": now, "heartbeat_at": now}).Error
	if err != nil {
		return fmt.Errorf("store: stop worker %d: %w", id, err)
	}
	return nil
}

// LiveWorkers returns the workers not stopped whose heartbeat is at most
// within old by the database's clock, oldest first. Heartbeats are
// written and compared by that one clock, so a skew between the clocks
// of the worker's machine and this one changes nothing.
func (s *Store) LiveWorkers(ctx context.Context, within time.Duration) ([]Worker, error) {
	ws := []Worker{}
	err := s.db.WithContext(ctx).Where("stopped_at IS NULL AND heartbeat_at >= ?", s.dbAgo(within)).Order("id").Find(&ws).Error
	if err != nil {
		return nil, fmt.Errorf("store: live workers: %w", err)
	}
	return ws, nil
}

// RunningRun is a run in the running state with the worker that took it
// (nil when it recorded none: started by a kbench from before
// 0007_workers, or through StartRun).
type RunningRun struct {
	ID     uint
	Worker *Worker
	// Silence is how long ago Worker's last heartbeat was by the
	// database's clock, read in the query that read the worker: whoever
	// asks, from whichever machine, measures it against the clock the
	// heartbeat was written with.
	Silence time.Duration
}

// RunningIn returns the running runs of queue, oldest first, with their
// workers, for recovery to decide which ones nobody runs any more.
func (s *Store) RunningIn(ctx context.Context, queue string) ([]RunningRun, error) {
	return s.running(ctx, &queue)
}

// RunningRuns returns the running runs of every queue, oldest first, with
// their workers, for the reap of runs whose workers were lost.
func (s *Store) RunningRuns(ctx context.Context) ([]RunningRun, error) {
	return s.running(ctx, nil)
}

// running returns the running runs of queue (of all queues when nil).
func (s *Store) running(ctx context.Context, queue *string) ([]RunningRun, error) {
	var runs []Run
	db := s.db.WithContext(ctx)
	q := db.Select("id", "worker_id").Where("status = ?", rundoc.StatusRunning).Scopes(notFleetParent)
	what := "running runs"
	if queue != nil {
		q = q.Where("queue = ?", *queue)
		what += " of queue " + *queue
	}
	if err := q.Order("id").Find(&runs).Error; err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	out := make([]RunningRun, len(runs))
	var ids []uint
	for i, r := range runs {
		out[i].ID = r.ID
		if r.WorkerID != nil {
			ids = append(ids, *r.WorkerID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	// The runs' workers in one query, with the database's clock read in
	// it: a sweep every few seconds on every process reads this.
	var ws []struct {
		Worker
		// DBNow is the database's clock, on PostgreSQL only: on SQLite
		// it is this process's.
		DBNow *time.Time
	}
	cols := "*"
	if s.pg {
		cols = "*, now() AS db_now"
	}
	if err := db.Model(&Worker{}).Select(cols).Where("id IN ?", ids).Find(&ws).Error; err != nil {
		return nil, fmt.Errorf("store: workers of %s: %w", what, err)
	}
	now := s.now()
	byID := make(map[uint]*Worker, len(ws))
	for i := range ws {
		byID[ws[i].ID] = &ws[i].Worker
		if ws[i].DBNow != nil {
			now = *ws[i].DBNow
		}
	}
	for i, r := range runs {
		if r.WorkerID == nil {
			continue
		}
		if w := byID[*r.WorkerID]; w != nil {
			out[i].Worker = w
			out[i].Silence = now.Sub(w.HeartbeatAt)
		}
	}
	return out, nil
}

// InterruptRun ends run id as interrupted with reason as its error, if it
// is still running (ErrConflict otherwise): its process is gone.
func (s *Store) InterruptRun(ctx context.Context, id uint, reason string) error {
	defer s.wroteOutsideSeries() // running to interrupted
	db := s.db.WithContext(ctx)
	res := db.Model(&Run{}).Where("id = ? AND status = ?", id, rundoc.StatusRunning).
		Updates(map[string]any{"status": rundoc.StatusInterrupted, "error": reason, "finished_at": s.now()})
	if err := changed(db, id, res); err != nil {
		return fmt.Errorf("store: interrupt run %d: %w", id, err)
	}
	return nil
}

// QueuedRunsIn returns the queued runs of queue, oldest first, with their
// specs.
func (s *Store) QueuedRunsIn(ctx context.Context, queue string) ([]rundoc.Run, error) {
	runs := []Run{}
	err := s.db.WithContext(ctx).Select(listColumns).
		Where("queue = ? AND status = ?", queue, rundoc.StatusQueued).Scopes(notFleetParent).Order("id").Find(&runs).Error
	if err != nil {
		return nil, fmt.Errorf("store: queued runs of queue %s: %w", queue, err)
	}
	return runDocs(runs), nil
}

// RunQueue returns the queue run id waits (or waited) in.
func (s *Store) RunQueue(ctx context.Context, id uint) (string, error) {
	var r Run
	if err := s.db.WithContext(ctx).Select("id", "queue").Where("id = ?", id).Take(&r).Error; err != nil {
		return "", fmt.Errorf("store: queue of run %d: %w", id, notFound(err))
	}
	return r.Queue, nil
}
