package storetest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/kbench/kbench/internal/store"
)

// MigratePostgres brings the PostgreSQL database at url to the schema a
// server or worker gives it when it starts: kbench's tables (store.Open)
// and River's (internal/jobs migrates them so). The test binaries whose
// databases are copies of a prepared one (pgtest.Main) prepare it with
// this, and close every connection before it is copied.
func MigratePostgres(ctx context.Context, url string) error {
	st, err := store.Open(url)
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("storetest: close the store: %w", err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("storetest: River's pool: %w", err)
	}
	defer pool.Close()
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("storetest: River's migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("storetest: River's migrations: %w", err)
	}
	return nil
}
