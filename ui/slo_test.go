package ui

import (
	"net/url"
	"strings"
	"testing"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// sloFixture is a search that ended found, with a failing and a passing
// run.
func sloFixture() wire.SLO {
	return wire.SLO{SLO: "0123456789ab", Phase: "done", Percentile: 99, LatencyMs: 10, PrecisionPct: 20, Repetitions: 1, MaxRate: 4000,
		Config:  wire.SLOConfig{Label: "trunk", Workload: "producer", Latency: "record-latency-intended", RateMetric: "record-send-rate"},
		Outcome: "found", Lo: 2000, Hi: 2378,
		Probes: []wire.SLOProbe{
			{Probe: 0, Rate: 4000, Measured: true, Runs: []wire.SLORun{{ID: 7, URL: "/runs/7", Status: wire.StatusSucceeded, Achieved: 3900, LatencyMs: 250, Samples: 40000, Reason: "p99 latency 250 ms, not under 10 ms"}}},
			{Probe: 1, Rate: 2000, Measured: true, Pass: true, Runs: []wire.SLORun{{ID: 8, URL: "/runs/8", Status: wire.StatusSucceeded, Achieved: 2000, LatencyMs: 3.1, Samples: 20000, Pass: true, Reason: "p99 latency 3.1 ms, under 10 ms"}}},
			{Probe: 2, Rate: 2378, Measured: true, Runs: []wire.SLORun{{ID: 9, URL: "/runs/9", Status: wire.StatusSucceeded, Achieved: 2370, LatencyMs: 12.5, Samples: 24000, Reason: "p99 latency 12.5 ms, not under 10 ms"}}},
		}}
}

// TestSLOChart: passed and failed runs are two series of dots linked to
// their runs, the target a line, the answer two marks.
func TestSLOChart(t *testing.T) {
	svg := string(SLOChart(sloFixture()))
	for _, id := range []string{"7", "8", "9"} {
		if n := strings.Count(svg, `<a href="/runs/`+id+`"><circle`); n != 1 {
			t.Errorf("run %s linked %d times, want once", id, n)
		}
	}
	for _, want := range []string{"passed", "failed", "target 10 ms", ">lo<", ">hi<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if s := SLOAnswer(sloFixture()); !strings.Contains(s, "2,000 records/s (met it)") || !strings.Contains(s, "2,378 records/s (missed it)") {
		t.Errorf("answer %q", s)
	}
	q := SLOQuestion(sloFixture())
	if !strings.Contains(q, "record-latency-intended p99 stays under 10 ms") || !strings.Contains(q, "up to 4,000 records/s") {
		t.Errorf("question %q", q)
	}
}

// TestGoldenSLOPage: the search's page with its answer, chart and runs.
func TestGoldenSLOPage(t *testing.T) {
	s := sloFixture()
	v := SLOView{Page: Page{Title: "Latency target 0123456789ab"}, Result: true, ID: s.SLO, Phase: s.Phase, Label: "trunk", Workload: "producer",
		Question: SLOQuestion(s), Answer: SLOAnswer(s), APIURL: "/api/slos/" + s.SLO, Chart: SLOChart(s), How: "Each run holds at least 1000 latencies.",
		Rows: []SLOProbeRow{{Probe: 0, Rate: "4,000", RunID: 7, RunURL: "/runs/7", Status: "succeeded", Achieved: "3,900", LatencyMs: "250", Samples: "40000", Verdict: "fail", Reason: "p99 latency 250 ms, not under 10 ms"}}}
	html := render(t, newTestUI(t), "slos", v)
	golden.Check(t, "slo.html", html)
}

// TestSLOFormErrors: a configuration's errors sit beside its params,
// the target's beside their fields, and every one is in the summary.
func TestSLOFormErrors(t *testing.T) {
	v := NewSLOForm(url.Values{"label": {"a"}, "percentile": {"100"}}, map[string]string{
		"config.params.throughput": "is set by the search", "percentile": "must be above 0 and below 100, got 100", "config.label": "is taken"}, nil)
	byName := map[string]SLOFormField{}
	for _, f := range append(v.ConfigFields, v.TargetFields...) {
		byName[f.Name] = f
	}
	if got := strings.Join(byName["params"].Errs, "|"); got != "params.throughput: is set by the search" {
		t.Errorf("params errors %q", got)
	}
	if got := strings.Join(byName["label"].Errs, "|"); got != "is taken" || byName["label"].Value != "a" {
		t.Errorf("label %+v", byName["label"])
	}
	if byName["percentile"].Value != "100" || len(byName["percentile"].Errs) != 1 || len(v.Errors) != 3 {
		t.Errorf("percentile %+v, summary %+v", byName["percentile"], v.Errors)
	}
	empty := NewSLOForm(url.Values{}, nil, nil)
	if empty.ConfigFields[0].Value != "trunk" || empty.TargetFields[1].Value != "10" {
		t.Errorf("the empty form's example: %+v %+v", empty.ConfigFields[0], empty.TargetFields[1])
	}
	html := render(t, newTestUI(t), "slos", v)
	if !strings.Contains(html, "params.throughput: is set by the search") || !strings.Contains(html, `id="error-summary"`) {
		t.Error("the page does not show the errors")
	}
}
