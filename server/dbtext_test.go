package server

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	// The pgx driver for database/sql ("pgx"), to read what PostgreSQL
	// holds without the store.
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/kbench/kbench/internal/store"
)

// databaseText is everything the test server's database holds that a
// secret could hide in, for tests that grep it: on SQLite the file's
// bytes (the store closed first, so that the WAL is in the file); on
// PostgreSQL, whose files are the server's, the value of every text,
// character, JSON and bytea column of every row of every table in the
// database's schema (kbench's tables and whatever else is stored there),
// read as the database has it.
func (ts *testServer) databaseText(t *testing.T) []byte {
	t.Helper()
	if !store.IsPostgresURL(ts.dsn) {
		ts.st.Close() // flush the WAL into the file
		data, err := os.ReadFile(ts.dsn)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	db, err := sql.Open("pgx", ts.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema()
		AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea')
		ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	type column struct{ table, name, typ string }
	var cols []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.table, &c.name, &c.typ); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if len(cols) == 0 {
		t.Fatal("no text columns in the PostgreSQL database: not the server's database?")
	}
	var out bytes.Buffer
	tables := map[string]bool{}
	for _, c := range cols {
		tables[c.table] = true
		expr := fmt.Sprintf("%q", c.name)
		if c.typ != "bytea" {
			expr += "::text"
		}
		vals, err := db.Query(fmt.Sprintf("SELECT %s FROM %q WHERE %q IS NOT NULL", expr, c.table, c.name))
		if err != nil {
			t.Fatalf("%s.%s: %v", c.table, c.name, err)
		}
		for vals.Next() {
			var v []byte
			if err := vals.Scan(&v); err != nil {
				t.Fatalf("%s.%s: %v", c.table, c.name, err)
			}
			out.Write(v)
			out.WriteByte('\n')
		}
		if err := vals.Err(); err != nil {
			t.Fatalf("%s.%s: %v", c.table, c.name, err)
		}
		vals.Close()
	}
	for _, want := range []string{"runs", "profiles", "profile_blobs"} {
		if !tables[want] {
			t.Errorf("the dump of the PostgreSQL database has no table %s", want)
		}
	}
	return out.Bytes()
}

// storedTime is t as the test server's store keeps it: PostgreSQL's
// timestamptz holds microseconds (the store truncates to them, see
// store.storedTime), SQLite keeps Go's nanoseconds.
func (ts *testServer) storedTime(t time.Time) time.Time {
	if store.IsPostgresURL(ts.dsn) {
		return t.Truncate(time.Microsecond)
	}
	return t
}

// settleDatabase brings a database a benchmark just filled to the state
// a server's database is in once its writes have settled: on PostgreSQL,
// VACUUM ANALYZE, which autovacuum runs within a minute or so of a bulk
// insert (autovacuum_vacuum_insert_threshold); before it, the planner has
// no statistics and every index-only scan still reads each row from the
// table to check its visibility, which made a series' query 7 times
// slower. SQLite has nothing of the kind to wait for (the store steers
// its plans with INDEXED BY, and ANALYZE would change them), so there it
// does nothing.
func settleDatabase(tb testing.TB, ts *testServer) {
	tb.Helper()
	if !store.IsPostgresURL(ts.dsn) {
		return
	}
	db, err := sql.Open("pgx", ts.dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("VACUUM ANALYZE"); err != nil {
		tb.Fatalf("VACUUM ANALYZE: %v", err)
	}
}
