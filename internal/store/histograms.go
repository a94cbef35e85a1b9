package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/kbench/kbench/internal/rundoc"
)

// insertHistograms stores a run's window histograms and its histogram
// log, written with the rest of its result.
func insertHistograms(tx *gorm.DB, runID uint, hs []Histogram, log *HistogramLog) error {
	if len(hs) > 0 {
		rows := slices.Clone(hs)
		for i := range rows {
			rows[i].ID, rows[i].RunID = 0, runID
		}
		if err := tx.Create(&rows).Error; err != nil {
			return fmt.Errorf("histograms: %w", err)
		}
	}
	if log != nil {
		row := *log
		row.RunID = runID
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("histogram log: %w", err)
		}
	}
	return nil
}

// histogramDoc is h as the run contract has it.
func histogramDoc(h Histogram) rundoc.Histogram {
	return rundoc.Histogram{Kind: h.Kind, Scope: rundoc.HistogramWindow, StartS: h.StartS, EndS: h.EndS, Count: h.Count, Data: h.Data}
}

// kindOrder sorts histograms by rundoc.HistogramKinds, unknown kinds
// (none are stored) last.
func kindOrder(a, b Histogram) int {
	ia, ib := slices.Index(rundoc.HistogramKinds, a.Kind), slices.Index(rundoc.HistogramKinds, b.Kind)
	if ia < 0 {
		ia = len(rundoc.HistogramKinds)
	}
	if ib < 0 {
		ib = len(rundoc.HistogramKinds)
	}
	return ia - ib
}

// RunsHistograms returns the window histograms of the runs ids, by run,
// kinds in rundoc.HistogramKinds' order; kinds, when given, selects
// them. A run without histograms (one from before them, an import of
// summaries) has no entry.
func (s *Store) RunsHistograms(ctx context.Context, ids []uint, kinds ...string) (map[uint][]rundoc.Histogram, error) {
	out := map[uint][]rundoc.Histogram{}
	if len(ids) == 0 {
		return out, nil
	}
	q := s.db.WithContext(ctx).Where("run_id IN ?", ids)
	if len(kinds) > 0 {
		q = q.Where("kind IN ?", kinds)
	}
	var rows []Histogram
	if err := q.Order("run_id, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: histograms of runs %v: %w", ids, err)
	}
	slices.SortStableFunc(rows, func(a, b Histogram) int {
		if a.RunID != b.RunID {
			return int(a.RunID) - int(b.RunID)
		}
		return kindOrder(a, b)
	})
	for _, h := range rows {
		out[h.RunID] = append(out[h.RunID], histogramDoc(h))
	}
	return out, nil
}

// RunHistogramLog returns the text of run id's histogram log, and
// ErrNotFound when the run has none (wrapped: the run may exist).
func (s *Store) RunHistogramLog(ctx context.Context, id uint) ([]byte, error) {
	var row HistogramLog
	err := s.db.WithContext(ctx).Where("run_id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("store: histogram log of run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: histogram log of run %d: %w", id, err)
	}
	return []byte(row.Data), nil
}
