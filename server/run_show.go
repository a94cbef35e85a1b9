// One run: GET /runs/:id and GET /api/runs/:id (its live events are
// events.go, its live charts livecharts.go).

package server

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/rundoc"
	"github.com/kbench/kbench/ui"
)

func (s *Server) runPage(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
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
		}
		v.Page = ui.Page{Title: fmt.Sprintf("Run %d", id), CSRF: csrf}
		return "run", v, nil
	})
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
	if run.Status == rundoc.StatusQueued {
		a.QueuePosition, _ = s.store.QueuePosition(c.Request.Context(), id)
	}
	c.JSON(http.StatusOK, a)
}
