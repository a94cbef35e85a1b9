package rundoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxLabel bounds a run's label, in bytes, however the run comes in (a
// submission, an import, a table's header): the store keeps labels of
// this size.
const MaxLabel = 200

// Run is a stored run as pages, comparisons and the API read it: the
// store maps its tables to this type in one place (internal/store/docs.go),
// so readers never see how it is kept.
type Run struct {
	ID       uint
	Label    string
	Workload Workload
	Status   Status
	Source   Source
	// Spec is the run's spec file as stored (SpecFile JSON: workload and
	// params, secrets redacted); "" for an import without one.
	Spec string
	// Fingerprint groups comparable runs (Spec.Fingerprint).
	Fingerprint string
	Error       string
	// GroupID ties the runs of one repetition group; "" for a single run.
	GroupID string
	// GroupIndex is the 1-based position among the group's measured runs;
	// warm-up runs have 0.
	GroupIndex int
	// Warmup marks a discarded warm-up run of a repetition group.
	Warmup bool
	// ABBatch ties the runs queued interleaved in one submission; "" for
	// a run queued on its own.
	ABBatch string
	// Meta is the run's metadata: free key=value tags, the well-known
	// ones commit, branch and version (see meta.go); nil for none.
	Meta map[string]string
	// Time is when the run happened, the order of its series' history: a
	// launched run's start (its creation while queued), an import's given
	// time, else the moment it was imported.
	Time time.Time
	// SeriesKey is the run's series (SeriesKey, ImportSeriesKey, or the
	// name an import gave).
	SeriesKey string
	// Queue is the queue of workers the run waits in ("local", the
	// server's own worker, unless its submission named another); Worker
	// is the host name of the worker that took it, "" until one has.
	Queue  string
	Worker string
	// Environment and Measurement are the run's documents, decoded; nil
	// when the run has none yet (queued, running) or its stored text is
	// not a document this code reads (Documents keeps that text, and
	// DocumentErr says why).
	Environment *Environment
	Measurement *Measurement
	// Documents is the stored text of both, as written: the API returns
	// it unchanged, so a client sees what the run recorded whichever
	// kbench wrote it.
	Documents   Documents
	DocumentErr error
	// Output is the Kafka-format text the run printed (or that was
	// imported).
	Output   string
	Complete bool
	// Key figures copied from the metrics when the result was stored;
	// nil when the run has no such metric.
	RecordsPerSec *float64
	MBPerSec      *float64
	P99Ms         *float64

	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time

	Metrics []Metric
	// Series is in time order.
	Series   []SeriesPoint
	Profiles []Profile
}

// Documents is the stored JSON text of a run's environment and
// measurement ("" when absent).
type Documents struct {
	Environment, Measurement string
}

// Final reports whether the run's status is one it never leaves.
func (r *Run) Final() bool { return r.Status.Final() }

// Metric returns the run's named metric.
func (r *Run) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Profile is a stored profile's description, without its data.
type Profile struct {
	ID      uint
	RunID   uint
	Role    ProfileRole
	Kind    ProfileKind
	Bytes   int64 // size of the gzipped protobuf
	Samples int64
	SHA256  string
	// Uploaded marks a profile a user uploaded rather than one kbench
	// captured: the file paths inside it are not to be trusted.
	Uploaded  bool
	CreatedAt time.Time
}

// Report is a saved comparison: the runs in column order (the first is
// the baseline) and how columns are formed.
type Report struct {
	ID uint
	// Slug is the report's random name in its link.
	Slug   string
	Title  string
	Notes  string
	RunIDs []uint
	// By is how columns are formed: run, label, group, or change: the
	// runs before At and the runs from At on (a change point's before/after
	// comparison).
	By string
	// At is the first run after the change point when By is "change"; 0
	// otherwise, and then left out of JSON, so other reports encode as
	// they did before it existed.
	At uint `json:",omitempty"`
	// Sweep is the id of the latency-vs-throughput sweep the report
	// shows, "" for none (then left out of JSON). A report holds runs to
	// compare, a sweep, or both.
	Sweep string `json:",omitempty"`
	// SLO is the id of the latency-target search the report shows, ""
	// for none (then left out of JSON).
	SLO       string `json:",omitempty"`
	CreatedAt time.Time
}

// ImportSpec is the spec an imported run stores in place of a SpecFile:
// what was imported, since kbench ran nothing.
type ImportSpec struct {
	// Workload is Imported.
	Workload Workload `json:"workload"`
	// Files are the imported files' names ("pasted output" for text).
	Files []string `json:"files"`
	// Tool is the Kafka tool whose output was imported, if any.
	Tool string `json:"tool,omitempty"`
	// Params are what the imported file says of the workload, under
	// kbench's parameter names where it has them (record-size,
	// partitions), so that comparisons list them as they list a spec's;
	// nil when it says nothing.
	Params map[string]any `json:"params,omitempty"`
}

// MeasuredByKbench reports whether kbench measured the run's figures: a
// launched run, or an imported kbench result (`kbench import DIR`,
// `kbench run --server`), whose environment kbench itself recorded; not
// an import of a Kafka tool's output or of profiles alone, of which
// kbench knows only what was printed.
func (r *Run) MeasuredByKbench() bool {
	if r.Source != SourceImported {
		return true
	}
	return r.Environment != nil && r.Environment.Source != SourceImported
}

// SetDocuments sets the run's documents from their stored text: Documents
// keeps the text as it is, Environment and Measurement get what decodes
// ("", "null" and "{}" are no document), and DocumentErr says what did
// not. Fields a newer kbench added are no error.
func (r *Run) SetDocuments(environment, measurement string) {
	r.Documents = Documents{Environment: environment, Measurement: measurement}
	var errE, errM error
	if r.Environment, errE = decodeDocument[Environment](environment); errE != nil {
		errE = fmt.Errorf("run %d: environment: %w", r.ID, errE)
	}
	if r.Measurement, errM = decodeDocument[Measurement](measurement); errM != nil {
		errM = fmt.Errorf("run %d: measurement: %w", r.ID, errM)
	}
	r.DocumentErr = errors.Join(errE, errM)
}

func decodeDocument[T any](text string) (*T, error) {
	switch strings.TrimSpace(text) {
	case "", "null", "{}":
		return nil, nil
	}
	var doc T
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}
