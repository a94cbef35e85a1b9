package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kbench/kbench/runner/kafkasec"
)

// Better says which direction of a metric is an improvement.
const (
	HigherIsBetter = "higher"
	LowerIsBetter  = "lower"
)

// Metric is one figure of a run, always with its unit.
type Metric struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Better string  `json:"better,omitempty"` // "higher", "lower", or empty when neither
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
	CPUPercent   float64 `json:"cpu_percent,omitempty"`
}

// Environment records where a run happened.
type Environment struct {
	KbenchVersion  string `json:"kbench_version"`
	GoVersion      string `json:"go_version"`
	KafkaGoVersion string `json:"kafka_go_version"`
	OS             string `json:"os"`
	Arch           string `json:"arch"`
	Kernel         string `json:"kernel,omitempty"`
	CPUModel       string `json:"cpu_model,omitempty"`
	Cores          int    `json:"cores"`
	GOMAXPROCS     int    `json:"gomaxprocs"`
	Host           string `json:"host,omitempty"`
	Broker         string `json:"broker"` // "embedded (kfake …)" or the bootstrap servers
}

// Measurement says how the figures were taken, so a reader can judge them.
type Measurement struct {
	WarmupRecords   int64    `json:"warmup_records"`
	PrefillRecords  int64    `json:"prefill_records,omitempty"`
	MeasuredRecords int64    `json:"measured_records"`
	WindowSeconds   float64  `json:"window_seconds"`
	LatencySamples  int64    `json:"latency_samples,omitempty"`
	CPUSamples      int      `json:"cpu_samples"`
	CPUSampleMs     int64    `json:"cpu_sample_interval_ms"`
	Notes           []string `json:"notes,omitempty"`

	// HarnessLimits says why kbench itself (the load generator) limited
	// the run, one reason each; empty when it did not (see harness.go).
	HarnessLimits []string `json:"harness_limits,omitempty"`
}

// ProfileFile is a profile written next to result.json.
type ProfileFile struct {
	Role string `json:"role"` // client or broker
	Kind string `json:"kind"` // cpu, heap, allocs, mutex, block, goroutine
	File string `json:"file"` // name inside the output directory
}

// Result is what `kbench run --out DIR` writes to DIR/result.json.
type Result struct {
	Workload    string        `json:"workload"`
	Complete    bool          `json:"complete"`
	Error       string        `json:"error,omitempty"`
	Spec        Spec          `json:"spec"`
	Environment Environment   `json:"environment"`
	StartedAt   time.Time     `json:"started_at"`
	FinishedAt  time.Time     `json:"finished_at"`
	Measurement Measurement   `json:"measurement"`
	Metrics     []Metric      `json:"metrics"`
	Series      []SeriesPoint `json:"series"`
	Profiles    []ProfileFile `json:"profiles"`
	// Output is the Kafka-format text the run printed.
	Output string `json:"output"`
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

// Redacted returns a copy of the spec that is safe to write anywhere:
// passwords and keys in its properties are replaced.
func (s Spec) Redacted() Spec {
	if s.Props != nil {
		s.Props = kafkasec.Redact(s.Props)
	}
	s.Profiles = append([]string{}, s.Profiles...) // never null in JSON
	return s
}

// WriteResult writes result.json atomically (temp file, then rename), so a
// reader never sees half a file even if the run is killed while writing.
func WriteResult(dir string, r *Result) error {
	r.Spec = r.Spec.Redacted()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("runner: encode result: %w", err)
	}
	tmp := filepath.Join(dir, ".result.json.tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("runner: write result: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "result.json")); err != nil {
		return fmt.Errorf("runner: write result: %w", err)
	}
	return nil
}

// ReadResult reads DIR/result.json.
func ReadResult(dir string) (*Result, error) {
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, fmt.Errorf("runner: read result: %w", err)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("runner: decode %s: %w", filepath.Join(dir, "result.json"), err)
	}
	return &r, nil
}

// CurrentEnvironment describes this process and machine.
func CurrentEnvironment() Environment {
	env := Environment{
		KbenchVersion: "devel",
		GoVersion:     runtime.Version(),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		Cores:         runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		CPUModel:      cpuModel(),
	}
	env.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		env.Kernel = strings.TrimSpace(string(b))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			env.KbenchVersion = v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				env.KbenchVersion += "+" + s.Value[:12]
			}
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/segmentio/kafka-go" {
				env.KafkaGoVersion = d.Version
				if d.Replace != nil {
					env.KafkaGoVersion = d.Replace.Path + "@" + d.Replace.Version
				}
			}
		}
	}
	return env
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
