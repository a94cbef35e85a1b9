package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestJobsDBSettings: the job engine's pool is on the store's file, with
// one connection and the store's connection settings, and what one pool
// writes the other reads.
func TestJobsDBSettings(t *testing.T) {
	ctx := context.Background()
	st, err := Open(filepath.Join(t.TempDir(), "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db, err := st.OpenJobsDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("max open connections %d, want 1", got)
	}
	for _, pragma := range []string{"journal_mode", "busy_timeout", "foreign_keys", "synchronous"} {
		var want, got string
		if err := st.sqlDB.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s: jobs pool %q, store %q", pragma, got, want)
		}
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE jobs_probe (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.sqlDB.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'jobs_probe'").Scan(&n); err != nil || n != 1 {
		t.Errorf("the store does not see the jobs pool's table (%d, %v): not the same file", n, err)
	}
}
