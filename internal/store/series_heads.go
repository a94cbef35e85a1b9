package store

import (
	"context"
	"fmt"

	"github.com/kbench/kbench/internal/rundoc"
)

// SeriesHead is what names a series: its newest stored run's label,
// workload and spec (defined in rundoc, as SeriesInfo is).
type SeriesHead = rundoc.SeriesHead

// SeriesHeads returns the SeriesHead of each run id given that exists
// (the MaxID of SeriesInfos), by id: one read by primary key per series,
// so naming every series costs their count, not their runs.
func (s *Store) SeriesHeads(ctx context.Context, ids []uint) (map[uint]SeriesHead, error) {
	out := make(map[uint]SeriesHead, len(ids))
	const batch = 500
	for len(ids) > 0 {
		part := ids[:min(batch, len(ids))]
		ids = ids[len(part):]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rs, err := s.sqlDB.QueryContext(ctx, s.rebind(`SELECT id, COALESCE(label, ''), COALESCE(workload, ''), COALESCE(spec, '') FROM runs WHERE id IN (`+marks(len(part))+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("store: series heads: %w", err)
		}
		for rs.Next() {
			var id uint
			var h SeriesHead
			if err := rs.Scan(&id, &h.Label, &h.Workload, &h.Spec); err != nil {
				rs.Close()
				return nil, fmt.Errorf("store: series heads: %w", err)
			}
			out[id] = h
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, fmt.Errorf("store: series heads: %w", err)
		}
	}
	return out, nil
}
