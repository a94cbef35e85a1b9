package server

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// liveCharts answers GET /runs/:id/live-charts with the live section's
// chart boxes (ui.LiveCharts), an HTML fragment drawn from the intervals
// the run has reported so far. run.js fetches it after new intervals
// arrive, so the live page's charts come from the same code as every
// other chart. A run the server is not running (queued, or finished
// meanwhile) shows its stored series, and a running fleet's parent the
// merge of its shards' (fleetLiveSeries).
func (s *Server) liveCharts(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var body string
	if pts, ok := s.runs.Series(id); ok {
		body = string(ui.LiveCharts(pts))
	} else {
		run, err := s.store.GetRun(c.Request.Context(), id)
		if err != nil {
			s.fail(c, err)
			return
		}
		body = string(ui.LiveChartsOf(run))
		if !run.Final() {
			// A running fleet's parent: the merge of its shards' series
			// so far (those its page's event stream follows).
			_, shards, err := s.store.FleetOfParent(c.Request.Context(), id)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				s.fail(c, err)
				return
			}
			pts, ok, err := s.fleetLiveSeries(c.Request.Context(), shards)
			if err != nil {
				s.fail(c, err)
				return
			}
			if ok {
				body = string(ui.LiveCharts(pts))
			}
		}
	}
	// Every request must see the intervals reported by then.
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(body))
}
