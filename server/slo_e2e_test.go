package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/kbenchbin"
)

// TestSLOSearchOnAThrottledBroker: a real search, its runs the real
// binary's, against an embedded broker that stores at most 3000
// records/s: from a max_rate twice the capacity it brackets down and
// bisects, and answers a rate between 0.3 and 1.2 times the capacity
// imposed, at 20 % precision and one repetition. Above the capacity a
// probe falls short of its rate (or its latency grows with the queue);
// well below it, p99 stays far under the generous 150 ms. (The
// unthrottled measure of the maximum is TestSLOAPI's and launch's.)
func TestSLOSearchOnAThrottledBroker(t *testing.T) {
	if os.Getenv("KBENCH_TEST_BACKEND") == "postgres" {
		// test.sh's second pass: the search's stored steps are tested on
		// PostgreSQL by internal/store's TestSLOSteps and launch's tests;
		// this one's real runs and broker are the same on either backend.
		t.Skip("the same real runs as the SQLite pass; the store's part is tested on PostgreSQL by TestSLOSteps")
	}
	skipExecutingUnderShort(t)
	const capacity = 3000.0
	// A broker process of its own: the probes' rates must be the cap's,
	// not the race detector's.
	b := kbenchbin.StartBroker(t, "--produce-rate", fmt.Sprint(capacity))
	ts := newRunningTestServer(t, func(c *Config) { c.Targets = allowTargets(t, b.Addr()) })
	body := `{"config":{"label":"capped","params":{"bootstrap-server":"` + b.Addr() + `","topic":"slo","num-records":4000,"record-size":100,` +
		`"producer-props":{"linger.ms":"1"},"profile":["none"]}},"percentile":99,"latency_ms":150,"precision_pct":20,"repetitions":1,"max_rate":6000}`
	rec := ts.do(t, "POST", "/api/presets/slo", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var created client.SLOCreated
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	var res client.SLO
	deadline := time.Now().Add(4 * time.Minute)
	for {
		rec := ts.do(t, "GET", "/api/slos/"+created.SLO, "")
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Phase != store.SLOSearching {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the search has not ended: %+v", res)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("outcome %s [%.0f, %.0f] records/s after %d probes", res.Outcome, res.Lo, res.Hi, len(res.Probes))
	for _, p := range res.Probes {
		for _, r := range p.Runs {
			t.Logf("probe %d at %.0f (max %v): achieved %.0f, p99 %.1f ms over %d latencies: %v %s", p.Probe, p.Rate, p.Max, r.Achieved, r.LatencyMs, r.Samples, r.Pass, r.Reason)
		}
	}
	if res.Phase != store.SLODone || (res.Outcome != "found" && res.Outcome != "at-maximum") {
		t.Fatalf("ended %s/%s: %s", res.Phase, res.Outcome, res.Note)
	}
	if len(res.Probes) < 3 || res.Probes[0].Rate != 6000 || res.Probes[0].Pass || res.Probes[0].Runs[0].Achieved > 1.2*capacity {
		t.Errorf("probes %+v, want max_rate first, failing short of it, then at least a bracket", res.Probes)
	}
	if res.Lo < 0.3*capacity || res.Hi > 1.2*capacity || res.Hi/res.Lo > 1.2+1e-9 {
		t.Errorf("answer [%.0f, %.0f], want within 0.3–1.2 × %.0f and 20 %%", res.Lo, res.Hi, capacity)
	}
}
