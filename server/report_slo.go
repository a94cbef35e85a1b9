// A report that shows a latency-target search: the search is stored by
// id (reports.slo_id) and its answer and probes rebuilt from its runs
// whenever the report is read, as a sweep's are.

package server

import (
	"context"
	"errors"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// checkReportSLO is the field error of a report's "slo": it must name a
// stored search that has ended, so that the report shows its answer,
// not a moment of its search.
func (s *Server) checkReportSLO(ctx context.Context, id string) error {
	if !launch.ValidSLOID(id) {
		return badInput("slo", "%q is not a search id (12 hexadecimal digits, as POST /api/presets/slo answers)", id)
	}
	res, err := s.loadSLO(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return badInput("slo", "no search %s", id)
	}
	if err != nil {
		return err
	}
	if !store.SLOEnded(res.Phase) {
		return badInput("slo", "search %s is still searching; save it as a report once it has its answer", id)
	}
	for _, p := range res.Probes {
		for _, r := range p.Runs {
			if !r.Status.Final() {
				return badInput("slo", "search %s has ended but its run #%d has not; save it as a report when it has", id, r.ID)
			}
		}
	}
	return nil
}

// reportSLO is the search rep shows, for its page (view) and its exports
// (doc, links absolute from base); both nil when it shows none.
func (s *Server) reportSLO(ctx context.Context, rep *rundoc.Report, base string) (*ui.SLOView, *wire.SLO, error) {
	if rep.SLO == "" {
		return nil, nil, nil
	}
	res, err := s.loadSLO(ctx, rep.SLO)
	if err != nil {
		return nil, nil, err
	}
	view := sloView(res)
	view.URL = ui.SLOURL(res.SLO)
	doc := *res
	doc.URL = base + res.URL
	doc.Probes = make([]wire.SLOProbe, len(res.Probes))
	for i, p := range res.Probes {
		doc.Probes[i] = p
		doc.Probes[i].Runs = make([]wire.SLORun, len(p.Runs))
		for j, r := range p.Runs {
			r.URL = base + r.URL
			doc.Probes[i].Runs[j] = r
		}
	}
	return &view, &doc, nil
}
