package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"
)

// IsPostgresURL reports whether dsn names a PostgreSQL database
// (postgres:// or postgresql://) rather than an SQLite file.
func IsPostgresURL(dsn string) bool {
	lower := strings.ToLower(dsn)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

// redacted replaces a password wherever a database is named.
const redacted = "xxxxx"

// Redact returns dsn as it may be shown: a PostgreSQL URL with its
// password (in the user part or a password parameter) replaced by
// "xxxxx"; an SQLite path unchanged. A URL that does not parse is
// shown only by its scheme, since where its password is cannot be told.
func Redact(dsn string) string {
	if !IsPostgresURL(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn[:strings.Index(dsn, "://")+3] + "(unparsable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", redacted)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// passwordOf is the password a PostgreSQL URL holds, "" for none.
func passwordOf(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	if p, ok := u.User.Password(); ok && p != "" {
		return p
	}
	return u.Query().Get("password")
}

// redactSecret replaces secret in msg (nothing to do for "").
func redactSecret(msg, secret string) string {
	if secret == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, secret, redacted)
	// A URL's password may appear percent-encoded.
	if enc := url.QueryEscape(secret); enc != secret {
		msg = strings.ReplaceAll(msg, enc, redacted)
	}
	if enc := url.PathEscape(secret); enc != secret {
		msg = strings.ReplaceAll(msg, enc, redacted)
	}
	return msg
}

// redactedError is an error whose text had a password removed. It still
// unwraps to the original, so errors.Is and errors.As see through it;
// only its text changes.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with secret removed from its text.
func redactErr(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) &&
		!strings.Contains(err.Error(), url.QueryEscape(secret)) && !strings.Contains(err.Error(), url.PathEscape(secret)) {
		return err
	}
	return &redactedError{msg: redactSecret(err.Error(), secret), err: err}
}

// openPostgres opens the PostgreSQL database dsn names (through pgx v5
// and GORM's PostgreSQL driver), refusing a foreign or newer one as
// inspectPostgres decides, and migrates it. Every error and log line
// shows the URL redacted.
func openPostgres(dsn string) (*Store, error) {
	secret := passwordOf(dsn)
	name := Redact(dsn)
	fail := func(err error) error {
		return redactErr(fmt.Errorf("store: open %s: %w", name, err), secret)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fail(err)
	}
	if cfg.ConnectTimeout == 0 {
		// Unreachable is an answer worth having soon: serve and workers
		// exit with it.
		cfg.ConnectTimeout = 10 * time.Second
	}
	sqlDB := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
		// Scan timestamptz in UTC, as SQLite gives back what was stored
		// (UTC): pgx would give the process's local zone.
		c.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}))
	maxConns := max(2*runtime.GOMAXPROCS(0), 8)
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ConnectTimeout+5*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fail(err)
	}
	// A server and its workers often start together on a new database:
	// one migrates while the others wait, then find it migrated.
	unlock, err := lockMigrations(sqlDB)
	if err != nil {
		sqlDB.Close()
		return nil, fail(err)
	}
	if err := inspectPostgres(ctx, sqlDB); err != nil {
		unlock()
		sqlDB.Close()
		return nil, fail(err)
	}
	db, err := gorm.Open(pgDialector{&postgres.Dialector{Config: &postgres.Config{Conn: sqlDB}}}, gormConfig(secret, true))
	if err != nil {
		unlock()
		sqlDB.Close()
		return nil, fail(err)
	}
	s := &Store{db: db, sqlDB: sqlDB, pg: true, pgConfig: cfg}
	err = migrate(db)
	unlock()
	if err != nil {
		sqlDB.Close()
		return nil, fail(err)
	}
	if s.listen, err = startListener(ctx, s); err != nil {
		sqlDB.Close()
		return nil, fail(err)
	}
	return s, nil
}

// pgDialector is GORM's PostgreSQL dialect with the column types chosen
// so that a value reads back as it does from SQLite: float64 as double
// precision (GORM's default, numeric, is slower and refuses infinities),
// and every string as text with the "C" collation, so that no length
// limit applies that SQLite would not enforce (a 300-character label
// stores on both) and text sorts and compares byte by byte as SQLite's
// BINARY does (labels, series keys), whatever the database's locale.
type pgDialector struct{ *postgres.Dialector }

// DataTypeOf is the column type of a field.
func (d pgDialector) DataTypeOf(field *schema.Field) string {
	switch field.DataType {
	case schema.Float:
		return "double precision"
	case schema.String:
		return `text COLLATE "C"`
	}
	return d.Dialector.DataTypeOf(field)
}

// Migrator is the PostgreSQL driver's migrator, asking this dialect for
// column types.
func (d pgDialector) Migrator(db *gorm.DB) gorm.Migrator {
	return postgres.Migrator{Migrator: migrator.Migrator{Config: migrator.Config{
		DB: db, Dialector: d, CreateIndexAfterCreateTable: true,
	}}}
}

// inspectPostgres is inspect for a PostgreSQL database: its current
// schema (normally public) with no tables is new; with kbench's
// migrations table it is kbench's unless it records a migration this
// kbench does not know (ErrNewerSchema); without it, any table there is
// another application's (ErrForeignDatabase). kbench never wrote to
// PostgreSQL before it recorded versions, so no unversioned database is
// taken as kbench's. It only reads.
func inspectPostgres(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() ORDER BY table_name`)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	if len(tables) == 0 {
		return nil
	}
	for _, t := range tables {
		if t == migrationsTable {
			return checkVersions(db)
		}
	}
	return &SchemaError{Kind: ErrForeignDatabase,
		Detail: fmt.Sprintf("its schema has tables %s and no %s", listOf(tables), migrationsTable)}
}

// rebind turns the ? placeholders of a query sent through sqlDB into
// PostgreSQL's $1, $2, … (pgx takes no ?); SQLite's queries pass
// unchanged. Question marks inside quoted strings are left alone.
func (s *Store) rebind(query string) string {
	if !s.pg {
		return query
	}
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// migrationLockWait bounds how long a process waits for another one's
// migrations: a migration that builds an index over a large database
// takes minutes.
const migrationLockWait = 15 * time.Minute

// lockMigrations takes the PostgreSQL advisory lock that serializes
// migrations (kbench's and River's) between processes, on a connection
// of its own held until unlock: two processes migrating one database at
// once would both try to create the same tables, and one would fail.
func lockMigrations(db *sql.DB) (unlock func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), migrationLockWait)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1, $2)", advisoryGroups, advisoryMigrations); err != nil {
		conn.Close()
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	return func() {
		// Closing the session would release the lock too; unlocking
		// first lets the connection go back to the pool.
		conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1, $2)", advisoryGroups, advisoryMigrations)
		conn.Close()
	}, nil
}

// advisoryMigrations is the second key of the migrations' advisory lock;
// the first is advisoryGroups, kbench's class of locks, whose other
// second keys are hashes of repetition groups' ids. Should one equal it,
// an append would wait for a migration, nothing worse.
const advisoryMigrations = -1

// MigrationLock takes the lock a PostgreSQL store migrated under, for
// another migration of the same database (River's tables): unlock must
// be called when done. On SQLite, whose file lock serializes writers,
// it does nothing.
func (s *Store) MigrationLock() (unlock func(), err error) {
	if !s.pg {
		return func() {}, nil
	}
	return lockMigrations(s.sqlDB)
}
