package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/ui"
)

// TestFleetForm: on PostgreSQL the new-run form offers workers; its
// "Preview the division" shows each shard's part and starts nothing; too
// many workers for the queue's live ones is a 400 beside the field; a
// valid fleet redirects to its parent, whose API answer has the fleet
// and a row per shard.
func TestFleetForm(t *testing.T) {
	ts := newServerOn(t, pgtest.URL(t), func(c *Config) {
		c.NoLocalWorker = true
		c.Targets = allowTargets(t, "kafka-*:9092")
	}, false)
	for range 2 {
		if err := ts.st.RegisterWorker(context.Background(), &store.Worker{Host: "lab", Queue: "lab", PID: 1, Version: "v1"}); err != nil {
			t.Fatal(err)
		}
	}
	if page := ts.do(t, "GET", "/runs/new", "").Body.String(); !strings.Contains(page, `name="workers"`) || !strings.Contains(page, "Preview the division") {
		t.Fatal("the form on PostgreSQL offers no workers field")
	}
	form := func(workers string) url.Values {
		return url.Values{"workload": {"producer"}, "label": {"fleet"}, "queue": {"lab"}, "workers": {workers}, "target": {"bootstrap"},
			"bootstrap-server": {"kafka-1:9092"}, "topic": {"f"}, "partitions": {"4"}, "threads": {"2"}, "num-records": {"6000"},
			"throughput": {"1001"}, "record-size": {"100"}}
	}
	preview := form("2")
	preview.Set("preview_fleet", "1")
	rec := ts.formPost(t, "/runs", preview)
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "Division among 2 workers") || !strings.Contains(body, "f [0,1]") ||
		!strings.Contains(body, "501 records/s") || !strings.Contains(body, "500 records/s") {
		t.Errorf("preview: %d\n%s", rec.Code, body)
	}
	if n, err := ts.st.CountQueued(context.Background()); err != nil || n != 0 {
		t.Errorf("the preview queued %d runs (%v)", n, err)
	}

	rec = ts.formPost(t, "/runs", form("3"))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "queue lab has 2 live worker(s), fewer than the 3") {
		t.Errorf("3 workers for 2: %d\n%s", rec.Code, rec.Body.String())
	}

	rec = ts.formPost(t, "/runs", form("2"))
	if rec.Code != 303 {
		t.Fatalf("a valid fleet: %d\n%s", rec.Code, rec.Body.String())
	}
	var parent wire.Run
	if err := json.Unmarshal(ts.do(t, "GET", "/api"+rec.Header().Get("Location"), "").Body.Bytes(), &parent); err != nil {
		t.Fatal(err)
	}
	if parent.Fleet == nil || parent.Fleet.Workers != 2 || parent.Fleet.Phase != "waiting" || len(parent.Shards) != 2 {
		t.Fatalf("parent %+v", parent)
	}
	for i, sh := range parent.Shards {
		if sh.Status != "queued" || sh.Worker != nil || sh.URL != fmt.Sprintf("/runs/%d", sh.RunID) || sh.Part == nil || sh.Part.Throughput != []float64{501, 500}[i] {
			t.Errorf("shard %d: %+v", i, sh)
		}
	}
	if page := ts.do(t, "GET", rec.Header().Get("Location"), "").Body.String(); !strings.Contains(page, "Fleet of 2 workers") {
		t.Error("the parent's page has no fleet section")
	}

	// The form's added configuration with workers: an A/B comparison of
	// fleets, one per configuration (and repetition), shown compared.
	ab := form("2")
	ab.Set("configs[1].label", "faster")
	ab.Set("configs[1].params", "throughput=2002")
	rec = ts.formPost(t, "/runs", ab)
	if rec.Code != 303 || !strings.HasPrefix(rec.Header().Get("Location"), "/compare") {
		t.Fatalf("an A/B of fleets: %d %s\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	var list wire.RunList
	if err := json.Unmarshal(ts.do(t, "GET", "/api/runs?label=faster", "").Body.Bytes(), &list); err != nil || len(list.Runs) != 1 {
		t.Fatalf("the faster configuration's runs: %+v (%v)", list, err)
	}
	var faster wire.Run
	if err := json.Unmarshal(ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", list.Runs[0].ID), "").Body.Bytes(), &faster); err != nil {
		t.Fatal(err)
	}
	if faster.Fleet == nil || len(faster.Shards) != 2 || faster.Shards[0].Part.Throughput != 1001 {
		t.Errorf("the faster configuration's run %+v: want a fleet of 2 shards at 1001 records/s each", faster)
	}
}

// sseEvent is one Server-Sent Event as a test reads it.
type sseEvent struct{ name, data string }

// readSSE sends the events of body to the channel it returns, closed at
// the stream's end.
func readSSE(body io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				out <- ev
				ev = sseEvent{}
			}
		}
	}()
	return out
}

// nextEvent returns the next event named name, failing the test on the
// stream's end or after 10 s.
func nextEvent(t *testing.T, events <-chan sseEvent, name string) sseEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before a %q event", name)
			}
			if ev.name == name {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %q event in 10 s", name)
		}
	}
}

// TestFleetLiveEvents: a running fleet's parent streams the merge of its
// shards' live events: their progress summed in the least advanced
// shard's phase, a merged interval once both shards have theirs, each
// output line prefixed with its shard (a line split over two events
// once, a half line ended before its shard's end), a shard's end as a
// note, and "done" when the parent ends. Its live charts draw the merged
// series, a shard that has ended taking part with its stored series.
func TestFleetLiveEvents(t *testing.T) {
	ts := newTestServer(t, nil)
	ctx := context.Background()
	spec := `{"workload":"producer","params":{"num-records":"2000"}}`
	parent := &store.Run{Label: "fleet", Workload: rundoc.Producer, Spec: spec}
	shards := []*store.Run{{Label: "fleet (shard 1/2)", Workload: rundoc.Producer, Spec: spec}, {Label: "fleet (shard 2/2)", Workload: rundoc.Producer, Spec: spec}}
	if err := ts.st.CreateFleet(ctx, &store.Fleet{Shards: 2, BarrierTimeoutS: 30, LeadS: 2}, parent, shards); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.StartRun(ctx, parent.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	hub := ts.fake.hub
	a, b := shards[0].ID, shards[1].ID
	// Before the page subscribes: shard 1 measures and has printed a line
	// and a half.
	hub.PublishRunner(a, rundoc.Event{Type: rundoc.EventProgress, Phase: "measure", Done: 100, Total: 1000, Elapsed: 1.5})
	hub.PublishRunner(a, rundoc.Event{Type: rundoc.EventOutput, Text: "hello\nwor"})

	hs := httptest.NewServer(ts)
	defer hs.Close()
	resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d/events", hs.URL, parent.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readSSE(resp.Body)
	if ev := nextEvent(t, events, "status"); !strings.Contains(ev.data, `"running"`) {
		t.Errorf("status: %s", ev.data)
	}
	if ev := nextEvent(t, events, "output"); ev.data != `{"text":"[shard 1] hello\n"}` {
		t.Errorf("catch-up output: %s", ev.data)
	}

	hub.PublishRunner(b, rundoc.Event{Type: rundoc.EventProgress, Phase: "warmup", Done: 40, Total: 1000, Elapsed: 0})
	if ev := nextEvent(t, events, "progress"); ev.data != `{"done":140,"elapsed":0,"phase":"warmup","total":2000}` {
		t.Errorf("merged progress: %s", ev.data)
	}
	pa := rundoc.SeriesPoint{T: 1, Records: 100, Bytes: 10_000, RecordsPerSec: 100, LatencyAvgMs: 2, LatencyP99Ms: 5}
	pb := rundoc.SeriesPoint{T: 1.01, Records: 300, Bytes: 30_000, RecordsPerSec: 297, LatencyAvgMs: 4, LatencyP99Ms: 9}
	hub.PublishRunner(a, rundoc.Event{Type: rundoc.EventInterval, Point: &pa})
	hub.PublishRunner(b, rundoc.Event{Type: rundoc.EventInterval, Point: &pb})
	ev := nextEvent(t, events, "interval")
	var p rundoc.SeriesPoint
	if err := json.Unmarshal([]byte(ev.data), &p); err != nil {
		t.Fatal(err)
	}
	// Its rate is each shard's over its own interval, summed: 100 in 1 s
	// and 300 in 1.01 s.
	if rate := 100 + 300/1.01; p.T != 1 || p.Records != 400 || math.Abs(p.RecordsPerSec-rate) > 1e-9 || p.LatencyAvgMs != 3.5 || p.LatencyP99Ms != 9 || !p.PercentilesApprox {
		t.Errorf("merged interval %+v: want 400 records at t=1, %v records/s, avg 3.5 ms, p99 at most 9 ms (approximate)", p, rate)
	}
	charts := ts.do(t, "GET", fmt.Sprintf("/runs/%d/live-charts", parent.ID), "").Body.String()
	if want := string(ui.LiveCharts([]rundoc.SeriesPoint{p})); charts != want {
		t.Errorf("the parent's live charts are not its shards' merge:\n%s\nwant\n%s", charts, want)
	}

	hub.PublishRunner(a, rundoc.Event{Type: rundoc.EventOutput, Text: "ld\n"})
	if ev := nextEvent(t, events, "output"); ev.data != `{"text":"[shard 1] world\n"}` {
		t.Errorf("a line over two events: %s", ev.data)
	}
	// Shard 2 ends first (the fleet pass, on PostgreSQL, waits for shard
	// 1): its end is a note, and its part of the charts is its stored
	// series from then on.
	if err := ts.st.FinishRun(ctx, b, store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: time.Now(),
		Series: []rundoc.SeriesPoint{pb}}); err != nil {
		t.Fatal(err)
	}
	hub.Publish(b, lifecycle.Event{Name: "done", Data: map[string]string{"status": "succeeded"}})
	want := fmt.Sprintf(`{"text":"# shard 2/2 (run #%d): succeeded\n"}`, b)
	if ev := nextEvent(t, events, "output"); ev.data != want {
		t.Errorf("a shard's end: %s, want %s", ev.data, want)
	}
	if charts := ts.do(t, "GET", fmt.Sprintf("/runs/%d/live-charts", parent.ID), "").Body.String(); charts != string(ui.LiveCharts([]rundoc.SeriesPoint{p})) {
		t.Errorf("with shard 2 ended, the parent's live charts lost its part:\n%s", charts)
	}
	hub.PublishRunner(a, rundoc.Event{Type: rundoc.EventOutput, Text: "tail"}) // no newline: held
	hub.Publish(a, lifecycle.Event{Name: "done", Data: map[string]string{"status": "failed", "error": "broker gone"}})
	want = fmt.Sprintf(`{"text":"[shard 1] tail\n# shard 1/2 (run #%d): failed: broker gone\n"}`, a)
	if ev := nextEvent(t, events, "output"); ev.data != want {
		t.Errorf("a shard's end after half a line: %s, want %s", ev.data, want)
	}
	if err := ts.st.FinishRun(ctx, parent.ID, store.Outcome{Status: rundoc.StatusFailed, Error: "shard 1 failed", FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events, "done"); !strings.Contains(ev.data, `"failed"`) {
		t.Errorf("done: %s", ev.data)
	}
}
