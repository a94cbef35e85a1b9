package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migrationsTable is gormigrate's table of applied migration IDs. It has
// kbench's name rather than gormigrate's default "migrations", so that
// another application's migrations table is never taken for kbench's.
const migrationsTable = "kbench_migrations"

// SchemaVersion is the ID of the last migration this kbench knows: the
// schema version it writes. A database whose migrations table holds an ID
// not in migrations was written by a newer kbench and is refused.
const SchemaVersion = "0014_fleets"

// migrations are the schema's versions, oldest first. IDs sort in the
// order they apply. A migration is never edited once released: each
// declares the tables it creates or changes as they are at that version
// (its own struct types, not the live models), so it does the same thing
// on every database whenever it runs. TestMigrationsMakeTodaysSchema checks
// that the live models match what the migrations build.
var migrations = []*gormigrate.Migration{
	{ID: "0001_initial", Migrate: migrate0001},
	{ID: "0002_ab_batch", Migrate: migrate0002},
	{ID: "0003_meta_series", Migrate: migrate0003},
	{ID: "0004_report_split", Migrate: migrate0004},
	{ID: "0005_history_indexes", Migrate: migrate0005},
	{ID: "0006_profile_blobs", Migrate: migrate0006},
	{ID: "0007_workers", Migrate: migrate0007},
	{ID: "0008_run_events", Migrate: migrate0008},
	{ID: "0009_sweeps", Migrate: migrate0009},
	{ID: "0010_report_sweep", Migrate: migrate0010},
	{ID: "0011_worker_tools", Migrate: migrate0011},
	{ID: "0012_histograms", Migrate: migrate0012},
	{ID: "0013_slos", Migrate: migrate0013},
	{ID: "0014_fleets", Migrate: migrate0014},
}

// migrationOptions: every migration that has not run yet runs in one
// transaction (SQLite's and PostgreSQL's DDL is transactional), so a failure leaves the
// database as it was; unknown IDs fail the migration even if a newer kbench
// migrated the file between inspect and migrate.
func migrationOptions() *gormigrate.Options {
	return &gormigrate.Options{
		TableName:                 migrationsTable,
		IDColumnName:              "id",
		IDColumnSize:              255,
		UseTransaction:            true,
		ValidateUnknownMigrations: true,
	}
}

// isPostgres reports whether db is a PostgreSQL database: the few
// statements SQLite and PostgreSQL spell differently choose by it.
func isPostgres(db *gorm.DB) bool { return db.Dialector.Name() == "postgres" }

// migrate brings db's schema to SchemaVersion.
func migrate(db *gorm.DB) error {
	if err := gormigrate.New(db, migrationOptions(), migrations).Migrate(); err != nil {
		return fmt.Errorf("migrate to schema %s: %w", SchemaVersion, err)
	}
	return nil
}

// schema0001 returns the tables of schema 0001_initial, the schema kbench
// had before it recorded versions. inspect compares an unversioned
// database's columns with these, and migrate0001 creates them; on a
// database from before versions, which has them, it changes nothing.
func schema0001() []any {
	type Metric struct {
		ID     uint   `gorm:"primaryKey"`
		RunID  uint   `gorm:"index:idx_metric_run_name"`
		Name   string `gorm:"index:idx_metric_run_name;size:100"`
		Value  float64
		Unit   string `gorm:"size:32"`
		Better string `gorm:"size:8"`
		Help   string
	}
	type SeriesPoint struct {
		ID            uint `gorm:"primaryKey"`
		RunID         uint `gorm:"index:idx_series_run_seq,priority:1"`
		Seq           int  `gorm:"index:idx_series_run_seq,priority:2"`
		T             float64
		Records       int64
		Bytes         int64
		RecordsPerSec float64
		MBPerSec      float64
		LatencyAvgMs  float64
		LatencyMaxMs  float64
		CPUPercent    float64
	}
	type Profile struct {
		ID        uint   `gorm:"primaryKey"`
		RunID     uint   `gorm:"index"`
		Role      string `gorm:"size:16"`
		Kind      string `gorm:"size:16"`
		Bytes     int64
		Samples   int64
		SHA256    string `gorm:"size:64"`
		Uploaded  bool
		Data      []byte
		CreatedAt time.Time
	}
	type Run struct {
		ID            uint   `gorm:"primaryKey"`
		Label         string `gorm:"size:200"`
		Workload      string `gorm:"size:32"`
		Status        string `gorm:"size:16"`
		Source        string `gorm:"size:16"`
		Spec          string
		Fingerprint   string `gorm:"index;size:64"`
		Error         string
		GroupID       string `gorm:"size:32"`
		GroupIndex    int
		Warmup        bool
		Environment   string
		Measurement   string
		Output        string
		Complete      bool
		RecordsPerSec *float64
		MBPerSec      *float64
		P99Ms         *float64
		CreatedAt     time.Time `gorm:"index"`
		StartedAt     *time.Time
		FinishedAt    *time.Time
		Metrics       []Metric      `gorm:"constraint:OnDelete:CASCADE"`
		Series        []SeriesPoint `gorm:"constraint:OnDelete:CASCADE"`
		Profiles      []Profile     `gorm:"constraint:OnDelete:CASCADE"`
	}
	type Report struct {
		ID        uint   `gorm:"primaryKey"`
		Slug      string `gorm:"uniqueIndex;size:32"`
		Title     string `gorm:"size:200"`
		Notes     string
		RunIDs    []uint `gorm:"serializer:json"`
		By        string `gorm:"size:8"`
		CreatedAt time.Time
	}
	type ReportRun struct {
		ID       uint `gorm:"primaryKey"`
		ReportID uint `gorm:"index"`
		RunID    uint `gorm:"index"`
	}
	return []any{&Run{}, &Metric{}, &SeriesPoint{}, &Profile{}, &Report{}, &ReportRun{}}
}

// runListIndexes0001 serve ListRuns, its count and the queue queries. Each
// filter column has an index that leads with it, then id, so the runs of
// one filter value are read newest first without a sort; the other filter
// columns follow, so that a combined filter (label and status, say) is
// checked in the index too, and the runs table, whose rows hold large
// outputs, is only read for the page itself. The index of id alone does
// the same for the unfiltered list.
var runListIndexes0001 = []struct{ name, columns string }{
	{"idx_runs_list_all", "id"},
	{"idx_runs_list_status", "status, id, label, workload, group_id"},
	{"idx_runs_list_label", "label, id, status, workload, group_id"},
	{"idx_runs_list_workload", "workload, id, status, label, group_id"},
	{"idx_runs_list_group", "group_id, id, status, label, workload"},
}

// migrate0001 creates schema 0001_initial. AutoMigrate and CREATE INDEX IF
// NOT EXISTS leave a database that already has it (one from before
// versions) as it is.
func migrate0001(tx *gorm.DB) error {
	if err := tx.AutoMigrate(schema0001()...); err != nil {
		return err
	}
	for _, ix := range runListIndexes0001 {
		if err := tx.Exec("CREATE INDEX IF NOT EXISTS " + ix.name + " ON runs (" + ix.columns + ")").Error; err != nil {
			return fmt.Errorf("index %s: %w", ix.name, err)
		}
	}
	return nil
}

// migrate0002 adds runs.ab_batch, the batch of runs queued interleaved
// with each other (store.Run.ABBatch). Runs from before it were queued one
// configuration after another, except the write-path preset's, which
// always interleaved its strategies and named its groups
// "wp-<12 hex digits>-<strategy>": those get "wp-<12 hex digits>" back, the
// batch the preset gives its runs today.
func migrate0002(tx *gorm.DB) error {
	type Run struct {
		ABBatch string `gorm:"column:ab_batch;size:32;not null;default:''"`
	}
	if !tx.Migrator().HasColumn(&Run{}, "ABBatch") {
		if err := tx.Table("runs").Migrator().AddColumn(&Run{}, "ABBatch"); err != nil {
			return fmt.Errorf("add runs.ab_batch: %w", err)
		}
	}
	const wpGroup = "wp-" + "[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]" + "-?*"
	stmt, pattern := "UPDATE runs SET ab_batch = substr(group_id, 1, 15) WHERE ab_batch = '' AND group_id GLOB ?", wpGroup
	if isPostgres(tx) {
		// PostgreSQL has no GLOB: the same pattern as a regular
		// expression (GLOB is case-sensitive, as ~ is).
		stmt, pattern = "UPDATE runs SET ab_batch = substr(group_id, 1, 15) WHERE ab_batch = '' AND group_id ~ ?", "^wp-[0-9a-f]{12}-.+$"
	}
	if err := tx.Exec(stmt, pattern).Error; err != nil {
		return fmt.Errorf("write-path batches: %w", err)
	}
	return nil
}

// migrate0003 adds a run's metadata (runs.meta, a JSON object, "" for
// none), when it happened (runs.run_at) and its series (runs.series), with
// indexes for histories: run_at (then id, for a stable order), and
// series, run_at, id, so that a series reads in time order from the
// index. Runs from before it have no
// metadata, so no branch: they get run_at from started_at (created_at if
// they never started), and the series rundoc gives a run without a
// branch — their spec fingerprint, or for an import
// "imported:WORKLOAD:LABEL" with '%' and '@' escaped — computed here in
// SQL, so that this migration does the same whatever the code becomes.
func migrate0003(tx *gorm.DB) error {
	type Run struct {
		Meta   string     `gorm:"column:meta;not null;default:''"`
		RunAt  *time.Time `gorm:"column:run_at"`
		Series string     `gorm:"column:series;not null;default:''"`
	}
	for _, col := range []string{"Meta", "RunAt", "Series"} {
		if !tx.Table("runs").Migrator().HasColumn(&Run{}, col) {
			if err := tx.Table("runs").Migrator().AddColumn(&Run{}, col); err != nil {
				return fmt.Errorf("add runs.%s: %w", col, err)
			}
		}
	}
	if err := tx.Exec("UPDATE runs SET run_at = COALESCE(started_at, created_at) WHERE run_at IS NULL").Error; err != nil {
		return fmt.Errorf("run times: %w", err)
	}
	if err := tx.Exec(`UPDATE runs SET series = CASE WHEN source = 'imported'
		THEN 'imported:' || COALESCE(workload, '') || ':' || replace(replace(COALESCE(label, ''), '%', '%25'), '@', '%40')
		ELSE COALESCE(fingerprint, '') END WHERE series = ''`).Error; err != nil {
		return fmt.Errorf("series: %w", err)
	}
	for _, ix := range []struct{ name, columns string }{
		{"idx_runs_run_at", "run_at, id"},
		{"idx_runs_series_time", "series, run_at, id"},
	} {
		if err := tx.Exec("CREATE INDEX IF NOT EXISTS " + ix.name + " ON runs (" + ix.columns + ")").Error; err != nil {
			return fmt.Errorf("index %s: %w", ix.name, err)
		}
	}
	return nil
}

// migrate0004 adds reports.split_at (store.Report.At): a before/after
// report of a change point keeps the run its columns split at, since the
// runs alone do not say where the change was. Reports from before it
// compare by run, label or group and get 0.
func migrate0004(tx *gorm.DB) error {
	type Report struct {
		At uint `gorm:"column:split_at;not null;default:0"`
	}
	if !tx.Migrator().HasColumn(&Report{}, "At") {
		if err := tx.Migrator().AddColumn(&Report{}, "At"); err != nil {
			return fmt.Errorf("add reports.split_at: %w", err)
		}
	}
	return nil
}

// migrate0005 replaces two indexes with ones that hold what histories and
// the regressions scan read, so that those read no table row but the
// run's metadata: idx_runs_series_status (series, status, run_at, id,
// warmup, workload) for a series' succeeded runs in time order and the
// list of series, and idx_metrics_run_name_value (run_id, name, value,
// unit, better) for a run's metrics by name. The runs table's rows hold
// outputs and environments of several KiB, and the metrics' help texts,
// so reading a column from them cost more than the index walk; over 100
// series of 200 runs the scan read 1.1 s of rows this way against 0.2 s
// from these. The indexes they replace are their prefixes.
func migrate0005(tx *gorm.DB) error {
	for _, stmt := range []string{
		"CREATE INDEX IF NOT EXISTS idx_runs_series_status ON runs (series, status, run_at, id, warmup, workload)",
		"DROP INDEX IF EXISTS idx_runs_series_time",
		"CREATE INDEX IF NOT EXISTS idx_metrics_run_name_value ON metrics (run_id, name, value, unit, better)",
		"DROP INDEX IF EXISTS idx_metric_run_name",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// migrate0006 stores each distinct profile once: profile_blobs holds the
// bytes (data) and their size (bytes) under their SHA-256, the primary
// key, and profiles name their blob by sha256 (indexed, for the check
// that a blob is still named), with a foreign key, instead of holding
// bytes and data themselves. Each profile's checksum is computed here
// from its data, not taken from its row: the key must be the content's,
// and a row's sha256 was whatever the caller who stored it gave. Profiles
// are moved one at a time, so that memory holds one profile, not all.
//
// On SQLite the foreign key is added by rebuilding the table (SQLite has
// no ADD CONSTRAINT), which drops its indexes: they are made again, and
// its id sequence is kept. On PostgreSQL the dropped columns' space is
// only reclaimed by a VACUUM FULL, which cannot run in a migration's
// transaction.
func migrate0006(tx *gorm.DB) error {
	type Profile struct {
		ID     uint   `gorm:"primaryKey"`
		SHA256 string `gorm:"size:64"`
	}
	type ProfileBlob struct {
		SHA256   string `gorm:"primaryKey;size:64"`
		Bytes    int64
		Data     []byte
		Profiles []Profile `gorm:"foreignKey:SHA256;references:SHA256"`
	}
	if err := tx.AutoMigrate(&ProfileBlob{}); err != nil {
		return fmt.Errorf("create profile_blobs: %w", err)
	}
	var ids []uint
	if err := tx.Table("profiles").Order("id").Pluck("id", &ids).Error; err != nil {
		return fmt.Errorf("profiles: %w", err)
	}
	for _, id := range ids {
		var row struct {
			SHA256 string
			Data   []byte
		}
		if err := tx.Raw("SELECT sha256, data FROM profiles WHERE id = ?", id).Scan(&row).Error; err != nil {
			return fmt.Errorf("profile %d: %w", id, err)
		}
		sum := sha256.Sum256(row.Data)
		key := hex.EncodeToString(sum[:])
		if row.Data == nil {
			row.Data = []byte{} // an empty profile's data is no bytes, not NULL
		}
		if err := tx.Exec("INSERT INTO profile_blobs (sha256, bytes, data) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
			key, len(row.Data), row.Data).Error; err != nil {
			return fmt.Errorf("profile %d: blob: %w", id, err)
		}
		if key != row.SHA256 {
			if err := tx.Exec("UPDATE profiles SET sha256 = ? WHERE id = ?", key, id).Error; err != nil {
				return fmt.Errorf("profile %d: checksum: %w", id, err)
			}
		}
	}
	for _, col := range []string{"data", "bytes"} {
		if err := tx.Exec("ALTER TABLE profiles DROP COLUMN " + col).Error; err != nil {
			return fmt.Errorf("drop profiles.%s: %w", col, err)
		}
	}
	// SQLite's rebuild starts the table's AUTOINCREMENT sequence again
	// from its largest id: keep the old one, so that the id of a profile
	// deleted before never names another.
	var seq []int64
	if !isPostgres(tx) {
		if err := tx.Raw("SELECT seq FROM sqlite_sequence WHERE name = 'profiles'").Scan(&seq).Error; err != nil {
			return fmt.Errorf("profiles' id sequence: %w", err)
		}
	}
	if err := tx.Migrator().CreateConstraint(&ProfileBlob{}, "Profiles"); err != nil {
		return fmt.Errorf("profiles' foreign key to profile_blobs: %w", err)
	}
	if len(seq) == 1 {
		if err := tx.Exec("DELETE FROM sqlite_sequence WHERE name = 'profiles'").Error; err != nil {
			return fmt.Errorf("profiles' id sequence: %w", err)
		}
		if err := tx.Exec("INSERT INTO sqlite_sequence (name, seq) VALUES ('profiles', ?)", seq[0]).Error; err != nil {
			return fmt.Errorf("profiles' id sequence: %w", err)
		}
	}
	for _, stmt := range []string{
		"CREATE INDEX IF NOT EXISTS idx_profiles_run_id ON profiles (run_id)",
		"CREATE INDEX IF NOT EXISTS idx_profiles_sha256 ON profiles (sha256)",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// migrate0007 adds the workers table (one row per worker process: the
// server's local worker or a kbench worker on another machine, with the
// names of the clusters it names) and, on
// runs, the queue a run waits in (runs.queue, "local" for every run from
// before it, which is the queue the server's own worker always took them
// from), the host of the worker that took it (runs.worker, "" before) and
// that worker's row (runs.worker_id). idx_runs_queue_status serves
// recovery at a worker's start: its queue's queued and running runs.
func migrate0007(tx *gorm.DB) error {
	type Worker struct {
		ID          uint   `gorm:"primaryKey"`
		Host        string `gorm:"not null;default:''"`
		Queue       string `gorm:"not null;default:''"`
		PID         int    `gorm:"column:pid;not null;default:0"`
		Version     string `gorm:"not null;default:''"`
		Clusters    string `gorm:"not null;default:''"`
		StartedAt   time.Time
		HeartbeatAt time.Time `gorm:"index"`
		StoppedAt   *time.Time
	}
	if err := tx.AutoMigrate(&Worker{}); err != nil {
		return fmt.Errorf("workers: %w", err)
	}
	type Run struct {
		Queue    string `gorm:"column:queue;not null;default:'local'"`
		Worker   string `gorm:"column:worker;not null;default:''"`
		WorkerID *uint  `gorm:"column:worker_id"`
	}
	for _, col := range []string{"Queue", "Worker", "WorkerID"} {
		if !tx.Table("runs").Migrator().HasColumn(&Run{}, col) {
			if err := tx.Table("runs").Migrator().AddColumn(&Run{}, col); err != nil {
				return fmt.Errorf("add runs.%s: %w", col, err)
			}
		}
	}
	if err := tx.Exec("CREATE INDEX IF NOT EXISTS idx_runs_queue_status ON runs (queue, status, id)").Error; err != nil {
		return fmt.Errorf("index idx_runs_queue_status: %w", err)
	}
	return nil
}

// migrate0008 creates run_events, where the process executing a run
// shares its live events with the servers of a PostgreSQL store (see
// AppendRunEvents). Its rows live for minutes: PruneRunEvents removes
// those of runs that have ended. created_at is the database's clock, so
// that pruning compares times written on one clock whatever the
// machines' clocks say.
func migrate0008(tx *gorm.DB) error {
	type RunEvent struct {
		ID        uint64    `gorm:"primaryKey;index:idx_run_events_run,priority:2"`
		RunID     uint      `gorm:"not null;index:idx_run_events_run,priority:1"`
		Origin    string    `gorm:"not null;default:''"`
		Data      string    `gorm:"not null;default:''"`
		CreatedAt time.Time `gorm:"not null;default:CURRENT_TIMESTAMP"`
	}
	if err := tx.AutoMigrate(&RunEvent{}); err != nil {
		return fmt.Errorf("run_events: %w", err)
	}
	return nil
}

// migrate0009 creates sweeps (a latency-vs-throughput sweep: its
// configurations, target rates, repetitions and phase) and sweep_runs
// (which run measures which configuration at which rate). A sweep's
// phase changes once, from max-rate to rates (or done when no
// configuration had a maximum), in the transaction that stores its
// second phase's runs; idx_sweeps_phase finds the sweeps still waiting
// for their first phase.
func migrate0009(tx *gorm.DB) error {
	type Sweep struct {
		ID          string `gorm:"primaryKey;size:32"`
		Phase       string `gorm:"size:16;not null;default:'';index:idx_sweeps_phase"`
		Configs     string `gorm:"not null;default:''"`
		RatesPct    string `gorm:"not null;default:''"`
		Repetitions int    `gorm:"not null;default:0"`
		MaxRates    string `gorm:"not null;default:''"`
		CreatedAt   time.Time
		AdvancedAt  *time.Time
	}
	type SweepRun struct {
		ID         uint    `gorm:"primaryKey"`
		SweepID    string  `gorm:"size:32;not null;index:idx_sweep_runs_sweep"`
		RunID      uint    `gorm:"not null;uniqueIndex:idx_sweep_runs_run"`
		Config     int     `gorm:"not null;default:0"`
		Phase      int     `gorm:"not null;default:0"`
		RatePct    float64 `gorm:"not null;default:0"`
		TargetRate float64 `gorm:"not null;default:0"`
	}
	if err := tx.AutoMigrate(&Sweep{}, &SweepRun{}); err != nil {
		return fmt.Errorf("sweeps: %w", err)
	}
	return nil
}

// migrate0010 adds reports.sweep_id: the latency-vs-throughput sweep a
// report shows ("" for none, every report before it). Like the runs, the
// sweep is stored by reference, its figures rebuilt from its runs; the
// index lets DeleteRun and PruneRuns find the reports that hold a sweep's
// runs back.
func migrate0010(tx *gorm.DB) error {
	type Report struct {
		SweepID string `gorm:"size:32;not null;default:'';index:idx_reports_sweep"`
	}
	if !tx.Table("reports").Migrator().HasColumn(&Report{}, "SweepID") {
		if err := tx.Table("reports").Migrator().AddColumn(&Report{}, "SweepID"); err != nil {
			return fmt.Errorf("add reports.sweep_id: %w", err)
		}
	}
	if err := tx.Exec("CREATE INDEX IF NOT EXISTS idx_reports_sweep ON reports (sweep_id)").Error; err != nil {
		return fmt.Errorf("index idx_reports_sweep: %w", err)
	}
	return nil
}

// migrate0011 adds workers.tools: the Kafka tools a worker offers
// (--tool NAME=PATH), "NAME:KIND" each, comma-separated, without paths.
func migrate0011(tx *gorm.DB) error {
	type Worker struct {
		Tools string `gorm:"not null;default:''"`
	}
	if !tx.Table("workers").Migrator().HasColumn(&Worker{}, "Tools") {
		if err := tx.Table("workers").Migrator().AddColumn(&Worker{}, "Tools"); err != nil {
			return fmt.Errorf("add workers.tools: %w", err)
		}
	}
	return nil
}

// migrate0012 creates histograms (a run's whole-window latency
// histograms, one per kind) and histogram_logs (its interval histograms,
// one HdrHistogram log per run), both deleted with their run, and adds
// the interval percentiles to series_points, NULL in the points of
// runs stored before: those runs keep their summaries.
func migrate0012(tx *gorm.DB) error {
	type Histogram struct {
		ID     uint   `gorm:"primaryKey"`
		RunID  uint   `gorm:"not null;uniqueIndex:idx_histograms_run_kind,priority:1"`
		Kind   string `gorm:"size:40;not null;uniqueIndex:idx_histograms_run_kind,priority:2"`
		StartS float64
		EndS   float64
		Count  int64
		Data   string `gorm:"not null"`
	}
	type HistogramLog struct {
		RunID   uint `gorm:"primaryKey;autoIncrement:false"`
		Entries int
		Bytes   int64
		Data    string `gorm:"not null"`
	}
	// Run declares only the relations, for their foreign keys: AutoMigrate
	// adds no column to runs from it.
	type Run struct {
		ID           uint          `gorm:"primaryKey"`
		Histograms   []Histogram   `gorm:"constraint:OnDelete:CASCADE"`
		HistogramLog *HistogramLog `gorm:"constraint:OnDelete:CASCADE"`
	}
	if err := tx.AutoMigrate(&Run{}, &Histogram{}, &HistogramLog{}); err != nil {
		return fmt.Errorf("histograms: %w", err)
	}
	type SeriesPoint struct {
		LatencyP50Ms      float64
		LatencyP99Ms      float64
		LatencyP999Ms     float64
		PercentilesApprox bool
	}
	for _, col := range []string{"LatencyP50Ms", "LatencyP99Ms", "LatencyP999Ms", "PercentilesApprox"} {
		m := tx.Table("series_points").Migrator()
		if m.HasColumn(&SeriesPoint{}, col) {
			continue
		}
		if err := m.AddColumn(&SeriesPoint{}, col); err != nil {
			return fmt.Errorf("add series_points.%s: %w", col, err)
		}
	}
	return nil
}

// migrate0013 creates slos (a search for the highest rate a latency
// target allows: its configuration, settings, phase, the step it is at
// and its answer) and slo_runs (which run measures which probe), and adds
// reports.slo_id, the search a report shows. A search advances by a
// conditional UPDATE of its steps in the transaction that stores its next
// runs; idx_slos_phase finds the searches still searching.
func migrate0013(tx *gorm.DB) error {
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
		EndedAt   *time.Time
	}
	type SLORun struct {
		ID    uint    `gorm:"primaryKey"`
		SLOID string  `gorm:"column:slo_id;size:32;not null;index:idx_slo_runs_slo"`
		RunID uint    `gorm:"not null;uniqueIndex:idx_slo_runs_run"`
		Probe int     `gorm:"not null;default:0"`
		Rate  float64 `gorm:"not null;default:0"`
		Max   bool    `gorm:"not null;default:false"`
		Step  int     `gorm:"not null;default:0"`
	}
	if err := tx.Table("slos").AutoMigrate(&SLO{}); err != nil {
		return fmt.Errorf("slos: %w", err)
	}
	if err := tx.Table("slo_runs").AutoMigrate(&SLORun{}); err != nil {
		return fmt.Errorf("slo_runs: %w", err)
	}
	type Report struct {
		SLOID string `gorm:"column:slo_id;size:32;not null;default:''"`
	}
	if !tx.Table("reports").Migrator().HasColumn(&Report{}, "SLOID") {
		if err := tx.Table("reports").Migrator().AddColumn(&Report{}, "SLOID"); err != nil {
			return fmt.Errorf("add reports.slo_id: %w", err)
		}
	}
	if err := tx.Exec("CREATE INDEX IF NOT EXISTS idx_reports_slo ON reports (slo_id)").Error; err != nil {
		return fmt.Errorf("index idx_reports_slo: %w", err)
	}
	return nil
}

// migrate0014 creates fleets (a run whose load several workers drive:
// its parent run, its barrier and its phase) and fleet_shards (each
// shard's run, the worker that took it, its check-in and the clock
// offset it measured). The tables are the models of that day, copied
// here so that later changes to the models do not change this migration.
func migrate0014(tx *gorm.DB) error {
	type Fleet struct {
		ID              uint    `gorm:"primaryKey"`
		ParentID        uint    `gorm:"not null;uniqueIndex:idx_fleets_parent"`
		Queue           string  `gorm:"size:64;not null;default:'';index:idx_fleets_queue_phase,priority:1"`
		Phase           string  `gorm:"size:16;not null;default:'';index:idx_fleets_queue_phase,priority:2"`
		Shards          int     `gorm:"not null;default:0"`
		BarrierTimeoutS float64 `gorm:"not null;default:0"`
		LeadS           float64 `gorm:"not null;default:0"`
		FirstCheckInAt  *time.Time
		StartAt         *time.Time
		Error           string `gorm:"not null;default:''"`
		CreatedAt       time.Time
		EndedAt         *time.Time
	}
	type FleetShard struct {
		ID            uint `gorm:"primaryKey"`
		FleetID       uint `gorm:"not null;uniqueIndex:idx_fleet_shards_index,priority:1"`
		ShardIndex    int  `gorm:"not null;default:0;uniqueIndex:idx_fleet_shards_index,priority:2"`
		RunID         uint `gorm:"not null;uniqueIndex:idx_fleet_shards_run"`
		WorkerID      *uint
		CheckedInAt   *time.Time
		ClockOffsetMs *float64
		RoundTripMs   *float64
	}
	if err := tx.Table("fleets").AutoMigrate(&Fleet{}); err != nil {
		return fmt.Errorf("fleets: %w", err)
	}
	if err := tx.Table("fleet_shards").AutoMigrate(&FleetShard{}); err != nil {
		return fmt.Errorf("fleet_shards: %w", err)
	}
	return nil
}
