package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
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
	return environmentOf(f, config, configs)
}

// historyFields is what envPaths extract, for decoding a document in Go
// where the database cannot extract them (PostgreSQL: the column is
// text, and a cast to json fails the whole query on one bad document).
type historyFields struct {
	KbenchVersion  json.RawMessage `json:"kbench_version"`
	KbenchBuild    json.RawMessage `json:"kbench_build"`
	GoVersion      json.RawMessage `json:"go_version"`
	KafkaGoVersion json.RawMessage `json:"kafka_go_version"`
	CPUModel       json.RawMessage `json:"cpu_model"`
	Cores          json.RawMessage `json:"cores"`
	Kernel         json.RawMessage `json:"kernel"`
	Host           json.RawMessage `json:"host"`
	Broker         json.RawMessage `json:"broker"`
	Target         struct {
		ReleaseGuess json.RawMessage `json:"release_guess"`
	} `json:"target"`
	Config json.RawMessage `json:"config"`
}

// documentEnvironment builds a run's history environment from its whole
// stored document as the SQLite query does from the extracted fields:
// text that is not JSON gives none (json_valid), and a field of another
// shape than expected (a target that is no object) is absent, as
// json_extract has it.
func documentEnvironment(doc string, configs map[string]*rundoc.Config) (*rundoc.Environment, bool, error) {
	if !json.Valid([]byte(doc)) {
		return nil, false, nil
	}
	var h historyFields
	// A type mismatch leaves that field out and fills the rest, which is
	// what json_extract gives for it.
	_ = json.Unmarshal([]byte(doc), &h)
	f := [10]json.RawMessage{h.KbenchVersion, h.KbenchBuild, h.GoVersion, h.KafkaGoVersion, h.CPUModel,
		h.Cores, h.Kernel, h.Host, h.Broker, h.Target.ReleaseGuess}
	var config sql.NullString
	if len(h.Config) > 0 && string(h.Config) != "null" {
		config = sql.NullString{String: string(h.Config), Valid: true}
	}
	e, err := environmentOf(f, config, configs)
	return e, true, err
}

// environmentOf is historyEnvironment's decoding of the fields.
func environmentOf(f [10]json.RawMessage, config sql.NullString, configs map[string]*rundoc.Config) (*rundoc.Environment, error) {
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
// then id), each with its one metric named metric (if it has it with a
// value; without its help text) and of its environment only what a
// history compares (kbench's, Go's and kafka-go's versions, the machine,
// the target's broker and release guess, the configuration; Documents
// stay empty), and no output, series points or profiles: what a history
// of that metric needs. The runs are read from idx_runs_series_time and
// the metrics from idx_metric_run_name, so the cost follows the series'
// length, not the database's. A series without any run is ErrNotFound;
// one whose runs all failed gives none.
func (s *Store) SeriesRuns(ctx context.Context, series, metric string) ([]rundoc.Run, error) {
	return s.seriesRuns(ctx, series, []string{metric}, true)
}

// SeriesRunsMetrics is SeriesRuns with each run's metrics of the given
// names (those it has, in that order) and of the run only what
// history.Build reads to find change points (ID, Status, Warmup, Time;
// SeriesKey), without its metadata: a regressions scan reads a series
// once for all its headline metrics, needs no marks of what else changed
// (reading the environments was half its cost) and reads the commits of
// the few runs at change points with RunsMeta (the metadata, the last
// column of rows of several KiB, cost as much to read as the rest).
func (s *Store) SeriesRunsMetrics(ctx context.Context, series string, metrics []string) ([]rundoc.Run, error) {
	return s.seriesRuns(ctx, series, metrics, false)
}

// seriesRuns reads a series' runs as one row per run, its metrics'
// values as columns of it (scalar subqueries on
// idx_metrics_run_name_value, which holds them). A regressions scan of
// 100 series of 200 runs read half a million values as one row per
// metric, and each row and column read through the driver costs about a
// microsecond; one row per run with the values as numbers is a fifth of
// the rows. Units and directions are read once per series: a metric
// recorded with one unit and direction throughout (always, for kbench's
// own) gets them from there, and only a metric whose unit or direction
// changed within the series reads them run by run. A run holds one
// metric of a name (encodeOutcome keeps the first).
func (s *Store) seriesRuns(ctx context.Context, series string, metrics []string, withEnv bool) ([]rundoc.Run, error) {
	kinds, err := s.seriesMetricKinds(ctx, series, metrics)
	if err != nil {
		return nil, fmt.Errorf("store: series %q: %w", series, err)
	}
	cols := "r.id, r.warmup, r.run_at"
	if withEnv {
		cols += `, r.meta, r.label, r.workload, r.source, r.created_at`
		if s.pg {
			// The whole document, decoded in Go (documentEnvironment).
			cols += `, r.environment, NULL`
		} else {
			cols += `,
		CASE WHEN json_valid(r.environment) THEN json_extract(r.environment, ` + envPaths + `) END,
		CASE WHEN json_valid(r.environment) THEN json_extract(r.environment, '$.config') END`
		}
	}
	var args []any
	for _, m := range metrics {
		cols += `, (SELECT m.value FROM metrics m WHERE m.run_id = r.id AND m.name = ?)`
		args = append(args, m)
		if kinds[m].mixed {
			cols += `, (SELECT m.unit FROM metrics m WHERE m.run_id = r.id AND m.name = ?)` +
				`, (SELECT m.better FROM metrics m WHERE m.run_id = r.id AND m.name = ?)`
			args = append(args, m, m)
		}
	}
	args = append(args, series, rundoc.StatusSucceeded)
	// database/sql rather than GORM's reflection: this reads every run of
	// a series, and scanning was most of the time. Without INDEXED BY,
	// SQLite's planner (having no statistics) may walk every succeeded
	// run by status instead.
	// PostgreSQL's planner has statistics and picks the index itself.
	from := "runs r INDEXED BY idx_runs_series_status"
	if s.pg {
		from = "runs r"
	}
	rs, err := s.sqlDB.QueryContext(ctx, s.rebind(`SELECT `+cols+` FROM `+from+`
		WHERE r.series = ? AND r.status = ? ORDER BY r.run_at, r.id`), args...)
	if err != nil {
		return nil, fmt.Errorf("store: series %q: %w", series, err)
	}
	defer rs.Close()
	type metricCols struct {
		value        sql.NullFloat64
		unit, better sql.NullString
	}
	var (
		d           rundoc.Run
		meta        Meta
		env, config sql.NullString
		values      = make([]metricCols, len(metrics))
		dest        = []any{&d.ID, &d.Warmup, &d.Time}
		configs     = map[string]*rundoc.Config{}
		rows        = []rundoc.Run{}
	)
	if withEnv {
		dest = append(dest, &meta, &d.Label, &d.Workload, &d.Source, &d.CreatedAt, &env, &config)
	}
	for i, m := range metrics {
		dest = append(dest, &values[i].value)
		if kinds[m].mixed {
			dest = append(dest, &values[i].unit, &values[i].better)
		}
	}
	for rs.Next() {
		d = rundoc.Run{Status: rundoc.StatusSucceeded, SeriesKey: series}
		meta, env, config = nil, sql.NullString{}, sql.NullString{}
		if err := rs.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: series %q: %w", series, err)
		}
		d.Meta = meta.owned()
		switch {
		case env.Valid && s.pg:
			var ok bool
			var err error
			if d.Environment, ok, err = documentEnvironment(env.String, configs); ok {
				d.DocumentErr = err
			}
		case env.Valid:
			// A document this code cannot read is no environment, as
			// SetDocuments has it: the run gets no marks.
			d.Environment, d.DocumentErr = historyEnvironment(env.String, config, configs)
		}
		for i, name := range metrics {
			// NULL: the run has no such metric, or SQLite stored its
			// value as NULL (a NaN): no point either way.
			if !values[i].value.Valid {
				continue
			}
			m := rundoc.Metric{Name: name, Value: values[i].value.Float64, Unit: kinds[name].unit, Better: kinds[name].better}
			if kinds[name].mixed {
				m.Unit, m.Better = values[i].unit.String, rundoc.Better(values[i].better.String)
			}
			d.Metrics = append(d.Metrics, m)
		}
		rows = append(rows, d)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: series %q: %w", series, err)
	}
	if len(rows) == 0 {
		var n int64
		if err := s.db.WithContext(ctx).Model(&Run{}).Where("series = ?", series).Limit(1).Count(&n).Error; err != nil {
			return nil, fmt.Errorf("store: series %q: %w", series, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("store: series %q: %w", series, ErrNotFound)
		}
	}
	return rows, nil
}

// RunsMeta returns the metadata of the runs given that exist and have
// any, by id.
func (s *Store) RunsMeta(ctx context.Context, ids []uint) (map[uint]map[string]string, error) {
	out := make(map[uint]map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rs, err := s.sqlDB.QueryContext(ctx, s.rebind(`SELECT id, meta FROM runs WHERE id IN (`+marks(len(ids))+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("store: metadata of runs %v: %w", ids, err)
	}
	defer rs.Close()
	for rs.Next() {
		var id uint
		var meta Meta
		if err := rs.Scan(&id, &meta); err != nil {
			return nil, fmt.Errorf("store: metadata of runs %v: %w", ids, err)
		}
		if m := meta.owned(); m != nil {
			out[id] = m
		}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: metadata of runs %v: %w", ids, err)
	}
	return out, nil
}

// marks is n placeholders, comma-separated, for an IN list.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// metricKind is the unit and direction a series' runs recorded a metric
// with; mixed when they recorded it with more than one.
type metricKind struct {
	unit   string
	better rundoc.Better
	mixed  bool
}

// seriesMetricKinds reads the units and directions the succeeded runs of
// a series recorded the metrics with, aggregated in the database.
func (s *Store) seriesMetricKinds(ctx context.Context, series string, metrics []string) (map[string]metricKind, error) {
	if len(metrics) == 0 {
		return nil, nil
	}
	args := []any{series, rundoc.StatusSucceeded}
	for _, m := range metrics {
		args = append(args, m)
	}
	rs, err := s.sqlDB.QueryContext(ctx, s.rebind(`SELECT DISTINCT m.name, m.unit, m.better
		FROM runs r JOIN metrics m ON m.run_id = r.id
		WHERE r.series = ? AND r.status = ? AND m.name IN (`+marks(len(metrics))+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("units of %v: %w", metrics, err)
	}
	defer rs.Close()
	kinds := make(map[string]metricKind, len(metrics))
	for rs.Next() {
		var name string
		var k metricKind
		if err := rs.Scan(&name, &k.unit, &k.better); err != nil {
			return nil, fmt.Errorf("units of %v: %w", metrics, err)
		}
		if _, seen := kinds[name]; seen {
			k = metricKind{mixed: true}
		}
		kinds[name] = k
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("units of %v: %w", metrics, err)
	}
	return kinds, nil
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

// SeriesInfo is one series as ListSeries gives it (defined in rundoc,
// so that readers of series through an interface link no database).
type SeriesInfo = rundoc.SeriesInfo

// ListSeries returns every series that has a succeeded run, by key, read
// from one covering index, idx_runs_series_status: runs are rows of
// several KiB, and reading each one's status from the table took 60 ms
// for 20,000 runs against 10 ms from an index.
func (s *Store) ListSeries(ctx context.Context) ([]SeriesInfo, error) {
	return s.listSeries(ctx, nil)
}
