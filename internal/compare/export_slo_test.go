package compare

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// sloFixture is a search that ended with its answer: the maximum
// measured, a failing probe at it, a pass at half, one failing and one
// passing bisection.
func sloFixture() *wire.SLO {
	run := func(id uint, achieved, lat float64, n int64, pass bool, reason string) wire.SLORun {
		return wire.SLORun{ID: id, URL: "https://kbench.example/runs/" + string(rune('0'+id)), Status: wire.StatusSucceeded,
			Achieved: achieved, LatencyMs: lat, Samples: n, Pass: pass, Reason: reason}
	}
	return &wire.SLO{SLO: "0123456789ab", URL: "https://kbench.example/slos/0123456789ab", Phase: "done",
		Config:     wire.SLOConfig{Label: "trunk", Workload: "producer", RateMetric: "record-send-rate", Latency: "record-latency-intended"},
		Percentile: 99, LatencyMs: 10, PrecisionPct: 20, Repetitions: 1, MinSamples: 1000, MaxProbes: 60, Outcome: "found", Lo: 2000, Hi: 2378.41,
		Probes: []wire.SLOProbe{
			{Probe: 0, Max: true, Measured: true, Pass: true, Reason: "the maximum", Runs: []wire.SLORun{run(1, 4000, 0, 0, true, "measured the maximum")}},
			{Probe: 1, Rate: 4000, Measured: true, Runs: []wire.SLORun{run(2, 3900, 250, 40000, false, "p99 latency 250 ms, not under 10 ms")}},
			{Probe: 2, Rate: 2000, Measured: true, Pass: true, Runs: []wire.SLORun{run(3, 2000, 3.1, 20000, true, "p99 latency 3.1 ms, under 10 ms")}},
			{Probe: 3, Rate: 2828.43, Measured: true, Runs: []wire.SLORun{run(4, 2820, 31, 28000, false, "p99 latency 31 ms, not under 10 ms")}},
			{Probe: 4, Rate: 2378.41, Measured: true, Runs: []wire.SLORun{run(5, 2370, 12.5, 24000, false, "p99 latency 12.5 ms, not under 10 ms")}},
		}}
}

// TestReportSLOExports: a report that shows a search only carries it in
// its Markdown (question, answer, a row per run), CSV (section "slo")
// and JSON ("slo", as the API answers it).
func TestReportSLOExports(t *testing.T) {
	s := sloFixture()
	meta := Meta{Title: "p99 under 10 ms", URL: "https://kbench.example/r/abc", Created: time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC), SLO: s}
	golden.Check(t, "slo-report.md", ReportMarkdown(nil, nil, meta))
	golden.Check(t, "slo-report.csv", string(ReportCSV(nil, nil, s)))
	js, err := ReportJSON(nil, nil, meta)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "slo-report.json", string(js))
	var doc wire.Comparison
	if err := json.Unmarshal(js, &doc); err != nil || doc.SLO == nil || doc.SLO.Hi != s.Hi || len(doc.SLO.Probes) != 5 {
		t.Errorf("the JSON decodes to %+v (%v), want the search", doc.SLO, err)
	}
}
