// Package pgtest gives tests a fresh PostgreSQL database of their own on
// the server named by KBENCH_TEST_POSTGRES (test.sh starts a throwaway
// cluster and sets it). A test binary whose TestMain goes through Main
// gets copies of one database it prepared once (kbench's migrations
// take longer than the copy, and the suites open hundreds of
// databases). Without the server the tests that need PostgreSQL skip,
// unless KBENCH_REQUIRE_POSTGRES=1, when they fail: a CI run that meant
// to test PostgreSQL never passes by skipping it. Under go test -short
// they always skip: the fast tier touches no PostgreSQL (see
// internal/testutil/tier).
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/tier"

	// The pgx driver for database/sql ("pgx"), to create and drop
	// databases.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// EnvURL is the variable naming a running PostgreSQL server for tests:
// a URL whose user may create databases, e.g.
// postgres://kbench@127.0.0.1:5432/postgres?sslmode=disable.
const EnvURL = "KBENCH_TEST_POSTGRES"

// EnvRequire set to 1 makes a missing EnvURL fail the tests instead of
// skipping them.
const EnvRequire = "KBENCH_REQUIRE_POSTGRES"

// EnvBackend set to "postgres" moves the stores tests open through DSN
// (and the server's test servers) from SQLite files to fresh PostgreSQL
// databases: test.sh runs the packages whose tests open a store a second
// time so.
const EnvBackend = "KBENCH_TEST_BACKEND"

// OnPostgres reports whether EnvBackend asks for PostgreSQL.
func OnPostgres() bool { return os.Getenv(EnvBackend) == "postgres" }

// DSN is a fresh, empty database for t on the backend EnvBackend names:
// sqlitePath (a file in one of t's temporary directories), or under
// EnvBackend=postgres a new PostgreSQL database from URL, with URL's
// skips.
func DSN(t testing.TB, sqlitePath string) string {
	t.Helper()
	if OnPostgres() {
		return URL(t)
	}
	return sqlitePath
}

// Main runs a test binary's tests (m.Run) with URL's databases copied
// from a template that prepare brings to the schema its tests expect,
// made on the first URL call (never, when no test asks for PostgreSQL)
// and dropped when the tests end. prepare must close every connection
// it opens: PostgreSQL copies no database that has a session. Tests that
// need a database with nothing in it use EmptyURL.
func Main(m *testing.M, prepare func(ctx context.Context, url string) error) int {
	tmpl.prepare = prepare
	code := m.Run()
	if tmpl.name != "" {
		if err := dropDatabase(os.Getenv(EnvURL), tmpl.name); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	return code
}

// tmpl is the binary's template database (Main): made once, and copied
// one CREATE DATABASE at a time, since a copy in progress counts as a
// session of the template for the next.
var tmpl struct {
	prepare func(ctx context.Context, url string) error
	once    sync.Once
	mu      sync.Mutex
	name    string
	err     error
}

// URL creates a database with a random name on the server EnvURL names
// and returns its URL: a copy of the template when the binary's TestMain
// went through Main, else empty. The database is dropped when t ends
// (after the cleanups registered later, such as closing a store on it).
// It skips t under -short, and when EnvURL is unset (fails it under
// EnvRequire=1).
func URL(t testing.TB) string {
	t.Helper()
	base := baseURL(t)
	if tmpl.prepare == nil {
		return create(t, base, "")
	}
	tmpl.once.Do(func() { tmpl.name, tmpl.err = makeTemplate(base) })
	if tmpl.err != nil {
		t.Fatalf("pgtest: %v", tmpl.err)
	}
	tmpl.mu.Lock()
	defer tmpl.mu.Unlock()
	return create(t, base, tmpl.name)
}

// EmptyURL is URL's database without the template: nothing in it, for
// the tests of what a first open does.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return create(t, baseURL(t), "")
}

// baseURL is EnvURL, with URL's skips.
func baseURL(t testing.TB) string {
	t.Helper()
	tier.Integration(t, "PostgreSQL")
	base := os.Getenv(EnvURL)
	if base == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s is not set and %s=1: PostgreSQL tests must run", EnvURL, EnvRequire)
		}
		t.Skipf("PostgreSQL: %s is not set (test.sh sets it)", EnvURL)
	}
	return base
}

// makeTemplate creates the binary's template database and prepares it.
func makeTemplate(base string) (string, error) {
	name := randomName("kbench_tmpl_")
	if err := createDatabase(base, name, ""); err != nil {
		return "", err
	}
	u, err := dbURL(base, name)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err = tmpl.prepare(ctx, u)
		cancel()
	}
	if err != nil {
		dropDatabase(base, name)
		return "", fmt.Errorf("prepare the template database: %w", err)
	}
	return name, nil
}

// create makes t's database (from template, when not empty) and drops it
// when t ends.
func create(t testing.TB, base, template string) string {
	t.Helper()
	name := randomName("kbench_test_")
	if err := createDatabase(base, name, template); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dropDatabase(base, name); err != nil {
			t.Error(err)
		}
	})
	u, err := dbURL(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func randomName(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// dbURL is base with its database replaced by name.
func dbURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("%s: %w", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func createDatabase(base, name, template string) error {
	stmt := "CREATE DATABASE " + name
	if template != "" {
		stmt += " TEMPLATE " + template
	}
	if err := adminExec(base, stmt); err != nil {
		return fmt.Errorf("create database %s on %s: %w", name, redacted(base), err)
	}
	return nil
}

func dropDatabase(base, name string) error {
	// FORCE: a connection a failed test left open must not keep the
	// database alive.
	if err := adminExec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// adminExec runs one statement on the server's administrative database
// (EnvURL's), within a minute.
func adminExec(base, stmt string) error {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return fmt.Errorf("%s: %w", EnvURL, err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = admin.ExecContext(ctx, stmt)
	return err
}

func redacted(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return EnvURL
	}
	return u.Redacted()
}
