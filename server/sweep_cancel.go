// Canceling a sweep: POST /sweeps/:id/cancel and POST /api/sweeps/:id/cancel
// (launch.CancelSweep).

package server

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// apiCancelSweep answers POST /api/sweeps/:id/cancel with 202 {"sweep",
// "phase": "canceled", "canceled_runs", "url"}; 409 when the sweep has
// ended already.
func (s *Server) apiCancelSweep(c *gin.Context) {
	id := c.Param("id")
	n, err := s.launcher.CancelSweep(c.Request.Context(), id)
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
	if _, err := s.launcher.CancelSweep(c.Request.Context(), id); err != nil && !errors.Is(err, store.ErrConflict) {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, ui.SweepURL(id))
}
