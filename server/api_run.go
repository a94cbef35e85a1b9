// A run as the JSON API shows it.

package server

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// apiRun is a run as the API shows it.
type apiRun struct {
	ID            uint            `json:"id"`
	URL           string          `json:"url"`
	Label         string          `json:"label"`
	Workload      rundoc.Workload `json:"workload"`
	Status        rundoc.Status   `json:"status"`
	Source        rundoc.Source   `json:"source"`
	Error         string          `json:"error"`
	Complete      bool            `json:"complete"`
	Spec          json.RawMessage `json:"spec"`
	Fingerprint   string          `json:"fingerprint"`
	GroupID       string          `json:"group_id,omitempty"`
	GroupIndex    int             `json:"group_index,omitempty"`
	Warmup        bool            `json:"warmup,omitempty"`
	ABBatch       string          `json:"ab_batch,omitempty"`
	QueuePosition int             `json:"queue_position,omitempty"`
	RecordsPerSec *float64        `json:"records_per_sec"`
	MBPerSec      *float64        `json:"mb_per_sec"`
	P99Ms         *float64        `json:"p99_ms"`
	CreatedAt     time.Time       `json:"created_at"`
	StartedAt     *time.Time      `json:"started_at"`
	FinishedAt    *time.Time      `json:"finished_at"`
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
	Metrics     []apiMetric          `json:"metrics,omitempty"`
	Series      []rundoc.SeriesPoint `json:"series,omitempty"`
	Profiles    []apiProfile         `json:"profiles,omitempty"`
	Environment json.RawMessage      `json:"environment,omitempty"`
	Measurement json.RawMessage      `json:"measurement,omitempty"`
	Output      string               `json:"output,omitempty"`
	// ExitCode is the exit status of the command of a run `kbench exec`
	// (or an import's exit_code) recorded, as its measurement holds it.
	ExitCode *int `json:"exit_code,omitempty"`
}

type apiMetric struct {
	Name   string        `json:"name"`
	Value  float64       `json:"value"`
	Unit   string        `json:"unit"`
	Better rundoc.Better `json:"better"`
	Help   string        `json:"help,omitempty"`
}

type apiProfile struct {
	ID       uint               `json:"id"`
	Role     rundoc.ProfileRole `json:"role"`
	Kind     rundoc.ProfileKind `json:"kind"`
	Bytes    int64              `json:"bytes"`
	Samples  int64              `json:"samples"`
	SHA256   string             `json:"sha256"`
	Download string             `json:"download"`
}

func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func toAPIRun(r *rundoc.Run, full bool) apiRun {
	a := apiRun{ID: r.ID, URL: fmt.Sprintf("/runs/%d", r.ID), Label: r.Label, Workload: r.Workload, Status: r.Status,
		Source: r.Source, Error: r.Error, Complete: r.Complete, Spec: rawJSON(r.Spec), Fingerprint: r.Fingerprint,
		GroupID: r.GroupID, GroupIndex: r.GroupIndex, Warmup: r.Warmup, ABBatch: r.ABBatch, RecordsPerSec: r.RecordsPerSec, MBPerSec: r.MBPerSec,
		P99Ms: r.P99Ms, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Meta: r.Meta, Time: r.Time, SeriesKey: r.SeriesKey, Queue: r.Queue, Worker: r.Worker}
	if a.Meta == nil {
		a.Meta = map[string]string{}
	}
	if !full {
		return a
	}
	a.Metrics = []apiMetric{}
	for _, m := range r.Metrics {
		a.Metrics = append(a.Metrics, apiMetric{m.Name, m.Value, m.Unit, m.Better, m.Help})
	}
	a.Series = append([]rundoc.SeriesPoint{}, r.Series...)
	a.Profiles = toAPIProfiles(r.Profiles)
	// The documents as the run stored them, whichever kbench wrote them.
	a.Environment, a.Measurement, a.Output = rawJSON(r.Documents.Environment), rawJSON(r.Documents.Measurement), r.Output
	if r.Measurement != nil {
		a.ExitCode = r.Measurement.ExitCode
	}
	return a
}

func toAPIProfiles(ps []rundoc.Profile) []apiProfile {
	out := []apiProfile{}
	for _, p := range ps {
		out = append(out, apiProfile{ID: p.ID, Role: p.Role, Kind: p.Kind, Bytes: p.Bytes, Samples: p.Samples, SHA256: p.SHA256,
			Download: fmt.Sprintf("/api/profiles/%d/download", p.ID)})
	}
	return out
}
