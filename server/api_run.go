// A run as the JSON API shows it.

package server

import (
	"encoding/json"
	"fmt"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
)

// apiRun and its parts are a run as the API shows it: the client
// package's types, so that the shape is declared once.
type (
	apiRun     = client.Run
	apiMetric  = client.Metric
	apiProfile = client.Profile
)

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
		a.Metrics = append(a.Metrics, apiMetric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help})
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
