package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kbench/kbench/internal/rundoc"
)

// seriesLogMax bounds the series-changing writes the store remembers the
// keys of (SeriesChangedSince): a cache further behind than that reads
// every series again.
const seriesLogMax = 4096

// seriesLog records, for each recent move of SeriesGeneration, the
// series keys the write may have changed, or that it cannot say (an
// unknown entry: another process's write without keys, a lost
// PostgreSQL connection). Moves of seriesGen happen under its lock, with
// their entry, so that a reader never sees a generation without it.
type seriesLog struct {
	mu sync.Mutex
	// entries are the latest moves, oldest first; entries[i] moved the
	// generation to floor+i+1.
	entries []seriesEntry
	// floor is the generation before entries[0]: what happened up to it
	// is forgotten.
	floor uint64
}

type seriesEntry struct {
	keys  []string
	known bool
}

// moveSeries moves s's SeriesGeneration by one, recording the keys the
// write may have changed (known false: it cannot say which).
func (s *Store) moveSeries(keys []string, known bool) {
	l := &s.seriesLog
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) >= seriesLogMax {
		drop := len(l.entries) - seriesLogMax/2
		l.entries = slices.Delete(l.entries, 0, drop)
		l.floor += uint64(drop)
	}
	l.entries = append(l.entries, seriesEntry{keys: keys, known: known})
	s.seriesGen.Add(1)
}

// SeriesChangedSince returns the keys of the series that the writes
// since SeriesGeneration was gen may have changed (sorted, each once;
// series that no longer exist among them), covering at least every write
// up to the SeriesGeneration read before the call. ok is false when the
// store cannot know: it no longer remembers that far back (a few thousand
// writes), or one of those writes came from another process without its
// keys (an older kbench, a payload too long to carry them) or was a lost
// PostgreSQL connection, after which anything may have changed. A cache
// of what it derived from the series at generation gen then reads all of
// them again (ListSeries); else it reads those keys' SeriesInfos alone.
func (s *Store) SeriesChangedSince(gen uint64) (keys []string, ok bool) {
	l := &s.seriesLog
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.floor + uint64(len(l.entries))
	if gen < l.floor || gen > cur {
		return nil, false
	}
	seen := map[string]bool{}
	for _, e := range l.entries[gen-l.floor:] {
		if !e.known {
			return nil, false
		}
		for _, k := range e.keys {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys, true
}

// SeriesInfos returns the SeriesInfo of each of the series keys that has
// a succeeded run, by key, as ListSeries gives them; keys without one
// (deleted, never succeeded) are left out. Its cost follows the keys'
// series, not the database's size (idx_runs_series_status).
func (s *Store) SeriesInfos(ctx context.Context, keys []string) ([]SeriesInfo, error) {
	out := []SeriesInfo{}
	// Bound the bound variables of a statement (SQLite allows 32,766).
	const batch = 500
	for len(keys) > 0 {
		part := keys[:min(batch, len(keys))]
		keys = keys[len(part):]
		got, err := s.listSeries(ctx, part)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	slices.SortFunc(out, func(a, b SeriesInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// listSeries is ListSeries, of the given keys alone when keys is not nil.
func (s *Store) listSeries(ctx context.Context, keys []string) ([]SeriesInfo, error) {
	args := []any{rundoc.StatusSucceeded}
	in := ""
	if keys != nil {
		if len(keys) == 0 {
			return nil, nil
		}
		in = " AND series IN (" + marks(len(keys)) + ")"
		for _, k := range keys {
			args = append(args, k)
		}
	}
	// SQLite gives the bare column (workload) from the row MAX(id)
	// picked: the last run stored.
	query := `SELECT series, COUNT(*), MAX(id), SUM(id), workload
		FROM runs INDEXED BY idx_runs_series_status
		WHERE series > '' AND status = ?` + in + `
		GROUP BY series ORDER BY series`
	if s.pg {
		// PostgreSQL has no bare columns: the last run's workload is
		// read by its id (the primary key), once a series. SUM of a
		// bigint is numeric there.
		query = s.rebind(`SELECT g.series, g.n, g.max_id, g.sum_id, (SELECT r.workload FROM runs r WHERE r.id = g.max_id)
		FROM (SELECT series, COUNT(*) AS n, MAX(id) AS max_id, SUM(id)::bigint AS sum_id
			FROM runs WHERE series > '' AND status = ?` + in + ` GROUP BY series) g
		ORDER BY g.series`)
	}
	rs, err := s.sqlDB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list series: %w", err)
	}
	defer rs.Close()
	out := []SeriesInfo{}
	for rs.Next() {
		var si SeriesInfo
		if err := rs.Scan(&si.Key, &si.Runs, &si.MaxID, &si.SumID, &si.Workload); err != nil {
			return nil, fmt.Errorf("store: list series: %w", err)
		}
		out = append(out, si)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list series: %w", err)
	}
	return out, nil
}
