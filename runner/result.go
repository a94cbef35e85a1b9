package runner

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
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

// Environment records where and how a run happened: the machine, the
// builds, the target and the configuration the client applied. Runs are
// comparable only when these agree (see compare's comparability check).
type Environment struct {
	// KbenchVersion is the module version, else "devel", with the VCS
	// revision ("+0123456789ab", "+dirty" for uncommitted changes) when
	// the build recorded one.
	KbenchVersion string `json:"kbench_version"`
	// KbenchBuild is the first 12 hex digits of the SHA-256 of the kbench
	// executable: two builds of different code differ here even when
	// both are "devel" without a revision.
	KbenchBuild    string `json:"kbench_build,omitempty"`
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
type Measurement struct {
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
		KbenchBuild:   executableHash(),
		LoadAverage:   currentLoadAverage(),
	}
	env.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		env.Kernel = strings.TrimSpace(string(b))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		env.KbenchVersion, env.KafkaGoVersion = buildVersions(bi)
	}
	return env
}

// buildVersions reads kbench's and kafka-go's versions from build info.
// Test binaries and builds with -buildvcs=false (or from a git worktree,
// which the go command does not stamp) have no revision: kbench is then
// "devel", and KbenchBuild tells builds apart.
func buildVersions(bi *debug.BuildInfo) (kbench, kafkaGo string) {
	kbench = "devel"
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		kbench = v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			kbench += "+" + s.Value[:12]
		}
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.modified" && s.Value == "true" {
			kbench += "+dirty"
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/segmentio/kafka-go" {
			kafkaGo = d.Version
			if d.Replace != nil {
				kafkaGo = d.Replace.Path + "@" + d.Replace.Version
			}
		}
	}
	return kbench, kafkaGo
}

// executableHash is the first 12 hex digits of the SHA-256 of this
// executable, "" when it cannot be read; computed once per process.
var executableHash = sync.OnceValue(hashExecutable)

func hashExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
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
