package store

import (
	"context"
	"fmt"

	"github.com/kbench/kbench/rundoc"
)

// historyColumns are what a history needs of a run: who it is, when it
// ran, its tags and its environment (for the marks where kbench, kafka-go
// or the machine changed). Not its output, spec or measurement.
var historyColumns = []string{"id", "label", "workload", "status", "source", "warmup", "meta", "run_at", "series", "environment", "created_at"}

// RunSeries returns the series a run belongs to (ErrNotFound for an
// unknown run).
func (s *Store) RunSeries(ctx context.Context, id uint) (string, error) {
	var r Run
	if err := s.db.WithContext(ctx).Select("series").Where("id = ?", id).Take(&r).Error; err != nil {
		return "", fmt.Errorf("store: run %d: %w", id, notFound(err))
	}
	return r.SeriesKey, nil
}

// SeriesRuns returns the succeeded runs of a series in time order (run_at,
// then id), each with its environment and its one metric named metric (if
// it has it), and no output, series points or profiles: what a history
// of that metric needs. The runs are read from idx_runs_series_time and
// the metrics from idx_metric_run_name, so the cost follows the series'
// length, not the database's. A series without any run is ErrNotFound;
// one whose runs all failed gives none.
func (s *Store) SeriesRuns(ctx context.Context, series, metric string) ([]rundoc.Run, error) {
	db := s.db.WithContext(ctx)
	var rows []Run
	err := db.Model(&Run{}).Select(historyColumns).
		Where("series = ? AND status = ?", series, rundoc.StatusSucceeded).
		Order("run_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: series %q: %w", series, err)
	}
	if len(rows) == 0 {
		var n int64
		if err := db.Model(&Run{}).Where("series = ?", series).Limit(1).Count(&n).Error; err != nil {
			return nil, fmt.Errorf("store: series %q: %w", series, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("store: series %q: %w", series, ErrNotFound)
		}
		return []rundoc.Run{}, nil
	}
	var ms []Metric
	err = db.Where("name = ? AND run_id IN (?)", metric,
		db.Model(&Run{}).Select("id").Where("series = ? AND status = ?", series, rundoc.StatusSucceeded)).
		Order("id").Find(&ms).Error
	if err != nil {
		return nil, fmt.Errorf("store: series %q: metric %s: %w", series, metric, err)
	}
	byRun := make(map[uint][]Metric, len(ms))
	for _, m := range ms {
		if len(byRun[m.RunID]) == 0 { // a run records a metric once; keep the first if not
			byRun[m.RunID] = []Metric{m}
		}
	}
	for i := range rows {
		rows[i].Metrics = byRun[rows[i].ID]
	}
	return runDocs(rows), nil
}

// SeriesMetrics returns the metrics the succeeded runs of a series
// recorded, by name, each with a unit and direction they were recorded
// with.
func (s *Store) SeriesMetrics(ctx context.Context, series string) ([]rundoc.Metric, error) {
	var rows []struct {
		Name, Unit string
		Better     rundoc.Better
	}
	err := s.db.WithContext(ctx).Raw(`SELECT m.name AS name, MAX(m.unit) AS unit, MAX(m.better) AS better
		FROM metrics m JOIN runs r ON r.id = m.run_id
		WHERE r.series = ? AND r.status = ?
		GROUP BY m.name ORDER BY m.name`, series, rundoc.StatusSucceeded).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: metrics of series %q: %w", series, err)
	}
	out := make([]rundoc.Metric, len(rows))
	for i, r := range rows {
		out[i] = rundoc.Metric{Name: r.Name, Unit: r.Unit, Better: r.Better}
	}
	return out, nil
}
