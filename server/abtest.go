package server

import (
	"net/http"

	"github.com/kbench/kbench/client"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// An A/B submission (POST /api/runs with configs) is checked, stored and
// queued interleaved by launch (launch.CreateAB); here is its answer.

// groupsCompareURL is the comparison by group of runs, the groups' columns
// in the order of groups, each group's runs in the order they come.
func groupsCompareURL(runs []*store.Run, groups []string) string {
	var ids []uint
	for _, g := range groups {
		for _, r := range runs {
			if r.GroupID == g {
				ids = append(ids, r.ID)
			}
		}
	}
	return ui.CompareURL(ui.CompareQuery{Runs: ids, By: compare.ByGroup})
}

// apiCreateAB answers POST /api/runs with configs: 201 {"runs" (in queue
// order), "group_ids" (one per configuration, in their order), "ab_batch",
// "compare_url"}, and Location the comparison.
func (s *Server) apiCreateAB(c *gin.Context, req *launch.Request) {
	res, err := s.launcher.CreateAB(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(res.Runs))
	for _, r := range res.Runs {
		d := r.Doc()
		out = append(out, toAPIRun(&d, false))
	}
	u := groupsCompareURL(res.Runs, res.Groups)
	c.Header("Location", u)
	c.JSON(http.StatusCreated, client.Created{Runs: out, GroupIDs: res.Groups, ABBatch: res.Batch, CompareURL: u})
}
