package store

import (
	"errors"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// ErrNotFound is returned when a run, profile or report does not exist.
// It is rundoc.ErrNotFound, which readers through an interface match.
var ErrNotFound = rundoc.ErrNotFound

// ErrConflict is returned when a state change does not apply to a run's
// current status (e.g. starting a run that is no longer queued).
var ErrConflict = errors.New("conflicting state")

// Run is one benchmark execution as the runs table keeps it: what is
// written. Reads give rundoc.Run (docs.go).
type Run struct {
	// Label, Workload, Status and GroupID are indexed for ListRuns by
	// runListIndexes0001 (migrations.go).
	ID       uint            `gorm:"primaryKey"`
	Label    string          `gorm:"size:200"`
	Workload rundoc.Workload `gorm:"size:32"`
	Status   rundoc.Status   `gorm:"size:16"`
	Source   rundoc.Source   `gorm:"size:16"`
	// Spec is the run's spec as JSON, secrets removed:
	// {"workload": "...", "params": {flag: value, ...}}.
	Spec string
	// Fingerprint groups comparable runs: a hash of the fields that define
	// the workload (not the label, not the target's credentials).
	Fingerprint string `gorm:"index;size:64"`
	Error       string
	// GroupID ties the runs of one repetition group; "" for a single run.
	GroupID string `gorm:"size:32"`
	// GroupIndex is the 1-based position among the group's measured runs;
	// warm-up runs have 0.
	GroupIndex int
	// Warmup marks a discarded warm-up run of a repetition group.
	Warmup bool
	// ABBatch ties the runs queued interleaved in one submission (an A/B
	// submission of several configurations, the write-path preset, added
	// repetitions): they ran alternately, configuration by configuration,
	// so that drift of the machine hit each alike. "" for a run queued on
	// its own. Added by migration 0002_ab_batch; left out of JSON when
	// empty so that runs from before it read as they did.
	ABBatch string `gorm:"column:ab_batch;size:32;not null;default:''" json:",omitempty"`
	// Meta is the run's metadata (rundoc.ValidateMeta), stored as a JSON
	// object ("" for none). RunAt is when the run happened (rundoc.Run.Time):
	// its start, its creation while queued, or an import's given time.
	// SeriesKey is its series key (rundoc.SeriesKey, ImportSeriesKey or an
	// import's name), filled in on create when left empty. Added by
	// migration 0003_meta_series, which indexes run_at; a series' runs in
	// time order are read from idx_runs_series_status (0005); left out of
	// JSON when empty, as ABBatch is.
	Meta      Meta      `gorm:"column:meta;not null;default:''" json:",omitempty"`
	RunAt     time.Time `gorm:"column:run_at" json:",omitzero"`
	SeriesKey string    `gorm:"column:series;not null;default:''" json:",omitempty"`
	// Queue is the queue of workers the run waits in (jobs.DefaultQueue,
	// "local", unless the submission named another); Worker is the host
	// name of the worker that took it and WorkerID its row in workers,
	// set when it starts (nil before, and for runs from before migration
	// 0007_workers). Left out of JSON when empty, as ABBatch is.
	Queue    string `gorm:"column:queue;not null;default:'local'" json:",omitempty"`
	Worker   string `gorm:"column:worker;not null;default:''" json:",omitempty"`
	WorkerID *uint  `gorm:"column:worker_id" json:",omitempty"`
	// Environment and Measurement are JSON objects from result.json.
	Environment string
	Measurement string
	// Output is the Kafka-format text the run printed.
	Output   string
	Complete bool
	// Key figures copied from the metrics when the result is stored, so
	// the runs list needs no join. Nil when the run has no such metric.
	RecordsPerSec *float64
	MBPerSec      *float64
	P99Ms         *float64

	CreatedAt  time.Time `gorm:"index"`
	StartedAt  *time.Time
	FinishedAt *time.Time

	Metrics  []Metric      `gorm:"constraint:OnDelete:CASCADE"`
	Series   []SeriesPoint `gorm:"constraint:OnDelete:CASCADE"`
	Profiles []Profile     `gorm:"constraint:OnDelete:CASCADE"`
	// Histograms are the run's whole-window latency histograms, and
	// HistogramLog its interval histograms (migration 0012_histograms).
	// Both are written with the run's result and read on their own
	// (RunHistograms, RunHistogramLog): no page of many runs loads them.
	Histograms   []Histogram   `gorm:"constraint:OnDelete:CASCADE" json:",omitempty"`
	HistogramLog *HistogramLog `gorm:"constraint:OnDelete:CASCADE" json:",omitempty"`
}

// Final reports whether the status is one a run never leaves.
func (r *Run) Final() bool { return r.Status.Final() }

// Metric is one figure of a run. A run's metrics are read by run and
// name from idx_metrics_run_name_value (migration 0005_history_indexes),
// which also holds the value, unit and direction a history reads.
type Metric struct {
	ID     uint `gorm:"primaryKey"`
	RunID  uint
	Name   string `gorm:"size:100"`
	Value  float64
	Unit   string        `gorm:"size:32"`
	Better rundoc.Better `gorm:"size:8"`
	Help   string
}

// SeriesPoint is one reporting interval of a run.
type SeriesPoint struct {
	ID            uint    `gorm:"primaryKey"`
	RunID         uint    `gorm:"index:idx_series_run_seq,priority:1"`
	Seq           int     `gorm:"index:idx_series_run_seq,priority:2"`
	T             float64 // seconds since the measured window began
	Records       int64
	Bytes         int64
	RecordsPerSec float64
	MBPerSec      float64
	LatencyAvgMs  float64
	LatencyMaxMs  float64
	CPUPercent    float64
	// The interval's latency percentiles (rundoc.SeriesPoint); NULL in
	// points stored before migration 0012_histograms, read as 0: none
	// (and left out of JSON, as ABBatch is).
	LatencyP50Ms      float64 `json:",omitzero"`
	LatencyP99Ms      float64 `json:",omitzero"`
	LatencyP999Ms     float64 `json:",omitzero"`
	PercentilesApprox bool    `json:",omitzero"`
}

// Histogram is one whole-window latency histogram of a run
// (rundoc.Histogram, scope window), in rundoc's layout and encoding.
// A run holds one of a kind.
type Histogram struct {
	ID     uint   `gorm:"primaryKey"`
	RunID  uint   `gorm:"not null;uniqueIndex:idx_histograms_run_kind,priority:1"`
	Kind   string `gorm:"size:40;not null;uniqueIndex:idx_histograms_run_kind,priority:2"`
	StartS float64
	EndS   float64
	Count  int64
	Data   string `gorm:"not null"`
}

// HistogramLog is a run's interval histograms as the HdrHistogram log
// its run wrote next to result.json (rundoc.HistogramLogFile), checked
// when stored; one per run.
type HistogramLog struct {
	RunID uint `gorm:"primaryKey;autoIncrement:false"`
	// Entries is how many histograms the log holds; Bytes its size.
	Entries int
	Bytes   int64
	Data    string `gorm:"not null"`
}

// Profile is a pprof profile of a run, stored gzipped as pprof writes it.
// Its bytes are kept once per distinct content, in ProfileBlob, which the
// profile names by SHA-256 (migration 0006_profile_blobs): runs whose
// profiles are identical (an imported file, a re-uploaded profile, a
// fixture) share one copy. Bytes and Data are read from the blob and
// written to it, never to the profiles table.
type Profile struct {
	ID      uint               `gorm:"primaryKey"`
	RunID   uint               `gorm:"index"`
	Role    rundoc.ProfileRole `gorm:"size:16"`
	Kind    rundoc.ProfileKind `gorm:"size:16"`
	Bytes   int64              `gorm:"->;-:migration"` // size of Data
	Samples int64              // number of samples in the profile
	// SHA256 is the hex SHA-256 of Data: the key of its ProfileBlob.
	// The store computes it; a caller that gives one must give the right
	// one.
	SHA256 string `gorm:"size:64;index:idx_profiles_sha256"`
	// Uploaded marks a profile a user uploaded rather than one kbench
	// captured: the file paths inside it are not to be trusted.
	Uploaded bool
	// Data is the gzipped pprof protobuf. Listing queries leave it out.
	Data      []byte `gorm:"->;-:migration"`
	CreatedAt time.Time
}

// ProfileBlob is the content of one or more profiles, stored once: the
// gzipped pprof bytes under their SHA-256. A blob lives as long as a
// profile names it: deleting a run removes the blobs no other profile
// names, in the same transaction, and a foreign key from profiles keeps
// the database from removing one still named.
type ProfileBlob struct {
	SHA256 string `gorm:"primaryKey;size:64"`
	Bytes  int64
	Data   []byte
}

// Worker is one worker process (kbench serve's local worker or a kbench
// worker) as the workers table keeps it: written when it starts, its
// heartbeat refreshed while it lives, stopped_at set when it stops
// cleanly. Added by migration 0007_workers.
type Worker struct {
	ID      uint   `gorm:"primaryKey"`
	Host    string `gorm:"not null;default:''"`
	Queue   string `gorm:"not null;default:''"`
	PID     int    `gorm:"column:pid;not null;default:0"`
	Version string `gorm:"not null;default:''"`
	// Clusters are the names of the clusters the worker names
	// (--cluster NAME=FILE), comma-separated: the server checks a run's
	// target.cluster against the workers of its queue. The files stay on
	// the worker.
	Clusters string `gorm:"not null;default:''"`
	// Tools are the Kafka tools the worker offers (--tool NAME=PATH),
	// "NAME:KIND" each, comma-separated (toolcatalog.Set.Offered): the
	// server checks a tool run against the workers of its queue. The
	// paths stay on the worker. Added by migration 0011_worker_tools.
	Tools       string `gorm:"not null;default:''"`
	StartedAt   time.Time
	HeartbeatAt time.Time `gorm:"index"`
	StoppedAt   *time.Time
}

// RunEvent is one live event of a run (its progress, an interval point,
// a line of output, a change of status), shared through the database by
// the process executing the run so that a server elsewhere can show it
// as it happens. Data is the lifecycle's encoding, opaque to the store;
// Origin names the process that wrote it, so that one does not replay
// its own. Added by migration 0008_run_events.
type RunEvent struct {
	ID     uint64 `gorm:"primaryKey;index:idx_run_events_run,priority:2"`
	RunID  uint   `gorm:"not null;index:idx_run_events_run,priority:1"`
	Origin string `gorm:"not null;default:''"`
	Data   string `gorm:"not null;default:''"`
	// CreatedAt is the database's clock (its column default): the store
	// never sets it.
	CreatedAt time.Time `gorm:"not null;default:CURRENT_TIMESTAMP;->"`
}
