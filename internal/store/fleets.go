package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Phases of a fleet run (schema 0014_fleets). A fleet is stored
// FleetWaiting with its parent and shard runs; the first worker that
// takes one of its shards moves it to FleetGathering, and the check-in
// of its last shard to FleetStarted, which sets its start time. It ends
// once: FleetMerged (its shards' results are the parent's), FleetFailed
// (a shard failed, was lost, or missed the barrier) or FleetCanceled.
const (
	FleetWaiting   = "waiting"
	FleetGathering = "gathering"
	FleetStarted   = "started"
	FleetMerged    = "merged"
	FleetFailed    = "failed"
	FleetCanceled  = "canceled"
)

// FleetEnded reports whether phase is an end of a fleet.
func FleetEnded(phase string) bool {
	return phase == FleetMerged || phase == FleetFailed || phase == FleetCanceled
}

// ErrShardMustWait is TakeShard's answer when the worker may not execute
// the shard now: it holds another shard of the same fleet, or another
// fleet of its queue is gathering. The job waits and is tried again
// (River's snooze); nothing is changed.
var ErrShardMustWait = errors.New("the shard must wait")

// Fleet is a run whose load several workers drive at once: a parent run,
// which no worker executes and which holds the merged result, and
// Shards ordinary runs, one per worker (FleetShard). The barrier's times
// are the database's clock (clock_timestamp() on PostgreSQL), the one
// clock every worker can read: FirstCheckInAt is the first shard's
// check-in, StartAt the common start (T0), Lead after the last one.
type Fleet struct {
	ID       uint   `gorm:"primaryKey"`
	ParentID uint   `gorm:"not null;uniqueIndex:idx_fleets_parent"`
	Queue    string `gorm:"size:64;not null;default:'';index:idx_fleets_queue_phase,priority:1"`
	Phase    string `gorm:"size:16;not null;default:'';index:idx_fleets_queue_phase,priority:2"`
	Shards   int    `gorm:"not null;default:0"`
	// BarrierTimeoutS is how long after the first check-in the last may
	// come; LeadS how long after the last check-in the shards start.
	BarrierTimeoutS float64 `gorm:"not null;default:0"`
	LeadS           float64 `gorm:"not null;default:0"`
	FirstCheckInAt  *time.Time
	StartAt         *time.Time
	// Error says why a failed or canceled fleet ended.
	Error     string `gorm:"not null;default:''"`
	CreatedAt time.Time
	EndedAt   *time.Time
}

// FleetShard ties a run to its fleet: its index among the shards, the
// worker that took it, and its check-in at the barrier with the offset
// of the worker's clock from the database's (ClockOffsetMs, positive
// when the worker's clock is ahead) and the round trip it was measured
// in.
type FleetShard struct {
	ID            uint `gorm:"primaryKey"`
	FleetID       uint `gorm:"not null;uniqueIndex:idx_fleet_shards_index,priority:1"`
	ShardIndex    int  `gorm:"not null;default:0;uniqueIndex:idx_fleet_shards_index,priority:2"`
	RunID         uint `gorm:"not null;uniqueIndex:idx_fleet_shards_run"`
	WorkerID      *uint
	CheckedInAt   *time.Time
	ClockOffsetMs *float64
	RoundTripMs   *float64
}

// CreateFleet stores a fleet with its parent and shard runs in one
// transaction: parent first, then shards[i] as shard i. f's ParentID,
// Phase and CreatedAt are filled in.
func (s *Store) CreateFleet(ctx context.Context, f *Fleet, parent *Run, shards []*Run) error {
	if len(shards) < 2 || f.Shards != len(shards) {
		return fmt.Errorf("store: create fleet: %d shard runs for %d shards", len(shards), f.Shards)
	}
	f.CreatedAt, f.Phase = s.stored(s.now()), FleetWaiting
	runs := append([]*Run{parent}, shards...)
	err := s.createRuns(ctx, runs, false, func(tx *gorm.DB) error {
		f.ParentID = parent.ID
		if err := tx.Create(f).Error; err != nil {
			return err
		}
		links := make([]FleetShard, len(shards))
		for i, r := range shards {
			links[i] = FleetShard{FleetID: f.ID, ShardIndex: i, RunID: r.ID}
		}
		return tx.Create(&links).Error
	})
	if err != nil {
		return fmt.Errorf("store: create fleet: %w", err)
	}
	return nil
}

// GetFleet returns fleet id and its shards in index order.
func (s *Store) GetFleet(ctx context.Context, id uint) (*Fleet, []FleetShard, error) {
	return s.fleet(s.db.WithContext(ctx), "id = ?", id)
}

// FleetOfParent returns the fleet whose parent run is id, and its shards;
// ErrNotFound when run id is no fleet's parent.
func (s *Store) FleetOfParent(ctx context.Context, id uint) (*Fleet, []FleetShard, error) {
	return s.fleet(s.db.WithContext(ctx), "parent_id = ?", id)
}

// FleetOfShard returns the fleet run id is a shard of, and its shards;
// ErrNotFound when run id is no fleet's shard.
func (s *Store) FleetOfShard(ctx context.Context, id uint) (*Fleet, []FleetShard, error) {
	return s.fleet(s.db.WithContext(ctx), "id = (SELECT fleet_id FROM fleet_shards WHERE run_id = ?)", id)
}

func (s *Store) fleet(db *gorm.DB, where string, arg uint) (*Fleet, []FleetShard, error) {
	var f Fleet
	if err := db.Where(where, arg).Take(&f).Error; err != nil {
		return nil, nil, fmt.Errorf("store: fleet of %d: %w", arg, notFound(err))
	}
	var shards []FleetShard
	if err := db.Where("fleet_id = ?", f.ID).Order("shard_index").Find(&shards).Error; err != nil {
		return nil, nil, fmt.Errorf("store: shards of fleet %d: %w", f.ID, err)
	}
	return &f, shards, nil
}

// IsShard reports whether run id is a fleet's shard: one read, which
// spares every other run TakeShard's write transaction.
func (s *Store) IsShard(ctx context.Context, id uint) (bool, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&FleetShard{}).Where("run_id = ?", id).Count(&n).Error; err != nil {
		return false, fmt.Errorf("store: is run %d a shard: %w", id, err)
	}
	return n > 0, nil
}

// TakeShard records that worker takes shard run id, before the run
// starts. It wraps ErrShardMustWait, changing nothing, when the worker
// holds another shard of the fleet (two shards in one process would
// share its cores and measure nothing a fleet should) or another fleet
// of the queue is gathering (workers split between two fleets would
// wait for each other until both barriers time out). The first shard
// taken moves the fleet from FleetWaiting to FleetGathering. It returns
// the fleet as it is after the take; a fleet that has ended is returned
// unchanged, for the caller to refuse.
func (s *Store) TakeShard(ctx context.Context, id, worker uint) (*Fleet, error) {
	var out *Fleet
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var shard FleetShard
		if err := tx.Where("run_id = ?", id).Take(&shard).Error; err != nil {
			return notFound(err)
		}
		var f Fleet
		if err := tx.Select("id", "queue").Where("id = ?", shard.FleetID).Take(&f).Error; err != nil {
			return err
		}
		// Every unended fleet of the queue is locked, in id order: two
		// takes of two fleets' shards at once would each see the other
		// fleet not yet gathering and both gather, and the workers split
		// between them would wait for each other until both barriers
		// time out (TestFleetPlacement caught it).
		var queued []Fleet
		if err := lockRow(tx).Where("queue = ? AND phase IN ?", f.Queue, []string{FleetWaiting, FleetGathering, FleetStarted}).
			Order("id").Find(&queued).Error; err != nil {
			return err
		}
		if err := tx.Where("id = ?", shard.FleetID).Take(&f).Error; err != nil {
			return err
		}
		out = &f
		if FleetEnded(f.Phase) {
			return nil
		}
		var n int64
		if err := tx.Model(&FleetShard{}).Where("fleet_id = ? AND worker_id = ? AND run_id <> ?", f.ID, worker, id).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: this worker holds another shard of fleet %d", ErrShardMustWait, f.ID)
		}
		if err := tx.Model(&Fleet{}).Where("queue = ? AND phase = ? AND id <> ?", f.Queue, FleetGathering, f.ID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: another fleet of queue %s is gathering", ErrShardMustWait, f.Queue)
		}
		if err := tx.Model(&FleetShard{}).Where("id = ?", shard.ID).Update("worker_id", worker).Error; err != nil {
			return err
		}
		if f.Phase == FleetWaiting {
			if err := tx.Model(&Fleet{}).Where("id = ?", f.ID).Update("phase", FleetGathering).Error; err != nil {
				return err
			}
			f.Phase = FleetGathering
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: take shard run %d: %w", id, err)
	}
	s.wroteOutsideSeries()
	return out, nil
}

// lockRow makes a read take its rows for update on PostgreSQL; SQLite's
// write transactions are serialised anyway.
func lockRow(tx *gorm.DB) *gorm.DB {
	if isPostgres(tx) {
		return tx.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return tx
}

// CheckInShard records shard run id at its fleet's barrier, by the
// database's clock, with the worker's measured clock offset and round
// trip. The last check-in sets the fleet's start, LeadS later, and moves
// it to FleetStarted. Every check-in wakes the parent's watchers
// (WatchRunEvents) in every process. It returns the fleet after the
// check-in; a fleet no longer gathering is returned unchanged.
func (s *Store) CheckInShard(ctx context.Context, id uint, offsetMs, roundTripMs float64) (*Fleet, error) {
	var out *Fleet
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var shard FleetShard
		if err := tx.Where("run_id = ?", id).Take(&shard).Error; err != nil {
			return notFound(err)
		}
		var f Fleet
		if err := lockRow(tx).Where("id = ?", shard.FleetID).Take(&f).Error; err != nil {
			return err
		}
		out = &f
		if f.Phase != FleetGathering {
			return nil
		}
		now := s.clockNow()
		if err := tx.Model(&FleetShard{}).Where("id = ?", shard.ID).Updates(map[string]any{
			"checked_in_at": now, "clock_offset_ms": offsetMs, "round_trip_ms": roundTripMs,
		}).Error; err != nil {
			return err
		}
		if err := tx.Model(&Fleet{}).Where("id = ? AND first_check_in_at IS NULL", f.ID).Update("first_check_in_at", now).Error; err != nil {
			return err
		}
		var in int64
		if err := tx.Model(&FleetShard{}).Where("fleet_id = ? AND checked_in_at IS NOT NULL", f.ID).Count(&in).Error; err != nil {
			return err
		}
		if int(in) == f.Shards {
			if err := tx.Model(&Fleet{}).Where("id = ?", f.ID).Updates(map[string]any{
				"phase": FleetStarted, "start_at": s.clockIn(time.Duration(f.LeadS * float64(time.Second))),
			}).Error; err != nil {
				return err
			}
		}
		if err := tx.Where("id = ?", f.ID).Take(&f).Error; err != nil {
			return err
		}
		return s.notifyRun(tx, f.ParentID)
	})
	if err != nil {
		return nil, fmt.Errorf("store: check in shard run %d: %w", id, err)
	}
	s.wroteOutsideSeries()
	return out, nil
}

// EndFleet moves fleet id to phase to (an end) with its error, if its
// phase is one of from (any phase not yet an end when from is empty),
// and wakes the parent's watchers. It wraps ErrConflict when the fleet
// is in no such phase: another process ended it first.
func (s *Store) EndFleet(ctx context.Context, id uint, to, why string, from ...string) error {
	if !FleetEnded(to) {
		return fmt.Errorf("store: end fleet %d: %q is not an end", id, to)
	}
	if len(from) == 0 {
		from = []string{FleetWaiting, FleetGathering, FleetStarted}
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Fleet{}).Where("id = ? AND phase IN ?", id, from).
			Updates(map[string]any{"phase": to, "error": why, "ended_at": s.now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrConflict
		}
		var f Fleet
		if err := tx.Select("parent_id").Where("id = ?", id).Take(&f).Error; err != nil {
			return err
		}
		return s.notifyRun(tx, f.ParentID)
	})
	if err != nil {
		return fmt.Errorf("store: end fleet %d: %w", id, err)
	}
	s.wroteOutsideSeries()
	return nil
}

// DatabaseClock reads the database's clock: clock_timestamp() on
// PostgreSQL, the time when the statement ran (now() is the
// transaction's start); this process's clock on SQLite.
func (s *Store) DatabaseClock(ctx context.Context) (time.Time, error) {
	if !s.pg {
		return s.now(), nil
	}
	var t time.Time
	if err := s.db.WithContext(ctx).Raw("SELECT clock_timestamp()").Scan(&t).Error; err != nil {
		return time.Time{}, fmt.Errorf("store: read the database's clock: %w", err)
	}
	return t, nil
}

// clockNow is the database's clock at the statement (see DatabaseClock)
// as an SQL value; clockIn is d after it.
func (s *Store) clockNow() clause.Expr { return s.clockIn(0) }

func (s *Store) clockIn(d time.Duration) clause.Expr {
	if s.pg {
		return gorm.Expr("clock_timestamp() + make_interval(secs => ?)", d.Seconds())
	}
	return gorm.Expr("?", s.now().Add(d))
}

// notifyRun wakes the watchers of run id in every process sharing a
// PostgreSQL database, at commit (WatchRunEvents).
func (s *Store) notifyRun(tx *gorm.DB, id uint) error {
	if !s.pg {
		return nil
	}
	return tx.Exec("SELECT pg_notify(?, ?)", runEventsChannel, strconv.FormatUint(uint64(id), 10)).Error
}

// UnfinishedFleets returns the fleets whose parent run is still queued
// or running, oldest first: those the launcher's fleet pass advances.
func (s *Store) UnfinishedFleets(ctx context.Context) ([]Fleet, error) {
	var fs []Fleet
	err := s.db.WithContext(ctx).Where("parent_id IN (SELECT id FROM runs WHERE status IN ?)",
		[]rundoc.Status{rundoc.StatusQueued, rundoc.StatusRunning}).Order("id").Find(&fs).Error
	if err != nil {
		return nil, fmt.Errorf("store: unfinished fleets: %w", err)
	}
	return fs, nil
}
