package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

// Store is kbench's database. It is safe for concurrent use.
type Store struct {
	db    *gorm.DB
	sqlDB *sql.DB
	// pg is set for a PostgreSQL store, whose SQL differs from SQLite's
	// in a few queries (history.go) and which takes $n placeholders in
	// queries sent through sqlDB (rebind).
	pg bool
	// pgConfig is a PostgreSQL store's connection configuration, from
	// which OpenJobs opens the job engine's pool.
	pgConfig *pgx.ConnConfig
	// gen counts committed writes, so callers can cache what they derive
	// from the store (rendered pages) until the next write.
	gen atomic.Uint64
	// seriesGen counts the writes that may change a series' succeeded
	// runs (SeriesGeneration); every other write moves gen alone. It
	// moves under seriesLog's lock, which records the keys of the series
	// each move may have changed (SeriesChangedSince).
	seriesGen atomic.Uint64
	seriesLog seriesLog
	// clock is this process's clock (time.Now when nil; SetClock).
	clock func() time.Time
	// listen, on PostgreSQL only, hears of other processes' writes and
	// run events (listen.go).
	listen *listener
}

// Generation changes after every write to the store (and only then).
// Anything computed from reads under one generation stays correct until
// Generation returns a different value. On PostgreSQL that includes the
// writes of other processes on the same database (a kbench worker's
// results, another server's reports), which change Generation within a
// round trip of their commit, and a lost connection to the database,
// after which the store cannot know what it missed.
func (s *Store) Generation() uint64 { return s.gen.Load() }

// SeriesGeneration changes after every write that may change which
// succeeded runs a series holds (ListSeries: a run stored or finished as
// succeeded, runs deleted), whoever made it, and after anything the store
// cannot classify (another process's write of an older kbench, a lost
// PostgreSQL connection); it is unchanged by the writes that cannot (a
// run started, canceled or interrupted, profiles, reports). What is
// derived from the series alone (the regressions behind the runs list's
// badges) can thus be kept across most writes, where a page cache keyed
// by Generation is not; SeriesChangedSince says which series the moves
// since a generation may have changed, so it is brought up to date
// series by series.
func (s *Store) SeriesGeneration() uint64 { return s.seriesGen.Load() }

// wrote marks a write that may change the series of keys
// (SeriesGeneration, SeriesChangedSince; known false: it cannot say
// which); deferred by writing methods, so a cache that saw the old
// generation never keeps serving data from before the write. On
// PostgreSQL it tells the other processes too.
func (s *Store) wrote(keys []string, known bool) {
	s.moveSeries(keys, known)
	s.gen.Add(1)
	s.notifyChange(true, keys, known)
}

// wroteOutsideSeries marks a write that cannot change which succeeded
// runs any series holds: Generation moves, SeriesGeneration does not.
func (s *Store) wroteOutsideSeries() {
	s.gen.Add(1)
	s.notifyChange(false, nil, false)
}

// wroteSeriesIf is wrote when series is set, else wroteOutsideSeries.
func (s *Store) wroteSeriesIf(series bool, keys []string, known bool) {
	if series {
		s.wrote(keys, known)
		return
	}
	s.wroteOutsideSeries()
}

// sqliteDSN is the data source name of every connection to the SQLite
// file at path, the store's and the job engine's (OpenJobsDB) alike.
func sqliteDSN(path string) string {
	return fmt.Sprintf("%s?_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_txlock=immediate",
		path, busyTimeout.Milliseconds())
}

// busyTimeout is how long a statement waits for another connection's write
// lock before failing with SQLITE_BUSY. SQLite has one writer at a time;
// the server's writes are short, so waiting beats failing.
const busyTimeout = 5 * time.Second

// Open opens a kbench database and brings its schema up to date: a
// PostgreSQL database when dsn is a postgres:// or postgresql:// URL
// (IsPostgresURL; see openPostgres), otherwise the SQLite file at path
// dsn, created if needed. An SQLite path must be a file: WAL mode, which
// lets the run list be read while a result is being written, does not
// exist for in-memory databases.
//
// A database that is not kbench's, or one a newer kbench wrote, is
// refused with a *SchemaError (errors.Is ErrForeignDatabase or
// ErrNewerSchema) before anything is written to it: it is left exactly
// as it was. A kbench SQLite database from before schema versions is
// recognised as version 0001_initial and upgraded. Errors name a URL
// with its password redacted (Redact).
func Open(dsn string) (*Store, error) {
	if IsPostgresURL(dsn) {
		return openPostgres(dsn)
	}
	return openSQLite(dsn)
}

// openSQLite opens the SQLite database file at path.
func openSQLite(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: open: empty path")
	}
	// The driver reads options after a '?', so a path holding one would be
	// cut short silently.
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("store: open %s: path must not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Decide before the first connection below, which writes: it switches
	// the file to WAL, and the migrations create tables.
	if err := inspect(path); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// The options are applied by the driver to every pooled connection,
	// which a PRAGMA run once through the pool would not be.
	// _txlock=immediate makes every transaction take the write lock when it
	// begins, so the busy timeout applies to it; a deferred transaction that
	// reads and then writes can fail with SQLITE_BUSY at once instead.
	// With WAL the driver sets synchronous=NORMAL: a commit survives the
	// process crashing; a power cut may lose the last commits but does not
	// corrupt the file.
	db, err := gorm.Open(sqlite.Open(sqliteDSN(path)), gormConfig("", false))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Each SQLite connection keeps its own page cache (up to 2 MiB); an
	// unbounded pool under 50 concurrent readers held 45 of them. WAL lets
	// readers share the file, so a few connections serve as fast.
	maxConns := 2 * runtime.GOMAXPROCS(0)
	sqlDB.SetMaxOpenConns(max(maxConns, 4))
	sqlDB.SetMaxIdleConns(max(maxConns, 4))
	s := &Store{db: db, sqlDB: sqlDB}
	if err := s.initSQLite(); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// gormConfig is the GORM configuration of both backends; secret is a
// password the logger must never show ("" for none).
func gormConfig(secret string, pg bool) *gorm.Config {
	return &gorm.Config{
		Logger:  dbLogger{secret: secret},
		NowFunc: func() time.Time { return storedTime(time.Now(), pg) },
		// Single statements are atomic anyway; the operations that need
		// more than one open their own transaction.
		SkipDefaultTransaction: true,
	}
}

// storedTime is t as the store writes it: in UTC on both backends, and
// on PostgreSQL to the microsecond, its timestamptz precision (SQLite
// keeps nanoseconds), so that what is read back equals what was written.
func storedTime(t time.Time, pg bool) time.Time {
	if pg {
		return t.UTC().Truncate(time.Microsecond)
	}
	return t.UTC()
}

// now is the current time by this process's clock, as s writes it. The
// times of workers' lives (heartbeats) never use it on PostgreSQL, whose
// server's clock every process sharing the database reads (dbNow).
func (s *Store) now() time.Time {
	if s.clock != nil {
		return storedTime(s.clock(), s.pg)
	}
	return storedTime(time.Now(), s.pg)
}

// SetClock makes s read this process's clock from now instead of
// time.Now: tests give a process a clock skewed against the database
// server's. Call it before s is used concurrently.
func (s *Store) SetClock(now func() time.Time) { s.clock = now }

// dbNow is the current time by the database's clock, as an SQL value:
// now() on PostgreSQL, whose server is the one clock every kbench process
// sharing the database reads, whatever the skew between their machines;
// on SQLite, a file only this machine opens, the database's clock is this
// process's, passed as a parameter.
func (s *Store) dbNow() clause.Expr {
	if s.pg {
		return gorm.Expr("now()")
	}
	return gorm.Expr("?", s.now())
}

// dbAgo is the time d before dbNow, as an SQL value.
func (s *Store) dbAgo(d time.Duration) clause.Expr {
	if s.pg {
		return gorm.Expr("now() - make_interval(secs => ?)", d.Seconds())
	}
	return gorm.Expr("?", s.now().Add(-d))
}

// stored is t as s writes it (storedTime).
func (s *Store) stored(t time.Time) time.Time { return storedTime(t, s.pg) }

// initSQLite checks the connection settings and migrates the schema to
// SchemaVersion.
func (s *Store) initSQLite() error {
	var mode string
	if err := s.db.Raw("PRAGMA journal_mode").Scan(&mode).Error; err != nil {
		return fmt.Errorf("journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal", mode)
	}
	var fk int
	if err := s.db.Raw("PRAGMA foreign_keys").Scan(&fk).Error; err != nil {
		return fmt.Errorf("foreign keys: %w", err)
	}
	if fk != 1 {
		return errors.New("foreign keys are off")
	}
	return migrate(s.db)
}

// Close closes the database.
func (s *Store) Close() error {
	s.listen.stop()
	if err := s.sqlDB.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// dbLogger logs failed statements through log/slog and nothing else: no
// SQL tracing, no slow-query warnings. Statements are logged without their
// arguments (a spec or an output can be large, and row data has no place
// in the server's log), and errors that only say the caller gave up or
// found no row are left to the caller.
//
// secret, when set, is the database password: any message that holds it
// (a driver's error quoting its connection string) shows it redacted.
type dbLogger struct{ secret string }

func (l dbLogger) LogMode(logger.LogLevel) logger.Interface { return l }

func (dbLogger) Info(context.Context, string, ...any) {}

func (dbLogger) Warn(context.Context, string, ...any) {}

func (l dbLogger) Error(ctx context.Context, msg string, args ...any) {
	slog.ErrorContext(ctx, redactSecret("store: "+fmt.Sprintf(msg, args...), l.secret))
}

func (l dbLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if err == nil || errors.Is(err, gorm.ErrRecordNotFound) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	sql, _ := fc()
	slog.ErrorContext(ctx, "store: statement failed", "err", redactSecret(err.Error(), l.secret), "sql", sql, "elapsed", time.Since(begin))
}

// ParamsFilter drops a statement's arguments from what is logged.
func (dbLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

// notFound maps GORM's "no row" to ErrNotFound and leaves other errors.
func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}

// Unavailable reports whether err says the database could not be reached
// or the connection to it broke (the network, a server restarting), as
// opposed to the database refusing what was asked: the same request may
// succeed later, so a caller with something worth keeping retries it.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01-57P03: the server is
		// shutting down, or not accepting connections yet.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err)
}
