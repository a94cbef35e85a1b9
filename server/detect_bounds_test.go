package server

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestDetectionWindowBounded: a window above changepoint.MaxWindow is a
// 400 naming window on every route that runs detection (detection costs
// about series length × window, so an unbounded window stalled the
// server); MaxWindow itself is accepted.
func TestDetectionWindowBounded(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := stepSeries(t, ts, "fp", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 12, "record-send-rate", "records/s", rundoc.HigherIsBetter, 1000, 800)
	over := fmt.Sprintf("window=%d", changepoint.MaxWindow+1)
	at := fmt.Sprintf("window=%d", changepoint.MaxWindow)
	for _, path := range []string{fmt.Sprintf("/api/history?run=%d&", ids[0]), fmt.Sprintf("/history?run=%d&", ids[0]), "/api/regressions?", "/regressions?"} {
		rec := ts.do(t, "GET", path+over+"&max_pvalue=1", "")
		if rec.Code != http.StatusBadRequest || !regexp.MustCompile(`\bwindow\b`).MatchString(rec.Body.String()) ||
			!bytes.Contains(rec.Body.Bytes(), fmt.Appendf(nil, "%d", changepoint.MaxWindow)) {
			t.Errorf("GET %s%s = %d %s, want 400 naming window and its bound", path, over, rec.Code, rec.Body)
		}
		if rec := ts.do(t, "GET", path+at, ""); rec.Code != http.StatusOK {
			t.Errorf("GET %s%s = %d %s, want 200", path, at, rec.Code, rec.Body)
		}
	}
}

// TestDetectionAnswersCached: a second identical /api/history or
// /api/regressions request is served from the cache (no answer is built
// again) with the same body, until a write to the store; other
// parameters are another answer.
func TestDetectionAnswersCached(t *testing.T) {
	ts := newTestServer(t, nil)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := stepSeries(t, ts, "fp", t0, 12, "record-send-rate", "records/s", rundoc.HigherIsBetter, 1000, 800)
	get := func(target string) []byte {
		t.Helper()
		rec := ts.do(t, "GET", target, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", target, ct)
		}
		return rec.Body.Bytes()
	}
	history := fmt.Sprintf("/api/history?run=%d&window=10", ids[0])
	for _, target := range []string{history, "/api/regressions?threshold=1"} {
		builds := ts.answerBuilds.Load()
		first := get(target)
		if n := ts.answerBuilds.Load() - builds; n != 1 {
			t.Fatalf("GET %s: %d answers built, want 1", target, n)
		}
		if second := get(target); !bytes.Equal(second, first) {
			t.Errorf("GET %s again: %s, want %s", target, second, first)
		}
		if n := ts.answerBuilds.Load() - builds; n != 1 {
			t.Errorf("GET %s twice: %d answers built, want 1 (the second from the cache)", target, n)
		}
	}
	// Other parameters are another question.
	builds := ts.answerBuilds.Load()
	get(history + "&max_pvalue=0.01")
	if n := ts.answerBuilds.Load() - builds; n != 1 {
		t.Errorf("other parameters: %d answers built, want 1", n)
	}
	// A write makes the cached answers stale: the next one holds the new run.
	before := get(history)
	stepSeries(t, ts, "fp", t0.Add(30*24*time.Hour), 1, "record-send-rate", "records/s", rundoc.HigherIsBetter, 800, 800)
	builds = ts.answerBuilds.Load()
	after := ts.history(t, fmt.Sprintf("run=%d&window=10", ids[0]))
	if n := ts.answerBuilds.Load() - builds; n != 1 || len(after.Points) != 13 {
		t.Errorf("after a write: %d answers built, %d points; want 1 and 13 (was %s)", n, len(after.Points), before)
	}
}
