package server

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/store"
)

// corruptBlob overwrites the stored bytes of every profile blob behind
// the store's back, as a damaged disk or a hand edit would.
func (ts *testServer) corruptBlob(t *testing.T, data []byte) {
	t.Helper()
	driver := "sqlite3"
	if store.IsPostgresURL(ts.dsn) {
		driver = "pgx"
	}
	db, err := sql.Open(driver, ts.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE profile_blobs SET data = $1", data); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptProfileRefused: a stored profile whose bytes no longer hash
// to their sha256 is never served nor parsed: the download, the profile
// page, its flame graph, the pprof UI and the diff all answer a 500 that
// says so, and the server logs it.
func TestCorruptProfileRefused(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "gather", foldedGather)
	other := ts.importRun(t, "single", foldedSingle)
	// Still intact: served.
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/download", id), ""); rec.Code != http.StatusOK {
		t.Fatalf("intact download: %d %s", rec.Code, rec.Body)
	}
	// Bytes that still parse as a profile: only the checksum can tell.
	garbage := []byte("main.main;main.evil 1\n")
	ts.corruptBlob(t, garbage)
	// A fresh server, so no parse is cached from before.
	ts2 := newTestServerOn(t, ts.dsn, nil)
	for _, path := range []string{
		fmt.Sprintf("/api/profiles/%d/download", id),
		fmt.Sprintf("/api/profiles/%d/flamegraph?format=compact", id),
		fmt.Sprintf("/profiles/%d", id),
		fmt.Sprintf("/profiles/%d/pprof/download", id),
		fmt.Sprintf("/profiles/%d/pprof/top", id),
		fmt.Sprintf("/api/diff?base=%d&target=%d", other, id),
		fmt.Sprintf("/diff/%d/%d/pprof/top", other, id),
	} {
		rec := ts2.do(t, "GET", path, "")
		body := rec.Body.String()
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("GET %s = %d, want 500", path, rec.Code)
		}
		// Both profiles share no blob, but the UPDATE damaged both: the
		// first one read is the one named.
		if !strings.Contains(body, "stored bytes do not match their sha256") {
			t.Errorf("GET %s: the answer does not say the bytes are corrupt: %.300s", path, body)
		}
		if strings.Contains(body, "main.evil") {
			t.Errorf("GET %s served the corrupt bytes", path)
		}
	}
	rec := ts2.do(t, "GET", fmt.Sprintf("/api/profiles/%d/download", id), "")
	if want := fmt.Sprintf("profile %d's stored bytes do not match their sha256", id); !strings.Contains(rec.Body.String(), want) {
		t.Errorf("download: %s, want it to say %q", rec.Body, want)
	}
	if logs := ts2.logs.String(); !strings.Contains(logs, "do not match their sha256") {
		t.Errorf("the corrupt profile is not logged: %.500s", logs)
	}
}
