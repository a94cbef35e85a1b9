package storetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/store"
)

// MigratePostgres brings the PostgreSQL database at url to the schema a
// server or worker gives it when it starts, through the same code:
// kbench's tables (store.Open) and River's (jobs.New migrates them). The
// test binaries whose databases are copies of a prepared one
// (pgtest.Main) prepare it with this; it closes every connection it
// opened, as a copy needs.
func MigratePostgres(ctx context.Context, url string) error {
	st, err := store.Open(url)
	if err != nil {
		return err
	}
	defer st.Close()
	pool, err := st.OpenJobsPool(ctx)
	if err != nil {
		return fmt.Errorf("storetest: River's pool: %w", err)
	}
	defer pool.Close()
	if _, err := jobs.New(ctx, jobs.Postgres(pool), jobs.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}); err != nil {
		return fmt.Errorf("storetest: River's migrations: %w", err)
	}
	return nil
}
