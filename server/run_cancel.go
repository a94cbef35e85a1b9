// Canceling a run: POST /runs/:id/cancel and POST /api/runs/:id/cancel.

package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/store"
)

func (s *Server) cancelRunForm(c *gin.Context) {
	if !s.checkCSRF(c) {
		return
	}
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.store.RunStatus(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.cancelRun(c, id); err != nil && !errors.Is(err, store.ErrConflict) {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", id))
}

func (s *Server) apiCancelRun(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.store.RunStatus(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.cancelRun(c, id); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, client.Canceling{ID: id, Canceling: true})
}

// cancelRun cancels run id: a fleet's parent with all its shards
// (launch.CancelFleet), any other run through the lifecycle.
func (s *Server) cancelRun(c *gin.Context, id uint) error {
	if fleet, err := s.launcher.CancelFleet(c.Request.Context(), id); fleet {
		return err
	}
	return s.runs.Cancel(c.Request.Context(), id)
}
