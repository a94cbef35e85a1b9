// Reports, saved comparisons and sweeps: POST /reports, POST /api/reports,
// GET /r/:slug (and its .md, .csv and .json exports).

package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// reportRequest is the body of POST /api/reports; the form is turned
// into one.
type reportRequest struct {
	Title string `json:"title"`
	Notes string `json:"notes"`
	Runs  []uint `json:"runs"`
	By    string `json:"by"`
	// At is where a comparison by change splits (see parseAt).
	At uint `json:"at"`
	// Sweep is the id of an ended latency-vs-throughput sweep the report
	// shows; with it, runs may be left out.
	Sweep string `json:"sweep"`
	// SLO is the id of an ended latency-target search the report shows;
	// with it too, runs may be left out.
	SLO string `json:"slo"`
}

// createReport validates a request and stores the report.
func (s *Server) createReport(ctx context.Context, req reportRequest) (*rundoc.Report, error) {
	// Every bad field is reported at once (a rundoc.FieldErrors).
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
	sweep := strings.TrimSpace(req.Sweep)
	if sweep != "" {
		if err := errs.Append(asFieldError(s.checkReportSweep(ctx, sweep))); err != nil {
			return nil, err
		}
	}
	search := strings.TrimSpace(req.SLO)
	if search != "" {
		if err := errs.Append(asFieldError(s.checkReportSLO(ctx, search))); err != nil {
			return nil, err
		}
	}
	// A report that shows a sweep or a search need not compare runs.
	compared := (sweep == "" && search == "") || len(req.Runs) > 0 || req.By != "" || req.At != 0
	var ids []uint
	var by string
	var at uint
	if compared {
		parts := make([]string, len(req.Runs))
		for i, id := range req.Runs {
			parts[i] = strconv.FormatUint(uint64(id), 10)
		}
		var err error
		ids, err = parseRunIDs([]string{strings.Join(parts, ",")})
		if err := errs.Append(asFieldError(err)); err != nil {
			return nil, err
		}
		by, err = parseBy(req.By)
		if err := errs.Append(asFieldError(err)); err != nil {
			return nil, err
		}
		if err == nil {
			at, err = parseAt(by, strconv.FormatUint(uint64(req.At), 10), ids)
			if err := errs.Append(asFieldError(err)); err != nil {
				return nil, err
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	// The table must build (units agree) before the link is handed out.
	if compared {
		if _, _, err := s.comparison(ctx, ui.CompareQuery{Runs: ids, By: by, At: at}, store.RunParts{}); err != nil {
			return nil, err
		}
	}
	rep := &rundoc.Report{Title: title, Notes: req.Notes, RunIDs: ids, By: by, At: at, Sweep: sweep, SLO: search}
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
	c.JSON(http.StatusCreated, client.ReportCreated{Slug: rep.Slug, URL: u})
}

// createReportForm handles the "Save as report" form: 303 to the report.
func (s *Server) createReportForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	req := reportRequest{Title: form.Get("title"), Notes: form.Get("notes"), By: form.Get("by"), Sweep: form.Get("sweep"), SLO: form.Get("slo")}
	if (req.Sweep == "" && req.SLO == "") || strings.TrimSpace(strings.Join(form["runs"], "")) != "" {
		ids, err := parseRunIDs(form["runs"])
		if err != nil {
			s.fail(c, err)
			return
		}
		req.Runs = ids
	}
	if v := form.Get("at"); v != "" {
		at, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			s.fail(c, badInput("at", "%q is not a run id", v))
			return
		}
		req.At = uint(at)
	}
	rep, err := s.createReport(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, ui.ReportURL(rep.Slug, ""))
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
	if reportLegacyZoom(c) {
		return
	}
	hide := c.Query("hide_unchanged") == "1"
	s.cachedRender(c, fmt.Sprintf("report/%s?%t@%s", slug, hide, c.Request.Host), func(csrf string) (string, any, error) {
		rep, t, runs, err := s.loadReport(ctx, slug, hide, store.AllRunParts)
		if err != nil {
			return "", nil, err
		}
		sv, sw, err := s.reportSweep(ctx, rep, s.baseURL(c))
		if err != nil {
			return "", nil, err
		}
		slov, slo, err := s.reportSLO(ctx, rep, s.baseURL(c))
		if err != nil {
			return "", nil, err
		}
		meta := s.reportMeta(c, rep)
		meta.SLO = slo
		var sec ui.ProfilesSection
		if t != nil {
			sec, meta.Profiles = s.profilesSection(ctx, t, runs, s.baseURL(c))
		}
		v := ui.NewReportView(rep, t, runs, compare.ReportMarkdown(t, sw, meta))
		v.Profiles = sec
		v.Sweep = sv
		v.SLO = slov
		v.Page.CSRF = csrf
		return "report", v, nil
	})
}

// loadReport reads a report and computes its table from its runs (nil
// when it compares none: it shows a sweep only), reading the parts of
// the runs the caller shows (reportExportParts).
func (s *Server) loadReport(ctx context.Context, slug string, hide bool, parts store.RunParts) (*rundoc.Report, *compare.Table, []rundoc.Run, error) {
	rep, err := s.store.GetReport(ctx, slug)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(rep.RunIDs) == 0 {
		return rep, nil, nil, nil
	}
	t, runs, err := s.comparison(ctx, ui.CompareQuery{Runs: rep.RunIDs, By: rep.By, At: rep.At, HideUnchanged: hide}, parts)
	if err != nil {
		return nil, nil, nil, err
	}
	return rep, t, runs, nil
}

// reportMeta is what the exports say about a report: its title, notes,
// creation time and absolute link.
func (s *Server) reportMeta(c *gin.Context, rep *rundoc.Report) compare.Meta {
	return compare.Meta{Title: rep.Title, Notes: rep.Notes, Created: rep.CreatedAt,
		URL: s.baseURL(c) + ui.ReportURL(rep.Slug, "")}
}

// baseURL is the scheme and host of c's request, which the exports'
// absolute links start with.
func (s *Server) baseURL(c *gin.Context) string {
	scheme := "http"
	if s.secureRequest(c.Request) { // TLS here, or at a trusted proxy
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host
}

// reportExportParts are the parts of the runs each export shows beside
// the table: the Markdown quotes the runs' Kafka output and lists the top
// changes of their profiles' diff; the CSV and JSON hold the table alone,
// so they read no output, series or profiles.
var reportExportParts = map[string]store.RunParts{".md": {Output: true, Profiles: true}, ".csv": {}, ".json": {}}

func (s *Server) reportExport(c *gin.Context, slug, ext string) {
	rep, t, runs, err := s.loadReport(c.Request.Context(), slug, false, reportExportParts[ext])
	if err != nil {
		s.fail(c, err)
		return
	}
	_, sw, err := s.reportSweep(c.Request.Context(), rep, s.baseURL(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	_, slo, err := s.reportSLO(c.Request.Context(), rep, s.baseURL(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	meta := s.reportMeta(c, rep)
	meta.SLO = slo
	var body []byte
	switch ext {
	case ".md":
		// The Markdown carries the Profiles section's top changes.
		if t != nil {
			_, meta.Profiles = s.profilesSection(c.Request.Context(), t, runs, s.baseURL(c))
		}
		body = []byte(compare.ReportMarkdown(t, sw, meta))
	case ".csv":
		body = compare.ReportCSV(t, sw, slo)
	case ".json":
		if body, err = compare.ReportJSON(t, sw, meta); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.Header("Content-Disposition", `inline; filename="kbench-report-`+rep.Slug+ext+`"`)
	c.Data(http.StatusOK, reportExports[ext], body)
}
