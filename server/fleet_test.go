package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
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
}
