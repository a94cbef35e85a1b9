package server

import (
	"context"
	"time"
)

// pruneEvery is how often runs past Config.Retain are pruned after the
// one pruning at start.
const pruneEvery = time.Hour

// startPruner prunes runs past Config.Retain now, then every pruneEvery
// until Close. It does nothing when Retain is zero.
func (s *Server) startPruner(ctx context.Context) {
	if s.cfg.Retain <= 0 {
		return
	}
	s.prune(ctx, true)
	s.pruner.start(ctx, func(ctx context.Context) {
		every(ctx, pruneEvery, func() { s.prune(ctx, false) })
	})
}

// prune deletes the finished runs older than Config.Retain that no report
// uses, with their files, and logs how many (when there were any, unless
// always: the pruning at start is always logged).
func (s *Server) prune(ctx context.Context, always bool) {
	days := s.cfg.Retain.Hours() / 24
	ids, err := s.store.PruneRuns(ctx, time.Now().Add(-s.cfg.Retain))
	for _, id := range ids {
		s.removeRunFiles(id)
	}
	if err != nil {
		s.log.Error("prune runs", "older_than_days", days, "pruned", len(ids), "err", err)
		return
	}
	if always || len(ids) > 0 {
		s.log.Info("pruned runs", "older_than_days", days, "count", len(ids))
	}
}
