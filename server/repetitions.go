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

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// Adding repetitions to a comparison (launch.AddRepetitions): here are its
// requests, decoded into the comparison they name, and its answers.

// repetitionsRequest is the body of POST /api/compare/repetitions: the
// comparison as runs and by (group by default), or as the comparison
// page's query ("runs=1,2,3&by=label", with or without "/compare?"), and
// how many repetitions of each column to add.
type repetitionsRequest struct {
	Runs  []uint `json:"runs"`
	By    string `json:"by"`
	Query string `json:"query"`
	N     int    `json:"n"`
}

// notRerunnable is the list a launch.RerunError names, for an API answer.
func notRerunnable(err error) ([]launch.Refusal, bool) {
	var re *launch.RerunError
	if errors.As(err, &re) {
		return re.Refused, true
	}
	return nil, false
}

// parseRepetitions checks a request into the comparison it names,
// reporting every bad field.
func parseRepetitions(req repetitionsRequest) (ui.CompareQuery, error) {
	var errs rundoc.FieldErrors
	var q ui.CompareQuery
	byField := "by"
	if req.Query != "" {
		byField = "query"
		if req.Runs != nil || req.By != "" {
			errs.Add("query", "give the comparison's query, or runs and by, not both")
		} else {
			raw := req.Query
			if i := strings.IndexByte(raw, '?'); i >= 0 {
				raw = raw[i+1:]
			}
			vals, err := url.ParseQuery(raw)
			if err == nil {
				q, err = parseCompareQuery(vals)
			}
			if err != nil {
				errs.Add("query", "%v", err)
			}
		}
	} else {
		parts := make([]string, len(req.Runs))
		for i, id := range req.Runs {
			parts[i] = strconv.FormatUint(uint64(id), 10)
		}
		ids, err := parseRunIDs([]string{strings.Join(parts, ",")})
		if err := errs.Append(asFieldError(err)); err != nil {
			return q, err
		}
		by := req.By
		if by == "" {
			by = compare.ByGroup
		}
		by, err = parseBy(by)
		if err := errs.Append(asFieldError(err)); err != nil {
			return q, err
		}
		q = ui.CompareQuery{Runs: ids, By: by}
	}
	if q.By == compare.ByChange && !errs.Has(byField) {
		errs.Add(byField, "compares the runs before and after a change point: repetitions added now would belong to neither")
	}
	if q.By == compare.ByRun && !errs.Has(byField) {
		errs.Add(byField, "compares by run: add repetitions to columns by group or by label (by run, a column is one run)")
	}
	if req.N < 1 || req.N > launch.MaxRepetitions {
		errs.Add("n", "must be between 1 and %d, got %d", launch.MaxRepetitions, req.N)
	}
	return q, errs.Err()
}

// addRepetitions queues n more repetitions of each column of q and returns
// the new runs, their A/B batch and the comparison with them.
func (s *Server) addRepetitions(ctx context.Context, q ui.CompareQuery, n int) ([]*store.Run, string, string, error) {
	runs, err := s.loadRuns(ctx, q.Runs)
	if err != nil {
		return nil, "", "", err
	}
	added, batch, err := s.launcher.AddRepetitions(ctx, runs, q.By, n)
	if err != nil {
		return nil, "", "", err
	}
	grown := q
	grown.Runs = slices.Clone(q.Runs)
	for _, r := range added {
		grown.Runs = append(grown.Runs, r.ID)
	}
	return added, batch, ui.CompareURL(grown), nil
}

// apiAddRepetitions answers POST /api/compare/repetitions with 201 {"runs"
// (the new ones, in queue order), "ab_batch", "compare_url"} and Location
// the grown comparison; 409 {"error", "not_rerunnable": [{"run",
// "reason"}]} when runs cannot be run again.
func (s *Server) apiAddRepetitions(c *gin.Context) {
	var req repetitionsRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	q, err := parseRepetitions(req)
	if err != nil {
		s.fail(c, err)
		return
	}
	added, batch, u, err := s.addRepetitions(c.Request.Context(), q, req.N)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(added))
	for _, r := range added {
		d := r.Doc()
		out = append(out, toAPIRun(&d, false))
	}
	c.Header("Location", u)
	c.JSON(http.StatusCreated, client.Created{Runs: out, ABBatch: batch, CompareURL: u})
}

// addRepetitionsForm handles the comparison page's "Add repetitions"
// button: 303 to the grown comparison.
func (s *Server) addRepetitionsForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	ids, err := parseRunIDs(form["runs"])
	if err != nil {
		s.fail(c, err)
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(form.Get("n")))
	if err != nil {
		s.fail(c, badInput("n", "%q is not a whole number", form.Get("n")))
		return
	}
	q, err := parseRepetitions(repetitionsRequest{Runs: ids, By: form.Get("by"), N: n})
	if err != nil {
		s.fail(c, err)
		return
	}
	q.HideUnchanged = form.Get("hide_unchanged") == "1"
	_, _, u, err := s.addRepetitions(c.Request.Context(), q, n)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, u)
}

// addRepetitionsView is the comparison page's offer to add repetitions to
// q's columns, or why it cannot; suggested is the table's own count of the
// repetitions its undecided changes need.
func (s *Server) addRepetitionsView(q ui.CompareQuery, runs []rundoc.Run, suggested int, csrf string) ui.AddRepetitionsView {
	var refused []ui.RefusedRun
	columns := 0
	if q.By == compare.ByGroup || q.By == compare.ByLabel {
		columns = len(compare.Columns(runs, q.By))
		bad := s.launcher.PlanRepetitions(runs, q.By)
		byID := map[uint]*rundoc.Run{}
		for i := range runs {
			byID[runs[i].ID] = &runs[i]
		}
		for _, b := range bad {
			link := ui.RunLink{ID: b.Run, URL: fmt.Sprintf("/runs/%d", b.Run), Text: fmt.Sprintf("#%d", b.Run)}
			if r := byID[b.Run]; r != nil && r.Label != "" {
				link.Text += " " + r.Label
			}
			refused = append(refused, ui.RefusedRun{Link: link, Reason: b.Reason})
		}
	} else {
		// By run nothing is offered, but the way to an offer (compare by
		// label or group) leads nowhere for imported runs: say so instead.
		for i := range runs {
			if r := &runs[i]; launch.IsImported(r) {
				link := ui.RunLink{ID: r.ID, URL: fmt.Sprintf("/runs/%d", r.ID), Text: fmt.Sprintf("#%d", r.ID)}
				if r.Label != "" {
					link.Text += " " + r.Label
				}
				refused = append(refused, ui.RefusedRun{Link: link, Reason: launch.ReasonImported})
			}
		}
	}
	v := ui.NewAddRepetitions(q, columns, refused, maxCompareRuns, launch.MaxRepetitions, suggested)
	v.CSRF = csrf
	return v
}
