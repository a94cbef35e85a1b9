// Deleting a run: POST /runs/:id/delete and DELETE /api/runs/:id.

package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gin-gonic/gin"
)

// deleteRunForm handles the run page's Delete form: the same deletion as
// DELETE /api/runs/{id}, then the runs list. A run a report uses, or one
// not finished, is refused with 409 and a page saying why.
func (s *Server) deleteRunForm(c *gin.Context) {
	if _, ok := s.postedForm(c); !ok {
		return
	}
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.deleteRun(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/")
}

// deleteRun deletes a finished run no report uses, then its files.
func (s *Server) deleteRun(ctx context.Context, id uint) error {
	if err := s.store.DeleteRun(ctx, id); err != nil {
		return err
	}
	s.removeRunFiles(id)
	return nil
}

// runFilesDir is where a run's spec, result, profiles and logs are kept.
func (s *Server) runFilesDir(id uint) string {
	return filepath.Join(s.cfg.DataDir, "runs", strconv.FormatUint(uint64(id), 10))
}

// removeRunFiles removes a deleted run's files. The run is gone from the
// store already, so a failure is only logged.
func (s *Server) removeRunFiles(id uint) {
	if err := os.RemoveAll(s.runFilesDir(id)); err != nil {
		s.log.Warn("delete run files", "run", id, "err", err)
	}
}

// apiDeleteRun answers DELETE /api/runs/{id}: 204, or 409 when the run is
// queued, running or used by a report (reports are recomputed from their
// runs, so their runs stay). The run's files go with it.
func (s *Server) apiDeleteRun(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.deleteRun(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
