package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/pgtest"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" for database/sql
)

func TestIsPostgresURL(t *testing.T) {
	for _, tc := range []struct {
		dsn  string
		want bool
	}{
		{"postgres://u@h/db", true},
		{"postgresql://u@h/db", true},
		{"POSTGRES://u@h/db", true},
		{"kbench-data/kbench.db", false},
		{"postgres.db", false},
		{"./postgres://x", false},
	} {
		if got := IsPostgresURL(tc.dsn); got != tc.want {
			t.Errorf("IsPostgresURL(%q): got %v, want %v", tc.dsn, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://kbench:s3cret@db:5432/kbench?sslmode=disable", "postgres://kbench:xxxxx@db:5432/kbench?sslmode=disable"},
		{"postgresql://kbench@db/kbench", "postgresql://kbench@db/kbench"},
		{"postgres://db/kbench?password=s3cret&sslmode=require", "postgres://db/kbench?password=xxxxx&sslmode=require"},
		{"postgres://kbench:p%40ss@db/kbench", "postgres://kbench:xxxxx@db/kbench"},
		{"postgres://kbench:s3cret@db:bad port/kbench", "postgres://(unparsable URL)"},
		{"data/kbench.db", "data/kbench.db"},
	} {
		if got := Redact(tc.dsn); got != tc.want {
			t.Errorf("Redact(%q): got %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

// TestPostgresErrorsHidePassword: whatever fails, an error names the
// database without its password, also when the driver's own message
// would quote it.
func TestPostgresErrorsHidePassword(t *testing.T) {
	const secret = "s3cret-Pw"
	dsns := []string{
		// Nothing listens on port 1: the driver's connection error.
		"postgres://kbench:" + secret + "@127.0.0.1:1/kbench?sslmode=disable&connect_timeout=2",
		"postgres://kbench@127.0.0.1:1/kbench?sslmode=disable&connect_timeout=2&password=" + secret,
		// Not a URL the driver parses.
		"postgres://kbench:" + secret + "@127.0.0.1:99999999/kbench",
	}
	if base := testPostgresBase(); base != "" {
		// A server that answers: a database that does not exist.
		u := strings.Replace(base, "://", "://kbench:"+secret+"@", 1)
		if strings.Contains(base, "@") {
			u = strings.Replace(base, "@", ":"+secret+"@", 1)
		}
		dsns = append(dsns, strings.Replace(u, "/postgres", "/kbench_no_such_database", 1))
	}
	for _, dsn := range dsns {
		s, err := Open(dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s): got no error", Redact(dsn))
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Open: error %q shows the password", err)
		}
		if !strings.Contains(err.Error(), "store: open postgres://") {
			t.Errorf("Open: error %q does not name the database", err)
		}
	}
}

// testPostgresBase is KBENCH_TEST_POSTGRES, "" when unset.
func testPostgresBase() string {
	return strings.TrimSpace(getenv(pgtest.EnvURL))
}

// pgTables lists the tables of a PostgreSQL database's current schema.
func pgTables(t *testing.T, url string) []string {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := strings0(db, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

func pgExec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// TestPostgresRefusesForeignDatabase (PostgreSQL): another
// application's tables without kbench's migrations table are refused,
// and nothing is created.
func TestPostgresRefusesForeignDatabase(t *testing.T) {
	url := pgtest.URL(t)
	pgExec(t, url, "CREATE TABLE customers (id bigint PRIMARY KEY, name text)")
	s, err := Open(url)
	if err == nil {
		s.Close()
		t.Fatal("Open(a database with another application's tables): got no error")
	}
	if !errors.Is(err, ErrForeignDatabase) || !strings.Contains(err.Error(), "customers") {
		t.Errorf("Open: got %v, want ErrForeignDatabase naming the table", err)
	}
	if got := pgTables(t, url); !slices.Equal(got, []string{"customers"}) {
		t.Errorf("tables after the refusal: %v, want only customers", got)
	}
}

// TestPostgresRefusesNewerSchema (PostgreSQL): a database a newer
// kbench migrated is refused and left as it is.
func TestPostgresRefusesNewerSchema(t *testing.T) {
	url := pgtest.URL(t)
	s, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, &Run{Label: "kept"})
	s.Close()
	pgExec(t, url, "INSERT INTO kbench_migrations (id) VALUES ('9999_future')")
	before := pgTables(t, url)
	s, err = Open(url)
	if err == nil {
		s.Close()
		t.Fatal("Open(a newer schema): got no error")
	}
	var se *SchemaError
	if !errors.Is(err, ErrNewerSchema) || !errors.As(err, &se) || se.Found != "9999_future" {
		t.Errorf("Open: got %v, want ErrNewerSchema found 9999_future", err)
	}
	if got := pgTables(t, url); !slices.Equal(got, before) {
		t.Errorf("tables: got %v, want %v", got, before)
	}
	// Reopening an up-to-date database changes nothing and keeps its runs.
	pgExec(t, url, "DELETE FROM kbench_migrations WHERE id = '9999_future'")
	s, err = Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if runs, n, err := s.ListRuns(context.Background(), RunFilter{}); err != nil || n != 1 || runs[0].Label != "kept" {
		t.Errorf("ListRuns after reopening: %v, %d, %v; want the one run", runs, n, err)
	}
}

// TestTextRoundTrip: text reads back as written and sorts byte by byte
// on both backends (PostgreSQL's columns are text with the C collation:
// no length limit SQLite would not have, no locale order).
func TestTextRoundTrip(t *testing.T) { eachBackend(t, testTextRoundTrip) }

func testTextRoundTrip(t *testing.T) {
	s := newStore(t)
	long := strings.Repeat("ł", 300)
	labels := []string{"é", "a", "B", long, "Z-1", "a b", "a_b"}
	for _, l := range labels {
		create(t, s, &Run{Label: l, GroupID: strings.Repeat("g", 40), Status: rundoc.StatusSucceeded})
	}
	got, err := s.Labels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(labels)
	slices.Sort(want) // Go compares strings byte by byte, as SQLite's BINARY
	if !slices.Equal(got, want) {
		t.Errorf("Labels: got %q, want %q", got, want)
	}
}

func getenv(name string) string { return os.Getenv(name) }

// TestConcurrentFirstOpen: processes opening a new PostgreSQL database
// at the same time (a server and its workers started together) all
// succeed: one migrates, the others wait for it and find the schema
// made.
func TestConcurrentFirstOpen(t *testing.T) {
	dsn := pgtest.URL(t)
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := Open(dsn)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Open: %v", err)
		}
	}
}
