package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Phases of a latency-target search (SLO). A search is created in
// SLOSearching with its first probe's runs queued; each advance queues
// the next runs in the same transaction that counts the step, and the
// search ends once: SLODone (it has its answer), SLOCanceled (the user
// canceled it) or SLOFailed (its runs were deleted before it ended).
const (
	SLOSearching = "searching"
	SLODone      = "done"
	SLOCanceled  = "canceled"
	SLOFailed    = "failed"
)

// SLOEnded reports whether phase is an end of a search.
func SLOEnded(phase string) bool {
	return phase == SLODone || phase == SLOCanceled || phase == SLOFailed
}

// SLO is a search for the highest rate a latency target allows (schema
// 0013_slos). Config is the configuration measured (label, queue,
// workload and redacted spec, as a sweep keeps one) and Search the
// search's settings, both JSON text as the launcher wrote them. Steps
// counts the batches of runs queued so far: every advance and end is
// conditional on it, so of several servers deciding the same step only
// one stores it. Outcome, Lo and Hi are the answer once done.
type SLO struct {
	ID        string  `gorm:"primaryKey;size:32"`
	Phase     string  `gorm:"size:16;not null;default:'';index:idx_slos_phase"`
	Config    string  `gorm:"not null;default:''"`
	Search    string  `gorm:"not null;default:''"`
	Steps     int     `gorm:"not null;default:0"`
	Outcome   string  `gorm:"size:16;not null;default:''"`
	Lo        float64 `gorm:"not null;default:0"`
	Hi        float64 `gorm:"not null;default:0"`
	Note      string  `gorm:"not null;default:''"`
	CreatedAt time.Time
	// EndedAt is when the search ended; nil before.
	EndedAt *time.Time
}

// TableName is slos (GORM would spell the acronym's plural otherwise).
func (SLO) TableName() string { return "slos" }

// SLORun ties a run to its search: the probe it measures (its index in
// the order the search made them), the probe's rate in records/s (0 for
// the unthrottled probe, Max) and the step that queued it. A run belongs
// to at most one search.
type SLORun struct {
	ID    uint    `gorm:"primaryKey"`
	SLOID string  `gorm:"column:slo_id;size:32;not null;index:idx_slo_runs_slo"`
	RunID uint    `gorm:"not null;uniqueIndex:idx_slo_runs_run"`
	Probe int     `gorm:"not null;default:0"`
	Rate  float64 `gorm:"not null;default:0"`
	Max   bool    `gorm:"not null;default:false"`
	Step  int     `gorm:"not null;default:0"`
}

// TableName is slo_runs.
func (SLORun) TableName() string { return "slo_runs" }

// CreateSLO stores a new search with its first step's runs in one
// transaction; links[i] describes runs[i], their SLOID, RunID and Step
// are filled in.
func (s *Store) CreateSLO(ctx context.Context, slo *SLO, runs []*Run, links []SLORun) error {
	if len(runs) == 0 || len(runs) != len(links) {
		return fmt.Errorf("store: create slo %s: %d runs for %d links", slo.ID, len(runs), len(links))
	}
	slo.CreatedAt, slo.Steps, slo.Phase = s.stored(s.now()), 1, SLOSearching
	err := s.createRuns(ctx, runs, true, func(tx *gorm.DB) error {
		if err := tx.Create(slo).Error; err != nil {
			return err
		}
		return insertSLORuns(tx, slo.ID, 1, runs, links)
	})
	if err != nil {
		return fmt.Errorf("store: create slo %s: %w", slo.ID, err)
	}
	return nil
}

func insertSLORuns(tx *gorm.DB, id string, step int, runs []*Run, links []SLORun) error {
	for i := range links {
		links[i].SLOID, links[i].RunID, links[i].Step = id, runs[i].ID, step
	}
	return tx.CreateInBatches(links, metricBatch).Error
}

// AdvanceSLO stores search id's next step: runs with their links, when
// the search is still searching at step steps (the number the caller
// decided from). It wraps ErrConflict when it is not (another process
// advanced or ended it first, or it was canceled): nothing is stored.
func (s *Store) AdvanceSLO(ctx context.Context, id string, steps int, runs []*Run, links []SLORun) error {
	if len(runs) == 0 || len(runs) != len(links) {
		return fmt.Errorf("store: advance slo %s: %d runs for %d links", id, len(runs), len(links))
	}
	err := s.createRuns(ctx, runs, true, func(tx *gorm.DB) error {
		res := tx.Model(&SLO{}).Where("id = ? AND phase = ? AND steps = ?", id, SLOSearching, steps).
			Update("steps", steps+1)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("slo %s is no longer at step %d: %w", id, steps, ErrConflict)
		}
		return insertSLORuns(tx, id, steps+1, runs, links)
	})
	if err != nil {
		return fmt.Errorf("store: advance slo %s: %w", id, err)
	}
	return nil
}

// SLOEnd is how a search ended: its phase (an end), its outcome and
// answer when done, and a note saying why when that is not plain.
type SLOEnd struct {
	Phase   string
	Outcome string
	Lo, Hi  float64
	Note    string
}

// EndSLO ends search id as end says, in one conditional UPDATE: only
// from SLOSearching and, when steps ≥ 0, only at that step (the one the
// answer was decided from). It wraps ErrNotFound for no such search and
// ErrConflict, naming its phase, when it moved on or ended already.
func (s *Store) EndSLO(ctx context.Context, id string, steps int, end SLOEnd) error {
	if !SLOEnded(end.Phase) {
		return fmt.Errorf("store: end slo %s: %q is no end", id, end.Phase)
	}
	db := s.db.WithContext(ctx)
	q := db.Model(&SLO{}).Where("id = ? AND phase = ?", id, SLOSearching)
	if steps >= 0 {
		q = q.Where("steps = ?", steps)
	}
	res := q.Updates(map[string]any{"phase": end.Phase, "outcome": end.Outcome, "lo": end.Lo, "hi": end.Hi,
		"note": end.Note, "ended_at": s.stored(s.now())})
	if res.Error != nil {
		return fmt.Errorf("store: end slo %s: %w", id, res.Error)
	}
	if res.RowsAffected == 1 {
		s.wroteOutsideSeries()
		return nil
	}
	var slo SLO
	if err := db.Select("phase", "steps").Where("id = ?", id).Take(&slo).Error; err != nil {
		return fmt.Errorf("store: end slo %s: %w", id, notFound(err))
	}
	if SLOEnded(slo.Phase) {
		return fmt.Errorf("slo %s has ended (%s): %w", id, slo.Phase, ErrConflict)
	}
	return fmt.Errorf("slo %s is at step %d, not %d: %w", id, slo.Steps, steps, ErrConflict)
}

// GetSLO returns search id and its runs' links, in the order the runs
// were queued.
func (s *Store) GetSLO(ctx context.Context, id string) (*SLO, []SLORun, error) {
	db := s.db.WithContext(ctx)
	var slo SLO
	if err := db.Where("id = ?", id).Take(&slo).Error; err != nil {
		return nil, nil, fmt.Errorf("store: slo %s: %w", id, notFound(err))
	}
	var links []SLORun
	if err := db.Where("slo_id = ?", id).Order("run_id").Find(&links).Error; err != nil {
		return nil, nil, fmt.Errorf("store: slo %s: runs: %w", id, err)
	}
	return &slo, links, nil
}

// ListSLOs returns the newest searches (at most limit), or with phase
// set only those in that phase, oldest first.
func (s *Store) ListSLOs(ctx context.Context, phase string, limit int) ([]SLO, error) {
	out, err := listByPhase[SLO](s.db.WithContext(ctx), phase, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list slos: %w", err)
	}
	return out, nil
}
