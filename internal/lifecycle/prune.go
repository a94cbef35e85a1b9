package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// pruneEvery is how often runs past the retention are pruned after the
// one pruning at start.
const pruneEvery = time.Hour

// StartPruning prunes the runs past retain now (kbench serve --retain),
// then every pruneEvery until stop is called; stop waits for a pruning
// under way. It does nothing when retain is not positive. The loop runs
// detached from ctx's cancellation, as the serve command's Start context
// may end before it stops the server.
func (q *Manager) StartPruning(ctx context.Context, retain time.Duration) (stop func()) {
	if retain <= 0 {
		return func() {}
	}
	q.prune(ctx, retain, true)
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(pruneEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				q.prune(ctx, retain, false)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// prune deletes the finished runs older than retain that no report uses,
// with their files, and logs how many (when there were any, unless
// always: the pruning at start is always logged).
func (q *Manager) prune(ctx context.Context, retain time.Duration, always bool) {
	days := retain.Hours() / 24
	ids, err := q.st.PruneRuns(ctx, time.Now().Add(-retain))
	for _, id := range ids {
		// The run is gone from the store already, so a failure is only
		// logged.
		dir := filepath.Join(q.opts.DataDir, "runs", strconv.FormatUint(uint64(id), 10))
		if err := os.RemoveAll(dir); err != nil {
			q.log.Warn("delete run files", "run", id, "err", err)
		}
	}
	if err != nil {
		q.log.Error("prune runs", "older_than_days", days, "pruned", len(ids), "err", err)
		return
	}
	if always || len(ids) > 0 {
		q.log.Info("pruned runs", "older_than_days", days, "count", len(ids))
	}
}
