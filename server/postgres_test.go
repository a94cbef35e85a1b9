package server

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestPostgresSmoke serves the main pages and APIs over a PostgreSQL
// store: a launched run (its child process, profiles, metrics, series),
// an imported series with its history and regression, a comparison and
// a report.
func TestPostgresSmoke(t *testing.T) {
	dbURL := pgtest.URL(t)
	ts := newRunningTestServerOn(t, dbURL, nil)
	id := ts.createRun(t, smallProducer)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusSucceeded || !r.Complete || len(r.Metrics) == 0 || len(r.Profiles) == 0 {
		t.Fatalf("run: status %s complete %v, %d metrics, %d profiles, error %q", r.Status, r.Complete, len(r.Metrics), len(r.Profiles), r.Error)
	}
	// The run was a River job in the same PostgreSQL database.
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var jobs int
	if err := db.QueryRow("SELECT COUNT(*) FROM river_job WHERE (args->>'run_id')::bigint = $1", id).Scan(&jobs); err != nil || jobs != 1 {
		t.Errorf("river_job rows for run %d: %d, %v; want 1", id, jobs, err)
	}
	for _, p := range r.Profiles {
		rec := ts.do(t, "GET", p.Download, "")
		if rec.Code != 200 || int64(rec.Body.Len()) != p.Bytes {
			t.Fatalf("download %s: %d, %d bytes, want 200 and %d", p.Download, rec.Code, rec.Body.Len(), p.Bytes)
		}
		if _, err := profile.Parse(rec.Body); err != nil {
			t.Errorf("profile %s/%s does not parse: %v", p.Role, p.Kind, err)
		}
	}
	ids := backfillKafka14020(t, ts)
	h := ts.history(t, fmt.Sprintf("run=%d", ids[0]))
	if len(h.Points) != 60 || len(h.ChangePoints) != 1 || h.ChangePoints[0].RunID != ids[20] {
		t.Errorf("history: %d points, change points %+v; want 60 and one at run %d", len(h.Points), h.ChangePoints, ids[20])
	}
	if a := ts.getRegressions(t, ""); len(a.Regressions) == 0 || a.Regressions[0].RunID != ids[20] {
		t.Errorf("regressions %+v, want KAFKA-14020's at run %d", a.Regressions, ids[20])
	}
	rec := ts.do(t, "POST", "/api/reports", fmt.Sprintf(`{"title":"pg","runs":[%d,%d],"by":"run"}`, ids[0], ids[30]))
	var report struct{ URL, Slug string }
	if rec.Code != 201 && rec.Code != 200 {
		t.Fatalf("POST /api/reports: %d %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &report); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/", "/api/runs", fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/api/runs/%d", id), fmt.Sprintf("/api/runs/%d/profiles", id),
		fmt.Sprintf("/profiles/%d", r.Profiles[0].ID), fmt.Sprintf("/api/profiles/%d/flamegraph", r.Profiles[0].ID),
		fmt.Sprintf("/history?run=%d", ids[0]), "/regressions", "/api/regressions",
		fmt.Sprintf("/compare?runs=%d,%d", ids[0], ids[30]), fmt.Sprintf("/api/compare?runs=%d,%d", ids[0], ids[30]),
		"/api/runs?label=trunk",
	} {
		if rec := ts.do(t, "GET", path, ""); rec.Code != 200 {
			t.Errorf("GET %s: %d %s", path, rec.Code, strings.TrimSpace(rec.Body.String()[:min(rec.Body.Len(), 300)]))
		}
	}
	if report.Slug != "" {
		if rec := ts.do(t, "GET", "/r/"+report.Slug, ""); rec.Code != 200 {
			t.Errorf("GET /r/%s: %d", report.Slug, rec.Code)
		}
		if rec := ts.do(t, "DELETE", fmt.Sprintf("/api/runs/%d", ids[0]), ""); rec.Code != 409 {
			t.Errorf("DELETE a run a report uses: %d, want 409", rec.Code)
		}
	} else {
		t.Errorf("report answer %s has no slug", rec.Body)
	}
}
