package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// tinyE2ESweepParams is an e2e configuration that runs in about a second
// on the embedded broker. It holds properties: a stored e2e spec keeps
// them as "props", which re-reading it (throttled) must map to
// producer-props.
const tinyE2ESweepParams = `{"workload":"e2e","num-records":3000,"record-size":100,"producer-props":{"linger.ms":"1"},"profile":["none"]}`

// TestSweepE2EBadInput: an e2e sweep runs rate mode, so Kafka's mode is
// refused on the mode field, and rate mode's own limits (a record holds
// its stamp) are checked when the sweep is submitted, not when its runs
// fail.
func TestSweepE2EBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, tt := range []struct{ name, params, field, msg string }{
		{"kafka mode", `{"workload":"e2e","mode":"kafka"}`, "configs[0].params.mode", "is set by the sweep to \\\"rate\\\""},
		{"mode not a string", `{"workload":"e2e","mode":4}`, "configs[0].params.mode", "is set by the sweep"},
		{"record too small for rate mode", `{"workload":"e2e","record-size":10}`, "configs[0].params.record-size", "at least 24 bytes in rate mode"},
		{"throughput", `{"workload":"e2e","throughput":100}`, "configs[0].params.throughput", "is set by the sweep"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/presets/sweep", `{"configs":[{"label":"a","params":`+tt.params+`}]}`)
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), tt.field) || !strings.Contains(rec.Body.String(), tt.msg) {
				t.Errorf("got %d %s, want 400 naming %s: …%s…", rec.Code, rec.Body, tt.field, tt.msg)
			}
		})
	}
	if n, err := ts.st.CountRuns(t.Context()); err != nil || n != 0 {
		t.Errorf("%d runs stored by refused sweeps (%v), want none", n, err)
	}
	// Saying what the sweep would set anyway is fine.
	ts.createSweep(t, `{"configs":[{"label":"a","params":{"workload":"e2e","mode":"rate","num-records":200,"record-size":100,"profile":["none"]}}],"rates_pct":[50],"repetitions":1}`)
}

// TestSweepE2E: a tiny e2e sweep completes on the embedded broker. Phase
// 1 runs rate mode unthrottled (mode rate, throughput -1: not Kafka's
// one-at-a-time mode), its maximum is the median consume-rate, phase 2
// runs rate mode at each target rate, and the points are the e2e
// latency percentiles against consume-rate.
func TestSweepE2E(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	id := ts.createSweep(t, `{"configs":[{"label":"e2e","params":`+tinyE2ESweepParams+`}],"rates_pct":[30,60],"repetitions":1}`)
	res := ts.waitSweep(t, id, "second phase ended", func(r sweepResult) bool { return r.Phase == store.SweepDone && allFinal(r, 2) })
	if len(res.Configs) != 1 {
		t.Fatalf("%d configurations", len(res.Configs))
	}
	c := res.Configs[0]
	want := map[string]string{"throughput": "consume-rate", "p50": "e2e-latency-p50", "p99": "e2e-latency-p99", "p999": "e2e-latency-p999"}
	for k, v := range want {
		if c.Metrics[k] != v {
			t.Errorf("metrics[%s] = %q, want %q", k, c.Metrics[k], v)
		}
	}
	if c.MaxRate == nil || c.MaxRate.RecordsPerSec <= 0 || c.MaxRate.Runs != 1 {
		t.Fatalf("max rate %+v, want one run's rate", c.MaxRate)
	}
	points := 0
	for _, r := range res.Runs {
		stored, err := ts.st.GetRun(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var spec rundoc.SpecFile
		if err := json.Unmarshal([]byte(stored.Spec), &spec); err != nil {
			t.Fatal(err)
		}
		var mode string
		var thr float64
		json.Unmarshal(spec.Params["mode"], &mode)
		json.Unmarshal(spec.Params["throughput"], &thr)
		if mode != rundoc.ModeRate {
			t.Errorf("run %d (phase %d): mode %q, want rate", r.ID, r.Phase, mode)
		}
		if r.Status != rundoc.StatusSucceeded {
			t.Errorf("run %d (phase %d): %s", r.ID, r.Phase, r.Status)
		}
		switch r.Phase {
		case 1:
			if thr != -1 {
				t.Errorf("phase-1 run %d: throughput %v, want -1 (unthrottled rate mode)", r.ID, thr)
			}
			if got := r.Metrics["consume-rate"]; got != c.MaxRate.RecordsPerSec {
				t.Errorf("max %v, the unthrottled run's consume-rate %v", c.MaxRate.RecordsPerSec, got)
			}
		case 2:
			points++
			if thr != r.TargetRate || r.TargetRate != c.MaxRate.RecordsPerSec*r.RatePct/100 {
				t.Errorf("phase-2 run %d: throughput %v, target %v, want %v%% of %v", r.ID, thr, r.TargetRate, r.RatePct, c.MaxRate.RecordsPerSec)
			}
		}
	}
	if points != 2 || len(res.Points) != 2 {
		t.Fatalf("%d phase-2 runs, %d points; want 2", points, len(res.Points))
	}
	for _, p := range res.Points {
		if p.Throughput <= 0 || p.P50 <= 0 || p.P99 < p.P50 || p.P999 < p.P99 {
			t.Errorf("point %+v", p)
		}
	}
}
