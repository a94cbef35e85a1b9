package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// TestLiveChartsFragment: GET /runs/:id/live-charts is the live section's
// charts, drawn on the server from the intervals the run reported so far
// (what run.js swaps into the page); a run the server is not running
// shows its stored series, an unknown run is 404.
func TestLiveChartsFragment(t *testing.T) {
	ts := newTestServer(t, nil)
	ctx := context.Background()
	running := &store.Run{Workload: "producer", Status: rundoc.StatusRunning}
	done := &store.Run{Workload: "producer", Status: rundoc.StatusSucceeded, Complete: true,
		Series: []store.SeriesPoint{{Seq: 0, T: 1, RecordsPerSec: 10}, {Seq: 1, T: 2, RecordsPerSec: 12}}}
	if err := ts.st.CreateRuns(ctx, []*store.Run{running, done}); err != nil {
		t.Fatal(err)
	}

	get := func(id uint) (int, string, http.Header) {
		rec := ts.do(t, "GET", fmt.Sprintf("/runs/%d/live-charts", id), "")
		return rec.Code, rec.Body.String(), rec.Header()
	}

	// Before the first interval.
	code, body, hdr := get(running.ID)
	runningDoc := running.Doc()
	if code != http.StatusOK || body != string(ui.LiveChartsOf(&runningDoc)) || !strings.Contains(body, "waiting for the first interval") {
		t.Errorf("running run without intervals: %d %s", code, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := hdr.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store: every request must see the latest intervals", cc)
	}

	// Each interval the run reports is in the next answer.
	var pts []rundoc.SeriesPoint
	for i := 1; i <= 3; i++ {
		p := rundoc.SeriesPoint{T: 0.25 * float64(i), Records: 250, RecordsPerSec: 1000 * float64(i), LatencyAvgMs: float64(i)}
		pts = append(pts, p)
		ts.hub().PublishRunner(running.ID, rundoc.Event{Type: "interval", Point: &p})
		code, body, _ = get(running.ID)
		if want := string(ui.LiveCharts(pts)); code != http.StatusOK || body != want {
			t.Fatalf("after %d intervals: %d\n%s\nwant\n%s", i, code, body, want)
		}
	}
	if !strings.Contains(body, `<polyline`) || strings.Contains(body, `id="live-chart-latency" class="chart-box" hidden`) {
		t.Errorf("three intervals with latency: %s", body)
	}

	// Not running here: the stored series.
	code, body, _ = get(done.ID)
	stored, err := ts.st.GetRun(ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(ui.LiveChartsOf(stored)); code != http.StatusOK || body != want || !strings.Contains(body, "<polyline") {
		t.Errorf("finished run: %d %s, want its stored series", code, body)
	}

	if code, _, _ = get(done.ID + 100); code != http.StatusNotFound {
		t.Errorf("unknown run: %d, want 404", code)
	}
	if code, _, _ = get(0); code != http.StatusBadRequest && code != http.StatusNotFound {
		t.Errorf("run 0: %d, want 400 or 404", code)
	}
}
