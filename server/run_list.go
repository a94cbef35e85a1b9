// The runs list: GET / and GET /api/runs.

package server

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

func (s *Server) runsPage(c *gin.Context) {
	// A cursor that is not a run id is refused, not read as none: the
	// page it would show is not the one asked for.
	if _, _, err := parseCursor(c.Request.URL.Query(), "page"); err != nil {
		s.fail(c, err)
		return
	}
	q := ui.ParseRunsQuery(c.Request.URL.Query())
	ctx := c.Request.Context()
	s.cachedRender(c, "runs?"+q.URL(), func(csrf string) (string, any, error) {
		page, err := s.store.ListRunsPage(ctx, store.RunFilter{Workload: q.Workload, Label: q.Label, Status: q.Status,
			GroupID: q.Group, IDs: q.IDList(), Offset: q.Offset(), Limit: q.PerPage, Before: q.Before, After: q.After})
		if err != nil {
			return "", nil, err
		}
		labels, err := s.store.Labels(ctx)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewRunsView(page.Runs, page.Total, q, labels)
		v.SetPlace(page.Newer, page.Older)
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

// parseCursor reads the runs list's cursor parameters, before and after:
// run ids, at most one of them, and not with a page number or offset
// (other, which names it). 0 when absent.
func parseCursor(q url.Values, other string) (before, after uint, err error) {
	for _, p := range []struct {
		name string
		dst  *uint
	}{{"before", &before}, {"after", &after}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, perr := strconv.ParseUint(v, 10, 32)
		if perr != nil || n == 0 {
			return 0, 0, badInput(p.name, "must be a run id (a whole number ≥ 1), got %q", v)
		}
		*p.dst = uint(n)
	}
	switch {
	case before > 0 && after > 0:
		return 0, 0, badInput("after", "give before or after, not both")
	case (before > 0 || after > 0) && q.Get(other) != "":
		return 0, 0, badInput(other, "give %s or a cursor (before, after), not both", other)
	}
	return before, after, nil
}

// apiListRuns answers GET /api/runs: one page of runs, newest first, with
// the filters workload, label, status and group. The page is chosen by
// offset, or by a cursor, before=ID (the runs older than run ID) or
// after=ID (the runs newer than it): a cursor page costs the same at any
// depth and does not shift when runs are added. next and prev are the
// links to the pages around this one (cursors; null at either end).
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
	var err error
	if f.Before, f.After, err = parseCursor(c.Request.URL.Query(), "offset"); err != nil {
		s.fail(c, err)
		return
	}
	page, err := s.store.ListRunsPage(c.Request.Context(), f)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(page.Runs))
	for i := range page.Runs {
		out = append(out, toAPIRun(&page.Runs[i], false))
	}
	link := func(param string, id uint) *string {
		q := url.Values{}
		for _, k := range []string{"workload", "label", "status", "group", "limit"} {
			if v := c.Query(k); v != "" {
				q.Set(k, v)
			}
		}
		q.Set(param, strconv.FormatUint(uint64(id), 10))
		u := "/api/runs?" + q.Encode()
		return &u
	}
	var next, prev *string
	if n := len(page.Runs); n > 0 {
		if page.Older {
			next = link("before", page.Runs[n-1].ID)
		}
		if page.Newer > 0 {
			prev = link("after", page.Runs[0].ID)
		}
	} else if page.Newer > 0 && f.Before > 0 {
		prev = link("after", f.Before-1)
	}
	offset := int64(f.Offset) // as asked, even past the end
	if f.Before > 0 || f.After > 0 {
		offset = page.Newer
	}
	c.JSON(http.StatusOK, client.RunList{Runs: out, Total: page.Total, Offset: offset, Limit: f.Limit, Next: next, Prev: prev})
}
