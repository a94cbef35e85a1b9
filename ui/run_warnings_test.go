package ui

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// shortRun is a finished producer run whose window was 0.37 s, with 12
// latency samples and 3 CPU samples, and a recorded configuration.
func shortRun() *rundoc.Run {
	r := finishedRun()
	r.ID = 44
	r.Label = "short"
	r.SetDocuments(`{"kbench_version":"devel+0123456789ab","kbench_build":"a1b2c3d4e5f6","go_version":"go1.26.8","kafka_go_version":"v0.4.51",`+
		`"os":"linux","arch":"amd64","kernel":"6.8.0","cpu_model":"AMD EPYC 7B13","cores":2,"gomaxprocs":2,"host":"bench-1",`+
		`"broker":"kafka-1:9092","load_average":{"load1":0.52,"load5":0.58,"load15":0.59},`+
		`"target":{"kind":"cluster","api_versions_from":"kafka-1:9092","api_versions":[{"key":0,"name":"Produce","min":3,"max":11},{"key":1,"name":"Fetch","min":4,"max":17}],"release_guess":"guess: ≥ 3.9 (from API ranges)"},`+
		`"config":{"mode":"raw","settings":[{"name":"acks","value":"all"},{"name":"compression.type","value":"zstd"},{"name":"linger.ms","value":"5"}]}}`,
		`{"warmup_records":0,"measured_records":12,"window_seconds":0.37,"latency_samples":12,"cpu_samples":3,"cpu_sample_interval_ms":100}`)
	r.Metrics = append(r.Metrics,
		rundoc.Metric{Name: "record-latency-p50", Value: 0.4, Unit: "ms", Better: rundoc.LowerIsBetter},
		rundoc.Metric{Name: "process-cpu-p99", Value: 95, Unit: "%", Better: rundoc.LowerIsBetter},
		rundoc.Metric{Name: "process-cpu-max", Value: 99, Unit: "%", Better: rundoc.LowerIsBetter})
	return r
}

// TestGoldenRunWarnings: the run page warns about a short window and
// percentiles resting on few samples, names the samples behind each
// figure, and shows the recorded configuration and target.
func TestGoldenRunWarnings(t *testing.T) {
	u := newTestUI(t)
	v, err := NewRunView(shortRun(), 0)
	if err != nil {
		t.Fatal(err)
	}
	v.CSRF = "tok"
	got := render(t, u, "run", v)
	for _, want := range []string{
		`id="run-warnings"`,
		"measured window 0.370 s, under 5 s",
		"record-latency-p99, record-latency-p50 rest on 12 latency samples (fewer than 20)",
		"process-cpu-p99 and process-cpu-max rest on 3 CPU samples, one every 100 ms (fewer than 20)",
		"<dt>Latency samples</dt><dd>12 (behind record-latency-p99, record-latency-p50)</dd>",
		"<dt>CPU samples</dt><dd>3, one every 100 ms (behind process-cpu-p99, process-cpu-max)</dd>",
		"<dt>compression.type</dt><dd>zstd</dd>",
		"<dt>Mode</dt><dd>raw</dd>",
		"<dt>Target</dt><dd>cluster</dd>",
		"guess: ≥ 3.9 (from API ranges)",
		"<dt>Load average at start</dt><dd>0.52, 0.58, 0.59 (1, 5, 15 min)</dd>",
		"<dt>Produce (key 0)</dt><dd>3–11</dd>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	golden.Check(t, "run_warnings.html", got)

	// A well-measured run has no warning box; a run without a recorded
	// configuration says so.
	v, _ = NewRunView(finishedRun(), 0)
	got = render(t, u, "run", v)
	if strings.Contains(got, `id="run-warnings"`) {
		t.Error("a 12 s run with 900,000 latency and 24 CPU samples is warned about")
	}
	if !strings.Contains(got, "No client configuration was recorded") {
		t.Error("a run without a recorded configuration does not say so")
	}
}

// TestComparisonComparability: the comparison and report pages show the
// settings that differ between columns and the runs' warnings above the
// table.
func TestComparisonComparability(t *testing.T) {
	runs := compareRuns()[:2]
	runs[0].SetDocuments(`{"config":{"mode":"raw","settings":[{"name":"compression.type","value":"none"}]}}`, "")
	runs[1].SetDocuments(`{"config":{"mode":"raw","settings":[{"name":"compression.type","value":"snappy"}]}}`,
		`{"window_seconds":0.25,"latency_samples":1000,"cpu_samples":2,"cpu_sample_interval_ms":100}`)
	tab, err := compare.Build(compare.Columns(runs, compare.ByRun), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := NewCompareView(tab, runs, CompareQuery{Runs: []uint{1, 2}}, "")
	ct := v.Table
	if len(ct.Comparability) != 1 || ct.Comparability[0].Setting != "compression.type" || strings.Join(ct.Comparability[0].Values, "|") != "none|snappy" {
		t.Errorf("comparability = %+v", ct.Comparability)
	}
	if len(ct.Warnings) != 1 || !strings.HasPrefix(ct.Warnings[0], "#2 branch: measured window 0.250 s") {
		t.Errorf("warnings = %q", ct.Warnings)
	}
	u := newTestUI(t)
	rep := &rundoc.Report{Slug: "abc", Title: "T", RunIDs: []uint{1, 2}, By: "run"}
	for name, view := range map[string]any{"compare": v, "report": NewReportView(rep, tab, runs, "")} {
		out := render(t, u, name, view)
		for _, want := range []string{`id="comparability"`, "<th scope=\"row\">compression.type</th><td>none</td><td>snappy</td>",
			`id="comparison-warnings"`, "#2 branch: measured window 0.250 s"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s page lacks %q", name, want)
			}
		}
		if strings.Index(out, `id="comparability"`) > strings.Index(out, `id="comparison"`) {
			t.Errorf("%s page shows the differences after the table", name)
		}
	}
}
