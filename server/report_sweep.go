// A report that shows a latency-vs-throughput sweep: the sweep is stored
// by id (reports.sweep_id) and its charts and points rebuilt from its runs
// whenever the report is read, as a report's comparison is.

package server

import (
	"context"
	"errors"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// checkReportSweep is the field error of a report's "sweep": it must name
// a stored sweep that has ended (its second phase queued and every run
// final), so that the report shows what the sweep measured, not a moment
// of it.
func (s *Server) checkReportSweep(ctx context.Context, id string) error {
	if !launch.ValidSweepID(id) {
		return badInput("sweep", "%q is not a sweep id (12 hexadecimal digits, as POST /api/presets/sweep answers)", id)
	}
	res, err := s.loadSweep(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return badInput("sweep", "no sweep %s", id)
	}
	if err != nil {
		return err
	}
	done, total := 0, 0
	for _, r := range res.Runs {
		total++
		if r.Status.Final() {
			done++
		}
	}
	if res.Phase == store.SweepMaxRate || done < total {
		more := ""
		if res.Phase == store.SweepMaxRate {
			more = ", its target rates not yet queued"
		}
		return badInput("sweep", "sweep %s has not ended (%d of %d runs finished%s); save it as a report when every run has finished",
			id, done, total, more)
	}
	return nil
}

// reportSweep is the sweep report rep shows, for its page (view) and its
// exports (export), with absolute links from base (scheme and host); both
// nil when it shows none.
func (s *Server) reportSweep(ctx context.Context, rep *rundoc.Report, base string) (*ui.ReportSweep, *compare.Sweep, error) {
	if rep.Sweep == "" {
		return nil, nil, nil
	}
	res, err := s.loadSweep(ctx, rep.Sweep)
	if err != nil {
		return nil, nil, err
	}
	var labels []string
	for _, c := range res.Configs {
		labels = append(labels, c.Label)
	}
	view := ui.NewReportSweep(res.Sweep, labels, res.Points, sweepMetricsNote(res.Configs))

	// The figures with their stored units and directions, as loadSweep
	// read them.
	stored := map[uint]map[string]rundoc.Metric{}
	for id, r := range res.stored {
		stored[id] = map[string]rundoc.Metric{}
		for _, m := range r.Metrics {
			stored[id][m.Name] = m
		}
	}
	cfgOf := map[uint]int{}
	for _, r := range res.Runs {
		cfgOf[r.ID] = r.Config
	}
	export := &compare.Sweep{ID: res.Sweep, URL: base + ui.SweepURL(res.Sweep), Labels: labels}
	for _, p := range res.Points {
		names := res.Configs[cfgOf[p.RunID]].Metrics
		fig := func(key string, value float64) compare.SweepFigure {
			m := stored[p.RunID][names[key]]
			return compare.SweepFigure{Metric: names[key], Unit: m.Unit, Better: m.Better, Value: value}
		}
		export.Points = append(export.Points, compare.SweepPoint{Label: p.Label, RatePct: p.RatePct, TargetRate: p.TargetRate,
			RunID: p.RunID, RunURL: base + p.URL, Achieved: fig("throughput", p.Throughput),
			P50: fig("p50", p.P50), P99: fig("p99", p.P99), P999: fig("p999", p.P999)})
	}
	return view, export, nil
}
