// Package store keeps runs, their metrics, interval series, profiles,
// reports and workers in a database through GORM: SQLite by default (a
// file in WAL mode with a busy timeout), PostgreSQL for a postgres:// URL
// (pgx v5 through gorm.io/driver/postgres). It is the only package that
// holds a *gorm.DB.
//
// Writes go through Outcome (typed documents, metrics and series), for
// launched and imported runs alike; reads come back as internal/rundoc
// types, and docs.go is the one mapping between the two. A stored
// document this code cannot decode still reads (DocumentErr, the text in
// Documents). GetProfile checks a profile's bytes against their stored
// sha256 and answers a *CorruptError (a 500 naming the profile, never its
// bytes) when they differ.
//
// Schema: versioned migrations with gormigrate (migrations.go, table
// kbench_migrations), each declaring frozen copies of the models it
// creates. Before opening for writing, schema.go inspects the database
// read-only and refuses a foreign or newer one (ErrForeignDatabase,
// ErrNewerSchema) without changing it; an unversioned kbench database is
// taken as 0001_initial.
//
// The two dialects: postgres.go's dialector picks double precision and
// text COLLATE "C" (so text sorts by bytes as in SQLite), rebind turns ?
// into $n for raw database/sql queries, and Store.pg selects the few
// queries spelled twice. Where SQLite's single writer serialises, an
// advisory lock per repetition group (AppendRuns) and row locks
// (DeleteRun, CreateReport, PruneRuns) do on PostgreSQL. Redact hides a
// URL's password in every message. Transitions of a run's status are
// conditional updates; the loser of a race gets ErrConflict.
//
// store imports only internal/rundoc of kbench's packages: never the
// engine, the lifecycle, the server or the views.
package store
