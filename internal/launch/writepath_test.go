package launch

import (
	"encoding/json"
	"testing"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/runner"
)

// TestWritepathPresetDefaultsRaiseNoWarning: the preset's defaults satisfy
// every rule of compare.RunWarnings, derived from the rules' own
// thresholds rather than from a timed run. A default run measures for
// ui.WPDefaultSeconds, the least its window lasts: the window rule
// (compare.MinWindowSeconds) holds; the CPU sampler takes one sample per
// runner.CPUSampleInterval, so the CPU figures rest on at least
// duration/interval samples; the latency percentiles rest on every
// answered request, at least one per second per request in flight unless
// the target is broken rather than slow (a loopback request takes tens
// of microseconds).
func TestWritepathPresetDefaultsRaiseNoWarning(t *testing.T) {
	l := newTestLauncher(t, func(o *Options) { o.FindJDK = func() error { return nil } }) // every strategy, Java's too
	strategies, _ := l.PresetStrategies()
	_, specs, err := l.PresetSpecs(WritepathPreset{}, strategies)
	if err != nil {
		t.Fatalf("default preset: %v", err)
	}
	if len(specs) != len(rundoc.WritepathStrategies()) {
		t.Fatalf("default preset makes %d specs, want one per strategy (%d)", len(specs), len(rundoc.WritepathStrategies()))
	}
	for _, spec := range specs {
		if spec.Requests != 0 || spec.Duration <= 0 {
			t.Fatalf("%s: default preset runs %d requests, %v s; want a duration", spec.Strategy, spec.Requests, spec.Duration)
		}
		window := spec.Duration
		cpuSamples := int64(window / runner.CPUSampleInterval.Seconds())
		latencySamples := int64(window) * int64(spec.InFlight)
		m, _ := json.Marshal(map[string]any{"window_seconds": window, "cpu_samples": cpuSamples, "latency_samples": latencySamples,
			"cpu_sample_interval_ms": runner.CPUSampleInterval.Milliseconds()})
		run := rundoc.Run{ID: 1, Workload: rundoc.Writepath, Documents: rundoc.Documents{Measurement: string(m)},
			Metrics: []rundoc.Metric{{Name: "request-latency-p99", Value: 1}, {Name: "process-cpu-p99", Value: 1}, {Name: "process-cpu-max", Value: 1}}}
		if ws := compare.RunWarnings(run); len(ws) > 0 {
			t.Errorf("%s: the preset's defaults (%v s, %d in flight) raise %d warnings: %q", spec.Strategy, spec.Duration, spec.InFlight, len(ws), ws[0].Text)
		}
	}
	// The rule is the one the warnings apply: a window just under it is
	// flagged (the test above would catch a default under the threshold).
	short, _ := json.Marshal(map[string]any{"window_seconds": compare.MinWindowSeconds * 0.99})
	if len(compare.RunWarnings(rundoc.Run{Documents: rundoc.Documents{Measurement: string(short)}})) == 0 {
		t.Error("a window under compare.MinWindowSeconds raises no warning: the test checks nothing")
	}
}
