// One run: GET /runs/:id and GET /api/runs/:id (its live events are
// events.go, its live charts livecharts.go).

package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

func (s *Server) runPage(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if legacyZoom(c, nil, anyZoom) {
		return
	}
	ctx := c.Request.Context()
	s.cachedRender(c, fmt.Sprintf("run/%d", id), func(csrf string) (string, any, error) {
		run, err := s.store.GetRun(ctx, id)
		if err != nil {
			return "", nil, err
		}
		pos, err := s.store.QueuePosition(ctx, id)
		if err != nil {
			return "", nil, err
		}
		v, err := ui.NewRunView(run, pos)
		if err != nil {
			return "", nil, err
		}
		fleet, shards, err := s.fleetOf(ctx, run)
		if err != nil {
			return "", nil, err
		}
		v.SetFleet(ui.NewFleetView(fleet, shards))
		if v.Live {
			phase, window := s.latestProgress(id)
			v.SetLiveTiming(time.Now(), phase, window)
		}
		if run.Final() {
			reports, err := s.store.ReportsUsingRun(ctx, id)
			if err != nil {
				return "", nil, err
			}
			v.SetUsedBy(reports)
			regressed, err := s.regressedRuns(ctx)
			if err != nil {
				return "", nil, err
			}
			v.Regressions = ui.NewRegressionBadges(regressed[id])
			s.profileWindows(ctx, run, &v)
			hs, err := s.store.RunsHistograms(ctx, []uint{id})
			if err != nil {
				return "", nil, err
			}
			v.SetHistograms(hs[id])
		}
		v.Page = ui.Page{Title: fmt.Sprintf("Run %d", id), CSRF: csrf}
		return "run", v, nil
	})
}

// latestProgress is the phase and measured seconds of run id's latest
// progress event, from the live events a new subscriber catches up
// with; "" when the run has reported none here.
func (s *Server) latestProgress(id uint) (phase string, window float64) {
	_, catchUp, cancel := s.runs.Subscribe(id)
	cancel()
	for _, ev := range catchUp {
		if m, ok := ev.Data.(map[string]any); ok && ev.Name == "progress" {
			phase, _ = m["phase"].(string)
			window, _ = m["elapsed"].(float64)
		}
	}
	return phase, window
}

func (s *Server) apiGetRun(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	run, err := s.store.GetRun(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	a := toAPIRun(run, true)
	if a.Fleet, a.Shards, err = s.fleetOf(c.Request.Context(), run); err != nil {
		s.fail(c, err)
		return
	}
	if run.Status == rundoc.StatusQueued {
		a.QueuePosition, _ = s.store.QueuePosition(c.Request.Context(), id)
	}
	c.JSON(http.StatusOK, a)
}
