package compare

import (
	"encoding/json"
	"fmt"
	"github.com/kbench/kbench/internal/numfmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// Thresholds of the warnings on a run's figures ([RunWarnings]).
const (
	// MinWindowSeconds is the shortest measured window whose figures are
	// not flagged. Identical unthrottled runs with 0.12–0.37 s windows
	// were measured 0.82M to 1.43M records/s apart: start-up, the first
	// batches and one GC weigh on a window that short.
	MinWindowSeconds = 5.0
	// MinPercentileSamples is the fewest samples a percentile (or the
	// CPU maximum) may rest on without a warning: with fewer, one sample
	// more or less moves it visibly.
	MinPercentileSamples = 20
)

// Kinds of [RunWarning].
const (
	WarningShortWindow = "short window"
	WarningFewSamples  = "few samples"
)

// RunWarning says why some of a run's figures deserve less trust.
type RunWarning struct {
	Run  uint
	Kind string // WarningShortWindow or WarningFewSamples
	// Metrics are the figures concerned (few samples); empty for a short
	// window, which concerns them all.
	Metrics []string
	// Samples is what the figures rest on (few samples).
	Samples int64
	// WindowSeconds is the measured window.
	WindowSeconds float64
	// Text says it in a sentence, without naming the run.
	Text string
}

// storedMeasurement is the part of a stored measurement (result.json's
// measurement, rundoc.Measurement) the warnings read. Pointers tell a
// missing figure from a zero.
type storedMeasurement struct {
	WindowSeconds  *float64 `json:"window_seconds"`
	LatencySamples *int64   `json:"latency_samples"`
	CPUSamples     *int64   `json:"cpu_samples"`
	CPUSampleMs    int64    `json:"cpu_sample_interval_ms"`
}

// percentileMetric matches the names of percentile figures: the latency
// histograms' -p50 … -p999 (record-latency, record-latency-intended,
// request-latency), which rest on the latency samples.
var percentileMetric = regexp.MustCompile(`-p[0-9]+$`)

// cpuSampled are the figures computed from the CPU sampler's samples.
var cpuSampled = []string{"process-cpu-p99", "process-cpu-max"}

// RunWarnings lists what makes a run's figures less trustworthy:
//
//   - a measured window under MinWindowSeconds;
//   - latency percentiles (metrics named …-pNN) resting on fewer than
//     MinPercentileSamples latency samples (the HdrHistogram's count,
//     measurement.latency_samples);
//   - process-cpu-p99 and process-cpu-max resting on fewer than
//     MinPercentileSamples CPU samples (measurement.cpu_samples).
//
// What the run did not record is not guessed: an imported run's window
// (records over rate) is checked, its sample counts are unknown.
func RunWarnings(r rundoc.Run) []RunWarning {
	// The stored text: a sample count never recorded is no warning, one
	// recorded as zero is.
	var m storedMeasurement
	if s := strings.TrimSpace(r.Documents.Measurement); s == "" || json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	var out []RunWarning
	if w := m.WindowSeconds; w != nil && *w > 0 && *w < MinWindowSeconds {
		out = append(out, RunWarning{Run: r.ID, Kind: WarningShortWindow, WindowSeconds: *w,
			Text: fmt.Sprintf("measured window %s s, under %s s: figures from a window this short vary widely between identical runs; measure for longer",
				formatSeconds(*w), trimFloat(MinWindowSeconds))})
	}
	latency, cpu := SampledFigures(r.Metrics)
	if n := m.LatencySamples; n != nil && *n > 0 && *n < MinPercentileSamples && len(latency) > 0 {
		out = append(out, RunWarning{Run: r.ID, Kind: WarningFewSamples, Metrics: latency, Samples: *n,
			Text: fmt.Sprintf("%s rest on %d latency %s (fewer than %d)", strings.Join(latency, ", "), *n, numfmt.Plural(int(*n), "sample", "samples"), MinPercentileSamples)})
	}
	if n := m.CPUSamples; n != nil && *n < MinPercentileSamples && len(cpu) > 0 {
		every := ""
		if m.CPUSampleMs > 0 {
			every = fmt.Sprintf(", one every %d ms", m.CPUSampleMs)
		}
		out = append(out, RunWarning{Run: r.ID, Kind: WarningFewSamples, Metrics: cpu, Samples: *n,
			Text: fmt.Sprintf("%s rest on %d CPU %s%s (fewer than %d)", strings.Join(cpu, " and "), *n, numfmt.Plural(int(*n), "sample", "samples"), every, MinPercentileSamples)})
	}
	return out
}

// SampledFigures names the figures among metrics that rest on samples:
// the latency percentiles (…-pNN, from the latency histogram's samples)
// and the CPU sampler's process-cpu-p99 and process-cpu-max.
func SampledFigures(metrics []rundoc.Metric) (latency, cpu []string) {
	for _, x := range metrics {
		switch {
		case slices.Contains(cpuSampled, x.Name):
			if !slices.Contains(cpu, x.Name) {
				cpu = append(cpu, x.Name)
			}
		case percentileMetric.MatchString(x.Name):
			if !slices.Contains(latency, x.Name) {
				latency = append(latency, x.Name)
			}
		}
	}
	return latency, cpu
}

// TableWarning is a run warning in a comparison: the run and its column.
type TableWarning struct {
	RunWarning
	Column string
	// RunName names the run as "#12 trunk".
	RunName string
}

// FullText is the warning naming its run: "#12 trunk: measured window …".
func (w TableWarning) FullText() string { return w.RunName + ": " + w.Text }

// tableWarnings are the warnings of every measured run, column by column.
func tableWarnings(cols []ColumnInfo, measured [][]rundoc.Run) []TableWarning {
	var out []TableWarning
	for ci, runs := range measured {
		for _, r := range runs {
			for _, w := range RunWarnings(r) {
				out = append(out, TableWarning{RunWarning: w, Column: cols[ci].Name, RunName: runName(r)})
			}
		}
	}
	return out
}

// formatSeconds shows a window as run pages do: "0.370", "4.99".
func formatSeconds(s float64) string { return FormatNumber(s) }
