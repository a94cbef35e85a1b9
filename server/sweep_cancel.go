// Canceling a sweep: POST /sweeps/:id/cancel and POST /api/sweeps/:id/cancel.

package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// cancelSweep ends sweep id as canceled, then cancels its runs that have
// not ended: queued ones are canceled, running ones stopped (as a run's
// cancel does). The phase changes first, in one conditional update, so
// the sweeper never queues a further phase for it: an advance that races
// the cancel either lost (the sweep was no longer measuring its maximum)
// or stored its runs before, and those are among the runs canceled here.
// It returns how many runs it canceled or stopped; a sweep that has
// ended already is a conflict.
func (s *Server) cancelSweep(ctx context.Context, id string) (int, error) {
	if !sweepIDRE.MatchString(id) {
		return 0, errNotFound
	}
	if err := s.store.EndSweep(ctx, id, store.SweepCanceled, store.SweepMaxRate, store.SweepRates); err != nil {
		return 0, err
	}
	_, links, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return 0, err
	}
	ids := make([]uint, len(links))
	for i, l := range links {
		ids[i] = l.RunID
	}
	runs, err := s.store.SweepRunsMetrics(ctx, ids, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		if r.Final() {
			continue
		}
		switch err := s.runs.Cancel(ctx, r.ID); {
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

// apiCancelSweep answers POST /api/sweeps/:id/cancel with 202 {"sweep",
// "phase": "canceled", "canceled_runs", "url"}; 409 when the sweep has
// ended already.
func (s *Server) apiCancelSweep(c *gin.Context) {
	id := c.Param("id")
	n, err := s.cancelSweep(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, client.SweepCanceled{Sweep: id, Phase: store.SweepCanceled, CanceledRuns: n, URL: ui.SweepURL(id)})
}

// cancelSweepForm is the sweep page's Cancel button: 303 back to the
// page, which says the sweep was canceled (or how it ended before).
func (s *Server) cancelSweepForm(c *gin.Context) {
	if !s.checkCSRF(c) {
		return
	}
	id := c.Param("id")
	if _, err := s.cancelSweep(c.Request.Context(), id); err != nil && !errors.Is(err, store.ErrConflict) {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, ui.SweepURL(id))
}
