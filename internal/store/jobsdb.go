package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
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
	if s.pg {
		return nil, errors.New("store: jobs database: the store is PostgreSQL (OpenJobsPool)")
	}
	var seq int
	var name, path string
	// The main database's file, as the store opened it.
	if err := s.sqlDB.QueryRowContext(ctx, "SELECT seq, name, file FROM pragma_database_list WHERE name = 'main'").Scan(&seq, &name, &path); err != nil {
		return nil, fmt.Errorf("store: jobs database: %w", err)
	}
	if path == "" {
		return nil, errors.New("store: jobs database: the store is not a file")
	}
	db, err := sql.Open(sqlite.DriverName, sqliteDSN(path))
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

// Postgres reports whether the store is a PostgreSQL database, whose job
// engine connects through OpenJobsPool rather than OpenJobsDB.
func (s *Store) Postgres() bool { return s.pg }

// OpenJobsPool opens a pgx pool on a PostgreSQL store's database for the
// job engine (River's pgx driver, which listens for new jobs and
// cancellations with LISTEN/NOTIFY), with the store's connection settings.
// The caller closes it after stopping the engine.
func (s *Store) OpenJobsPool(ctx context.Context) (*pgxpool.Pool, error) {
	if !s.pg {
		return nil, errors.New("store: jobs pool: the store is SQLite (OpenJobsDB)")
	}
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("store: jobs pool: %w", err)
	}
	cfg.ConnConfig = s.pgConfig.Copy()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, redactErr(fmt.Errorf("store: jobs pool: %w", err), s.pgConfig.Password)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, redactErr(fmt.Errorf("store: jobs pool: %w", err), s.pgConfig.Password)
	}
	return pool, nil
}
