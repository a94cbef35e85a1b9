// Canceling a sweep.

package launch

import (
	"context"
	"errors"
	"fmt"

	"github.com/kbench/kbench/internal/store"
)

// CancelSweep ends sweep id as canceled, then cancels its runs that have
// not ended: queued ones are canceled, running ones stopped (as a run's
// cancel does). The phase changes first, in one conditional update, so
// the sweep loop never queues a further phase for it: an advance that races
// the cancel either lost (the sweep was no longer measuring its maximum)
// or stored its runs before, and those are among the runs canceled here.
// It returns how many runs it canceled or stopped; a sweep that has
// ended already is a store.ErrConflict, an id that names none
// store.ErrNotFound.
func (l *Launcher) CancelSweep(ctx context.Context, id string) (int, error) {
	if !ValidSweepID(id) {
		return 0, fmt.Errorf("launch: sweep %q: %w", id, store.ErrNotFound)
	}
	if err := l.store.EndSweep(ctx, id, store.SweepCanceled, store.SweepMaxRate, store.SweepRates); err != nil {
		return 0, err
	}
	_, links, err := l.store.GetSweep(ctx, id)
	if err != nil {
		return 0, err
	}
	ids := make([]uint, len(links))
	for i, l := range links {
		ids[i] = l.RunID
	}
	return l.cancelUnended(ctx, ids)
}

// cancelUnended cancels the runs of ids that have not ended (queued ones
// canceled, running ones stopped) and returns how many it did; a run
// that ended meanwhile is left.
func (l *Launcher) cancelUnended(ctx context.Context, ids []uint) (int, error) {
	runs, err := l.store.SweepRunsMetrics(ctx, ids, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		if r.Final() {
			continue
		}
		switch err := l.runs.Cancel(ctx, r.ID); {
		case err == nil:
			n++
		case errors.Is(err, store.ErrConflict):
			// It ended meanwhile.
		default:
			return n, err
		}
	}
	return n, nil
}
