package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/kbench/kbench/internal/rundoc"
)

// runEventsChannel is the PostgreSQL notification channel of new run
// events; the payload is the run's id.
const runEventsChannel = "kbench_run_events"

// AppendRunEvents stores events, in order, in one transaction. On
// PostgreSQL every process watching one of their runs (WatchRunEvents) is
// notified when it commits. The events' ID and CreatedAt are set by the
// database. Appending is not a write in the sense of Generation: nothing
// a cached page shows comes from run_events.
func (s *Store) AppendRunEvents(ctx context.Context, events []RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	for i := range events {
		events[i].ID = 0
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.CreateInBatches(events, 500).Error; err != nil {
			return err
		}
		if !s.pg {
			return nil
		}
		var runs []uint
		for _, e := range events {
			if !slices.Contains(runs, e.RunID) {
				runs = append(runs, e.RunID)
			}
		}
		for _, id := range runs {
			// Delivered at commit, so a listener reads what it was told of.
			if err := tx.Exec("SELECT pg_notify(?, ?)", runEventsChannel, strconv.FormatUint(uint64(id), 10)).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: append %d run events: %w", len(events), err)
	}
	return nil
}

// RunEventsAfter returns up to limit events of run id whose ID is greater
// than after, in the order they were appended.
func (s *Store) RunEventsAfter(ctx context.Context, id uint, after uint64, limit int) ([]RunEvent, error) {
	evs := []RunEvent{}
	err := s.db.WithContext(ctx).Where("run_id = ? AND id > ?", id, after).Order("id").Limit(limit).Find(&evs).Error
	if err != nil {
		return nil, fmt.Errorf("store: events of run %d: %w", id, err)
	}
	return evs, nil
}

// PruneRunEvents deletes the events older than age, on the database's
// clock, of runs that are neither queued nor running (or no longer
// exist): once a run has ended its stored result is the truth, and a
// watcher has had age to read its last events. It returns how many it
// deleted.
func (s *Store) PruneRunEvents(ctx context.Context, age time.Duration) (int64, error) {
	cutoff := fmt.Sprintf("datetime('now', '-%d seconds')", int64(age.Seconds()))
	if s.pg {
		cutoff = fmt.Sprintf("now() - interval '%d seconds'", int64(age.Seconds()))
	}
	res := s.db.WithContext(ctx).Exec("DELETE FROM run_events WHERE created_at < " + cutoff +
		" AND run_id NOT IN (SELECT id FROM runs WHERE status IN ('queued', 'running'))")
	if res.Error != nil {
		return 0, fmt.Errorf("store: prune run events: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// RunState is a run's status and error, what watchers of a run poll.
type RunState struct {
	Status rundoc.Status
	Error  string
}

// Final reports whether the run has ended.
func (r RunState) Final() bool { return r.Status.Final() }

// RunStatus reads run id's status and error alone (GetRun reads the
// whole run, output and environment included), or ErrNotFound.
func (s *Store) RunStatus(ctx context.Context, id uint) (RunState, error) {
	var rows []RunState
	err := s.db.WithContext(ctx).Table("runs").Select("status, error").Where("id = ?", id).Limit(1).Scan(&rows).Error
	if err != nil {
		return RunState{}, fmt.Errorf("store: status of run %d: %w", id, err)
	}
	if len(rows) == 0 {
		return RunState{}, fmt.Errorf("store: run %d: %w", id, ErrNotFound)
	}
	return rows[0], nil
}
