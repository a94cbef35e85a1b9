package store

import (
	"github.com/kbench/kbench/internal/rundoc"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// listColumns are the runs columns lists load: all but Environment,
// Measurement and Output, which can be large and which only a run's own
// page shows.
var listColumns = []string{
	"id", "label", "workload", "status", "source", "spec", "fingerprint",
	"error", "group_id", "group_index", "warmup", "ab_batch", "complete",
	"records_per_sec", "mb_per_sec", "p99_ms",
	"created_at", "started_at", "finished_at", "meta", "run_at", "series",
	"queue", "worker", "worker_id",
}

// Key figures copied onto a run from its metrics, most specific name first.
var (
	recordsPerSecMetrics = []string{"record-send-rate", "records-consumed-rate", "records-per-sec"}
	mbPerSecMetrics      = []string{"mb-per-sec"}
	p99Metrics           = []string{"record-latency-p99", "latency-p99", "e2e-latency-p99"}
)

// Page sizes of ListRuns.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Batch sizes of multi-row inserts, well below SQLite's limit of 32766
// bound variables per statement.
const (
	runBatch    = 100
	metricBatch = 200
	seriesBatch = 500
)

// CreateRuns stores new runs in one transaction: all of them or none.
// It fills in each run's ID and CreatedAt; Status defaults to queued and
// Source to launched. A run may be created already final, with its
// Metrics, Series and Profiles (an imported result): they are stored with
// it, as FinishRun would store them, so the run is never seen queued
// without them. The children slices themselves are left unchanged.
func (s *Store) CreateRuns(ctx context.Context, runs []*Run) error {
	return s.createRuns(ctx, runs, false, nil)
}

// AppendRuns stores new runs like CreateRuns, and numbers each measured
// run of a repetition group after the group's last run: GroupIndex is
// the largest stored in its group plus one, then plus two, … in the
// order of runs (1 for a new group). The numbering is read and written in
// the same transaction, which holds SQLite's write lock throughout, so two
// appends to one group never give an index twice. Warm-up runs and runs
// without a group get 0.
func (s *Store) AppendRuns(ctx context.Context, runs []*Run) error {
	return s.createRuns(ctx, runs, true, nil)
}

// createRuns is CreateRuns, and AppendRuns when number is set. with, when
// set, runs in the same transaction after the runs are inserted (their
// IDs known): what it writes is stored with them or not at all.
func (s *Store) createRuns(ctx context.Context, runs []*Run, number bool, with func(tx *gorm.DB) error) error {
	// Runs stored queued or running join no series until FinishRun.
	defer func() { s.wroteSeriesIf(slices.ContainsFunc(runs, mayJoinSeries), joinedSeries(runs), true) }()
	if len(runs) == 0 {
		return nil
	}
	for i, r := range runs {
		if err := prepareRun(r); err != nil {
			return fmt.Errorf("store: create runs: run %d: %w", i, err)
		}
	}
	// On failure nothing is stored, so nothing may look stored: keep what
	// the insert fills in to put it back.
	type saved struct {
		createdAt, runAt time.Time
		finishedAt       *time.Time
		groupIndex       int
		series           string
		meta             Meta
	}
	before := make([]saved, len(runs))
	for i, r := range runs {
		before[i] = saved{r.CreatedAt, r.RunAt, r.FinishedAt, r.GroupIndex, r.SeriesKey, r.Meta}
	}
	created := s.now()
	for _, r := range runs {
		if r.Final() && r.FinishedAt == nil {
			r.FinishedAt = &created
		}
		if r.FinishedAt != nil && *r.FinishedAt != s.stored(*r.FinishedAt) {
			at := s.stored(*r.FinishedAt)
			r.FinishedAt = &at
		}
		if r.RunAt.IsZero() {
			r.RunAt = created
		}
		r.RunAt = s.stored(r.RunAt)
		if !r.CreatedAt.IsZero() {
			r.CreatedAt = s.stored(r.CreatedAt)
		}
		if r.StartedAt != nil {
			at := s.stored(*r.StartedAt)
			r.StartedAt = &at
		}
		r.SeriesKey = seriesOf(r)
		if r.Meta == nil {
			// Not nil: GORM writes a nil map of a batch as DEFAULT,
			// which SQLite does not take in a multi-row VALUES.
			r.Meta = Meta{}
		}
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if number {
			if err := numberInGroups(tx, runs); err != nil {
				return err
			}
		}
		// Children are inserted below in batches of their own rather than
		// by GORM's association saving, which puts all of a run's series
		// points in one statement.
		if err := tx.Omit(clause.Associations).CreateInBatches(runs, runBatch).Error; err != nil {
			return err
		}
		// The blobs of every run's profiles first, all in the order of
		// their keys (see blobs.go): run by run, two batches sharing
		// contents could lock them in opposite orders.
		if err := putRunsBlobs(tx, runs); err != nil {
			return err
		}
		for _, r := range runs {
			if err := insertResults(tx, r.ID, r.Metrics, r.Series, r.Profiles); err != nil {
				return fmt.Errorf("run %d: %w", r.ID, err)
			}
			if err := insertHistograms(tx, r.ID, r.Histograms, r.HistogramLog); err != nil {
				return fmt.Errorf("run %d: %w", r.ID, err)
			}
		}
		if with != nil {
			return with(tx)
		}
		return nil
	})
	if err != nil {
		for i, r := range runs {
			r.ID, r.CreatedAt, r.FinishedAt, r.GroupIndex = 0, before[i].createdAt, before[i].finishedAt, before[i].groupIndex
			r.RunAt, r.SeriesKey, r.Meta = before[i].runAt, before[i].series, before[i].meta
		}
		return fmt.Errorf("store: create runs: %w", err)
	}
	return nil
}

// numberInGroups sets the GroupIndex of new runs after the largest their
// group has in tx.
func numberInGroups(tx *gorm.DB, runs []*Run) error {
	if isPostgres(tx) {
		// SQLite's transaction holds the write lock from its start;
		// PostgreSQL's reads do not block each other, so two appends to a
		// group would read the same last index. Lock each group (in one
		// order, so that appends to several never deadlock) until commit.
		var groups []string
		for _, r := range runs {
			if r.GroupID != "" && !r.Warmup {
				groups = append(groups, r.GroupID)
			}
		}
		slices.Sort(groups)
		for _, g := range slices.Compact(groups) {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?, hashtext(?))", advisoryGroups, g).Error; err != nil {
				return fmt.Errorf("lock group %s: %w", g, err)
			}
		}
	}
	next := map[string]int{}
	for _, r := range runs {
		if r.GroupID == "" || r.Warmup {
			r.GroupIndex = 0
			continue
		}
		n, ok := next[r.GroupID]
		if !ok {
			var last *int
			if err := tx.Model(&Run{}).Where("group_id = ?", r.GroupID).Select("MAX(group_index)").Scan(&last).Error; err != nil {
				return fmt.Errorf("last index of group %s: %w", r.GroupID, err)
			}
			if last != nil {
				n = *last
			}
		}
		n++
		next[r.GroupID] = n
		r.GroupIndex = n
	}
	return nil
}

// advisoryGroups is the first key of the PostgreSQL advisory locks that
// serialize appends to a repetition group (the second is the group's
// hash): a number of kbench's own, so as not to meet another
// application's locks.
const advisoryGroups = 0x6b62

// prepareRun fills in a new run's defaults and checks it.
func prepareRun(r *Run) error {
	if r == nil {
		return errors.New("nil run")
	}
	if r.ID != 0 {
		return fmt.Errorf("already has id %d", r.ID)
	}
	if r.Status == "" {
		r.Status = rundoc.StatusQueued
	}
	if !r.Status.Valid() {
		return fmt.Errorf("unknown status %q", r.Status)
	}
	if r.Source == "" {
		r.Source = rundoc.SourceLaunched
	}
	if r.Queue == "" {
		r.Queue = DefaultQueue
	}
	if !r.Source.Valid() {
		return fmt.Errorf("unknown source %q", r.Source)
	}
	if r.Workload != "" && !r.Workload.Valid() {
		return fmt.Errorf("unknown workload %q", r.Workload)
	}
	if err := checkProfiles(r.Profiles); err != nil {
		return err
	}
	if err := rundoc.ValidateMeta(r.Meta); err != nil {
		return err
	}
	if r.SeriesKey != "" {
		if err := rundoc.ValidateSeriesName(r.SeriesKey); err != nil {
			return err
		}
	}
	rps, mbps, p99 := keyFigures(r.Metrics)
	if r.RecordsPerSec == nil {
		r.RecordsPerSec = rps
	}
	if r.MBPerSec == nil {
		r.MBPerSec = mbps
	}
	if r.P99Ms == nil {
		r.P99Ms = p99
	}
	return nil
}

// GetRun returns a run with its metrics (in insertion order), its series
// (by Seq) and its profiles without their data (GetProfile has it).
func (s *Store) GetRun(ctx context.Context, id uint) (*rundoc.Run, error) {
	db := s.db.WithContext(ctx)
	var r Run
	if err := db.Where("id = ?", id).Take(&r).Error; err != nil {
		return nil, fmt.Errorf("store: run %d: %w", id, notFound(err))
	}
	if err := db.Where("run_id = ?", id).Order("id").Find(&r.Metrics).Error; err != nil {
		return nil, fmt.Errorf("store: run %d: metrics: %w", id, err)
	}
	if err := db.Where("run_id = ?", id).Order("seq, id").Find(&r.Series).Error; err != nil {
		return nil, fmt.Errorf("store: run %d: series: %w", id, err)
	}
	ps, err := listProfiles(db, id)
	if err != nil {
		return nil, fmt.Errorf("store: run %d: profiles: %w", id, err)
	}
	r.Profiles = ps
	d := runDoc(&r)
	return &d, nil
}

// GetRuns returns runs as GetRun does, in the order of ids, reading all
// of them in four queries (the runs, then the metrics, series and
// profiles of all of them) rather than four per run: a comparison of 50
// runs is 4 round trips, not 200. An unknown id is ErrNotFound naming it.
func (s *Store) GetRuns(ctx context.Context, ids []uint) ([]rundoc.Run, error) {
	return s.GetRunsParts(ctx, ids, AllRunParts)
}

// RunParts names the larger parts of a run a reader may leave out:
// metrics, documents (environment, measurement), spec and the other
// columns are always read.
type RunParts struct {
	// Output is the run's Kafka output text (KiB per run).
	Output bool
	// Series are the interval points (tens per run).
	Series bool
	// Profiles are the profiles' descriptions (GetProfile has the data).
	Profiles bool
}

// AllRunParts is every part: what GetRun and GetRuns read.
var AllRunParts = RunParts{Output: true, Series: true, Profiles: true}

// GetRunsParts is GetRuns reading only parts: a reader that shows no
// output, series or profiles (GET /api/compare) leaves them out, and the
// runs carry "" and nil for them. The metrics and series are scanned
// column by column, not through GORM's reflection: 50 runs × 60 metrics
// are 3,000 rows, and scanning them was most of the read.
func (s *Store) GetRunsParts(ctx context.Context, ids []uint, parts RunParts) ([]rundoc.Run, error) {
	if len(ids) == 0 {
		return []rundoc.Run{}, nil
	}
	db := s.db.WithContext(ctx)
	var rows []Run
	q := db.Where("id IN ?", ids)
	if !parts.Output {
		q = q.Omit("output")
	}
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: runs %v: %w", ids, err)
	}
	byID := make(map[uint]*Run, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	for _, id := range ids {
		if byID[id] == nil {
			return nil, fmt.Errorf("store: run %d: %w", id, ErrNotFound)
		}
	}
	if err := scanMetrics(db, ids, byID); err != nil {
		return nil, fmt.Errorf("store: runs %v: metrics: %w", ids, err)
	}
	if parts.Series {
		if err := scanSeries(db, ids, byID); err != nil {
			return nil, fmt.Errorf("store: runs %v: series: %w", ids, err)
		}
	}
	if parts.Profiles {
		ps := []Profile{}
		if err := withBlobs(db).Select(profileListColumns).Where("profiles.run_id IN ?", ids).Order("profiles.id").Find(&ps).Error; err != nil {
			return nil, fmt.Errorf("store: runs %v: profiles: %w", ids, err)
		}
		for _, p := range ps {
			r := byID[p.RunID]
			r.Profiles = append(r.Profiles, p)
		}
	}
	out := make([]rundoc.Run, 0, len(ids))
	for _, id := range ids {
		r := byID[id]
		// As GetRun reads them: empty, not nil, when a run has none.
		if r.Metrics == nil {
			r.Metrics = []Metric{}
		}
		if r.Series == nil && parts.Series {
			r.Series = []SeriesPoint{}
		}
		if r.Profiles == nil && parts.Profiles {
			r.Profiles = []Profile{}
		}
		out = append(out, runDoc(r))
	}
	return out, nil
}

// scanMetrics appends the metrics of the runs ids to byID's, in
// insertion order. Text columns may be NULL in rows written by hand.
func scanMetrics(db *gorm.DB, ids []uint, byID map[uint]*Run) error {
	rows, err := db.Raw("SELECT id, run_id, name, value, unit, better, help FROM metrics WHERE run_id IN ? ORDER BY run_id, id", ids).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	var name, unit, better, help sql.NullString
	var value sql.NullFloat64
	for rows.Next() {
		var m Metric
		if err := rows.Scan(&m.ID, &m.RunID, &name, &value, &unit, &better, &help); err != nil {
			return err
		}
		m.Name, m.Value, m.Unit, m.Better, m.Help = name.String, value.Float64, unit.String, rundoc.Better(better.String), help.String
		r := byID[m.RunID]
		r.Metrics = append(r.Metrics, m)
	}
	return rows.Err()
}

// scanSeries appends the series points of the runs ids to byID's, by Seq.
func scanSeries(db *gorm.DB, ids []uint, byID map[uint]*Run) error {
	rows, err := db.Raw("SELECT id, run_id, seq, t, records, bytes, records_per_sec, mb_per_sec, latency_avg_ms, latency_max_ms, cpu_percent,"+
		" latency_p50_ms, latency_p99_ms, latency_p999_ms, percentiles_approx"+
		" FROM series_points WHERE run_id IN ? ORDER BY run_id, seq, id", ids).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	var seq, records, bytes sql.NullInt64
	var t, rps, mbps, lat, latMax, cpu, p50, p99, p999 sql.NullFloat64
	var approx sql.NullBool
	for rows.Next() {
		var p SeriesPoint
		if err := rows.Scan(&p.ID, &p.RunID, &seq, &t, &records, &bytes, &rps, &mbps, &lat, &latMax, &cpu, &p50, &p99, &p999, &approx); err != nil {
			return err
		}
		p.Seq, p.T, p.Records, p.Bytes = int(seq.Int64), t.Float64, records.Int64, bytes.Int64
		p.RecordsPerSec, p.MBPerSec, p.LatencyAvgMs, p.LatencyMaxMs, p.CPUPercent = rps.Float64, mbps.Float64, lat.Float64, latMax.Float64, cpu.Float64
		p.LatencyP50Ms, p.LatencyP99Ms, p.LatencyP999Ms, p.PercentilesApprox = p50.Float64, p99.Float64, p999.Float64, approx.Bool
		r := byID[p.RunID]
		r.Series = append(r.Series, p)
	}
	return rows.Err()
}

// RunFilter selects runs for ListRuns. Zero fields do not filter; an empty
// IDs does not filter either. Limit defaults to DefaultLimit and is capped
// at MaxLimit.
//
// A page is chosen by Offset (the number of selected runs before it,
// newest first) or by a cursor, a run id the page starts next to: Before
// selects the runs older than that run (id < Before), newest first;
// After the runs newer than it (id > After), the Limit nearest to it,
// still listed newest first. A cursor page costs the same wherever it
// lies, and runs stored meanwhile do not shift it. With a cursor, Offset
// is ignored; Before wins over After.
type RunFilter struct {
	Workload, Label, Status, GroupID string
	IDs                              []uint
	Offset, Limit                    int
	Before, After                    uint
}

func (f RunFilter) apply(q *gorm.DB) *gorm.DB {
	if f.Workload != "" {
		q = q.Where("workload = ?", f.Workload)
	}
	if f.Label != "" {
		q = q.Where("label = ?", f.Label)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.GroupID != "" {
		q = q.Where("group_id = ?", f.GroupID)
	}
	if len(f.IDs) > 0 {
		q = q.Where("id IN ?", f.IDs)
	}
	return q
}

func (f RunFilter) limit() int {
	if f.Limit <= 0 {
		return DefaultLimit
	}
	return min(f.Limit, MaxLimit)
}

// RunPage is one page of the runs list (ListRunsPage).
type RunPage struct {
	// Runs are the page's runs, newest first.
	Runs []rundoc.Run
	// Total is how many runs the filter selects, over all pages.
	Total int64
	// Newer is how many selected runs are newer than the page's first:
	// the page's offset. Older says whether any is older than its last.
	Newer int64
	Older bool
}

// ListRuns returns one page of the runs f selects, newest first, and how
// many runs it selects in all. The runs carry no Environment, Measurement
// or Output and no metrics, series or profiles: GetRun has those.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) ([]rundoc.Run, int64, error) {
	runs, total, err := listRuns(s.db.WithContext(ctx), f)
	if err != nil {
		return nil, 0, err
	}
	return runDocs(runs), total, nil
}

// listRuns reads the page of rows f selects and how many it selects in
// all: what ListRuns and ListRunsPage share.
func listRuns(db *gorm.DB, f RunFilter) ([]Run, int64, error) {
	total, err := countRuns(db, f)
	if err != nil {
		return nil, 0, err
	}
	runs, err := listPage(db, f, total)
	return runs, total, err
}

// ListRunsPage is ListRuns with where the page lies: how many selected
// runs are newer than it and whether any is older, for the links to the
// pages around it. Each is read from the filter's index: no query reads
// more table rows than the page's.
func (s *Store) ListRunsPage(ctx context.Context, f RunFilter) (RunPage, error) {
	db := s.db.WithContext(ctx)
	runs, total, err := listRuns(db, f)
	if err != nil {
		return RunPage{}, err
	}
	p := RunPage{Runs: runDocs(runs), Total: total}
	cursor := f.Before > 0 || f.After > 0
	switch {
	case len(runs) > 0 && cursor:
		// runs are newest first: the page spans their ids.
		if err := f.apply(db.Model(&Run{})).Where("id > ?", runs[0].ID).Count(&p.Newer).Error; err != nil {
			return RunPage{}, fmt.Errorf("store: list runs: position: %w", err)
		}
		p.Older = p.Newer+int64(len(runs)) < total
	case len(runs) > 0:
		p.Newer = int64(max(f.Offset, 0))
		p.Older = p.Newer+int64(len(runs)) < total
	case f.Before > 0:
		// Past the oldest: every selected run is newer.
		if err := f.apply(db.Model(&Run{})).Where("id >= ?", f.Before).Count(&p.Newer).Error; err != nil {
			return RunPage{}, fmt.Errorf("store: list runs: position: %w", err)
		}
	case f.After > 0:
		// Past the newest: every selected run is older.
		p.Older = total > 0
	default:
		p.Newer = min(int64(max(f.Offset, 0)), total)
	}
	return p, nil
}

// countRuns counts the runs f selects, cursor and page aside.
func countRuns(db *gorm.DB, f RunFilter) (int64, error) {
	var total int64
	if err := f.apply(db.Model(&Run{})).Count(&total).Error; err != nil {
		return 0, fmt.Errorf("store: list runs: count: %w", err)
	}
	return total, nil
}

// listPage reads the runs of f's page; total is how many f selects.
func listPage(db *gorm.DB, f RunFilter, total int64) ([]Run, error) {
	runs := []Run{}
	if f.Before == 0 && f.After == 0 && int64(max(f.Offset, 0)) >= total {
		return runs, nil
	}
	if err := listQuery(db, f).Find(&runs).Error; err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	return runs, nil
}

// listQuery selects one page of runs in two steps: the subquery finds the
// page's IDs in an index (skipping Offset entries there is cheap: index
// entries are small; a cursor seeks to its id), then only those rows are
// read. Skipping rows of the table itself would step through every
// skipped run's output.
func listQuery(db *gorm.DB, f RunFilter) *gorm.DB {
	page := f.apply(db.Model(&Run{})).Select("id").Limit(f.limit())
	switch {
	case f.Before > 0:
		page = page.Where("id < ?", f.Before).Order("id DESC")
	case f.After > 0:
		// The nearest runs above the cursor, listed newest first below.
		page = page.Where("id > ?", f.After).Order("id ASC")
	default:
		page = page.Order("id DESC").Offset(max(f.Offset, 0))
	}
	return db.Model(&Run{}).Select(listColumns).Where("id IN (?)", page).Order("id DESC")
}

// Labels returns the distinct non-empty run labels, sorted.
func (s *Store) Labels(ctx context.Context) ([]string, error) {
	labels := []string{}
	// A loose index scan: each step seeks the label index past the previous
	// label, so the cost follows the number of labels, not of runs
	// (SELECT DISTINCT read every index entry).
	err := s.db.WithContext(ctx).Raw(`WITH RECURSIVE l(label) AS (
		SELECT MIN(label) FROM runs WHERE label > ''
		UNION ALL
		SELECT (SELECT MIN(label) FROM runs WHERE label > l.label) FROM l WHERE l.label IS NOT NULL
	) SELECT label FROM l WHERE label IS NOT NULL ORDER BY label`).Scan(&labels).Error
	if err != nil {
		return nil, fmt.Errorf("store: labels: %w", err)
	}
	return labels, nil
}

// CountRuns returns the number of runs.
func (s *Store) CountRuns(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&Run{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count runs: %w", err)
	}
	return n, nil
}

// StartRun moves a queued run to running, started at at (now if zero).
// The change is one conditional UPDATE, so of two callers starting the
// same run exactly one succeeds; the other gets ErrConflict.
func (s *Store) StartRun(ctx context.Context, id uint, at time.Time) error {
	return s.StartRunOn(ctx, id, at, nil)
}

// StartRunOn is StartRun by worker w (registered with RegisterWorker):
// the run records w's host and row, so that lists show where it ran and
// recovery can tell whether the process running it is gone. nil records
// no worker.
func (s *Store) StartRunOn(ctx context.Context, id uint, at time.Time, w *Worker) error {
	defer s.wroteOutsideSeries() // queued to running
	if at.IsZero() {
		at = time.Now()
	}
	at = s.stored(at)
	db := s.db.WithContext(ctx)
	updates := map[string]any{"status": rundoc.StatusRunning, "started_at": at, "run_at": at}
	if w != nil {
		updates["worker"], updates["worker_id"] = w.Host, w.ID
	}
	res := db.Model(&Run{}).
		Where("id = ? AND status = ?", id, rundoc.StatusQueued).
		Updates(updates)
	if err := changed(db, id, res); err != nil {
		return fmt.Errorf("store: start run %d: %w", id, err)
	}
	return nil
}

// CancelQueued cancels a run that has not started, with reason as its
// error. A run already running is stopped by the runner, which then
// finishes it with FinishRun.
func (s *Store) CancelQueued(ctx context.Context, id uint, reason string) error {
	defer s.wroteOutsideSeries() // queued to canceled
	db := s.db.WithContext(ctx)
	res := db.Model(&Run{}).
		Where("id = ? AND status = ?", id, rundoc.StatusQueued).
		Updates(map[string]any{
			"status":      rundoc.StatusCanceled,
			"error":       reason,
			"finished_at": s.now(),
		})
	if err := changed(db, id, res); err != nil {
		return fmt.Errorf("store: cancel run %d: %w", id, err)
	}
	return nil
}

// MarkInterrupted ends every running run as interrupted, with reason as
// its error, and returns how many it ended. The server calls it at
// start-up: a run still running then belonged to a process that is gone.
func (s *Store) MarkInterrupted(ctx context.Context, reason string) (int64, error) {
	defer s.wroteOutsideSeries() // running to interrupted
	res := s.db.WithContext(ctx).Model(&Run{}).
		Where("status = ?", rundoc.StatusRunning).Scopes(notFleetParent).
		Updates(map[string]any{
			"status":      rundoc.StatusInterrupted,
			"error":       reason,
			"finished_at": s.now(),
		})
	if res.Error != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// QueuedRuns returns the queued runs, oldest first, with their specs.
// Fleet parents are left out here and wherever runs are taken, recovered
// or reaped: no worker executes them (notFleetParent).
func (s *Store) QueuedRuns(ctx context.Context) ([]rundoc.Run, error) {
	runs := []Run{}
	err := s.db.WithContext(ctx).Select(listColumns).
		Where("status = ?", rundoc.StatusQueued).Scopes(notFleetParent).Order("id").Find(&runs).Error
	if err != nil {
		return nil, fmt.Errorf("store: queued runs: %w", err)
	}
	return runDocs(runs), nil
}

// QueuePosition returns a queued run's 1-based position in the queue
// (runs start in id order), or 0 if the run is not queued. It is one
// statement, so the answer is never torn by a run starting meanwhile.
func (s *Store) QueuePosition(ctx context.Context, id uint) (int, error) {
	var pos int
	res := s.db.WithContext(ctx).Raw(`SELECT CASE WHEN r.status = ?
		THEN (SELECT COUNT(*) FROM runs q WHERE q.status = ? AND q.id <= r.id
			AND q.id NOT IN (SELECT parent_id FROM fleets))
		ELSE 0 END
		FROM runs r WHERE r.id = ?`, rundoc.StatusQueued, rundoc.StatusQueued, id).Scan(&pos)
	if res.Error != nil {
		return 0, fmt.Errorf("store: queue position of run %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return 0, fmt.Errorf("store: run %d: %w", id, ErrNotFound)
	}
	return pos, nil
}

// FinishRun stores a queued or running run's outcome and its final status
// in one transaction: if any part fails, nothing is stored and the run
// keeps its status. A run in any other status gives ErrConflict, but for
// one interrupted while its worker, o.Worker, was taken for lost. The run's
// key figures (RecordsPerSec, MBPerSec, P99Ms) are copied from the metrics
// so lists need no join.
func (s *Store) FinishRun(ctx context.Context, id uint, o Outcome) error {
	// Only an open or interrupted run is finished: it joins its series
	// if it succeeded, and left none otherwise. Its series is the first
	// thing the transaction reads, so a write that may have stored
	// anything knows it; one that failed before stored nothing.
	var series string
	defer func() { s.wroteSeriesIf(o.Status == rundoc.StatusSucceeded, nonEmpty(series), true) }()
	if !o.Status.Final() {
		return fmt.Errorf("store: finish run %d: status %q is not a final status", id, o.Status)
	}
	if err := checkProfiles(o.Profiles); err != nil {
		return fmt.Errorf("store: finish run %d: %w", id, err)
	}
	e, err := encodeOutcome(o)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", id, err)
	}
	finished := o.FinishedAt
	if finished.IsZero() {
		finished = time.Now()
	}
	if err := rundoc.ValidateMeta(o.Meta); err != nil {
		return fmt.Errorf("store: finish run %d: %w", id, err)
	}
	rps, mbps, p99 := keyFigures(e.metrics)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// One read of what the update needs from the row: the series a
		// success joins, the metadata new tags merge into.
		var stored Run
		if o.Status == rundoc.StatusSucceeded || len(o.Meta) > 0 {
			if err := tx.Select("series", "meta").Where("id = ?", id).Take(&stored).Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
				return err
			}
		}
		if o.Status == rundoc.StatusSucceeded {
			series = stored.SeriesKey
		}
		updates := map[string]any{
			"status":          o.Status,
			"error":           o.Error,
			"complete":        o.Complete,
			"environment":     e.environment,
			"measurement":     e.measurement,
			"output":          o.Output,
			"records_per_sec": rps,
			"mb_per_sec":      mbps,
			"p99_ms":          p99,
			"finished_at":     s.stored(finished),
		}
		if len(o.Meta) > 0 {
			updates["meta"] = mergeMeta(stored.Meta, o.Meta)
		}
		open := []rundoc.Status{rundoc.StatusQueued, rundoc.StatusRunning}
		q := tx.Model(&Run{}).Where("id = ?", id)
		if o.Worker != 0 {
			q = q.Where("status IN ? OR (status = ? AND worker_id = ?)", open, rundoc.StatusInterrupted, o.Worker)
		} else {
			q = q.Where("status IN ?", open)
		}
		res := q.Updates(updates)
		if err := changed(tx, id, res); err != nil {
			return err
		}
		if err := insertResults(tx, id, e.metrics, e.series, o.Profiles); err != nil {
			return err
		}
		return insertHistograms(tx, id, e.histograms, e.log)
	})
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", id, err)
	}
	return nil
}

// DeleteRun deletes a finished run with its metrics, series and
// profiles. It refuses with ErrConflict a run that is queued or running,
// and a run any report uses, compared or in the sweep it shows: reports
// are recomputed from their runs, so deleting one would silently change
// or break a shared link. The run's files are the caller's to remove.
func (s *Store) DeleteRun(ctx context.Context, id uint) error {
	// The run's series is read (and locked) before anything is deleted.
	var series string
	defer func() { s.wrote(nonEmpty(series), true) }()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var r Run
		// On PostgreSQL, lock the run: a report being created on it (which
		// holds it FOR SHARE) is either committed before the check of
		// reports below, or sees the run gone. SQLite's transaction holds
		// the write lock throughout.
		if err := lockFor(tx, "UPDATE").Select("id", "status", "series").Where("id = ?", id).Take(&r).Error; err != nil {
			return notFound(err)
		}
		series = r.SeriesKey
		if !r.Final() {
			return fmt.Errorf("run %d is %s; cancel it first: %w", id, r.Status, ErrConflict)
		}
		var slugs []string
		if err := reportsUsing(tx, id, 5).Pluck("reports.slug", &slugs).Error; err != nil {
			return err
		}
		if len(slugs) > 0 {
			return fmt.Errorf("run %d is used by report %s, which is computed from its runs: %w", id, strings.Join(slugs, ", "), ErrConflict)
		}
		return deleteRuns(tx, []uint{id})
	})
	if err != nil {
		return fmt.Errorf("store: delete run %d: %w", id, err)
	}
	return nil
}

// joinedSeries is the series of the runs being stored that may join
// one (mayJoinSeries), each once.
func joinedSeries(runs []*Run) []string {
	var keys []string
	seen := map[string]bool{}
	for _, r := range runs {
		if mayJoinSeries(r) {
			if k := seriesOf(r); k != "" && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// nonEmpty is key as a list of series keys: none for "".
func nonEmpty(key string) []string {
	if key == "" {
		return nil
	}
	return []string{key}
}

// mayJoinSeries reports whether r, being stored, may be a succeeded run
// of a series: anything but a run still to run.
func mayJoinSeries(r *Run) bool {
	// A nil run is refused before anything is written (prepareRun); it
	// must not crash the deferred count of that write.
	return r != nil && r.Status != rundoc.StatusQueued && r.Status != rundoc.StatusRunning
}

// pruneBatch is how many runs PruneRuns deletes per transaction, so that
// the write lock is never held for long.
const pruneBatch = 100

// PruneRuns deletes the finished runs that ended before cutoff (or, with
// no finish time, were created before it) and that no report uses (as a
// compared run or a run of its sweep), with
// their metrics, series and profiles, and returns their IDs. The run
// files are the caller's to remove. It deletes in batches, each checked
// and deleted in one transaction, so a report created meanwhile always
// keeps its runs.
func (s *Store) PruneRuns(ctx context.Context, cutoff time.Time) ([]uint, error) {
	pruned := []uint{}
	final := []rundoc.Status{rundoc.StatusSucceeded, rundoc.StatusFailed, rundoc.StatusCanceled, rundoc.StatusInterrupted}
	for {
		var batch []uint
		// keys are the series of the batch, which its deletion changes.
		var keys []string
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			err := notReported(tx, lockFor(tx, "UPDATE").Model(&Run{}).
				Where("status IN ? AND COALESCE(finished_at, created_at) < ?", final, s.stored(cutoff))).
				Order("id").Limit(pruneBatch).Pluck("id", &batch).Error
			if err != nil || len(batch) == 0 {
				return err
			}
			if isPostgres(tx) {
				// The runs are locked now, but the check of reports
				// above saw the database as it was when the statement
				// began: a report committed while it waited for a lock
				// is seen by a new statement only.
				var kept []uint
				if err := notReported(tx, tx.Model(&Run{}).Where("id IN ?", batch)).
					Order("id").Pluck("id", &kept).Error; err != nil {
					return err
				}
				if batch = kept; len(batch) == 0 {
					return nil
				}
			}
			if err := tx.Model(&Run{}).Where("id IN ? AND series > ''", batch).Distinct().Pluck("series", &keys).Error; err != nil {
				return err
			}
			return deleteRuns(tx, batch)
		})
		if err != nil {
			return pruned, fmt.Errorf("store: prune runs: %w", err)
		}
		if len(batch) == 0 {
			return pruned, nil
		}
		s.wrote(keys, true)
		pruned = append(pruned, batch...)
	}
}

// deleteRuns deletes runs (locked, on PostgreSQL) with their metrics,
// series and profiles, and the profiles' blobs no other profile names.
func deleteRuns(tx *gorm.DB, ids []uint) error {
	keys, err := blobsOfRuns(tx, ids)
	if err != nil {
		return err
	}
	if err := tx.Delete(&Run{}, ids).Error; err != nil {
		return err
	}
	return dropUnusedBlobs(tx, keys)
}

// lockFor adds a row lock (FOR UPDATE, FOR SHARE) to a query on
// PostgreSQL; on SQLite, whose transactions hold the database's write
// lock from their start, it changes nothing.
func lockFor(tx *gorm.DB, strength string) *gorm.DB {
	if !isPostgres(tx) {
		return tx
	}
	return tx.Clauses(clause.Locking{Strength: strength})
}

// changed explains a conditional update of run id: nil if it changed the
// run, else ErrNotFound or ErrConflict naming the run's status.
func changed(db *gorm.DB, id uint, res *gorm.DB) error {
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected > 0 {
		return nil
	}
	var status string
	st := db.Raw("SELECT status FROM runs WHERE id = ?", id).Scan(&status)
	if st.Error != nil {
		return st.Error
	}
	if st.RowsAffected == 0 {
		return ErrNotFound
	}
	return fmt.Errorf("status is %s: %w", status, ErrConflict)
}

// insertResults stores a run's metrics, series and profiles. It inserts
// copies, with IDs cleared and RunID set, so a failed transaction leaves
// no IDs behind in the caller's values.
func insertResults(tx *gorm.DB, runID uint, metrics []Metric, series []SeriesPoint, profiles []Profile) error {
	if len(metrics) > 0 {
		ms := slices.Clone(metrics)
		for i := range ms {
			ms[i].ID, ms[i].RunID = 0, runID
		}
		if err := tx.CreateInBatches(&ms, metricBatch).Error; err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	if len(series) > 0 {
		ss := slices.Clone(series)
		for i := range ss {
			ss[i].ID, ss[i].RunID = 0, runID
		}
		if err := tx.CreateInBatches(&ss, seriesBatch).Error; err != nil {
			return fmt.Errorf("series: %w", err)
		}
	}
	if len(profiles) == 0 {
		return nil
	}
	keys, err := profileBlobs(profiles)
	if err != nil {
		return err
	}
	if err := putBlobs(tx, profiles, keys); err != nil {
		return err
	}
	// The rows name their blobs; Bytes and Data are the blob's, never
	// written to profiles.
	for i := range profiles {
		p := profiles[i]
		p.ID, p.RunID, p.SHA256 = 0, runID, keys[i]
		if err := tx.Create(&p).Error; err != nil {
			return fmt.Errorf("profile %s/%s: %w", p.Role, p.Kind, err)
		}
	}
	return nil
}

// checkProfiles rejects profiles no page could name.
func checkProfiles(ps []Profile) error {
	for i, p := range ps {
		if p.Role == "" || p.Kind == "" {
			return fmt.Errorf("profile %d: role and kind are required (got %q, %q)", i, p.Role, p.Kind)
		}
	}
	return nil
}

// keyFigures picks a run's key figures from its metrics; nil when absent.
func keyFigures(ms []Metric) (recordsPerSec, mbPerSec, p99Ms *float64) {
	return pick(ms, recordsPerSecMetrics), pick(ms, mbPerSecMetrics), pick(ms, p99Metrics)
}

// pick returns the value of the first of names that ms holds.
func pick(ms []Metric, names []string) *float64 {
	for _, name := range names {
		for _, m := range ms {
			if m.Name == name {
				v := m.Value
				return &v
			}
		}
	}
	return nil
}

// notFleetParent leaves fleet parents out of a query of runs. No worker
// executes a parent: its status follows its shards', so the queries
// that give runs jobs, interrupt them or reap them must never see it.
func notFleetParent(db *gorm.DB) *gorm.DB {
	return db.Where("id NOT IN (SELECT parent_id FROM fleets)")
}
