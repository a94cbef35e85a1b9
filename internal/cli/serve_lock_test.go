package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/dirlock"
	"github.com/kbench/kbench/server"
)

// TestServeRefusesLockedDataDir: while another holder has the data
// directory's lock (taken here, as a server would), serve exits 1 naming
// it, before opening the store; an SQLite --database outside the data
// directory is locked too.
func TestServeRefusesLockedDataDir(t *testing.T) {
	dir := t.TempDir()
	l, err := dirlock.Acquire(dirlock.In(dir), "kbench serve")
	if err != nil {
		t.Fatal(err)
	}
	// Were the lock not checked, serve would serve: the context ends it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	set := serveSettings{Listen: "127.0.0.1:0", Config: server.Config{DataDir: dir, Concurrency: 1, Loopback: true, RunTimeout: time.Minute}}
	if code := serve(ctx, set, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr.String())
	}
	msg := stderr.String()
	for _, want := range []string{"the data directory " + dir + " is in use by kbench serve (pid " + strconv.Itoa(os.Getpid()), "started ", "choose another --data"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q lacks %q", msg, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kbench.db")); !os.IsNotExist(err) {
		t.Errorf("the refused server opened the store: %v", err)
	}
	l.Release()

	// An SQLite file elsewhere: its FILE.lock.
	db := filepath.Join(t.TempDir(), "shared.db")
	l, err = dirlock.Acquire(db+".lock", "kbench serve")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	stderr.Reset()
	set.Database = db
	if code := serve(ctx, set, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "the database "+db+" is in use by kbench serve (pid ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
