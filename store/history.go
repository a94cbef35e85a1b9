package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kbench/kbench/rundoc"
)

// envPaths are the environment fields a history compares (but the
// configuration, read apart), in the order historyEnvironment reads them.
// SQLite extracts them from the stored document (one parse, in C), so
// that a long series does not decode a few KiB of JSON a run (the
// target's API versions, the load average) to read a dozen strings.
const envPaths = `'$.kbench_version', '$.kbench_build', '$.go_version', '$.kafka_go_version', '$.cpu_model', '$.cores', '$.kernel', '$.host', '$.broker', '$.target.release_guess'`

// historyEnvironment builds a run's environment from the extracted fields
// (a JSON array) and its configuration's text. configs memoises decoded
// configurations by their text: a series' runs mostly share one.
func historyEnvironment(fields string, config sql.NullString, configs map[string]*rundoc.Config) (*rundoc.Environment, error) {
	var f [10]json.RawMessage
	if err := json.Unmarshal([]byte(fields), &f); err != nil {
		return nil, err
	}
	var e rundoc.Environment
	var guess string
	for i, dst := range []any{&e.KbenchVersion, &e.KbenchBuild, &e.GoVersion, &e.KafkaGoVersion, &e.CPUModel, &e.Cores, &e.Kernel, &e.Host, &e.Broker, &guess} {
		if len(f[i]) == 0 || string(f[i]) == "null" {
			continue
		}
		if err := json.Unmarshal(f[i], dst); err != nil {
			return nil, err
		}
	}
	if guess != "" {
		e.Target = &rundoc.Target{ReleaseGuess: guess}
	}
	if config.Valid && config.String != "" {
		cfg, ok := configs[config.String]
		if !ok {
			cfg = new(rundoc.Config)
			if err := json.Unmarshal([]byte(config.String), cfg); err != nil {
				return nil, err
			}
			configs[config.String] = cfg
		}
		e.Config = cfg
	}
	return &e, nil
}

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
// then id), each with its one metric named metric (if it has it) and of
// its environment only what a history compares (kbench's, Go's and
// kafka-go's versions, the machine, the target's broker and release
// guess, the configuration; Documents stay empty), and no output, series
// points or profiles: what a history of that metric needs. The runs are read from idx_runs_series_time and
// the metrics from idx_metric_run_name, so the cost follows the series'
// length, not the database's. A series without any run is ErrNotFound;
// one whose runs all failed gives none.
func (s *Store) SeriesRuns(ctx context.Context, series, metric string) ([]rundoc.Run, error) {
	return s.SeriesRunsMetrics(ctx, series, []string{metric})
}

// SeriesRunsMetrics is SeriesRuns with each run's metrics of the given
// names (those it has, in the order stored): a regressions scan reads a series
// once for all its headline metrics.
func (s *Store) SeriesRunsMetrics(ctx context.Context, series string, metrics []string) ([]rundoc.Run, error) {
	db := s.db.WithContext(ctx)
	// database/sql rather than GORM's reflection: this reads every run of
	// a series, and scanning was most of the time.
	rs, err := s.sqlDB.QueryContext(ctx, `SELECT id, label, workload, status, source, warmup, meta, run_at, series, created_at,
		CASE WHEN json_valid(environment) THEN json_extract(environment, `+envPaths+`) END,
		CASE WHEN json_valid(environment) THEN json_extract(environment, '$.config') END
		FROM runs WHERE series = ? AND status = ? ORDER BY run_at, id`, series, rundoc.StatusSucceeded)
	if err != nil {
		return nil, fmt.Errorf("store: series %q: %w", series, err)
	}
	defer rs.Close()
	configs := map[string]*rundoc.Config{}
	rows := []rundoc.Run{}
	for rs.Next() {
		var d rundoc.Run
		var meta Meta
		var env, config sql.NullString
		if err := rs.Scan(&d.ID, &d.Label, &d.Workload, &d.Status, &d.Source, &d.Warmup, &meta, &d.Time, &d.SeriesKey, &d.CreatedAt, &env, &config); err != nil {
			return nil, fmt.Errorf("store: series %q: %w", series, err)
		}
		d.Meta = meta.doc()
		if env.Valid {
			// A document this code cannot read is no environment, as
			// SetDocuments has it: the run gets no marks.
			d.Environment, d.DocumentErr = historyEnvironment(env.String, config, configs)
		}
		rows = append(rows, d)
	}
	if err := rs.Err(); err != nil {
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
	err = db.Where("name IN ? AND run_id IN (?)", metrics,
		db.Model(&Run{}).Select("id").Where("series = ? AND status = ?", series, rundoc.StatusSucceeded)).
		Order("id").Find(&ms).Error
	if err != nil {
		return nil, fmt.Errorf("store: series %q: metrics %v: %w", series, metrics, err)
	}
	index := make(map[uint]int, len(rows))
	for i := range rows {
		index[rows[i].ID] = i
	}
	for _, m := range ms {
		i, ok := index[m.RunID]
		if !ok {
			continue
		}
		r := &rows[i]
		if _, dup := r.Metric(m.Name); dup { // a run records a metric once; keep the first if not
			continue
		}
		r.Metrics = append(r.Metrics, rundoc.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help})
	}
	return rows, nil
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

// SeriesInfo is one series as ListSeries gives it.
type SeriesInfo struct {
	// Key is the series key (rundoc.Run.SeriesKey); Workload the workload
	// of its newest succeeded run.
	Key      string
	Workload string
	// Runs counts its succeeded runs; MaxID and SumID are their largest
	// id and the sum of their ids. Together they change whenever a run
	// of the series succeeds or is deleted, so what was derived from a
	// series can be kept until they do.
	Runs  int
	MaxID uint
	SumID uint64
}

// ListSeries returns every series that has a succeeded run, by key, read
// in one pass over idx_runs_series_time (the runs grouped by series
// without a sort).
func (s *Store) ListSeries(ctx context.Context) ([]SeriesInfo, error) {
	rs, err := s.sqlDB.QueryContext(ctx, `SELECT series, COUNT(*), MAX(id), SUM(id),
		(SELECT w.workload FROM runs w WHERE w.series = r.series AND w.status = ? ORDER BY w.run_at DESC, w.id DESC LIMIT 1)
		FROM runs r
		WHERE series <> '' AND status = ?
		GROUP BY series ORDER BY series`, rundoc.StatusSucceeded, rundoc.StatusSucceeded)
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
