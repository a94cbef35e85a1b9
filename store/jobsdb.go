package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/driver/sqlite"
)

// OpenJobsDB opens a second pool on the store's SQLite file for the job
// engine (River, in package jobs), with one connection: SQLite has one
// writer at a time, and River's own goroutines would otherwise meet each
// other's locks. It goes through the same driver as the store (the cgo
// go-sqlite3 GORM uses), never a second SQLite library: two copies of
// SQLite in one process do not share POSIX locks, and one closing the file
// would drop the other's (see ../shared/design.md). The options are the
// store's, so River's transactions wait for the write lock as the store's
// do. The caller closes it after stopping the engine.
func (s *Store) OpenJobsDB(ctx context.Context) (*sql.DB, error) {
	var seq int
	var name, path string
	// The main database's file, as the store opened it.
	if err := s.sqlDB.QueryRowContext(ctx, "SELECT seq, name, file FROM pragma_database_list WHERE name = 'main'").Scan(&seq, &name, &path); err != nil {
		return nil, fmt.Errorf("store: jobs database: %w", err)
	}
	if path == "" {
		return nil, errors.New("store: jobs database: the store is not a file")
	}
	// The options Open gives the store's connections (TestJobsDBSettings
	// checks they agree).
	dsn := fmt.Sprintf("%s?_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_txlock=immediate",
		path, busyTimeout.Milliseconds())
	db, err := sql.Open(sqlite.DriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("store: jobs database: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: jobs database: %w", err)
	}
	return db, nil
}
