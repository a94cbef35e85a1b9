package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kbench/kbench/rundoc"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/compare"
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
	case compare.ByRun, compare.ByLabel, compare.ByGroup:
		return by, nil
	}
	return "", badInput("by", "must be run, label or group, got %q", by)
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
	hide := false
	switch q.Get("hide_unchanged") {
	case "", "0", "false":
	case "1", "true", "on":
		hide = true
	default:
		return ui.CompareQuery{}, badInput("hide_unchanged", "must be 1 or 0")
	}
	return ui.CompareQuery{Runs: ids, By: by, HideUnchanged: hide}, nil
}

// loadRuns reads runs with their metrics, series and profiles, in order.
// An unknown run is ErrNotFound naming it.
func (s *Server) loadRuns(ctx context.Context, ids []uint) ([]rundoc.Run, error) {
	runs := make([]rundoc.Run, 0, len(ids))
	for _, id := range ids {
		r, err := s.store.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		runs = append(runs, *r)
	}
	return runs, nil
}

// comparison builds the table of q from the stored runs.
func (s *Server) comparison(ctx context.Context, q ui.CompareQuery) (*compare.Table, []rundoc.Run, error) {
	runs, err := s.loadRuns(ctx, q.Runs)
	if err != nil {
		return nil, nil, err
	}
	t, err := compare.Build(compare.Columns(runs, q.By), compare.Options{HideUnchanged: q.HideUnchanged})
	if err != nil {
		if errors.Is(err, compare.ErrUnitMismatch) {
			return nil, nil, badInput("runs", "%v", err)
		}
		return nil, nil, err
	}
	return t, runs, nil
}

// apiCompare answers GET /api/compare?runs=1,2,3[&by=…][&hide_unchanged=1]
// with compare.JSON.
func (s *Server) apiCompare(c *gin.Context) {
	q, err := parseCompareQuery(c.Request.URL.Query())
	if err != nil {
		s.fail(c, err)
		return
	}
	t, _, err := s.comparison(c.Request.Context(), q)
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
	s.cachedRender(c, "compare?"+q.Values().Encode(), func(csrf string) (string, any, error) {
		t, runs, err := s.comparison(ctx, q)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewCompareView(t, runs, q, compare.Markdown(t, compare.Meta{}))
		v.Page.CSRF = csrf
		v.AddRuns = s.addRepetitionsView(q, runs, t.MoreRepetitions, csrf)
		return "compare", v, nil
	})
}

// reportRequest is the body of POST /api/reports; the form is turned
// into one.
type reportRequest struct {
	Title string `json:"title"`
	Notes string `json:"notes"`
	Runs  []uint `json:"runs"`
	By    string `json:"by"`
}

// createReport validates a request and stores the report.
func (s *Server) createReport(ctx context.Context, req reportRequest) (*rundoc.Report, error) {
	// Every bad field is reported at once (a runner.FieldErrors).
	var errs rundoc.FieldErrors
	title := strings.TrimSpace(req.Title)
	switch {
	case title == "":
		errs.Add("title", "is required")
	case utf8.RuneCountInString(title) > ui.MaxReportTitle:
		errs.Add("title", "must be at most %d characters", ui.MaxReportTitle)
	}
	if len(req.Notes) > maxReportNotes {
		errs.Add("notes", "must be at most %d bytes", maxReportNotes)
	}
	parts := make([]string, len(req.Runs))
	for i, id := range req.Runs {
		parts[i] = strconv.FormatUint(uint64(id), 10)
	}
	ids, err := parseRunIDs([]string{strings.Join(parts, ",")})
	if err := errs.Append(asFieldError(err)); err != nil {
		return nil, err
	}
	by, err := parseBy(req.By)
	if err := errs.Append(asFieldError(err)); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	// The table must build (units agree) before the link is handed out.
	if _, _, err := s.comparison(ctx, ui.CompareQuery{Runs: ids, By: by}); err != nil {
		return nil, err
	}
	rep := &rundoc.Report{Title: title, Notes: req.Notes, RunIDs: ids, By: by}
	if err := s.store.CreateReport(ctx, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// apiCreateReport answers POST /api/reports with 201 {"slug", "url"}.
func (s *Server) apiCreateReport(c *gin.Context) {
	var req reportRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	rep, err := s.createReport(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	u := ui.ReportURL(rep.Slug, "")
	c.Header("Location", u)
	c.JSON(http.StatusCreated, gin.H{"slug": rep.Slug, "url": u})
}

// createReportForm handles the "Save as report" form: 303 to the report.
func (s *Server) createReportForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	req := reportRequest{Title: form.Get("title"), Notes: form.Get("notes"), By: form.Get("by")}
	ids, err := parseRunIDs(form["runs"])
	if err != nil {
		s.fail(c, err)
		return
	}
	req.Runs = ids
	rep, err := s.createReport(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, ui.ReportURL(rep.Slug, ""))
}

// reportExports are the formats of /r/{slug}.ext.
var reportExports = map[string]string{
	".md":   "text/markdown; charset=utf-8",
	".csv":  "text/csv; charset=utf-8",
	".json": "application/json; charset=utf-8",
}

// report answers GET /r/{slug} (the page) and /r/{slug}.md, .csv, .json.
func (s *Server) report(c *gin.Context) {
	slug, ext := c.Param("slug"), ""
	if i := strings.LastIndexByte(slug, '.'); i >= 0 {
		slug, ext = slug[:i], slug[i:]
		if _, ok := reportExports[ext]; !ok {
			s.fail(c, errNotFound)
			return
		}
	}
	ctx := c.Request.Context()
	if ext != "" {
		s.reportExport(c, slug, ext)
		return
	}
	hide := c.Query("hide_unchanged") == "1"
	s.cachedRender(c, fmt.Sprintf("report/%s?%t@%s", slug, hide, c.Request.Host), func(csrf string) (string, any, error) {
		rep, t, runs, err := s.loadReport(ctx, slug, hide)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewReportView(rep, t, runs, compare.Markdown(t, s.reportMeta(c, rep)))
		v.Page.CSRF = csrf
		return "report", v, nil
	})
}

// loadReport reads a report and computes its table from its runs.
func (s *Server) loadReport(ctx context.Context, slug string, hide bool) (*rundoc.Report, *compare.Table, []rundoc.Run, error) {
	rep, err := s.store.GetReport(ctx, slug)
	if err != nil {
		return nil, nil, nil, err
	}
	t, runs, err := s.comparison(ctx, ui.CompareQuery{Runs: rep.RunIDs, By: rep.By, HideUnchanged: hide})
	if err != nil {
		return nil, nil, nil, err
	}
	return rep, t, runs, nil
}

// reportMeta is what the exports say about a report: its title, notes,
// creation time and absolute link.
func (s *Server) reportMeta(c *gin.Context, rep *rundoc.Report) compare.Meta {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return compare.Meta{Title: rep.Title, Notes: rep.Notes, Created: rep.CreatedAt,
		URL: scheme + "://" + c.Request.Host + ui.ReportURL(rep.Slug, "")}
}

func (s *Server) reportExport(c *gin.Context, slug, ext string) {
	rep, t, _, err := s.loadReport(c.Request.Context(), slug, false)
	if err != nil {
		s.fail(c, err)
		return
	}
	meta := s.reportMeta(c, rep)
	var body []byte
	switch ext {
	case ".md":
		body = []byte(compare.Markdown(t, meta))
	case ".csv":
		body = compare.CSV(t)
	case ".json":
		if body, err = compare.JSON(t, meta); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.Header("Content-Disposition", `inline; filename="kbench-report-`+rep.Slug+ext+`"`)
	c.Data(http.StatusOK, reportExports[ext], body)
}
