package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"gorm.io/gorm"
)

// Sweep phases. A sweep is created in SweepMaxRate (its unthrottled runs
// measure each configuration's maximum rate) and moves once, in the
// transaction that stores its second phase's runs, to SweepRates; to
// SweepDone instead when no configuration has a maximum to sweep. A
// sweep in SweepRates moves to SweepDone once every run of its second
// phase has ended. SweepCanceled (the user canceled it) and SweepFailed
// (its runs were deleted before it ended) end it from either of the
// first two. SweepDone, SweepCanceled and SweepFailed are ends: no phase
// follows them (SweepEnded).
const (
	SweepMaxRate  = "max-rate"
	SweepRates    = "rates"
	SweepDone     = "done"
	SweepCanceled = "canceled"
	SweepFailed   = "failed"
)

// SweepEnded reports whether phase is an end: done, canceled or failed.
func SweepEnded(phase string) bool {
	return phase == SweepDone || phase == SweepCanceled || phase == SweepFailed
}

// Sweep is a latency-vs-throughput sweep (schema 0009_sweeps). The store
// keeps its documents as the server wrote them (JSON text): Configs (each
// configuration's label, queue, workload and spec), RatesPct (the target
// rates, percent of the maximum) and, from the second phase on, MaxRates
// (what the first phase measured per configuration).
type Sweep struct {
	ID          string `gorm:"primaryKey;size:32"`
	Phase       string `gorm:"size:16;not null;default:'';index:idx_sweeps_phase"`
	Configs     string `gorm:"not null;default:''"`
	RatesPct    string `gorm:"not null;default:''"`
	Repetitions int    `gorm:"not null;default:0"`
	MaxRates    string `gorm:"not null;default:''"`
	CreatedAt   time.Time
	// AdvancedAt is when the second phase was queued; nil before.
	AdvancedAt *time.Time
}

// SweepRun ties a run to its sweep: the configuration (index into the
// sweep's Configs) it measures, its phase (1: unthrottled, for the
// maximum; 2: at a target rate), the target in percent of the maximum
// (0 in phase 1) and the throttle the run was given in records/s (-1 in
// phase 1). A run belongs to at most one sweep.
type SweepRun struct {
	ID         uint    `gorm:"primaryKey"`
	SweepID    string  `gorm:"size:32;not null;index:idx_sweep_runs_sweep"`
	RunID      uint    `gorm:"not null;uniqueIndex:idx_sweep_runs_run"`
	Config     int     `gorm:"not null;default:0"`
	Phase      int     `gorm:"not null;default:0"`
	RatePct    float64 `gorm:"not null;default:0"`
	TargetRate float64 `gorm:"not null;default:0"`
}

// CreateSweep stores a new sweep with its first phase's runs in one
// transaction (runs are numbered in their repetition groups as AppendRuns
// does). links[i] describes runs[i]; their SweepID and RunID are filled
// in.
func (s *Store) CreateSweep(ctx context.Context, sw *Sweep, runs []*Run, links []SweepRun) error {
	if len(runs) == 0 || len(runs) != len(links) {
		return fmt.Errorf("store: create sweep %s: %d runs for %d links", sw.ID, len(runs), len(links))
	}
	sw.CreatedAt = s.stored(s.now())
	err := s.createRuns(ctx, runs, true, func(tx *gorm.DB) error {
		if err := tx.Create(sw).Error; err != nil {
			return err
		}
		return insertSweepRuns(tx, sw.ID, runs, links)
	})
	if err != nil {
		return fmt.Errorf("store: create sweep %s: %w", sw.ID, err)
	}
	return nil
}

func insertSweepRuns(tx *gorm.DB, id string, runs []*Run, links []SweepRun) error {
	for i := range links {
		links[i].SweepID, links[i].RunID = id, runs[i].ID
	}
	return tx.CreateInBatches(links, metricBatch).Error
}

// AdvanceSweep moves sweep id from SweepMaxRate to phase (SweepRates or
// SweepDone), records maxRates and stores the second phase's runs, all in
// one transaction. It wraps ErrConflict when the sweep is no longer in
// SweepMaxRate (another process advanced it first): nothing is stored.
func (s *Store) AdvanceSweep(ctx context.Context, id, phase, maxRates string, runs []*Run, links []SweepRun) error {
	if len(runs) != len(links) {
		return fmt.Errorf("store: advance sweep %s: %d runs for %d links", id, len(runs), len(links))
	}
	advance := func(tx *gorm.DB) error {
		at := s.stored(s.now())
		res := tx.Model(&Sweep{}).Where("id = ? AND phase = ?", id, SweepMaxRate).
			Updates(map[string]any{"phase": phase, "max_rates": maxRates, "advanced_at": at})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("sweep %s is no longer measuring its maximum rates: %w", id, ErrConflict)
		}
		if len(runs) == 0 {
			return nil
		}
		return insertSweepRuns(tx, id, runs, links)
	}
	var err error
	if len(runs) == 0 {
		defer s.wroteOutsideSeries()
		err = s.db.WithContext(ctx).Transaction(advance)
	} else {
		err = s.createRuns(ctx, runs, true, advance)
	}
	if err != nil {
		return fmt.Errorf("store: advance sweep %s: %w", id, err)
	}
	return nil
}

// EndSweep moves sweep id to an end (SweepDone, SweepCanceled or
// SweepFailed) if it is in one of the phases from, in one conditional
// UPDATE: of a cancel and an advance racing, exactly one moves it. It
// wraps ErrNotFound for no such sweep and ErrConflict, naming the phase
// it is in, when it is in none of from.
func (s *Store) EndSweep(ctx context.Context, id, to string, from ...string) error {
	if !SweepEnded(to) || len(from) == 0 {
		return fmt.Errorf("store: end sweep %s: %q from %q is no end", id, to, from)
	}
	db := s.db.WithContext(ctx)
	res := db.Model(&Sweep{}).Where("id = ? AND phase IN ?", id, from).Update("phase", to)
	if res.Error != nil {
		return fmt.Errorf("store: end sweep %s: %w", id, res.Error)
	}
	if res.RowsAffected == 1 {
		s.wroteOutsideSeries()
		return nil
	}
	var sw Sweep
	if err := db.Select("phase").Where("id = ?", id).Take(&sw).Error; err != nil {
		return fmt.Errorf("store: end sweep %s: %w", id, notFound(err))
	}
	if SweepEnded(sw.Phase) {
		return fmt.Errorf("sweep %s has ended (%s): %w", id, sw.Phase, ErrConflict)
	}
	return fmt.Errorf("sweep %s is %s, not %s: %w", id, sw.Phase, strings.Join(from, " or "), ErrConflict)
}

// CountQueued returns the number of runs waiting in the queues (status
// queued), every queue's.
func (s *Store) CountQueued(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&Run{}).Where("status = ?", rundoc.StatusQueued).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count queued runs: %w", err)
	}
	return n, nil
}

// GetSweep returns sweep id and its runs' links, by run id.
func (s *Store) GetSweep(ctx context.Context, id string) (*Sweep, []SweepRun, error) {
	db := s.db.WithContext(ctx)
	var sw Sweep
	if err := db.Where("id = ?", id).Take(&sw).Error; err != nil {
		return nil, nil, fmt.Errorf("store: sweep %s: %w", id, notFound(err))
	}
	var links []SweepRun
	if err := db.Where("sweep_id = ?", id).Order("run_id").Find(&links).Error; err != nil {
		return nil, nil, fmt.Errorf("store: sweep %s: runs: %w", id, err)
	}
	return &sw, links, nil
}

// ListSweeps returns the newest sweeps (at most limit), or with phase set
// only those in that phase, oldest first.
func (s *Store) ListSweeps(ctx context.Context, phase string, limit int) ([]Sweep, error) {
	out, err := listByPhase[Sweep](s.db.WithContext(ctx), phase, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list sweeps: %w", err)
	}
	return out, nil
}

// listByPhase lists the rows of a table with a phase and a creation
// time (sweeps, searches): the newest (at most limit; 0 for all), or
// with phase set only those in that phase, oldest first, the order in
// which the loop advances them.
func listByPhase[T any](db *gorm.DB, phase string, limit int) ([]T, error) {
	q := db.Model(new(T))
	if phase != "" {
		q = q.Where("phase = ?", phase).Order("created_at, id")
	} else {
		q = q.Order("created_at DESC, id DESC")
	}
	if limit > 0 {
		q = q.Limit(limit)
	}
	var out []T
	err := q.Find(&out).Error
	return out, err
}

// SweepRunsMetrics returns the runs ids name (as ListRuns reads them: no
// documents, output, series or profiles) with only their metrics named
// in metrics, by id. Runs that no longer exist are left out.
func (s *Store) SweepRunsMetrics(ctx context.Context, ids []uint, metrics []string) ([]rundoc.Run, error) {
	if len(ids) == 0 {
		return []rundoc.Run{}, nil
	}
	db := s.db.WithContext(ctx)
	var runs []Run
	// In chunks: SQLite binds at most 32766 variables.
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		var part []Run
		if err := db.Model(&Run{}).Select(listColumns).Where("id IN ?", chunk).Order("id").Find(&part).Error; err != nil {
			return nil, fmt.Errorf("store: sweep runs: %w", err)
		}
		if len(metrics) > 0 {
			var ms []Metric
			if err := db.Where("run_id IN ? AND name IN ?", chunk, metrics).Order("id").Find(&ms).Error; err != nil {
				return nil, fmt.Errorf("store: sweep runs: metrics: %w", err)
			}
			byRun := map[uint][]Metric{}
			for _, m := range ms {
				byRun[m.RunID] = append(byRun[m.RunID], m)
			}
			for i := range part {
				part[i].Metrics = byRun[part[i].ID]
			}
		}
		runs = append(runs, part...)
	}
	return runDocs(runs), nil
}
