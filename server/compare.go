package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/ui"
)

// Limits of a comparison and a report.
const (
	maxCompareRuns = 50
	maxReportNotes = 20000
)

// parseRunIDs reads the runs parameter: "1,2,3", or repeated as the runs
// page's form sends it (runs=1&runs=2). Order is kept (the first is the
// baseline); a run may appear once.
func parseRunIDs(vals []string) ([]uint, error) {
	var ids []uint
	seen := map[uint]bool{}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			n, err := strconv.ParseUint(part, 10, 32)
			if err != nil || n == 0 {
				return nil, badInput("runs", "%q is not a run id", part)
			}
			id := uint(n)
			if seen[id] {
				return nil, badInput("runs", "run %d is listed twice", id)
			}
			seen[id] = true
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) < 2:
		return nil, badInput("runs", "pick at least two runs to compare, e.g. runs=1,2")
	case len(ids) > maxCompareRuns:
		return nil, badInput("runs", "at most %d runs can be compared", maxCompareRuns)
	}
	return ids, nil
}

// parseBy checks how columns are formed; "" is by run.
func parseBy(by string) (string, error) {
	switch by {
	case "":
		return compare.ByRun, nil
	case compare.ByRun, compare.ByLabel, compare.ByGroup, compare.ByChange:
		return by, nil
	}
	return "", badInput("by", "must be run, label, group or change, got %q", by)
}

// parseAt checks the run a comparison by change splits at: one of its
// runs, not the first (the before column would be empty). Other ways of
// forming columns take no at.
func parseAt(by, at string, ids []uint) (uint, error) {
	if by != compare.ByChange {
		if at != "" && at != "0" {
			return 0, badInput("at", "only a comparison by change splits at a run")
		}
		return 0, nil
	}
	n, err := strconv.ParseUint(at, 10, 32)
	if err != nil || n == 0 {
		return 0, badInput("at", "by change needs the first run after the change, e.g. at=21, got %q", at)
	}
	if i := slices.Index(ids, uint(n)); i < 1 {
		return 0, badInput("at", "run %d must be one of the runs, after the first", n)
	}
	return uint(n), nil
}

// parseCompareQuery reads runs, by and hide_unchanged from a query.
// Runs given as one list keep their order; runs given as repeated
// parameters come from the runs page's form, which lists runs newest
// first: they are put oldest (lowest id) first, as its script does.
func parseCompareQuery(q url.Values) (ui.CompareQuery, error) {
	ids, err := parseRunIDs(q["runs"])
	if err != nil {
		return ui.CompareQuery{}, err
	}
	if len(q["runs"]) > 1 {
		slices.Sort(ids)
	}
	by, err := parseBy(q.Get("by"))
	if err != nil {
		return ui.CompareQuery{}, err
	}
	at, err := parseAt(by, q.Get("at"), ids)
	if err != nil {
		return ui.CompareQuery{}, err
	}
	hide := false
	switch q.Get("hide_unchanged") {
	case "", "0", "false":
	case "1", "true", "on":
		hide = true
	default:
		return ui.CompareQuery{}, badInput("hide_unchanged", "must be 1 or 0")
	}
	return ui.CompareQuery{Runs: ids, By: by, At: at, HideUnchanged: hide}, nil
}

// loadRuns reads runs with their metrics, series and profiles, in order,
// in one batch of queries whatever their number (store.GetRuns). An
// unknown run is ErrNotFound naming it.
func (s *Server) loadRuns(ctx context.Context, ids []uint) ([]rundoc.Run, error) {
	return s.store.GetRuns(ctx, ids)
}

// comparison builds the table of q from the stored runs, reading the
// parts of them the caller shows besides what compare.Build reads
// (metrics, spec, environment, measurement): the page shows outputs (in
// its Markdown), series (charts) and profiles (differential flame
// graphs); GET /api/compare none of them.
func (s *Server) comparison(ctx context.Context, q ui.CompareQuery, parts store.RunParts) (*compare.Table, []rundoc.Run, error) {
	runs, err := s.store.GetRunsParts(ctx, q.Runs, parts)
	if err != nil {
		return nil, nil, err
	}
	cols := compare.Columns(runs, q.By)
	if q.By == compare.ByChange {
		cols = compare.ChangeColumns(runs, q.At)
	}
	hs, err := s.store.RunsHistograms(ctx, q.Runs)
	if err != nil {
		return nil, nil, err
	}
	t, err := compare.Build(cols, compare.Options{HideUnchanged: q.HideUnchanged, Histograms: hs})
	if err != nil {
		if errors.Is(err, compare.ErrUnitMismatch) {
			return nil, nil, badInput("runs", "%v", err)
		}
		return nil, nil, err
	}
	return t, runs, nil
}

// apiCompare answers GET /api/compare?runs=1,2,3[&by=…[&at=…]][&hide_unchanged=1]
// with compare.JSON.
func (s *Server) apiCompare(c *gin.Context) {
	q, err := parseCompareQuery(c.Request.URL.Query())
	if err != nil {
		s.fail(c, err)
		return
	}
	t, _, err := s.comparison(c.Request.Context(), q, store.RunParts{})
	if err != nil {
		s.fail(c, err)
		return
	}
	body, err := compare.JSON(t, compare.Meta{})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}

// comparePage renders GET /compare?runs=… (see parseCompareQuery for the
// order of the columns; the first is the baseline).
func (s *Server) comparePage(c *gin.Context) {
	q, err := parseCompareQuery(c.Request.URL.Query())
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	base := s.baseURL(c)
	s.cachedRender(c, "compare?"+q.Values().Encode()+"@"+c.Request.Host, func(csrf string) (string, any, error) {
		t, runs, err := s.comparison(ctx, q, store.AllRunParts)
		if err != nil {
			return "", nil, err
		}
		sec, pc := s.profilesSection(ctx, t, runs, base)
		v := ui.NewCompareView(t, runs, q, compare.Markdown(t, compare.Meta{Profiles: pc}))
		v.Profiles = sec
		v.Page.CSRF = csrf
		v.AddRuns = s.addRepetitionsView(q, runs, t.MoreRepetitions, csrf)
		return "compare", v, nil
	})
}

// reportExports are the formats of /r/{slug}.ext.
var reportExports = map[string]string{
	".md":   "text/markdown; charset=utf-8",
	".csv":  "text/csv; charset=utf-8",
	".json": "application/json; charset=utf-8",
}
