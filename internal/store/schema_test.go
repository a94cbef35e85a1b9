package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"

	"github.com/kbench/kbench/internal/rundoc"
)

// copyFixture copies a testdata database into t's temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kbench.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// dumpFixture is what the store shows of the fixture, in the shape
// testdata/mkfixture gave kbench-v0.json: the store's rows as JSON.
// Reads give rundoc types now, which carry no row IDs of metrics and
// series points; so the dump takes those children from the tables, after
// checking that GetRun reads exactly them, in the same order. A run's
// documents are dumped as the stored text GetRun returns (Documents), and
// must decode.
func dumpFixture(t *testing.T, s *Store, slug string) []byte {
	t.Helper()
	ctx := context.Background()
	listed, total, err := s.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var list []*Run
	for i := range listed {
		list = append(list, legacyRun(&listed[i], nil, nil))
	}
	d := map[string]any{"list": list, "total": total}
	var runs []*Run
	var profiles []*Profile
	for _, r := range listed {
		full := get(t, s, r.ID)
		if full.DocumentErr != nil {
			t.Errorf("run %d: documents do not decode: %v", r.ID, full.DocumentErr)
		}
		ms, ss := []Metric{}, []SeriesPoint{}
		if err := s.db.Where("run_id = ?", r.ID).Order("id").Find(&ms).Error; err != nil {
			t.Fatal(err)
		}
		if err := s.db.Where("run_id = ?", r.ID).Order("seq, id").Find(&ss).Error; err != nil {
			t.Fatal(err)
		}
		checkChildren(t, full, ms, ss)
		runs = append(runs, legacyRun(full, ms, ss))
		for _, p := range full.Profiles {
			pd, err := s.GetProfile(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			profiles = append(profiles, pd)
		}
	}
	d["runs"], d["profiles"] = runs, profiles
	rep, err := s.GetReport(ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	d["report"] = rep // rundoc.Report has the old Report's JSON shape
	labels, err := s.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d["labels"] = labels
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sqliteExec runs statements on a database file without the store.
func sqliteExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// schemaSQL is the file's schema: every table and index definition.
func schemaSQL(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// snapshot is what a refused Open must leave alone: the file's bytes and
// modification time, and the names of the files beside it.
type snapshot struct {
	data  []byte
	mtime time.Time
	names []string
}

func takeSnapshot(t *testing.T, path string) snapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return snapshot{b, fi.ModTime(), names}
}

func (want snapshot) check(t *testing.T, path string) {
	t.Helper()
	got := takeSnapshot(t, path)
	if !bytes.Equal(got.data, want.data) {
		t.Error("the refused database file was changed")
	}
	if !got.mtime.Equal(want.mtime) {
		t.Errorf("the refused database file's modification time changed: %v, was %v", got.mtime, want.mtime)
	}
	if !slices.Equal(got.names, want.names) {
		t.Errorf("files beside the refused database: %v, were %v", got.names, want.names)
	}
}

// legacyRun is a read run in the shape of its row, as the store returned
// it before reads gave rundoc types: documents as their text, children
// as given (nil for a listed run), profiles without data and, for a full
// run, an empty list rather than none.
func legacyRun(d *rundoc.Run, ms []Metric, ss []SeriesPoint) *Run {
	r := &Run{ID: d.ID, Label: d.Label, Workload: d.Workload, Status: d.Status, Source: d.Source, Spec: d.Spec,
		Fingerprint: d.Fingerprint, Error: d.Error, GroupID: d.GroupID, GroupIndex: d.GroupIndex, Warmup: d.Warmup,
		ABBatch: d.ABBatch, Environment: d.Documents.Environment, Measurement: d.Documents.Measurement,
		Output: d.Output, Complete: d.Complete, RecordsPerSec: d.RecordsPerSec, MBPerSec: d.MBPerSec, P99Ms: d.P99Ms,
		CreatedAt: d.CreatedAt, StartedAt: d.StartedAt, FinishedAt: d.FinishedAt, Metrics: ms, Series: ss}
	if ms != nil {
		r.Profiles = []Profile{}
	}
	for _, p := range d.Profiles {
		r.Profiles = append(r.Profiles, Profile{ID: p.ID, RunID: p.RunID, Role: p.Role, Kind: p.Kind, Bytes: p.Bytes,
			Samples: p.Samples, SHA256: p.SHA256, Uploaded: p.Uploaded, CreatedAt: p.CreatedAt})
	}
	return r
}

// checkChildren asserts that GetRun read a run's metric and series rows,
// all of them, in the order of the tables.
func checkChildren(t *testing.T, d *rundoc.Run, ms []Metric, ss []SeriesPoint) {
	t.Helper()
	var wantM []rundoc.Metric
	for _, m := range ms {
		wantM = append(wantM, rundoc.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help})
	}
	var wantS []rundoc.SeriesPoint
	for _, p := range ss {
		wantS = append(wantS, rundoc.SeriesPoint{T: p.T, Records: p.Records, Bytes: p.Bytes, RecordsPerSec: p.RecordsPerSec,
			MBPerSec: p.MBPerSec, LatencyAvgMs: p.LatencyAvgMs, LatencyMaxMs: p.LatencyMaxMs, CPUPercent: p.CPUPercent})
	}
	if !reflect.DeepEqual(d.Metrics, wantM) {
		t.Errorf("run %d: GetRun metrics %+v, want the rows %+v", d.ID, d.Metrics, wantM)
	}
	if !reflect.DeepEqual(d.Series, wantS) {
		t.Errorf("run %d: GetRun series %+v, want the rows %+v", d.ID, d.Series, wantS)
	}
}

// TestOpenUpgradesUnversionedDatabase opens a database kbench made before
// it recorded schema versions: it is recognised, upgraded to the current
// version, and shows every run, profile and report exactly as before.
func TestOpenUpgradesUnversionedDatabase(t *testing.T) {
	path := copyFixture(t, "kbench-v0.db")
	want, err := os.ReadFile(filepath.Join("testdata", "kbench-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var before struct {
		Report struct{ Slug string }
	}
	if err := json.Unmarshal(want, &before); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open(a kbench database from before versions): %v", err)
	}
	got := dumpFixture(t, s, before.Report.Slug)
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("the upgraded database shows something else than before:\n%s", got)
	}
	var ids []string
	if err := s.db.Table(migrationsTable).Order("id").Pluck("id", &ids).Error; err != nil {
		t.Fatalf("migrations table: %v", err)
	}
	if len(ids) == 0 || ids[len(ids)-1] != SchemaVersion {
		t.Errorf("recorded migrations %v, want them to end with %s", ids, SchemaVersion)
	}
	// It is usable: a new run gets the next id, and deletes cascade.
	create(t, s, &Run{Label: "after upgrade", Status: rundoc.StatusSucceeded, Metrics: []Metric{{Name: "x", Value: 1}}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// And it opens again as a current database.
	s, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	s.Close()
}

// TestMigrationsMakeTodaysSchema checks that migration 0001 alone makes
// exactly the schema the kbench of the fixture made, that a new database
// gets exactly the schema of the fixture upgraded by every migration, and
// that the models match it: AutoMigrate of today's models changes nothing
// on a migrated file. A model change without a migration fails here.
func TestMigrationsMakeTodaysSchema(t *testing.T) {
	sqliteOnly(t)
	old, err := sql.Open("sqlite3", "file:"+filepath.Join("testdata", "kbench-v0.db")+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	want := schemaSQL(t, old)
	withoutMigrations := func(lines []string) []string {
		var out []string
		for _, line := range lines {
			if !strings.Contains(line, migrationsTable) {
				out = append(out, line)
			}
		}
		return out
	}

	first := newStore(t)
	if err := first.db.Migrator().DropTable(migrationsTable); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"fleet_shards", "fleets", "slo_runs", "slos", "histogram_logs", "histograms", "sweep_runs", "sweeps", "run_events", "workers", "report_runs", "reports", "profiles", "profile_blobs", "series_points", "metrics", "runs"} {
		if err := first.db.Migrator().DropTable(table); err != nil {
			t.Fatal(err)
		}
	}
	if err := gormigrate.New(first.db, migrationOptions(), migrations[:1]).Migrate(); err != nil {
		t.Fatal(err)
	}
	if got := withoutMigrations(schemaSQL(t, first.sqlDB)); !slices.Equal(got, want) {
		t.Errorf("schema of migration 0001:\n%s\nwant the fixture's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	upgraded, err := Open(copyFixture(t, "kbench-v0.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer upgraded.Close()
	want = withoutMigrations(schemaSQL(t, upgraded.sqlDB))
	s := newStore(t)
	if got := withoutMigrations(schemaSQL(t, s.sqlDB)); !slices.Equal(got, want) {
		t.Errorf("schema of a new database:\n%s\nwant the upgraded fixture's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	before := schemaSQL(t, s.sqlDB)
	if err := s.db.AutoMigrate(&Run{}, &Metric{}, &SeriesPoint{}, &Profile{}, &ProfileBlob{}, &Report{}, &ReportRun{}, &Worker{}, &RunEvent{}, &Sweep{}, &SweepRun{}, &Histogram{}, &HistogramLog{}, &SLO{}, &SLORun{}); err != nil {
		t.Fatal(err)
	}
	if after := schemaSQL(t, s.sqlDB); !slices.Equal(after, before) {
		t.Errorf("the models differ from the migrated schema (add a migration):\n%s\nwas\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}

// TestOpenRefusesForeignDatabase: a database with tables that are not
// kbench's, or with kbench's table names holding other columns, is
// refused with a message naming what differs, and nothing in it changes.
func TestOpenRefusesForeignDatabase(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stmts []string
		want  []string // in the message
	}{
		{"runs with other columns", []string{
			"CREATE TABLE runs(id text primary key, foo blob)",
			"INSERT INTO runs VALUES ('a', x'00ff')",
		}, []string{"table runs", "foo", "label"}},
		{"someone else's tables", []string{
			"CREATE TABLE customers(id integer primary key, name text)",
			"INSERT INTO customers(name) VALUES ('x')",
		}, []string{"customers"}},
		{"kbench's tables and another", []string{
			"CREATE TABLE customers(id integer primary key, name text)",
		}, []string{"customers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kbench.db")
			if tc.name == "kbench's tables and another" {
				path = copyFixture(t, "kbench-v0.db")
			}
			sqliteExec(t, path, tc.stmts...)
			snap := takeSnapshot(t, path)
			s, err := Open(path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a database that is not kbench's")
			}
			if !errors.Is(err, ErrForeignDatabase) {
				t.Errorf("error %v: want ErrForeignDatabase", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			snap.check(t, path)
		})
	}
	t.Run("not SQLite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "kbench.db")
		if err := os.WriteFile(path, []byte("this is a text file, not a database\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		snap := takeSnapshot(t, path)
		if s, err := Open(path); err == nil || !errors.Is(err, ErrForeignDatabase) {
			if s != nil {
				s.Close()
			}
			t.Errorf("Open(a text file) = %v, want ErrForeignDatabase", err)
		}
		snap.check(t, path)
	})
}

// TestOpenRefusesNewerSchema: a database a newer kbench migrated past what
// this one knows is refused, naming both versions, and left unchanged.
func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kbench.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, &Run{Label: "x"})
	if err := s.db.Exec("INSERT INTO "+migrationsTable+" (id) VALUES (?)", "9999_from_the_future").Error; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	snap := takeSnapshot(t, path)
	s, err = Open(path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database of a newer schema")
	}
	if !errors.Is(err, ErrNewerSchema) {
		t.Errorf("error %v: want ErrNewerSchema", err)
	}
	for _, w := range []string{"newer kbench", "9999_from_the_future", SchemaVersion} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
	snap.check(t, path)
}

// TestOpenRefusalKeepsJournalMode: a refused database in rollback-journal
// mode stays so; opening it for writing would have converted it to WAL.
func TestOpenRefusalKeepsJournalMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kbench.db")
	sqliteExec(t, path, "PRAGMA journal_mode=DELETE", "CREATE TABLE runs(id text primary key, foo blob)")
	if s, err := Open(path); err == nil {
		s.Close()
		t.Fatal("Open accepted a foreign database")
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "delete" {
		t.Errorf("journal mode after a refusal: %s, want delete", mode)
	}
}
