// A run as the OpenMessaging Benchmark's result: GET /api/runs/:id/omb.json.

package server

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/internal/omb"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
	"github.com/kbench/kbench/internal/store"
)

// apiRunOMB answers a run as OMB's result JSON (omb.Export), so that
// OMB's bin/create_charts.py plots it beside OMB's own results: from
// the run's series, metrics and documents, its window histograms and
// the interval histograms of its log. ?workload= names OMB's workload
// (create_charts.py charts the results of one workload together); by
// default an OMB import's own, else one made of the run's spec.
func (s *Server) apiRunOMB(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	workload := strings.TrimSpace(c.Query("workload"))
	if len(workload) > omb.MaxName {
		s.fail(c, badInput("workload", "must be at most %d bytes", omb.MaxName))
		return
	}
	ctx := c.Request.Context()
	run, err := s.store.GetRun(ctx, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	window, err := s.store.RunsHistograms(ctx, []uint{id})
	if err != nil {
		s.fail(c, err)
		return
	}
	var intervals []rundoc.Histogram
	switch log, err := s.store.RunHistogramLog(ctx, id); {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		s.fail(c, err)
		return
	default:
		if _, intervals, err = runhist.ReadLog(bytes.NewReader(log)); err != nil {
			s.fail(c, fmt.Errorf("server: run %d: stored %w", id, err))
			return
		}
	}
	res, err := omb.Export(omb.Source{Run: run, Window: window[id], Intervals: intervals, Workload: workload})
	if err != nil {
		s.fail(c, fmt.Errorf("server: run %d: %w", id, err))
		return
	}
	c.Header("Content-Disposition", fmt.Sprintf(`inline; filename="run-%d-omb.json"`, id))
	c.JSON(http.StatusOK, res)
}
