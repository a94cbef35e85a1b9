package wire

import (
	"encoding/json"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// Run is a run as the API shows it: GET /api/runs/{id} (with the fields
// marked "only on a single run"), an element of GET /api/runs and of the
// answers that create runs.
type Run struct {
	ID       uint     `json:"id"`
	URL      string   `json:"url"`
	Label    string   `json:"label"`
	Workload Workload `json:"workload"`
	Status   Status   `json:"status"`
	Source   Source   `json:"source"`
	// Error says why a run failed or was canceled.
	Error    string `json:"error"`
	Complete bool   `json:"complete"`
	// Spec is the run's spec as stored (rundoc.Spec's JSON), secrets
	// redacted.
	Spec        json.RawMessage `json:"spec"`
	Fingerprint string          `json:"fingerprint"`
	// GroupID and GroupIndex place a run among the repetitions of one
	// submission; Warmup marks a warm-up run (left out of comparisons);
	// ABBatch the A/B submission it belongs to.
	GroupID    string `json:"group_id,omitempty"`
	GroupIndex int    `json:"group_index,omitempty"`
	Warmup     bool   `json:"warmup,omitempty"`
	ABBatch    string `json:"ab_batch,omitempty"`
	// QueuePosition is a queued run's place in its queue (1: next).
	QueuePosition int `json:"queue_position,omitempty"`
	// The headline figures, null until the run has them.
	RecordsPerSec *float64   `json:"records_per_sec"`
	MBPerSec      *float64   `json:"mb_per_sec"`
	P99Ms         *float64   `json:"p99_ms"`
	CreatedAt     time.Time  `json:"created_at"`
	StartedAt     *time.Time `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at"`
	// Meta is the run's metadata ({} for none); Time when it happened;
	// SeriesKey its series ("series" is taken: a run's interval series).
	Meta      map[string]string `json:"meta"`
	Time      time.Time         `json:"time"`
	SeriesKey string            `json:"series_key"`
	// Queue is the queue of workers the run waits (waited) in; Worker the
	// host name of the worker that took it ("" until one has).
	Queue  string `json:"queue"`
	Worker string `json:"worker"`
	// Only on a single run.
	Metrics     []Metric        `json:"metrics,omitempty"`
	Series      []SeriesPoint   `json:"series,omitempty"`
	Profiles    []Profile       `json:"profiles,omitempty"`
	Environment json.RawMessage `json:"environment,omitempty"`
	Measurement json.RawMessage `json:"measurement,omitempty"`
	Output      string          `json:"output,omitempty"`
	// Fleet and Shards describe a fleet run's parent ("workers": N): the
	// fleet's barrier and each shard's run (only on a single run).
	Fleet  *Fleet       `json:"fleet,omitempty"`
	Shards []FleetShard `json:"shards,omitempty"`
	// ExitCode is the exit status of the command of a run `kbench exec`
	// (or an import's exit_code) recorded, as its measurement holds it.
	ExitCode *int `json:"exit_code,omitempty"`
}

// Metric returns the run's first figure named name; ok is false when it
// has none (or the run came from a list, which carries no metrics).
func (r *Run) Metric(name string) (m Metric, ok bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Metric is one figure of a run.
type Metric struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Better Better  `json:"better"`
	// Help says what the metric measures, for the metrics kbench knows.
	Help string `json:"help,omitempty"`
}

// Profile is one profile of a run; Download is the path of its bytes.
type Profile struct {
	ID       uint        `json:"id"`
	Role     ProfileRole `json:"role"`
	Kind     ProfileKind `json:"kind"`
	Bytes    int64       `json:"bytes"`
	Samples  int64       `json:"samples"`
	SHA256   string      `json:"sha256"`
	Download string      `json:"download"`
}

// Profiles answers GET /api/runs/{id}/profiles and POST
// /api/runs/{id}/profiles (the profiles added).
type Profiles struct {
	Profiles []Profile `json:"profiles"`
}

// RunList answers GET /api/runs: one page of runs, newest first, without
// their metrics. Total is how many runs the filters select over all pages,
// Offset the page's place among them. Next and Prev are the paths of the
// pages around this one (cursors; null at either end). The fields are in
// the order of their names, as the server has always written them.
type RunList struct {
	Limit  int     `json:"limit"`
	Next   *string `json:"next"`
	Offset int64   `json:"offset"`
	Prev   *string `json:"prev"`
	Runs   []Run   `json:"runs"`
	Total  int64   `json:"total"`
}

// Created answers the requests that queue or store several runs, each
// route filling its fields (in the order of their names, as the server
// has always written them):
//
//   - POST /api/runs: Runs and, for one run, ID, Status and URL; for
//     repetitions GroupID; with configs (an A/B test) ABBatch, CompareURL
//     and GroupIDs (one per configuration, in their order);
//   - POST /api/compare/repetitions: ABBatch, CompareURL and Runs (the
//     new ones);
//   - POST /api/presets/writepath: Batch, CompareURL and Runs;
//   - POST /api/import with a table: CompareURL and Runs;
//   - POST /api/import/csv: Runs and Series.
type Created struct {
	ABBatch    string   `json:"ab_batch,omitempty"`
	Batch      string   `json:"batch,omitempty"`
	CompareURL string   `json:"compare_url,omitempty"`
	GroupID    string   `json:"group_id,omitempty"`
	GroupIDs   []string `json:"group_ids,omitempty"`
	ID         uint     `json:"id,omitempty"`
	Runs       []Run    `json:"runs"`
	Series     string   `json:"series,omitempty"`
	Status     Status   `json:"status,omitempty"`
	URL        string   `json:"url,omitempty"`
}

// Canceling answers POST /api/runs/{id}/cancel (202): the run is being
// canceled.
type Canceling struct {
	Canceling bool `json:"canceling"`
	ID        uint `json:"id"`
}

// CreateRuns is the body of POST /api/runs: one run (Repetitions 0 or 1),
// repetitions of it, or with Configs an A/B test of several
// configurations queued interleaved.
type CreateRuns struct {
	Workload    Workload `json:"workload"`
	Label       string   `json:"label"`
	Repetitions int      `json:"repetitions"`
	WarmupRuns  int      `json:"warmup_runs"`
	// Params are the workload's settings by their flag names
	// ("records", "record-size", "producer-props", …).
	Params map[string]json.RawMessage `json:"params"`
	Target *Target                    `json:"target,omitempty"`
	// Queue is the queue of workers the runs wait in ("local" when
	// empty).
	Queue string `json:"queue,omitempty"`
	// Meta tags every run of the request: commit, branch, version or any
	// key.
	Meta map[string]string `json:"meta,omitempty"`
	// Configs makes an A/B submission; Label, Params and Target are then
	// each configuration's own.
	Configs []Config `json:"configs,omitempty"`
	// Tool names a Kafka tool the queue's workers offer, run instead of
	// kbench's client.
	Tool string `json:"tool,omitempty"`
	// Workers makes each run a fleet run driven by that many workers of
	// the queue (2 to 10), one shard each; BarrierTimeoutS bounds how
	// long the first shard to check in waits for the last (default 60).
	Workers         int     `json:"workers,omitempty"`
	BarrierTimeoutS float64 `json:"barrier_timeout_s,omitempty"`
}

// Config is one configuration of an A/B submission or a sweep.
type Config struct {
	// Workload, when given, must be the submission's.
	Workload *Workload                  `json:"workload,omitempty"`
	Label    string                     `json:"label"`
	Params   map[string]json.RawMessage `json:"params"`
	Target   *Target                    `json:"target,omitempty"`
}

// Target is the cluster a run measures: one of the server's named
// clusters, or a bootstrap server with its security settings.
type Target struct {
	Cluster          string `json:"cluster"`
	BootstrapServer  string `json:"bootstrap_server"`
	SecurityProtocol string `json:"security_protocol"`
	SASLMechanism    string `json:"sasl_mechanism"`
	SASLUsername     string `json:"sasl_username"`
	SASLPassword     string `json:"sasl_password"`
}

// AddRepetitions is the body of POST /api/compare/repetitions: the runs of
// a comparison (Runs and By, or Query, the comparison page's query) and
// how many repetitions of each column to add.
type AddRepetitions struct {
	Runs  []uint `json:"runs"`
	By    string `json:"by"`
	Query string `json:"query"`
	N     int    `json:"n"`
}

// CreateReport is the body of POST /api/reports.
type CreateReport struct {
	Title string `json:"title"`
	Notes string `json:"notes"`
	Runs  []uint `json:"runs"`
	By    string `json:"by"`
	// At is where a comparison by change splits.
	At uint `json:"at"`
	// Sweep is the id of an ended sweep the report shows.
	Sweep string `json:"sweep"`
	// SLO is the id of an ended latency-target search the report shows.
	SLO string `json:"slo,omitempty"`
}

// ReportCreated answers POST /api/reports (201).
type ReportCreated struct {
	Slug string `json:"slug"`
	URL  string `json:"url"`
}

// WritepathPreset is the body of POST /api/presets/writepath; every field
// is optional.
type WritepathPreset struct {
	RecordsPerRequest *int  `json:"records-per-request"`
	RecordSize        *int  `json:"record-size"`
	Requests          *int  `json:"requests"`
	Repetitions       *int  `json:"repetitions"`
	Sink              *bool `json:"sink"`
	InFlight          *int  `json:"in-flight"`
	// Duration is the measured seconds of each run.
	Duration *float64 `json:"duration"`
}

// Fleet is a fleet run's barrier and phase: waiting (no shard taken),
// gathering, started, merged, failed or canceled. StartAt is the common
// start (T0) on the database's clock, set a few seconds after the last
// shard checked in; BarrierTimeoutS how long after the first check-in
// the last may come.
type Fleet struct {
	Workers         int        `json:"workers"`
	Phase           string     `json:"phase"`
	BarrierTimeoutS float64    `json:"barrier_timeout_s"`
	FirstCheckInAt  *time.Time `json:"first_check_in_at"`
	StartAt         *time.Time `json:"start_at"`
	// StartSkewMs is the barrier's skew once every shard has opened its
	// window: the spread of those openings on the database's clock (each
	// converted with its worker's offset); null before.
	StartSkewMs *float64 `json:"start_skew_ms"`
	Error       string   `json:"error,omitempty"`
}

// FleetShard is one shard of a fleet run: its run, the worker that took
// it (its id in the workers table, and host), and its own figures over
// its own window: records (acknowledged, or received for e2e),
// records_per_sec, p99_ms, cpu_avg (its process-cpu-avg: its process's
// CPU over its window, in percent of one core), and its worker's clock offset from the
// database's (positive: ahead) with the round trip it was measured in.
// Figures are null until the shard has them.
type FleetShard struct {
	Index         int      `json:"index"`
	RunID         uint     `json:"run_id"`
	URL           string   `json:"url"`
	Worker        *uint    `json:"worker"`
	Host          string   `json:"host"`
	Status        Status   `json:"status"`
	Error         string   `json:"error,omitempty"`
	Records       *float64 `json:"records"`
	RecordsPerSec *float64 `json:"records_per_sec"`
	P99Ms         *float64 `json:"p99_ms"`
	CPUAvg        *float64 `json:"cpu_avg"`
	ClockOffsetMs *float64 `json:"clock_offset_ms"`
	RoundTripMs   *float64 `json:"round_trip_ms"`
	// Part is the shard's part of the division: its topics' partitions,
	// its records/s (-1 unthrottled), producers per topic and window.
	Part *ShardPart `json:"part"`
}

// ShardPart is a shard's part of a fleet's division (rundoc.Shard).
type ShardPart = rundoc.Shard
