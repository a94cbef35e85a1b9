// The runs list: GET / and GET /api/runs.

package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/store"
	"github.com/kbench/kbench/ui"
)

func (s *Server) runsPage(c *gin.Context) {
	q := ui.ParseRunsQuery(c.Request.URL.Query())
	ctx := c.Request.Context()
	s.cachedRender(c, "runs?"+q.URL(), func(csrf string) (string, any, error) {
		runs, total, err := s.store.ListRuns(ctx, store.RunFilter{Workload: q.Workload, Label: q.Label, Status: q.Status,
			GroupID: q.Group, IDs: q.IDList(), Offset: q.Offset(), Limit: q.PerPage})
		if err != nil {
			return "", nil, err
		}
		labels, err := s.store.Labels(ctx)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewRunsView(runs, total, q, labels)
		regressed, err := s.regressedRuns(ctx)
		if err != nil {
			return "", nil, err
		}
		v.SetRegressions(regressed)
		v.SetShowWorker(s.store.Postgres())
		v.Page = ui.Page{Title: "Runs", CSRF: csrf}
		return "runs", v, nil
	})
}

func (s *Server) apiListRuns(c *gin.Context) {
	f := store.RunFilter{Workload: c.Query("workload"), Label: c.Query("label"), Status: c.Query("status"), GroupID: c.Query("group"), Limit: 50}
	for _, q := range []struct {
		name string
		dst  *int
	}{{"limit", &f.Limit}, {"offset", &f.Offset}} {
		if v := c.Query(q.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				s.fail(c, badInput(q.name, "must be a whole number ≥ 0"))
				return
			}
			*q.dst = n
		}
	}
	runs, total, err := s.store.ListRuns(c.Request.Context(), f)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(runs))
	for i := range runs {
		out = append(out, toAPIRun(&runs[i], false))
	}
	c.JSON(http.StatusOK, gin.H{"runs": out, "total": total, "offset": f.Offset, "limit": f.Limit})
}
