package rundoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ResultSchema is the version of the result document (result.json) this
// code writes. A document without one (0) predates versions and reads as
// version 1; a reader refuses a version newer than it knows rather than
// guess at its fields. Raise it when a field changes meaning or goes
// away; adding a field does not need it.
const ResultSchema = 1

// Metric is one figure of a run, always with its unit.
type Metric struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Better Better  `json:"better,omitempty"`
	// Help says how the figure was obtained, for users reading a table.
	Help string `json:"help,omitempty"`
}

// SeriesPoint is one reporting interval of a run.
type SeriesPoint struct {
	// T is the end of the interval, in seconds since the measured window began.
	T             float64 `json:"t"`
	Records       int64   `json:"records"`
	Bytes         int64   `json:"bytes"`
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	// Latency over the interval's acknowledged records (producer only).
	LatencyAvgMs float64 `json:"latency_avg_ms,omitempty"`
	LatencyMaxMs float64 `json:"latency_max_ms,omitempty"`
	// Percentiles of the same latencies over the interval, computed by
	// the runner from the interval's whole histogram (rundoc's layout: 3
	// significant digits). A point that merges others (MergePoints) cannot
	// know its own percentiles: it carries the largest of the merged
	// points' and says so with PercentilesApprox.
	LatencyP50Ms      float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99Ms      float64 `json:"latency_p99_ms,omitempty"`
	LatencyP999Ms     float64 `json:"latency_p999_ms,omitempty"`
	PercentilesApprox bool    `json:"percentiles_approx,omitempty"`
	CPUPercent        float64 `json:"cpu_percent,omitempty"`
}

// Environment records where and how a run happened: the machine, the
// builds, the target and the configuration the client applied. Runs are
// comparable only when these agree (see compare's comparability check).
//
// An imported run's environment says only where it came from (Source,
// Tool), and Broker why nothing more is known.
type Environment struct {
	// Source is SourceImported for an import; empty for a launched run.
	Source Source `json:"source,omitempty"`
	// Tool is the Kafka tool whose output was imported.
	Tool string `json:"tool,omitempty"`
	// KbenchVersion is the module version, else "devel", with the VCS
	// revision ("+0123456789ab", "+dirty" for uncommitted changes) when
	// the build recorded one.
	KbenchVersion string `json:"kbench_version,omitempty"`
	// KbenchBuild is the first 12 hex digits of the SHA-256 of the kbench
	// executable: two builds of different code differ here even when
	// both are "devel" without a revision.
	KbenchBuild    string `json:"kbench_build,omitempty"`
	GoVersion      string `json:"go_version,omitempty"`
	KafkaGoVersion string `json:"kafka_go_version"`
	OS             string `json:"os,omitempty"`
	Arch           string `json:"arch,omitempty"`
	Kernel         string `json:"kernel,omitempty"`
	CPUModel       string `json:"cpu_model,omitempty"`
	Cores          int    `json:"cores,omitempty"`
	GOMAXPROCS     int    `json:"gomaxprocs,omitempty"`
	Host           string `json:"host,omitempty"`
	Broker         string `json:"broker"` // "embedded (kfake …)" or the bootstrap servers
	// LoadAverage is the machine's load average when the run started;
	// nil where the system has none to read.
	LoadAverage *LoadAverage `json:"load_average,omitempty"`
	// Target is what the run talked to and the API ranges it answered.
	Target *Target `json:"target,omitempty"`
	// Config is the client configuration the run applied, after
	// defaults.
	Config *Config `json:"config,omitempty"`
}

// Measurement says how the figures were taken, so a reader can judge them.
// A launched run's is written by the runner into result.json; an imported
// run's by the import (Source, Tool and Lines say where its figures came
// from, the rest is what the tool's output allows).
type Measurement struct {
	// Source is SourceImported for an import; empty for a launched run.
	Source Source `json:"source,omitempty"`
	// Tool is the Kafka tool whose output was imported
	// ("kafka-producer-perf-test").
	Tool string `json:"tool,omitempty"`
	// Lines is how many lines of the imported output were read.
	Lines int `json:"lines,omitempty"`

	// ShardStart is when a fleet's shard was told to start measuring
	// and when it did, by its own clock; nil for any other run.
	ShardStart *ShardStart `json:"shard_start,omitempty"`

	WarmupRecords   int64    `json:"warmup_records"`
	PrefillRecords  int64    `json:"prefill_records,omitempty"`
	MeasuredRecords int64    `json:"measured_records"`
	WindowSeconds   float64  `json:"window_seconds"`
	LatencySamples  int64    `json:"latency_samples,omitempty"`
	CPUSamples      int      `json:"cpu_samples"`
	CPUSampleMs     int64    `json:"cpu_sample_interval_ms"`
	Notes           []string `json:"notes,omitempty"`
	// OutputNotes say, with this run's numbers, where the Kafka-format
	// output differs from the precise figures because it computes them as
	// Kafka's tools do (whole-millisecond times, percentiles cut to whole
	// milliseconds). Pages show them beside the output.
	OutputNotes []string `json:"output_notes,omitempty"`

	// HarnessLimits says why kbench itself (the load generator) limited
	// the run, one reason each; empty when it did not (see harness.go).
	HarnessLimits []string `json:"harness_limits,omitempty"`

	// Command is the command line `kbench exec` (or a tool run) ran, its
	// secrets replaced; empty for anything else.
	Command []string `json:"command,omitempty"`
	// ExitCode is that command's exit status, as a shell reports it (128+n
	// for signal n, 127 for a command not found); nil for anything else.
	ExitCode *int `json:"exit_code,omitempty"`

	// Curves and Windows are figures of an import that the run's
	// metrics, series and histograms cannot hold (curves.go): an OMB
	// result's quantile maps and its 10 s windows. Empty for kbench's
	// own runs.
	Curves  []QuantileCurve `json:"curves,omitempty"`
	Windows []WindowSeries  `json:"windows,omitempty"`
}

// ProfileFile is a profile written next to result.json.
type ProfileFile struct {
	Role ProfileRole `json:"role"`
	Kind ProfileKind `json:"kind"`
	File string      `json:"file"` // name inside the output directory
}

// Result is what `kbench run --out DIR` writes to DIR/result.json.
type Result struct {
	// Schema is ResultSchema when written; 0 in documents from before
	// versions.
	Schema      int           `json:"schema,omitempty"`
	Workload    Workload      `json:"workload"`
	Complete    bool          `json:"complete"`
	Error       string        `json:"error,omitempty"`
	Spec        Spec          `json:"spec"`
	Environment Environment   `json:"environment"`
	StartedAt   time.Time     `json:"started_at"`
	FinishedAt  time.Time     `json:"finished_at"`
	Measurement Measurement   `json:"measurement"`
	Metrics     []Metric      `json:"metrics"`
	Series      []SeriesPoint `json:"series"`
	// Histograms are the run's latency histograms (histogram.go), the
	// measured window's of every latency it measured.
	Histograms []Histogram `json:"histograms,omitempty"`
	// HistogramLog names the file next to result.json holding the run's
	// interval histograms on a 1 s grid, in HdrHistogram's log format
	// (HistogramLogFile); empty when the run measured no latency.
	HistogramLog string        `json:"histogram_log,omitempty"`
	Profiles     []ProfileFile `json:"profiles"`
	// Output is the Kafka-format text the run printed.
	Output string `json:"output"`
	// Meta is the run's metadata (--meta key=value; version defaults to
	// the kafka-go version the binary was built with).
	Meta map[string]string `json:"meta,omitempty"`
}

// Metric returns the named metric.
func (r *Result) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// WriteResult writes result.json atomically (temp file, then rename), so a
// reader never sees half a file even if the run is killed while writing.
func WriteResult(dir string, r *Result) error {
	r.Schema = ResultSchema
	r.Spec = r.Spec.Redacted()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("rundoc: encode result: %w", err)
	}
	tmp := filepath.Join(dir, ".result.json.tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("rundoc: write result: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "result.json")); err != nil {
		return fmt.Errorf("rundoc: write result: %w", err)
	}
	return nil
}

// ReadResult reads DIR/result.json.
func ReadResult(dir string) (*Result, error) {
	name := filepath.Join(dir, "result.json")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("rundoc: read result: %w", err)
	}
	return DecodeResult(data, name)
}

// DecodeResult decodes a result document (name says where it came from,
// for messages), refusing one whose schema is newer than ResultSchema
// with ErrNewerResult: its fields may no longer mean what this code
// reads them as.
func DecodeResult(data []byte, name string) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("rundoc: decode %s: %w", name, err)
	}
	if r.Schema > ResultSchema {
		return nil, fmt.Errorf("rundoc: %s is schema %d, written by a newer kbench (this one reads up to %d): %w", name, r.Schema, ResultSchema, ErrNewerResult)
	}
	return &r, nil
}

// ErrNewerResult is a result document of a schema newer than this code
// reads.
var ErrNewerResult = errors.New("newer result schema")
