package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/go-gormigrate/gormigrate/v2"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm/schema"
)

// ErrForeignDatabase marks a database file that is not kbench's: another
// application's tables, kbench's table names with other columns, or not
// an SQLite file at all. Open refuses it without changing it.
var ErrForeignDatabase = errors.New("not a kbench database")

// ErrNewerSchema marks a database a newer kbench migrated to a schema
// version this one does not know. Open refuses it without changing it.
var ErrNewerSchema = errors.New("written by a newer kbench")

// SchemaError is why Open refused a database file. errors.Is matches it
// with its Kind, ErrForeignDatabase or ErrNewerSchema.
type SchemaError struct {
	Kind error
	// Found is the newest migration ID the file records that this kbench
	// does not know (ErrNewerSchema only).
	Found string
	// Detail says what differs from a kbench database (ErrForeignDatabase).
	Detail string
}

func (e *SchemaError) Error() string {
	if e.Kind == ErrNewerSchema {
		return fmt.Sprintf("%v: schema %s; this kbench knows up to %s", e.Kind, e.Found, SchemaVersion)
	}
	return fmt.Sprintf("%v: %s", e.Kind, e.Detail)
}

func (e *SchemaError) Unwrap() error { return e.Kind }

// inspect decides, before anything writes to the file at path, whether
// Open may use it: a missing or empty file is a new database; a file with
// kbench's migrations table is kbench's unless it records a migration this
// kbench does not know (ErrNewerSchema); a file without it is a kbench
// database from before versions only if its tables are kbench's with the
// columns of schema 0001_initial (ErrForeignDatabase otherwise).
//
// It reads through a connection of its own opened read-only: the store's
// connections would change the file on opening it (switching a
// rollback-journal database to WAL). Without a write-ahead log beside the
// file, the file holds every committed change, and it is opened immutable
// so that SQLite does not create the -wal and -shm files either.
func inspect(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	if fi.Size() == 0 {
		return nil
	}
	uri := "file:" + strings.NewReplacer("%", "%25", "#", "%23").Replace(path) + "?mode=ro"
	if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
		uri += "&immutable=1"
	}
	db, err := sql.Open("sqlite3", uri)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	tables, err := strings0(db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrNotADB {
		return &SchemaError{Kind: ErrForeignDatabase, Detail: "the file is not an SQLite database"}
	}
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	if len(tables) == 0 {
		return nil
	}
	if slices.Contains(tables, migrationsTable) {
		return checkVersions(db)
	}
	return checkUnversioned(db, tables)
}

// checkVersions refuses a database that records a migration this kbench
// does not know.
func checkVersions(db *sql.DB) error {
	ids, err := strings0(db, "SELECT id FROM "+migrationsTable+" ORDER BY id")
	if err != nil {
		return fmt.Errorf("inspect: schema versions: %w", err)
	}
	var unknown []string
	for _, id := range ids {
		if !slices.ContainsFunc(migrations, func(m *gormigrate.Migration) bool { return m.ID == id }) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return &SchemaError{Kind: ErrNewerSchema, Found: unknown[len(unknown)-1]}
	}
	return nil
}

// checkUnversioned accepts a database without the migrations table only if
// every table it has is one of schema 0001_initial's, with exactly its
// columns: what kbench made before it recorded versions (or part of it, if
// that kbench stopped while creating the tables).
func checkUnversioned(db *sql.DB, tables []string) error {
	want, err := columns0001()
	if err != nil {
		return err
	}
	var problems, others, ours []string
	for _, t := range tables {
		if _, ok := want[t]; ok {
			ours = append(ours, t)
		} else {
			others = append(others, t)
		}
	}
	if len(ours) == 0 {
		return &SchemaError{Kind: ErrForeignDatabase, Detail: fmt.Sprintf("it has tables %s and none of kbench's (%s)",
			listOf(others), listOf(sortedKeys(want)))}
	}
	if len(others) > 0 {
		problems = append(problems, fmt.Sprintf("it has tables kbench does not use (%s)", listOf(others)))
	}
	for _, t := range ours {
		cols, err := strings0(db, "SELECT name FROM pragma_table_info(?) ORDER BY cid", t)
		if err != nil {
			return fmt.Errorf("inspect: columns of %s: %w", t, err)
		}
		var extra, missing []string
		for _, c := range cols {
			if !slices.Contains(want[t], c) {
				extra = append(extra, c)
			}
		}
		for _, c := range want[t] {
			if !slices.Contains(cols, c) {
				missing = append(missing, c)
			}
		}
		var what []string
		if len(extra) > 0 {
			what = append(what, fmt.Sprintf("has columns kbench does not use (%s)", listOf(extra)))
		}
		if len(missing) > 0 {
			what = append(what, fmt.Sprintf("lacks kbench's columns (%s)", listOf(missing)))
		}
		if len(what) > 0 {
			problems = append(problems, "table "+t+" "+strings.Join(what, " and "))
		}
	}
	if len(problems) > 0 {
		return &SchemaError{Kind: ErrForeignDatabase, Detail: strings.Join(problems, "; ")}
	}
	return nil
}

// columns0001 maps each table of schema 0001_initial to its columns.
func columns0001() (map[string][]string, error) {
	out := map[string][]string{}
	cache := &sync.Map{}
	for _, m := range schema0001() {
		s, err := schema.Parse(m, cache, schema.NamingStrategy{})
		if err != nil {
			return nil, fmt.Errorf("inspect: schema 0001: %w", err)
		}
		out[s.Table] = s.DBNames
	}
	return out, nil
}

// strings0 runs a query that returns one text column.
func strings0(db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// listOf shows names in a message: the first few, then how many more.
func listOf(names []string) string {
	const show = 6
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:show], ", "), len(names)-show)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
