// The runs a file of results becomes (a CSV back-fill's rows, a table's
// columns), built and stored alike.

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// importedRun is one run read from a file of results: its figures and
// what the import says of it.
type importedRun struct {
	label     string
	workload  rundoc.Workload
	seriesKey string // the series it joins; "" for its label's
	metrics   []rundoc.Metric
	meta      map[string]string
	// runAt is when it ran, finishedAt when it finished (zero: when it
	// is stored).
	runAt, finishedAt time.Time
	// lines is how many lines of the file it was read from (0: not
	// counted); notes say how it was read.
	lines int
	notes []string
}

// storeImportedRuns stores runs read by tool ("csv", "table") from the
// file name as imported, succeeded, complete runs whose environment the
// file does not give (broker says why), in one CreateRuns: all or none.
func (s *Server) storeImportedRuns(ctx context.Context, tool, name, broker string, runs []importedRun) ([]*store.Run, error) {
	spec, err := json.Marshal(rundoc.ImportSpec{Workload: rundoc.Imported, Files: []string{name}, Tool: tool})
	if err != nil {
		return nil, fmt.Errorf("server: encode import spec: %w", err)
	}
	out := make([]*store.Run, len(runs))
	for i, in := range runs {
		o := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Metrics: in.metrics, FinishedAt: in.finishedAt,
			Measurement: &rundoc.Measurement{Source: rundoc.SourceImported, Tool: tool, Lines: in.lines, Notes: in.notes},
			Environment: &rundoc.Environment{Source: rundoc.SourceImported, Tool: tool, Broker: broker}}
		r := &store.Run{Label: in.label, Workload: in.workload, Source: rundoc.SourceImported, Spec: string(spec),
			Meta: in.meta, RunAt: in.runAt, SeriesKey: in.seriesKey}
		if err := r.Record(o); err != nil {
			return nil, err
		}
		out[i] = r
	}
	if err := s.store.CreateRuns(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}
