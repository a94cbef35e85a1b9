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
	return s.seriesRuns(ctx, series, []string{metric}, true)
}

// SeriesRunsMetrics is SeriesRuns with each run's metrics of the given
// names (those it has, in the order stored) and no environment: a
// regressions scan reads a series once for all its headline metrics and
// needs no marks of what else changed (reading the environments was
// half its cost).
func (s *Store) SeriesRunsMetrics(ctx context.Context, series string, metrics []string) ([]rundoc.Run, error) {
	return s.seriesRuns(ctx, series, metrics, false)
}

func (s *Store) seriesRuns(ctx context.Context, series string, metrics []string, withEnv bool) ([]rundoc.Run, error) {
	db := s.db.WithContext(ctx)
	envCols := `CASE WHEN json_valid(environment) THEN json_extract(environment, ` + envPaths + `) END,
		CASE WHEN json_valid(environment) THEN json_extract(environment, '$.config') END`
	if !withEnv {
		envCols = `NULL, NULL`
	}
	// database/sql rather than GORM's reflection: this reads every run of
	// a series, and scanning was most of the time.
	rs, err := s.sqlDB.QueryContext(ctx, `SELECT id, label, workload, status, source, warmup, meta, run_at, series, created_at,
		`+envCols+`
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
	index := make(map[uint]int, len(rows))
	for i := range rows {
		index[rows[i].ID] = i
	}
	// database/sql again: a regressions scan reads every headline metric
	// of every run, and GORM's scanning was most of its time.
	args := []any{series, rundoc.StatusSucceeded}
	marks := make([]byte, 0, 2*len(metrics))
	for i, m := range metrics {
		if i > 0 {
			marks = append(marks, ',')
		}
		marks = append(marks, '?')
		args = append(args, m)
	}
	ms, err := s.sqlDB.QueryContext(ctx, `SELECT run_id, name, value, unit, better, help FROM metrics
		WHERE run_id IN (SELECT id FROM runs WHERE series = ? AND status = ?) AND name IN (`+string(marks)+`)
		ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: series %q: metrics %v: %w", series, metrics, err)
	}
	defer ms.Close()
	for ms.Next() {
		var runID uint
		var m rundoc.Metric
		if err := ms.Scan(&runID, &m.Name, &m.Value, &m.Unit, &m.Better, &m.Help); err != nil {
			return nil, fmt.Errorf("store: series %q: metrics %v: %w", series, metrics, err)
		}
		i, ok := index[runID]
		if !ok {
			continue
		}
		r := &rows[i]
		if _, dup := r.Metric(m.Name); dup { // a run records a metric once; keep the first if not
			continue
		}
		r.Metrics = append(r.Metrics, m)
	}
	if err := ms.Err(); err != nil {
		return nil, fmt.Errorf("store: series %q: metrics %v: %w", series, metrics, err)
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
	// of its last succeeded run stored (a series' runs share one, but for
	// imports named by hand).
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
// from indexes alone.
func (s *Store) ListSeries(ctx context.Context) ([]SeriesInfo, error) {
	// Two covering indexes and no table row: the series' runs from
	// idx_runs_series_time, each checked as succeeded (and its workload
	// read) in idx_runs_list_status. Runs are rows of several KiB, and
	// reading each one's status from the table took 60 ms for 20,000
	// runs against 10 ms this way. SQLite gives the bare column
	// (workload) from the row MAX(id) picked: the last run stored.
	rs, err := s.sqlDB.QueryContext(ctx, `SELECT a.series, COUNT(*), MAX(a.id), SUM(a.id), b.workload
		FROM runs a INDEXED BY idx_runs_series_time CROSS JOIN runs b INDEXED BY idx_runs_list_status
		WHERE a.series > '' AND b.status = ? AND b.id = a.id
		GROUP BY a.series ORDER BY a.series`, rundoc.StatusSucceeded)
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
