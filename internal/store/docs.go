package store

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
)

// This file is the one place where the run contract (package rundoc) meets
// the tables: everything written goes through encodeOutcome, everything
// read through the doc functions, so a launched run and an imported one
// are stored alike and read back alike.

// Outcome is what a finished run produced, launched (from its
// result.json) or imported (from a tool's output).
type Outcome struct {
	// Status is one of the final statuses.
	Status   rundoc.Status
	Error    string
	Complete bool
	// Environment and Measurement are the run's documents (nil: none).
	Environment *rundoc.Environment
	Measurement *rundoc.Measurement
	// Output is the Kafka-format text the run printed.
	Output  string
	Metrics []rundoc.Metric
	// Series is in time order.
	Series []rundoc.SeriesPoint
	// Histograms are the run's whole-window latency histograms (scope
	// window), one of a kind: the first given is kept.
	Histograms []rundoc.Histogram
	// HistogramLog is the text of the run's HdrHistogram log of interval
	// histograms (rundoc.HistogramLogFile); nil for none.
	HistogramLog []byte
	// Profiles have their Bytes and SHA256 computed from Data; a profile
	// that gives either must give its data's (else nothing is stored).
	Profiles []Profile
	// FinishedAt defaults to now.
	FinishedAt time.Time
	// Meta are tags the run recorded itself (result.json's meta: the
	// version kbench run defaults): FinishRun adds those the run does not
	// have yet, except branch, which chose the run's series when it was
	// created.
	Meta map[string]string
	// Worker, when set, is the id of the worker that executed the run.
	// Its result then also replaces an interruption: a run is
	// interrupted only when its worker is taken for lost, and a worker
	// that lost the database for a while but not its run still has the
	// run's real result (see lifecycle's storing retries).
	Worker uint
}

// encoded is an Outcome in the shape of the tables.
type encoded struct {
	environment, measurement string
	metrics                  []Metric
	series                   []SeriesPoint
	histograms               []Histogram
	log                      *HistogramLog
}

func encodeOutcome(o Outcome) (encoded, error) {
	var e encoded
	var err error
	if e.environment, err = encodeDocument(o.Environment); err != nil {
		return e, fmt.Errorf("environment: %w", err)
	}
	if e.measurement, err = encodeDocument(o.Measurement); err != nil {
		return e, fmt.Errorf("measurement: %w", err)
	}
	// A run holds one metric of a name, the first given, so that every
	// reader (a run's page, a history's column of values) means the same
	// figure by it.
	seen := make(map[string]bool, len(o.Metrics))
	for _, m := range o.Metrics {
		if !m.Better.Valid() {
			return e, fmt.Errorf("metric %s: unknown direction %q", m.Name, m.Better)
		}
		if seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		e.metrics = append(e.metrics, Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help})
	}
	for i, p := range o.Series {
		e.series = append(e.series, SeriesPoint{Seq: i, T: p.T, Records: p.Records, Bytes: p.Bytes, RecordsPerSec: p.RecordsPerSec,
			MBPerSec: p.MBPerSec, LatencyAvgMs: p.LatencyAvgMs, LatencyMaxMs: p.LatencyMaxMs, CPUPercent: p.CPUPercent,
			LatencyP50Ms: p.LatencyP50Ms, LatencyP99Ms: p.LatencyP99Ms, LatencyP999Ms: p.LatencyP999Ms, PercentilesApprox: p.PercentilesApprox})
	}
	// Histograms are checked here too, whoever checked them before: a
	// stored histogram is one every reader can decode and merge.
	kinds := make(map[string]bool, len(o.Histograms))
	for _, h := range o.Histograms {
		if h.Scope != rundoc.HistogramWindow {
			return e, fmt.Errorf("histogram %s: scope %q; the log holds the intervals", h.Kind, h.Scope)
		}
		if _, err := runhist.Check(h); err != nil {
			return e, fmt.Errorf("histogram %w", err)
		}
		if kinds[h.Kind] {
			continue
		}
		kinds[h.Kind] = true
		e.histograms = append(e.histograms, Histogram{Kind: h.Kind, StartS: h.StartS, EndS: h.EndS, Count: h.Count, Data: h.Data})
	}
	if o.HistogramLog != nil {
		_, hs, err := runhist.ReadLog(bytes.NewReader(o.HistogramLog))
		if err != nil {
			return e, err
		}
		e.log = &HistogramLog{Entries: len(hs), Bytes: int64(len(o.HistogramLog)), Data: string(o.HistogramLog)}
	}
	return e, nil
}

// encodeDocument is a document's stored text, "" for none.
func encodeDocument[T any](doc *T) (string, error) {
	if doc == nil {
		return "", nil
	}
	b, err := json.Marshal(doc)
	return string(b), err
}

// Record fills a new run (one CreateRuns is to store) with an outcome, as
// FinishRun would store it: an import is created already final, with its
// documents, metrics, series and profiles written through the same types
// as a launched run's.
func (r *Run) Record(o Outcome) error {
	if !o.Status.Final() {
		return fmt.Errorf("store: record outcome: status %q is not a final status", o.Status)
	}
	e, err := encodeOutcome(o)
	if err != nil {
		return fmt.Errorf("store: record outcome: %w", err)
	}
	r.Status, r.Error, r.Complete, r.Output = o.Status, o.Error, o.Complete, o.Output
	r.Environment, r.Measurement = e.environment, e.measurement
	r.Metrics, r.Series, r.Profiles = e.metrics, e.series, o.Profiles
	r.Histograms, r.HistogramLog = e.histograms, e.log
	if !o.FinishedAt.IsZero() {
		at := o.FinishedAt.UTC()
		r.FinishedAt = &at
	}
	return nil
}

// Meta is a run's metadata as the runs table keeps it: a JSON object of
// strings, "" for none.
type Meta map[string]string

// doc is m as rundoc.Run has it: nil for none.
func (m Meta) doc() map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// owned is m as rundoc.Run has it when m was just read and is no one
// else's: nil for none, else m itself (doc's copy would be waste).
func (m Meta) owned() map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// GormDataType stores Meta as text.
func (Meta) GormDataType() string { return "string" }

// Value encodes m for the database.
func (m Meta) Value() (driver.Value, error) {
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(map[string]string(m))
	return string(b), err
}

// Scan decodes the stored text.
func (m *Meta) Scan(v any) error {
	var text []byte
	switch v := v.(type) {
	case nil:
	case string:
		text = []byte(v)
	case []byte:
		text = v
	default:
		return fmt.Errorf("store: meta: cannot read %T", v)
	}
	*m = nil
	if len(text) == 0 {
		return nil
	}
	if err := json.Unmarshal(text, (*map[string]string)(m)); err != nil {
		return fmt.Errorf("store: meta: %w", err)
	}
	return nil
}

// seriesOf is a new run's series: the one it names, else the series of
// its spec fingerprint on its branch, or for an import of its tool and
// label on its branch (rundoc.SeriesKey, ImportSeriesKey). It is filled
// in on every write of a new run, so no entry point can forget it.
func seriesOf(r *Run) string {
	if r.SeriesKey != "" {
		return r.SeriesKey
	}
	branch := r.Meta[rundoc.MetaBranch]
	if r.Source == rundoc.SourceImported {
		return rundoc.ImportSeriesKey(r.Workload, r.Label, branch)
	}
	return rundoc.SeriesKey(r.Fingerprint, branch)
}

// mergeMeta is stored with the tags of recorded it lacks (not branch).
func mergeMeta(stored, recorded map[string]string) Meta {
	out := Meta(rundoc.WithDefaultMeta(stored, recorded))
	if b, ok := stored[rundoc.MetaBranch]; ok {
		out[rundoc.MetaBranch] = b
	} else {
		delete(out, rundoc.MetaBranch)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// runDoc is how pages, comparisons and the API read a stored run.
func runDoc(r *Run) rundoc.Run {
	d := rundoc.Run{ID: r.ID, Label: r.Label, Workload: r.Workload, Status: r.Status, Source: r.Source, Spec: r.Spec,
		Fingerprint: r.Fingerprint, Error: r.Error, GroupID: r.GroupID, GroupIndex: r.GroupIndex, Warmup: r.Warmup,
		ABBatch: r.ABBatch, Documents: rundoc.Documents{Environment: r.Environment, Measurement: r.Measurement},
		Output: r.Output, Complete: r.Complete, RecordsPerSec: r.RecordsPerSec, MBPerSec: r.MBPerSec, P99Ms: r.P99Ms,
		CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Meta: r.Meta.doc(), Time: r.RunAt, SeriesKey: r.SeriesKey, Queue: r.Queue, Worker: r.Worker}
	d.SetDocuments(r.Environment, r.Measurement)
	if len(r.Metrics) > 0 {
		d.Metrics = make([]rundoc.Metric, len(r.Metrics))
		for i, m := range r.Metrics {
			d.Metrics[i] = rundoc.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help}
		}
	}
	if len(r.Series) > 0 {
		d.Series = make([]rundoc.SeriesPoint, len(r.Series))
		for i, p := range r.Series {
			d.Series[i] = rundoc.SeriesPoint{T: p.T, Records: p.Records, Bytes: p.Bytes, RecordsPerSec: p.RecordsPerSec,
				MBPerSec: p.MBPerSec, LatencyAvgMs: p.LatencyAvgMs, LatencyMaxMs: p.LatencyMaxMs, CPUPercent: p.CPUPercent,
				LatencyP50Ms: p.LatencyP50Ms, LatencyP99Ms: p.LatencyP99Ms, LatencyP999Ms: p.LatencyP999Ms, PercentilesApprox: p.PercentilesApprox}
		}
	}
	if len(r.Profiles) > 0 {
		d.Profiles = profileDocs(r.Profiles)
	}
	return d
}

func runDocs(rs []Run) []rundoc.Run {
	out := make([]rundoc.Run, len(rs))
	for i := range rs {
		out[i] = runDoc(&rs[i])
	}
	return out
}

// ProfileDoc is a stored profile's description, without its data.
func ProfileDoc(p *Profile) rundoc.Profile {
	return rundoc.Profile{ID: p.ID, RunID: p.RunID, Role: p.Role, Kind: p.Kind, Bytes: p.Bytes, Samples: p.Samples,
		SHA256: p.SHA256, Uploaded: p.Uploaded, CreatedAt: p.CreatedAt}
}

func profileDocs(ps []Profile) []rundoc.Profile {
	out := make([]rundoc.Profile, len(ps))
	for i := range ps {
		out[i] = ProfileDoc(&ps[i])
	}
	return out
}

func reportDoc(r *Report) rundoc.Report {
	return rundoc.Report{ID: r.ID, Slug: r.Slug, Title: r.Title, Notes: r.Notes, RunIDs: r.RunIDs, By: r.By, At: r.At, Sweep: r.SweepID, SLO: r.SLOID, CreatedAt: r.CreatedAt}
}

// Doc is a run this process just created (CreateRuns, AppendRuns) as
// readers see runs, without a second read.
func (r *Run) Doc() rundoc.Run { return runDoc(r) }
