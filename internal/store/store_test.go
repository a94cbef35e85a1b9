package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// backends are the databases the store's tests run on: each test that
// holds for both runs once per backend through eachBackend, as subtests
// named after them. Tests of SQLite files themselves (fixtures from
// older kbench versions, WAL, inspection of a file, query plans) stay
// SQLite-only and say so.
var backends = []string{"sqlite", "postgres"}

// eachBackend runs f as a subtest per backend; newStore inside it opens
// that backend's database. In test.sh's PostgreSQL pass
// (KBENCH_TEST_BACKEND=postgres) it runs nothing: the first pass ran
// both backends, and this one is for the tests that take the backend
// from the environment.
func eachBackend(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	if pgtest.OnPostgres() {
		t.Skip("runs on both backends in the first pass")
	}
	for _, b := range backends {
		t.Run(b, f)
	}
}

// backendOf is the backend a test runs on: the one eachBackend named
// its subtest after ("TestX/postgres/..."), SQLite outside eachBackend.
func backendOf(t testing.TB) string {
	if parts := strings.Split(t.Name(), "/"); len(parts) > 1 && slices.Contains(backends, parts[1]) {
		return parts[1]
	}
	return "sqlite"
}

// sqliteOnly skips t when the tests run on PostgreSQL
// (KBENCH_TEST_BACKEND=postgres): it asserts what SQLite does.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if pgtest.OnPostgres() {
		t.Skip("SQLite only: KBENCH_TEST_BACKEND=postgres")
	}
}

// isEachBackend reports whether t runs inside eachBackend, which names
// its backend itself.
func isEachBackend(t testing.TB) bool {
	parts := strings.Split(t.Name(), "/")
	return len(parts) > 1 && slices.Contains(backends, parts[1])
}

// storeDSN is a fresh, empty database of t's backend: a file in t's
// temporary directory, or a new PostgreSQL database (pgtest.URL: skipped
// without KBENCH_TEST_POSTGRES) dropped when t ends. Outside eachBackend
// the backend is KBENCH_TEST_BACKEND's (pgtest.DSN): SQLite unless it
// says postgres.
func storeDSN(t testing.TB) string {
	t.Helper()
	sqlite := filepath.Join(t.TempDir(), "kbench.db")
	switch {
	case backendOf(t) == "postgres":
		return pgtest.URL(t)
	case isEachBackend(t):
		return sqlite
	default:
		return pgtest.DSN(t, sqlite)
	}
}

// newStore opens a fresh database of t's backend.
func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(storeDSN(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// create stores runs and fails the test on error.
func create(t testing.TB, s *Store, runs ...*Run) {
	t.Helper()
	if err := s.CreateRuns(context.Background(), runs); err != nil {
		t.Fatalf("CreateRuns: %v", err)
	}
}

// get fetches a run and fails the test on error.
func get(t testing.TB, s *Store, id uint) *rundoc.Run {
	t.Helper()
	r, err := s.GetRun(context.Background(), id)
	if err != nil {
		t.Fatalf("GetRun(%d): %v", id, err)
	}
	return r
}

func runIDs(runs []rundoc.Run) []uint {
	ids := []uint{}
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

func fmtPtr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// docText is a document's stored text, as the store writes it.
func docText(t testing.TB, doc any) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("encode %T: %v", doc, err)
	}
	return string(b)
}

// profileData reads a stored profile's data through GetProfile.
func profileData(t testing.TB, s *Store, id uint) []byte {
	t.Helper()
	p, err := s.GetProfile(context.Background(), id)
	if err != nil {
		t.Fatalf("GetProfile(%d): %v", id, err)
	}
	return p.Data
}

func sum256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// refuseInsert makes the database refuse, with message, a row inserted
// into table whose column holds value: a failure half-way through a
// transaction, on either backend.
func refuseInsert(t testing.TB, s *Store, table, column, value, message string) {
	t.Helper()
	name := "refuse_" + table
	stmts := []string{fmt.Sprintf(`CREATE TRIGGER %s BEFORE INSERT ON %s
		WHEN NEW.%s = '%s' BEGIN SELECT RAISE(ABORT, '%s'); END`, name, table, column, value, message)}
	if s.pg {
		stmts = []string{
			fmt.Sprintf(`CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.%s = '%s' THEN RAISE EXCEPTION '%s'; END IF; RETURN NEW; END $$`, name, column, value, message),
			fmt.Sprintf(`CREATE TRIGGER %s BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION %s()`, name, table, name),
		}
	}
	for _, stmt := range stmts {
		if err := s.db.Exec(stmt).Error; err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// rowCount counts table rows of one run, bypassing the store's queries.
func rowCount(t *testing.T, s *Store, table string, runID uint) int64 {
	t.Helper()
	var n int64
	if err := s.db.Table(table).Where("run_id = ?", runID).Count(&n).Error; err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "kbench.db")
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	// Every pooled connection must have the settings: hold several at once.
	ctx := context.Background()
	var conns []interface{ Close() error }
	for range 3 {
		c, err := s.sqlDB.Conn(ctx)
		if err != nil {
			t.Fatalf("Conn: %v", err)
		}
		conns = append(conns, c)
		for _, tc := range []struct{ pragma, want string }{
			{"journal_mode", "wal"},
			{"foreign_keys", "1"},
			{"busy_timeout", "5000"},
		} {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
			}
			if got != tc.want {
				t.Errorf("PRAGMA %s: got %q, want %q", tc.pragma, got, tc.want)
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
	create(t, s, &Run{Label: "x"})
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("write-ahead log: %v", err)
	}
}

func TestOpenRejects(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "k.db?mode=memory")} {
		if s, err := Open(path); err == nil {
			s.Close()
			t.Errorf("Open(%q): got no error, want one", path)
		}
	}
}

// TestIndexes (SQLite: its query plans) checks the plans of ListRuns' queries on a deep page: each
// filter finds the page in its own index, in id order, without a sort and
// without reading the rows it skips; combined filters are resolved in one
// index too.
func TestIndexes(t *testing.T) {
	sqliteOnly(t)
	s := newStore(t)
	dry := s.db.Session(&gorm.Session{DryRun: true})
	for _, tc := range []struct {
		name  string
		f     RunFilter
		index string
	}{
		{"all", RunFilter{}, "idx_runs_list_all"},
		{"status", RunFilter{Status: "x"}, "idx_runs_list_status"},
		{"label", RunFilter{Label: "x"}, "idx_runs_list_label"},
		{"workload", RunFilter{Workload: "x"}, "idx_runs_list_workload"},
		{"group", RunFilter{GroupID: "x"}, "idx_runs_list_group"},
		{"label and status", RunFilter{Label: "x", Status: "y"}, "idx_runs_list_"},
		{"all four", RunFilter{Label: "x", Status: "y", Workload: "z", GroupID: "g"}, "idx_runs_list_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, q := range []struct {
				name string
				stmt *gorm.Statement
			}{
				{"page", listQuery(dry, paged(tc.f, 9950, 0, 0)).Find(&[]Run{}).Statement},
				{"page before", listQuery(dry, paged(tc.f, 0, 5000, 0)).Find(&[]Run{}).Statement},
				{"page after", listQuery(dry, paged(tc.f, 0, 0, 5000)).Find(&[]Run{}).Statement},
				{"count", tc.f.apply(dry.Model(&Run{})).Count(new(int64)).Statement},
				{"position", tc.f.apply(dry.Model(&Run{})).Where("id > ?", 5000).Count(new(int64)).Statement},
			} {
				got := queryPlan(t, s, q.stmt.SQL.String(), q.stmt.Vars...)
				if !strings.Contains(got, "USING COVERING INDEX "+tc.index) || strings.Contains(got, "TEMP B-TREE") {
					t.Errorf("%s: got plan %q, want a walk of %s without a sort", q.name, got, tc.index)
				}
			}
		})
	}
}

// paged is f's page of 50 at offset, or by a cursor.
func paged(f RunFilter, offset int, before, after uint) RunFilter {
	f.Limit, f.Offset, f.Before, f.After = 50, offset, before, after
	return f
}

func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.sqlDB.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

func TestCreateAndGetRun(t *testing.T) { eachBackend(t, testCreateAndGetRun) }

func testCreateAndGetRun(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	r := &Run{Label: "trunk", Workload: "producer", Spec: `{"workload":"producer"}`, Fingerprint: "f1", GroupID: "g", GroupIndex: 2}
	create(t, s, r)
	if r.ID == 0 {
		t.Fatalf("ID: got 0, want it filled in")
	}
	if r.CreatedAt.Before(before) {
		t.Errorf("CreatedAt: got %v, want it filled in", r.CreatedAt)
	}
	got := get(t, s, r.ID)
	for _, tc := range []struct {
		field     string
		got, want any
	}{
		{"Status", got.Status, rundoc.StatusQueued},
		{"Source", got.Source, rundoc.SourceLaunched},
		{"Label", got.Label, "trunk"},
		{"Workload", got.Workload, rundoc.Producer},
		{"Spec", got.Spec, `{"workload":"producer"}`},
		{"Fingerprint", got.Fingerprint, "f1"},
		{"GroupID", got.GroupID, "g"},
		{"GroupIndex", got.GroupIndex, 2},
		{"CreatedAt", got.CreatedAt.Equal(r.CreatedAt), true},
		{"StartedAt", got.StartedAt == nil, true},
		{"FinishedAt", got.FinishedAt == nil, true},
		{"Metrics", len(got.Metrics), 0},
		{"Profiles", len(got.Profiles), 0},
		{"Environment", got.Environment == nil && got.Measurement == nil && got.Documents == rundoc.Documents{}, true},
		{"DocumentErr", got.DocumentErr, nil},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.field, tc.got, tc.want)
		}
	}

	_, err := s.GetRun(ctx, r.ID+1)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("GetRun(missing): got %v, want ErrNotFound", err)
	}
	if want := "store: run 2: not found"; err == nil || err.Error() != want {
		t.Errorf("GetRun(missing): got %q, want %q", err, want)
	}
}

func TestCreateRunsAllOrNothing(t *testing.T) { eachBackend(t, testCreateRunsAllOrNothing) }

func testCreateRunsAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  *Run
	}{
		{"nil run", nil},
		{"unknown status", &Run{Status: "paused"}},
		{"unknown source", &Run{Source: "mailed"}},
		{"id set", &Run{ID: 7}},
		{"profile without kind", &Run{Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "client"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			good := &Run{Label: "ok"}
			err := s.CreateRuns(context.Background(), []*Run{good, tc.bad})
			if err == nil {
				t.Fatalf("CreateRuns: got no error, want one")
			}
			if n, _ := s.CountRuns(context.Background()); n != 0 {
				t.Errorf("runs stored: got %d, want 0", n)
			}
			if good.ID != 0 {
				t.Errorf("ID of the good run: got %d, want 0 (nothing stored)", good.ID)
			}
		})
	}
}

// TestCreateRunsFailedInsert makes the database refuse a run half-way
// through a batch: none stays stored, and none looks stored.
func TestCreateRunsFailedInsert(t *testing.T) { eachBackend(t, testCreateRunsFailedInsert) }

func testCreateRunsFailedInsert(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	refuseInsert(t, s, "runs", "label", "refused", "run refused")
	runs := []*Run{{Label: "a"}, {Label: "b", Status: rundoc.StatusSucceeded}, {Label: "refused"}}
	err := s.CreateRuns(ctx, runs)
	if err == nil || !strings.Contains(err.Error(), "run refused") {
		t.Fatalf("CreateRuns: got %v, want the trigger's error", err)
	}
	if n, _ := s.CountRuns(ctx); n != 0 {
		t.Errorf("runs stored: got %d, want 0", n)
	}
	for i, r := range runs {
		if r.ID != 0 || !r.CreatedAt.IsZero() || r.FinishedAt != nil {
			t.Errorf("run %d: got ID %d, CreatedAt %v, FinishedAt %v, want them untouched", i, r.ID, r.CreatedAt, r.FinishedAt)
		}
	}
}

// TestCreateImportedRun stores a finished run with its results at once.
func TestCreateImportedRun(t *testing.T) { eachBackend(t, testCreateImportedRun) }

func testCreateImportedRun(t *testing.T) {
	s := newStore(t)
	data := []byte("not really gzipped pprof")
	r := &Run{
		Workload: "imported", Source: rundoc.SourceImported, Status: rundoc.StatusSucceeded,
		Metrics:  []Metric{{Name: "records-per-sec", Value: 100}, {Name: "mb-per-sec", Value: 2.5}},
		Series:   []SeriesPoint{{Seq: 2, T: 2}, {Seq: 1, T: 1}},
		Profiles: []Profile{{Role: "client", Kind: "cpu", Data: data, Samples: 9}},
	}
	create(t, s, r)
	got := get(t, s, r.ID)
	if got.Status != rundoc.StatusSucceeded || got.Source != rundoc.SourceImported {
		t.Errorf("status, source: got %s, %s, want succeeded, imported", got.Status, got.Source)
	}
	if got.FinishedAt == nil {
		t.Errorf("FinishedAt: got nil, want it set for a final run")
	}
	if fmtPtr(got.RecordsPerSec) != 100.0 || fmtPtr(got.MBPerSec) != 2.5 || got.P99Ms != nil {
		t.Errorf("key figures: got %v, %v, %v, want 100, 2.5, <nil>", fmtPtr(got.RecordsPerSec), fmtPtr(got.MBPerSec), fmtPtr(got.P99Ms))
	}
	if len(got.Metrics) != 2 || len(got.Series) != 2 || got.Series[0].T != 1 || got.Series[1].T != 2 {
		t.Errorf("results: got %d metrics, series %+v, want 2 metrics and series by seq", len(got.Metrics), got.Series)
	}
	// rundoc.Profile carries no data; the data is stored, and GetProfile
	// has it.
	if len(got.Profiles) != 1 || got.Profiles[0].SHA256 != sum256(data) {
		t.Fatalf("profiles: got %+v, want one, with its sha256", got.Profiles)
	}
	if d := profileData(t, s, got.Profiles[0].ID); string(d) != string(data) {
		t.Errorf("profile data: got %q, want %q", d, data)
	}
	if r.Metrics[0].ID != 0 || r.Metrics[0].RunID != 0 {
		t.Errorf("caller's metric: got ID %d, RunID %d, want it left unchanged", r.Metrics[0].ID, r.Metrics[0].RunID)
	}
}

// seedList stores 24 runs whose fields cycle with their index i (1..24):
// label trunk/branch/"" by i%3, workload producer/consumer by i%2, status
// succeeded/failed/queued/canceled by i%4, group g1 for i ≤ 6 and g2 for
// 7 ≤ i ≤ 9. It returns the IDs by i.
func seedList(t *testing.T, s *Store) map[int]uint {
	runs := make([]*Run, 0, 24)
	for i := 1; i <= 24; i++ {
		r := &Run{
			Label:       []string{"trunk", "branch", ""}[i%3],
			Workload:    []rundoc.Workload{rundoc.Producer, rundoc.Consumer}[i%2],
			Status:      []rundoc.Status{rundoc.StatusSucceeded, rundoc.StatusFailed, rundoc.StatusQueued, rundoc.StatusCanceled}[i%4],
			Spec:        `{"i":1}`,
			Output:      "big output",
			Environment: docText(t, rundoc.Environment{GoVersion: "go1.26"}),
			Measurement: docText(t, rundoc.Measurement{MeasuredRecords: 1}),
		}
		switch {
		case i <= 6:
			r.GroupID = "g1"
		case i <= 9:
			r.GroupID = "g2"
		}
		runs = append(runs, r)
	}
	create(t, s, runs...)
	byI := map[int]uint{}
	for i, r := range runs {
		byI[i+1] = r.ID
	}
	return byI
}

func TestListRuns(t *testing.T) { eachBackend(t, testListRuns) }

func testListRuns(t *testing.T) {
	s := newStore(t)
	id := seedList(t, s)
	// is turns seed indexes into IDs.
	is := func(idx ...int) []uint {
		ids := []uint{}
		for _, i := range idx {
			ids = append(ids, id[i])
		}
		return ids
	}
	for _, tc := range []struct {
		name      string
		f         RunFilter
		want      []uint
		wantTotal int64
	}{
		{"all", RunFilter{}, is(24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 24},
		{"workload", RunFilter{Workload: "producer"}, is(24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2), 12},
		{"label", RunFilter{Label: "trunk"}, is(24, 21, 18, 15, 12, 9, 6, 3), 8},
		{"status", RunFilter{Status: string(rundoc.StatusQueued)}, is(22, 18, 14, 10, 6, 2), 6},
		{"group", RunFilter{GroupID: "g2"}, is(9, 8, 7), 3},
		{"ids", RunFilter{IDs: []uint{id[3], id[5], 9999}}, is(5, 3), 2},
		{"label and status", RunFilter{Label: "trunk", Status: string(rundoc.StatusSucceeded)}, is(24, 12), 2},
		{"ids and label", RunFilter{IDs: []uint{id[3], id[5]}, Label: "trunk"}, is(3), 1},
		{"nothing matches", RunFilter{Workload: "producer", Status: string(rundoc.StatusFailed)}, is(), 0},
		{"unknown label", RunFilter{Label: "nope"}, is(), 0},
		{"page 1", RunFilter{Limit: 5}, is(24, 23, 22, 21, 20), 24},
		{"page 2", RunFilter{Limit: 5, Offset: 5}, is(19, 18, 17, 16, 15), 24},
		{"last page", RunFilter{Limit: 5, Offset: 20}, is(4, 3, 2, 1), 24},
		{"past the end", RunFilter{Limit: 5, Offset: 24}, is(), 24},
		{"filtered page 2", RunFilter{Label: "trunk", Limit: 3, Offset: 3}, is(15, 12, 9), 8},
		{"negative offset", RunFilter{Limit: 2, Offset: -3}, is(24, 23), 24},
		{"negative limit", RunFilter{Limit: -1, Status: string(rundoc.StatusFailed)}, is(21, 17, 13, 9, 5, 1), 6},
		{"before", RunFilter{Limit: 5, Before: id[20]}, is(19, 18, 17, 16, 15), 24},
		{"before, offset ignored", RunFilter{Limit: 5, Before: id[20], Offset: 7}, is(19, 18, 17, 16, 15), 24},
		{"before the oldest", RunFilter{Limit: 5, Before: id[1]}, is(), 24},
		{"before near the end", RunFilter{Limit: 5, Before: id[3]}, is(2, 1), 24},
		{"after", RunFilter{Limit: 5, After: id[10]}, is(15, 14, 13, 12, 11), 24},
		{"after near the top", RunFilter{Limit: 5, After: id[22]}, is(24, 23), 24},
		{"after the newest", RunFilter{Limit: 5, After: id[24]}, is(), 24},
		{"filtered before", RunFilter{Label: "trunk", Limit: 3, Before: id[15]}, is(12, 9, 6), 8},
		{"filtered after", RunFilter{Label: "trunk", Limit: 2, After: id[6]}, is(12, 9), 8},
		{"before wins over after", RunFilter{Limit: 2, Before: id[10], After: id[3]}, is(9, 8), 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, total, err := s.ListRuns(context.Background(), tc.f)
			if err != nil {
				t.Fatalf("ListRuns: %v", err)
			}
			if got := runIDs(runs); !slices.Equal(got, tc.want) {
				t.Errorf("IDs: got %v, want %v", got, tc.want)
			}
			if total != tc.wantTotal {
				t.Errorf("total: got %d, want %d", total, tc.wantTotal)
			}
		})
	}
}

func TestListRunsPage(t *testing.T) { eachBackend(t, testListRunsPage) }

// testListRunsPage checks where ListRunsPage says a page lies: the runs
// newer than it (its offset) and whether any is older, by offset and by
// cursor, filtered or not, and for pages past either end.
func testListRunsPage(t *testing.T) {
	s := newStore(t)
	id := seedList(t, s)
	for _, tc := range []struct {
		name  string
		f     RunFilter
		newer int64
		older bool
		n     int
	}{
		{"first", RunFilter{Limit: 5}, 0, true, 5},
		{"offset", RunFilter{Limit: 5, Offset: 5}, 5, true, 5},
		{"last by offset", RunFilter{Limit: 5, Offset: 20}, 20, false, 4},
		{"past the end by offset", RunFilter{Limit: 5, Offset: 30}, 24, false, 0},
		{"before", RunFilter{Limit: 5, Before: id[20]}, 5, true, 5},
		{"before, last page", RunFilter{Limit: 5, Before: id[5]}, 20, false, 4},
		{"before the oldest", RunFilter{Limit: 5, Before: id[1]}, 24, false, 0},
		{"after", RunFilter{Limit: 5, After: id[10]}, 9, true, 5},
		{"after, first page", RunFilter{Limit: 5, After: id[20]}, 0, true, 4},
		{"after the newest", RunFilter{Limit: 5, After: id[24]}, 0, true, 0},
		{"filtered before", RunFilter{Label: "trunk", Limit: 3, Before: id[15]}, 4, true, 3},
		{"filtered, last", RunFilter{Label: "trunk", Limit: 3, Before: id[9]}, 6, false, 2},
		{"nothing matches", RunFilter{Label: "nope", Before: id[9]}, 0, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.ListRunsPage(context.Background(), tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Runs) != tc.n || p.Newer != tc.newer || p.Older != tc.older {
				t.Errorf("got %d runs, %d newer, older %v; want %d, %d, %v", len(p.Runs), p.Newer, p.Older, tc.n, tc.newer, tc.older)
			}
		})
	}
}

func TestListRunsCursorWalk(t *testing.T) { eachBackend(t, testListRunsCursorWalk) }

// testListRunsCursorWalk walks the whole list page by page by cursor,
// older and then newer, while runs are added between pages: each walk
// returns every run stored when it began exactly once, newest first,
// and the runs added meanwhile appear only on the way back up.
func testListRunsCursorWalk(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var want []uint
	for i := 0; i < 47; i++ {
		r := &Run{Label: []string{"a", "b", "c"}[i%3]}
		create(t, s, r)
		want = append([]uint{r.ID}, want...)
	}
	for _, tc := range []struct {
		label string
		want  []uint
	}{{"", want}, {"b", nil}} {
		if tc.label != "" {
			runs, _, err := s.ListRuns(ctx, RunFilter{Label: tc.label, Limit: MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			tc.want = runIDs(runs)
		}
		// Down, by before.
		var got []uint
		f := RunFilter{Label: tc.label, Limit: 5}
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatalf("label %q: no end after %d pages", tc.label, pages)
			}
			p, err := s.ListRunsPage(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			// Newer than the page: the runs walked, and those added.
			if p.Newer != int64(len(got)+pages) {
				t.Errorf("label %q, page %d: %d newer, want %d", tc.label, pages, p.Newer, len(got)+pages)
			}
			got = append(got, runIDs(p.Runs)...)
			// A run added meanwhile is newer than every page still to come.
			create(t, s, &Run{Label: tc.label})
			if !p.Older {
				break
			}
			f.Before = p.Runs[len(p.Runs)-1].ID
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("label %q, walking older: got %v, want %v", tc.label, got, tc.want)
		}
		// Up again from the oldest, by after: the same runs, then the new.
		oldest := tc.want[len(tc.want)-1]
		up := []uint{oldest}
		f = RunFilter{Label: tc.label, Limit: 5, After: oldest}
		for pages := 0; ; pages++ {
			if pages > 40 {
				t.Fatalf("label %q: no top after %d pages", tc.label, pages)
			}
			p, err := s.ListRunsPage(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Runs) == 0 {
				break
			}
			up = append(runIDs(p.Runs), up...)
			f.After = p.Runs[0].ID
		}
		if len(up) < len(tc.want) || !slices.Equal(up[len(up)-len(tc.want):], tc.want) {
			t.Errorf("label %q, walking newer: got %v, want it to end with %v", tc.label, up, tc.want)
		}
		all, _, err := s.ListRuns(ctx, RunFilter{Label: tc.label, Limit: MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(up, runIDs(all)) {
			t.Errorf("label %q, walking newer: got %v, want every run now stored %v", tc.label, up, runIDs(all))
		}
	}
}

func TestGetRuns(t *testing.T) { eachBackend(t, testGetRuns) }

// testGetRuns: GetRuns gives each run exactly as GetRun does (metrics,
// series and profiles in their order), in the order asked, and names an
// unknown run.
func testGetRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	full := func(label string, n int) *Run {
		r := &Run{Label: label, Status: rundoc.StatusSucceeded, Output: "out " + label,
			Profiles: []Profile{{Role: "client", Kind: "cpu", Data: []byte("p" + label)}}}
		for i := 0; i < n; i++ {
			r.Metrics = append(r.Metrics, Metric{Name: fmt.Sprintf("m%d", n-i), Value: float64(i), Unit: "ms", Better: rundoc.LowerIsBetter})
			r.Series = append(r.Series, SeriesPoint{Seq: n - i, T: float64(i), Records: int64(i)})
		}
		return r
	}
	a, b, c := full("a", 3), &Run{Label: "bare"}, full("c", 5)
	create(t, s, a, b, c)
	ids := []uint{c.ID, a.ID, b.ID}
	got, err := s.GetRuns(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d runs, want 3", len(got))
	}
	for i, id := range ids {
		if want := get(t, s, id); !reflect.DeepEqual(got[i], *want) {
			t.Errorf("run %d: GetRuns gave\n%+v\nGetRun gives\n%+v", id, got[i], *want)
		}
	}
	if _, err := s.GetRuns(ctx, []uint{a.ID, 9999}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "9999") {
		t.Errorf("unknown run: got %v, want ErrNotFound naming 9999", err)
	}
}

func TestListRunsColumns(t *testing.T) { eachBackend(t, testListRunsColumns) }

func testListRunsColumns(t *testing.T) {
	s := newStore(t)
	r := &Run{Label: "trunk", Workload: "producer", Spec: `{"a":1}`, Fingerprint: "fp", GroupID: "g", GroupIndex: 1,
		Output: "out", Environment: docText(t, rundoc.Environment{GoVersion: "go1.26.8"}),
		Measurement: docText(t, rundoc.Measurement{MeasuredRecords: 7}), Status: rundoc.StatusSucceeded,
		Metrics: []Metric{{Name: "mb-per-sec", Value: 3}}, Profiles: []Profile{{Role: "client", Kind: "cpu", Data: []byte("x")}}}
	create(t, s, r)
	runs, _, err := s.ListRuns(context.Background(), RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("ListRuns: got %d runs, %v, want 1", len(runs), err)
	}
	got := runs[0]
	if got.Output != "" || got.Environment != nil || got.Measurement != nil || got.Documents != (rundoc.Documents{}) || got.DocumentErr != nil {
		t.Errorf("large columns: got %q, %+v, %+v, %+v, %v, want them left out", got.Output, got.Environment, got.Measurement, got.Documents, got.DocumentErr)
	}
	if got.Metrics != nil || got.Series != nil || got.Profiles != nil {
		t.Errorf("associations: got %v, %v, %v, want none loaded", got.Metrics, got.Series, got.Profiles)
	}
	if got.Label != "trunk" || got.Workload != "producer" || got.Spec != `{"a":1}` || got.Fingerprint != "fp" ||
		got.GroupID != "g" || got.GroupIndex != 1 || fmtPtr(got.MBPerSec) != 3.0 || got.FinishedAt == nil ||
		!got.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("list fields: got %+v, want them loaded", got)
	}
}

func TestListRunsLimit(t *testing.T) { eachBackend(t, testListRunsLimit) }

func testListRunsLimit(t *testing.T) {
	s := newStore(t)
	runs := make([]*Run, 510)
	for i := range runs {
		runs[i] = &Run{}
	}
	create(t, s, runs...)
	for _, tc := range []struct {
		limit, want int
	}{{0, DefaultLimit}, {7, 7}, {500, 500}, {1000, MaxLimit}} {
		got, total, err := s.ListRuns(context.Background(), RunFilter{Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want || total != 510 {
			t.Errorf("Limit %d: got %d runs of %d, want %d of 510", tc.limit, len(got), total, tc.want)
		}
	}
}

func TestLabels(t *testing.T) { eachBackend(t, testLabels) }

func testLabels(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	got, err := s.Labels(ctx)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Labels of no runs: got %#v, %v, want an empty list", got, err)
	}
	create(t, s, &Run{Label: "trunk"}, &Run{Label: ""}, &Run{Label: "branch"}, &Run{Label: "trunk"}, &Run{Label: "a-b"})
	got, err = s.Labels(ctx)
	if want := []string{"a-b", "branch", "trunk"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Labels: got %q, %v, want %q", got, err, want)
	}
}

func TestCountRuns(t *testing.T) { eachBackend(t, testCountRuns) }

func testCountRuns(t *testing.T) {
	s := newStore(t)
	seedList(t, s)
	if n, err := s.CountRuns(context.Background()); n != 24 || err != nil {
		t.Errorf("CountRuns: got %d, %v, want 24", n, err)
	}
}

// TestTransitions applies every state change to a run in every status.
func TestTransitions(t *testing.T) { eachBackend(t, testTransitions) }

func testTransitions(t *testing.T) {
	ctx := context.Background()
	ops := []struct {
		name  string
		apply func(s *Store, id uint) error
		to    rundoc.Status            // status after success
		from  []rundoc.Status          // statuses it applies to
		check func(*rundoc.Run) [2]any // got, want of a field the change sets
	}{
		{"StartRun", func(s *Store, id uint) error { return s.StartRun(ctx, id, time.Time{}) },
			rundoc.StatusRunning, []rundoc.Status{rundoc.StatusQueued},
			func(r *rundoc.Run) [2]any { return [2]any{r.StartedAt != nil, true} }},
		{"CancelQueued", func(s *Store, id uint) error { return s.CancelQueued(ctx, id, "user canceled") },
			rundoc.StatusCanceled, []rundoc.Status{rundoc.StatusQueued},
			func(r *rundoc.Run) [2]any { return [2]any{r.Error + " " + nonNil(r.FinishedAt), "user canceled set"} }},
		{"FinishRun", func(s *Store, id uint) error {
			return s.FinishRun(ctx, id, Outcome{Status: rundoc.StatusFailed, Error: "boom"})
		},
			rundoc.StatusFailed, []rundoc.Status{rundoc.StatusQueued, rundoc.StatusRunning},
			func(r *rundoc.Run) [2]any { return [2]any{r.Error + " " + nonNil(r.FinishedAt), "boom set"} }},
	}
	statuses := []rundoc.Status{rundoc.StatusQueued, rundoc.StatusRunning, rundoc.StatusSucceeded, rundoc.StatusFailed, rundoc.StatusCanceled, rundoc.StatusInterrupted}
	for _, op := range ops {
		for _, from := range statuses {
			t.Run(op.name+"/"+string(from), func(t *testing.T) {
				s := newStore(t)
				r := &Run{Status: from}
				create(t, s, r)
				before := get(t, s, r.ID)
				err := op.apply(s, r.ID)
				after := get(t, s, r.ID)
				if slices.Contains(op.from, from) {
					if err != nil {
						t.Fatalf("got %v, want success", err)
					}
					if after.Status != op.to {
						t.Errorf("status: got %s, want %s", after.Status, op.to)
					}
					if c := op.check(after); c[0] != c[1] {
						t.Errorf("got %v, want %v", c[0], c[1])
					}
					return
				}
				if !errors.Is(err, ErrConflict) {
					t.Fatalf("got %v, want ErrConflict", err)
				}
				if !strings.Contains(err.Error(), "status is "+string(from)) {
					t.Errorf("error: got %q, want it to name status %s", err, from)
				}
				if !reflect.DeepEqual(after, before) {
					t.Errorf("run: got %+v, want it unchanged %+v", after, before)
				}
			})
		}
		t.Run(op.name+"/missing", func(t *testing.T) {
			s := newStore(t)
			if err := op.apply(s, 42); !errors.Is(err, ErrNotFound) {
				t.Errorf("got %v, want ErrNotFound", err)
			}
		})
	}
}

func nonNil(t *time.Time) string {
	if t == nil {
		return "nil"
	}
	return "set"
}

func TestStartRunTime(t *testing.T) { eachBackend(t, testStartRunTime) }

func testStartRunTime(t *testing.T) {
	s := newStore(t)
	r := &Run{}
	create(t, s, r)
	at := time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.FixedZone("X", 3600))
	if err := s.StartRun(context.Background(), r.ID, at); err != nil {
		t.Fatal(err)
	}
	// Kept in UTC (to the microsecond on PostgreSQL).
	if got := get(t, s, r.ID).StartedAt; got == nil || !got.Equal(s.stored(at)) || got.Location() != time.UTC {
		t.Errorf("StartedAt: got %v, want %v in UTC", got, s.stored(at))
	}
}

func TestFinishRun(t *testing.T) { eachBackend(t, testFinishRun) }

func testFinishRun(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	r := &Run{Label: "trunk"}
	create(t, s, r)
	if err := s.StartRun(ctx, r.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Minute)
	cpu, heap := []byte("cpu profile bytes"), []byte("heap profile bytes")
	o := Outcome{
		Status: rundoc.StatusSucceeded, Complete: true,
		Environment: &rundoc.Environment{GoVersion: "go1.26.8", KafkaGoVersion: "v0.4.51", OS: "linux", Arch: "amd64", Cores: 2,
			GOMAXPROCS: 2, Broker: "embedded", LoadAverage: &rundoc.LoadAverage{Load1: 0.5, Load5: 0.25, Load15: 0.125},
			Config: &rundoc.Config{Mode: "raw", Settings: []rundoc.Setting{{Name: "acks", Value: "all"}}}},
		Measurement: &rundoc.Measurement{WarmupRecords: 10, MeasuredRecords: 1000, WindowSeconds: 1.5, CPUSamples: 6,
			CPUSampleMs: 250, Notes: []string{"a note"}},
		Output: "1000 records sent",
		Metrics: []rundoc.Metric{
			{Name: "records-per-sec", Value: 1},
			{Name: "record-send-rate", Value: 1000, Unit: "records/s", Better: rundoc.HigherIsBetter, Help: "acknowledged records per second"},
			{Name: "mb-per-sec", Value: 0.25},
			{Name: "latency-p99", Value: 9, Better: rundoc.LowerIsBetter},
			{Name: "record-latency-p99", Value: 3},
		},
		// Not sorted by T: the order given is the order kept.
		Series:     []rundoc.SeriesPoint{{T: 3, Records: 30}, {T: 1, Records: 10}, {T: 2, Records: 20, LatencyAvgMs: 1.5}},
		Profiles:   []Profile{{Role: "client", Kind: "cpu", Data: cpu, Samples: 5}, {Role: "broker", Kind: "heap", Data: heap, Bytes: int64(len(heap)), SHA256: sum256(heap)}},
		FinishedAt: at,
	}
	if err := s.FinishRun(ctx, r.ID, o); err != nil {
		t.Fatalf("FinishRun: %v", err)
	}
	got := get(t, s, r.ID)
	for _, tc := range []struct {
		field     string
		got, want any
	}{
		{"Status", got.Status, rundoc.StatusSucceeded},
		{"Complete", got.Complete, true},
		{"Environment", got.Environment, o.Environment},
		{"Measurement", got.Measurement, o.Measurement},
		{"DocumentErr", got.DocumentErr, nil},
		{"Documents", got.Documents, rundoc.Documents{Environment: docText(t, o.Environment), Measurement: docText(t, o.Measurement)}},
		{"Output", got.Output, o.Output},
		{"FinishedAt", got.FinishedAt != nil && got.FinishedAt.Equal(s.stored(at)), true},
		{"RecordsPerSec", fmtPtr(got.RecordsPerSec), 1000.0},
		{"MBPerSec", fmtPtr(got.MBPerSec), 0.25},
		{"P99Ms", fmtPtr(got.P99Ms), 3.0},
		{"metric names", metricNames(got.Metrics), []string{"records-per-sec", "record-send-rate", "mb-per-sec", "latency-p99", "record-latency-p99"}},
		{"metrics", got.Metrics, o.Metrics},
		{"metric rows of the run", rowCount(t, s, "metrics", r.ID), int64(5)},
		{"metric unit", got.Metrics[1].Unit, "records/s"},
		{"series", got.Series, o.Series},
		{"series rows of the run", rowCount(t, s, "series_points", r.ID), int64(3)},
		{"profiles", len(got.Profiles), 2},
		{"cpu bytes", got.Profiles[0].Bytes, int64(len(cpu))},
		{"cpu sha256", got.Profiles[0].SHA256, sum256(cpu)},
		{"cpu samples", got.Profiles[0].Samples, int64(5)},
		{"cpu data", profileData(t, s, got.Profiles[0].ID), cpu},
		{"heap bytes (given)", got.Profiles[1].Bytes, int64(len(heap))},
		{"heap sha256 (given)", got.Profiles[1].SHA256, sum256(heap)},
		{"caller's profile", o.Profiles[0].SHA256 + o.Metrics[1].Name, "record-send-rate"},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.field, tc.got, tc.want)
		}
	}
}

func metricNames(ms []rundoc.Metric) []string {
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return names
}

func TestFinishRunKeyFigures(t *testing.T) { eachBackend(t, testFinishRunKeyFigures) }

func testFinishRunKeyFigures(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		metrics              []rundoc.Metric
		wantRPS, wantMB, p99 any
	}{
		{"none", nil, nil, nil, nil},
		{"consumer", []rundoc.Metric{{Name: "records-consumed-rate", Value: 5}, {Name: "records-per-sec", Value: 6}}, 5.0, nil, nil},
		{"generic", []rundoc.Metric{{Name: "records-per-sec", Value: 6}, {Name: "latency-p99", Value: 2}}, 6.0, nil, 2.0},
		{"producer", []rundoc.Metric{{Name: "records-per-sec", Value: 6}, {Name: "record-send-rate", Value: 7}, {Name: "mb-per-sec", Value: 1}}, 7.0, 1.0, nil},
		{"zero is a value", []rundoc.Metric{{Name: "mb-per-sec", Value: 0}}, nil, 0.0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			r := &Run{}
			create(t, s, r)
			if err := s.FinishRun(context.Background(), r.ID, Outcome{Status: rundoc.StatusSucceeded, Metrics: tc.metrics}); err != nil {
				t.Fatal(err)
			}
			got := get(t, s, r.ID)
			if fmtPtr(got.RecordsPerSec) != tc.wantRPS || fmtPtr(got.MBPerSec) != tc.wantMB || fmtPtr(got.P99Ms) != tc.p99 {
				t.Errorf("got %v, %v, %v, want %v, %v, %v", fmtPtr(got.RecordsPerSec), fmtPtr(got.MBPerSec), fmtPtr(got.P99Ms), tc.wantRPS, tc.wantMB, tc.p99)
			}
		})
	}
}

func TestFinishRunRejects(t *testing.T) { eachBackend(t, testFinishRunRejects) }

func testFinishRunRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Outcome
	}{
		{"empty status", Outcome{}},
		{"queued", Outcome{Status: rundoc.StatusQueued}},
		{"running", Outcome{Status: rundoc.StatusRunning}},
		{"unknown", Outcome{Status: "done"}},
		{"profile without role", Outcome{Status: rundoc.StatusSucceeded, Profiles: []Profile{{Kind: "cpu"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			r := &Run{Status: rundoc.StatusRunning}
			create(t, s, r)
			before := get(t, s, r.ID)
			err := s.FinishRun(context.Background(), r.ID, tc.o)
			if err == nil || errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
				t.Errorf("got %v, want a validation error", err)
			}
			if after := get(t, s, r.ID); !reflect.DeepEqual(after, before) {
				t.Errorf("run: got %+v, want it unchanged", after)
			}
		})
	}
}

// outcome is a full outcome for the atomicity tests.
func outcome() Outcome {
	return Outcome{
		Status: rundoc.StatusSucceeded, Output: "out", Environment: &rundoc.Environment{GoVersion: "go1.26.8"}, Complete: true,
		Metrics:  []rundoc.Metric{{Name: "record-send-rate", Value: 10}, {Name: "mb-per-sec", Value: 1}},
		Series:   []rundoc.SeriesPoint{{T: 1}, {T: 2}},
		Profiles: []Profile{{Role: "client", Kind: "cpu", Data: []byte("a")}, {Role: "broker", Kind: "refused", Data: []byte("b")}},
	}
}

// checkUntouched asserts a failed FinishRun left the run as it was.
func checkUntouched(t *testing.T, s *Store, before *rundoc.Run) {
	t.Helper()
	after := get(t, s, before.ID)
	if !reflect.DeepEqual(after, before) {
		t.Errorf("run: got %+v, want it unchanged %+v", after, before)
	}
	for _, table := range []string{"metrics", "series_points", "profiles"} {
		if n := rowCount(t, s, table, before.ID); n != 0 {
			t.Errorf("%s rows: got %d, want 0", table, n)
		}
	}
}

// TestFinishRunAtomicConstraint has the database refuse the last profile,
// after the run, its metrics, series and first profile were written.
func TestFinishRunAtomicConstraint(t *testing.T) { eachBackend(t, testFinishRunAtomicConstraint) }

func testFinishRunAtomicConstraint(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	refuseInsert(t, s, "profiles", "kind", "refused", "profile refused")
	r := &Run{Status: rundoc.StatusRunning}
	create(t, s, r)
	before := get(t, s, r.ID)
	err := s.FinishRun(ctx, r.ID, outcome())
	if err == nil || !strings.Contains(err.Error(), "profile refused") {
		t.Fatalf("FinishRun: got %v, want the trigger's error", err)
	}
	checkUntouched(t, s, before)

	// The run is not stuck: a good outcome still finishes it.
	o := outcome()
	o.Profiles = o.Profiles[:1]
	if err := s.FinishRun(ctx, r.ID, o); err != nil {
		t.Fatalf("FinishRun after the failure: %v", err)
	}
	if got := get(t, s, r.ID); got.Status != rundoc.StatusSucceeded || len(got.Metrics) != 2 || len(got.Profiles) != 1 {
		t.Errorf("got status %s, %d metrics, %d profiles, want succeeded, 2, 1", got.Status, len(got.Metrics), len(got.Profiles))
	}
}

// TestFinishRunAtomicCancel cancels the context once the metrics are
// written, half-way through the transaction.
func TestFinishRunAtomicCancel(t *testing.T) { eachBackend(t, testFinishRunAtomicCancel) }

func testFinishRunAtomicCancel(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := s.db.Callback().Create().After("gorm:create").Register("test:cancel", func(db *gorm.DB) {
		if db.Statement.Table == "metrics" {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{Status: rundoc.StatusRunning}
	create(t, s, r)
	before := get(t, s, r.ID)
	o := outcome()
	o.Profiles = o.Profiles[:1]
	if err := s.FinishRun(ctx, r.ID, o); err == nil {
		t.Fatalf("FinishRun: got no error, want one")
	}
	if ctx.Err() == nil {
		t.Fatalf("the callback did not run")
	}
	checkUntouched(t, s, before)
}

func TestProfiles(t *testing.T) { eachBackend(t, testProfiles) }

func testProfiles(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	cpu := make([]byte, 300_000)
	for i := range cpu {
		cpu[i] = byte(i * 7)
	}
	heap := []byte("heap")
	r, empty := &Run{}, &Run{}
	create(t, s, r, empty)
	if err := s.FinishRun(ctx, r.ID, Outcome{Status: rundoc.StatusSucceeded, Profiles: []Profile{
		{Role: "client", Kind: "cpu", Data: cpu, Samples: 42},
		{Role: "broker", Kind: "heap", Data: heap},
	}}); err != nil {
		t.Fatal(err)
	}

	list, err := s.ListProfiles(ctx, r.ID)
	if err != nil {
		t.Fatalf("ListProfiles: %v", err)
	}
	if len(list) != 2 {
		t.Fatalf("ListProfiles: got %d profiles, want 2", len(list))
	}
	for i, want := range []struct {
		role rundoc.ProfileRole
		kind rundoc.ProfileKind
		data []byte
	}{{rundoc.RoleClient, rundoc.KindCPU, cpu}, {rundoc.RoleBroker, rundoc.KindHeap, heap}} {
		p := list[i]
		if p.Role != want.role || p.Kind != want.kind || p.RunID != r.ID || p.ID == 0 || p.CreatedAt.IsZero() {
			t.Errorf("profile %d: got %+v, want %s/%s of run %d", i, p, want.role, want.kind, r.ID)
		}
		if p.Bytes != int64(len(want.data)) || p.SHA256 != sum256(want.data) {
			t.Errorf("profile %d: got %d bytes, sha256 %s, want %d, %s", i, p.Bytes, p.SHA256, len(want.data), sum256(want.data))
		}
		full, err := s.GetProfile(ctx, p.ID)
		if err != nil {
			t.Fatalf("GetProfile: %v", err)
		}
		if string(full.Data) != string(want.data) || sum256(full.Data) != full.SHA256 {
			t.Errorf("profile %d: got %d bytes of data with sha256 %s, want the stored %d bytes", i, len(full.Data), sum256(full.Data), len(want.data))
		}
		if full.Samples != list[i].Samples || full.Role != want.role {
			t.Errorf("profile %d: got %+v, want the listed fields too", i, full)
		}
	}
	if got := get(t, s, r.ID).Profiles; len(got) != 2 || !reflect.DeepEqual(got, list) || got[0].SHA256 != sum256(cpu) {
		t.Errorf("GetRun profiles: got %+v, want the 2 listed", got)
	}

	if got, err := s.ListProfiles(ctx, empty.ID); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ListProfiles(run without profiles): got %v, %v, want an empty list", got, err)
	}
	if _, err := s.ListProfiles(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("ListProfiles(missing run): got %v, want ErrNotFound", err)
	}
	if _, err := s.GetProfile(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetProfile(missing): got %v, want ErrNotFound", err)
	}
}

func TestMarkInterrupted(t *testing.T) { eachBackend(t, testMarkInterrupted) }

func testMarkInterrupted(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var runs []*Run
	for _, st := range []rundoc.Status{rundoc.StatusQueued, rundoc.StatusRunning, rundoc.StatusSucceeded, rundoc.StatusRunning, rundoc.StatusFailed, rundoc.StatusCanceled, rundoc.StatusInterrupted} {
		runs = append(runs, &Run{Status: st, Error: "was " + string(st)})
	}
	create(t, s, runs...)
	if err := s.StartRun(ctx, runs[0].ID, time.Now()); err != nil { // queued → running too
		t.Fatal(err)
	}
	runs = append(runs, &Run{}) // and one left queued
	create(t, s, runs[len(runs)-1])
	before := map[uint]*rundoc.Run{}
	for _, r := range runs {
		before[r.ID] = get(t, s, r.ID)
	}

	n, err := s.MarkInterrupted(ctx, "server restarted")
	if err != nil {
		t.Fatalf("MarkInterrupted: %v", err)
	}
	if n != 3 {
		t.Errorf("MarkInterrupted: got %d, want 3", n)
	}
	for _, r := range runs {
		b, a := before[r.ID], get(t, s, r.ID)
		if b.Status != rundoc.StatusRunning {
			if !reflect.DeepEqual(a, b) {
				t.Errorf("run %d (%s): got %+v, want it unchanged", r.ID, b.Status, a)
			}
			continue
		}
		if a.Status != rundoc.StatusInterrupted || a.Error != "server restarted" || a.FinishedAt == nil ||
			!reflect.DeepEqual(a.StartedAt, b.StartedAt) {
			t.Errorf("run %d: got status %s, error %q, finished %v, want interrupted, the reason, a time", r.ID, a.Status, a.Error, a.FinishedAt)
		}
	}
	if n, err := s.MarkInterrupted(ctx, "again"); n != 0 || err != nil {
		t.Errorf("MarkInterrupted again: got %d, %v, want 0", n, err)
	}
}

// TestReopen is the restart case: everything stored survives closing and
// reopening the same file.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", "kbench.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	done, running, queued := &Run{Label: "trunk", Spec: `{"s":1}`}, &Run{Label: "branch"}, &Run{}
	create(t, s, done, running, queued)
	for _, id := range []uint{done.ID, running.ID} {
		if err := s.StartRun(ctx, id, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	data := []byte("profile data")
	o := outcome()
	o.Profiles = []Profile{{Role: "client", Kind: "cpu", Data: data}}
	if err := s.FinishRun(ctx, done.ID, o); err != nil {
		t.Fatal(err)
	}
	want := map[uint]*rundoc.Run{}
	for _, id := range []uint{done.ID, running.ID, queued.ID} {
		want[id] = get(t, s, id)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	for id, w := range want {
		if got := get(t, s, id); !reflect.DeepEqual(got, w) {
			t.Errorf("run %d after reopen: got %+v, want %+v", id, got, w)
		}
	}
	p, err := s.GetProfile(ctx, want[done.ID].Profiles[0].ID)
	if err != nil || string(p.Data) != string(data) {
		t.Errorf("profile after reopen: got %v, want its data", err)
	}
	if n, err := s.MarkInterrupted(ctx, "restart"); n != 1 || err != nil {
		t.Errorf("MarkInterrupted after reopen: got %d, %v, want 1", n, err)
	}
	if pos, err := s.QueuePosition(ctx, queued.ID); pos != 1 || err != nil {
		t.Errorf("QueuePosition after reopen: got %d, %v, want 1", pos, err)
	}
}

// TestStartRunConcurrent races 8 starts of each of several runs: exactly
// one per run may win. Run it with -race.
func TestStartRunConcurrent(t *testing.T) { eachBackend(t, testStartRunConcurrent) }

func testStartRunConcurrent(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const runs, starters = 10, 8
	rs := make([]*Run, runs)
	for i := range rs {
		rs[i] = &Run{}
	}
	create(t, s, rs...)
	for _, r := range rs {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, starters)
		for i := range starters {
			wg.Go(func() {
				<-start
				errs[i] = s.StartRun(ctx, r.ID, time.Now())
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrConflict):
				t.Errorf("run %d: got %v, want nil or ErrConflict", r.ID, err)
			}
		}
		if won != 1 {
			t.Errorf("run %d: got %d successful starts, want 1", r.ID, won)
		}
	}
}

func TestQueue(t *testing.T) { eachBackend(t, testQueue) }

func testQueue(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, b, c, d, e := &Run{Spec: "a"}, &Run{Spec: "b"}, &Run{Spec: "c"}, &Run{Spec: "d", Status: rundoc.StatusSucceeded}, &Run{Spec: "e"}
	create(t, s, a, b, c, d, e)
	if err := s.StartRun(ctx, a.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.CancelQueued(ctx, c.ID, "no"); err != nil {
		t.Fatal(err)
	}
	queued, err := s.QueuedRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runIDs(queued), []uint{b.ID, e.ID}; !slices.Equal(got, want) {
		t.Errorf("QueuedRuns: got %v, want %v", got, want)
	}
	if len(queued) == 2 && (queued[0].Spec != "b" || queued[1].Spec != "e") {
		t.Errorf("QueuedRuns specs: got %q, %q, want b, e", queued[0].Spec, queued[1].Spec)
	}
	for _, tc := range []struct {
		r    *Run
		want int
	}{{a, 0}, {b, 1}, {c, 0}, {d, 0}, {e, 2}} {
		if got, err := s.QueuePosition(ctx, tc.r.ID); got != tc.want || err != nil {
			t.Errorf("QueuePosition(%s): got %d, %v, want %d", tc.r.Spec, got, err, tc.want)
		}
	}
	if _, err := s.QueuePosition(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("QueuePosition(missing): got %v, want ErrNotFound", err)
	}
	if err := s.CancelQueued(ctx, 999, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("CancelQueued(missing): got %v, want ErrNotFound", err)
	}
	s2 := newStore(t)
	if q, err := s2.QueuedRuns(ctx); err != nil || q == nil || len(q) != 0 {
		t.Errorf("QueuedRuns of an empty store: got %#v, %v, want an empty list", q, err)
	}
}

// TestLogNoRowData checks that a failed statement is logged without the
// values it carried.
func TestLogNoRowData(t *testing.T) { eachBackend(t, testLogNoRowData) }

func testLogNoRowData(t *testing.T) {
	var buf strings.Builder
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)

	s := newStore(t)
	refuseInsert(t, s, "runs", "label", "refused", "run refused")
	err := s.CreateRuns(context.Background(), []*Run{{Label: "refused", Spec: `{"token":"row-data-marker"}`}})
	if err == nil {
		t.Fatal("CreateRuns: got no error, want one")
	}
	_, _ = s.GetRun(context.Background(), 12345) // not found: not logged
	got := buf.String()
	if !strings.Contains(got, "run refused") || strings.Contains(got, "row-data-marker") || strings.Contains(got, "12345") {
		t.Errorf("log: got %q, want the error without row data", got)
	}
}

// TestConcurrentWriters runs whole run lifecycles in parallel with lists:
// with WAL, the busy timeout and immediate transactions, no caller may
// see "database is locked".
func TestConcurrentWriters(t *testing.T) { eachBackend(t, testConcurrentWriters) }

func testConcurrentWriters(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each+2)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := &Run{Label: fmt.Sprintf("w%d", w)}
				if err := s.CreateRuns(ctx, []*Run{r}); err != nil {
					errs <- err
					return
				}
				if err := s.StartRun(ctx, r.ID, time.Now()); err != nil {
					errs <- err
					return
				}
				o := outcome()
				o.Profiles = []Profile{{Role: "client", Kind: "cpu", Data: []byte{byte(i)}}}
				if err := s.FinishRun(ctx, r.ID, o); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := s.ListRuns(ctx, RunFilter{Status: string(rundoc.StatusSucceeded)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("got %v, want no error", err)
	}
	if _, total, _ := s.ListRuns(ctx, RunFilter{Status: string(rundoc.StatusSucceeded)}); total != workers*each {
		t.Errorf("succeeded runs: got %d, want %d", total, workers*each)
	}
}

func TestGetRunsParts(t *testing.T) { eachBackend(t, testGetRunsParts) }

// testGetRunsParts: GetRunsParts gives each run as GetRun does, its
// metrics (with help texts, in order), spec, documents and every other
// field compare reads alike, with only the parts left out empty.
func testGetRunsParts(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	full := func(label string, n int) *Run {
		r := &Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, Source: rundoc.SourceLaunched,
			Spec: `{"workload":"producer","params":{"acks":"all"}}`, Fingerprint: "fp" + label, GroupID: "g" + label, GroupIndex: 1,
			Output: "out " + label, Environment: docText(t, rundoc.Environment{GoVersion: "go1.26.8"}),
			Measurement: docText(t, rundoc.Measurement{MeasuredRecords: 7}),
			Profiles:    []Profile{{Role: "client", Kind: "cpu", Data: []byte("p" + label)}}}
		for i := 0; i < n; i++ {
			r.Metrics = append(r.Metrics, Metric{Name: fmt.Sprintf("m%d", n-i), Value: float64(i) + 0.25, Unit: "ms",
				Better: rundoc.LowerIsBetter, Help: "help <" + label + ">"})
			r.Series = append(r.Series, SeriesPoint{Seq: n - i, T: float64(i), Records: int64(i), Bytes: int64(2 * i),
				RecordsPerSec: 1.5, MBPerSec: 2.5, LatencyAvgMs: 3.5, LatencyMaxMs: 4.5, CPUPercent: 5.5})
		}
		return r
	}
	a, b, c := full("a", 3), &Run{Label: "bare"}, full("c", 60)
	create(t, s, a, b, c)
	ids := []uint{c.ID, a.ID, b.ID}
	for _, parts := range []RunParts{{}, AllRunParts, {Output: true}, {Series: true}, {Profiles: true}} {
		got, err := s.GetRunsParts(ctx, ids, parts)
		if err != nil {
			t.Fatalf("%+v: %v", parts, err)
		}
		if len(got) != len(ids) {
			t.Fatalf("%+v: got %d runs, want %d", parts, len(got), len(ids))
		}
		for i, id := range ids {
			want := *get(t, s, id)
			if !parts.Output {
				want.Output = ""
			}
			if !parts.Series {
				want.Series = nil
			}
			if !parts.Profiles {
				want.Profiles = nil
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("%+v: run %d: GetRunsParts gave\n%+v\nGetRun gives (less the parts left out)\n%+v", parts, id, got[i], want)
			}
			if len(got[i].Metrics) == 0 && id != b.ID {
				t.Errorf("%+v: run %d: no metrics", parts, id)
			}
		}
	}
	if _, err := s.GetRunsParts(ctx, []uint{a.ID, 9999}, RunParts{}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "9999") {
		t.Errorf("unknown run: got %v, want ErrNotFound naming 9999", err)
	}
}
