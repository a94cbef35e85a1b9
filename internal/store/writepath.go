package store

import (
	"context"
	"fmt"

	"github.com/kbench/kbench/internal/rundoc"
)

// WritepathBatch is one submission of the write-path lab's preset: its
// runs are in the repetition groups "wp-<Batch>-<strategy>" (see the
// server's writepath.go).
type WritepathBatch struct {
	Batch string
	// FirstRun is the batch's first run: its spec holds the parameters
	// every run of the batch shares, its creation the batch's.
	FirstRun uint
	// Runs counts the batch's runs; Final those that have finished, one
	// way or another, and Succeeded those that succeeded.
	Runs, Final, Succeeded int
}

// WritepathBatches lists the newest limit write-path batches, newest
// first, and whether older ones exist. The runs are read from the group
// index (idx_runs_list_group), one row per run of the lab.
func (s *Store) WritepathBatches(ctx context.Context, limit int) ([]WritepathBatch, bool, error) {
	if limit < 1 {
		limit = DefaultLimit
	}
	final := make([]string, 0, len(rundoc.FinalStatuses()))
	for _, st := range rundoc.FinalStatuses() {
		final = append(final, string(st))
	}
	// "wp-" and 12 hex digits: the batch id is characters 4 to 15.
	var out []WritepathBatch
	err := s.db.WithContext(ctx).Raw(`SELECT substr(group_id, 4, 12) AS batch, MIN(id) AS first_run, COUNT(*) AS runs,
		SUM(CASE WHEN status IN ? THEN 1 ELSE 0 END) AS final,
		SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS succeeded
		FROM runs WHERE workload = ? AND group_id LIKE ?
		GROUP BY substr(group_id, 4, 12) ORDER BY first_run DESC LIMIT ?`,
		final, string(rundoc.StatusSucceeded), string(rundoc.Writepath), "wp-%", limit+1).Scan(&out).Error
	if err != nil {
		return nil, false, fmt.Errorf("store: write-path batches: %w", err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}
