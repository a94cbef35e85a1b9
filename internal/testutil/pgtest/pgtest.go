// Package pgtest gives tests a fresh PostgreSQL database of their own on
// the server named by KBENCH_TEST_POSTGRES (test.sh starts a throwaway
// cluster and sets it). Without it the tests that need PostgreSQL skip,
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
	"net/url"
	"os"
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

// URL creates a database with a random name on the server EnvURL names
// and returns its URL; the database is dropped when t ends (after the
// cleanups registered later, such as closing a store on it). It skips t
// under -short, and when EnvURL is unset (fails it under EnvRequire=1).
func URL(t testing.TB) string {
	t.Helper()
	tier.Integration(t, "PostgreSQL")
	base := os.Getenv(EnvURL)
	if base == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s is not set and %s=1: PostgreSQL tests must run", EnvURL, EnvRequire)
		}
		t.Skipf("PostgreSQL: %s is not set (test.sh sets it)", EnvURL)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	name := "kbench_test_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create database on %s: %v", u.Redacted(), err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// FORCE: a connection a failed test left open must not keep the
		// database alive.
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
