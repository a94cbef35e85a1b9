// Latency-target searches: POST /api/presets/slo, GET /api/slos/:id, POST
// /api/slos/:id/cancel and their pages. launch stores and advances them
// (launch.CreateSLO, launch.AdvanceSLOs); here are the requests, the
// search as the API answers it and its pages.

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/slo"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// loadSLO reads search id as GET /api/slos/{id} answers it.
func (s *Server) loadSLO(ctx context.Context, id string) (*wire.SLO, error) {
	st, err := s.launcher.LoadSLO(ctx, id)
	if err != nil {
		return nil, err
	}
	return sloAnswer(st), nil
}

// sloAnswer is st as the API shows it: every run of every probe with
// its verdict, and the answer or the bracket so far.
func sloAnswer(st *launch.SLOState) *wire.SLO {
	rec, set := st.Record, st.Settings
	cfg := set.Config()
	res := &wire.SLO{SLO: rec.ID, URL: ui.SLOURL(rec.ID), Phase: rec.Phase, Note: rec.Note, CreatedAt: rec.CreatedAt, EndedAt: rec.EndedAt,
		Config: wire.SLOConfig{Label: st.Config.Label, Queue: st.Config.Queue, Workload: st.Config.Workload, Spec: st.Config.Spec,
			RateMetric: st.RateMetric, Latency: st.Latency},
		Percentile: set.Percentile, LatencyMs: set.LatencyMs, PrecisionPct: set.PrecisionPct, Repetitions: set.Repetitions,
		MinRate: set.MinRate, MaxRate: set.MaxRate, MinSamples: cfg.MinSamples(), MaxProbes: cfg.ProbeLimit(), Probes: []wire.SLOProbe{}}
	if store.SLOEnded(rec.Phase) {
		res.Outcome, res.Lo, res.Hi = rec.Outcome, rec.Lo, rec.Hi
	} else {
		// The bracket of the probes measured so far, while one runs too.
		d := slo.Decide(cfg, st.Probes)
		res.Lo, res.Hi = d.Lo, d.Hi
	}
	// Every run, ended or not, under its probe; the verdicts are the
	// probes' as Decide read them.
	byNumber := map[int]int{}
	for _, pr := range st.Runs {
		i, ok := byNumber[pr.Link.Probe]
		if !ok {
			i = len(res.Probes)
			byNumber[pr.Link.Probe] = i
			res.Probes = append(res.Probes, wire.SLOProbe{Probe: pr.Link.Probe, Rate: pr.Link.Rate, Max: pr.Link.Max, Runs: []wire.SLORun{}})
		}
		run := wire.SLORun{ID: pr.Link.RunID, URL: ui.RunURL(pr.Link.RunID), Status: pr.Status}
		if pr.Status.Final() {
			run.Achieved, run.LatencyMs, run.Samples, run.HarnessLimited, run.Error = pr.Run.Achieved, pr.Run.LatencyMs, pr.Run.Samples, pr.Run.HarnessLimited, pr.Run.Err
			if !pr.Link.Max {
				v := cfg.Judge(pr.Link.Rate, pr.Run)
				run.Pass, run.Reason = v.Pass, v.Reason
			} else if pr.Run.Err == "" {
				run.Pass, run.Reason = true, "measured the maximum"
			} else {
				run.Reason = "the run failed: " + pr.Run.Err
			}
		}
		res.Probes[i].Runs = append(res.Probes[i].Runs, run)
	}
	for k, p := range st.Probes {
		i, ok := byNumber[st.Numbers[k]]
		if !ok || !cfg.Measured(p) {
			continue
		}
		res.Probes[i].Measured = true
		if p.Max {
			if m := slo.MaxOf(p); m > 0 {
				res.Probes[i].Pass, res.Probes[i].Reason = true, "the maximum: "+ui.FormatNumber(m)+" records/s, the median of its runs' achieved rates"
			} else {
				res.Probes[i].Reason = "no run measured a rate: no maximum to search below"
			}
			continue
		}
		v := cfg.JudgeProbe(p)
		res.Probes[i].Pass, res.Probes[i].Reason = v.Pass, v.Reason
	}
	if rec.Phase == store.SLOSearching {
		if st.Pending > 0 && len(st.Runs) > 0 {
			last := st.Runs[len(st.Runs)-1].Link
			res.Next = &wire.SLONext{Rate: last.Rate, Max: last.Max}
		} else if st.Decision.Next != nil {
			res.Next = &wire.SLONext{Rate: st.Decision.Next.Rate, Max: st.Decision.Next.Max}
		}
	}
	return res
}

// apiCreateSLO answers POST /api/presets/slo with 201 {"slo", "url"}.
func (s *Server) apiCreateSLO(c *gin.Context) {
	var req launch.SLORequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	id, err := s.launcher.CreateSLO(c.Request.Context(), &req)
	if err != nil {
		s.fail(c, err)
		return
	}
	u := ui.SLOURL(id)
	c.Header("Location", u)
	c.JSON(http.StatusCreated, client.SLOCreated{SLO: id, URL: u})
}

// apiGetSLO answers GET /api/slos/{id}.
func (s *Server) apiGetSLO(c *gin.Context) {
	res, err := s.loadSLO(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// apiCancelSLO answers POST /api/slos/{id}/cancel with 202; 409 when the
// search has ended already.
func (s *Server) apiCancelSLO(c *gin.Context) {
	id := c.Param("id")
	n, err := s.launcher.CancelSLO(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, client.SLOCanceled{SLO: id, Phase: store.SLOCanceled, CanceledRuns: n, URL: ui.SLOURL(id)})
}

// cancelSLOForm is the search page's Cancel button: 303 back to it.
func (s *Server) cancelSLOForm(c *gin.Context) {
	if !s.checkCSRF(c) {
		return
	}
	id := c.Param("id")
	if _, err := s.launcher.CancelSLO(c.Request.Context(), id); err != nil && !errors.Is(err, store.ErrConflict) {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, ui.SLOURL(id))
}

// slosPage is /slos: the form and the recent searches.
func (s *Server) slosPage(c *gin.Context) {
	s.renderSLOForm(c, http.StatusOK, url.Values{}, nil)
}

func (s *Server) renderSLOForm(c *gin.Context, status int, form url.Values, errs map[string]string) {
	list, err := s.store.ListSLOs(c.Request.Context(), "", 20)
	if err != nil {
		s.fail(c, err)
		return
	}
	var rows []ui.SLOListRow
	for _, rec := range list {
		var cfg launch.SweepConfig
		var set launch.SLOSettings
		_ = json.Unmarshal([]byte(rec.Config), &cfg)
		_ = json.Unmarshal([]byte(rec.Search), &set)
		row := ui.SLOListRow{ID: rec.ID, URL: ui.SLOURL(rec.ID), Phase: rec.Phase, Created: rec.CreatedAt.UTC().Format("2006-01-02 15:04"),
			Label: cfg.Label, Target: "p" + ui.FormatNumber(set.Percentile) + " under " + ui.FormatNumber(set.LatencyMs) + " ms"}
		if rec.Phase == store.SLODone {
			row.Answer = sloBracket(rec.Outcome, rec.Lo, rec.Hi)
		}
		rows = append(rows, row)
	}
	v := ui.NewSLOForm(form, errs, rows)
	v.Page = s.page(c, v.Page.Title)
	s.render(c, status, "slos", v)
}

// sloBracket is a search's answer in short: "[lo, hi] records/s" and its
// outcome when that is not plain.
func sloBracket(outcome string, lo, hi float64) string {
	b := "[" + ui.FormatNumber(lo) + ", " + ui.FormatNumber(hi) + "] records/s"
	if outcome != "found" {
		b += " (" + outcome + ")"
	}
	return b
}

// sloForm handles the form: 303 to the search's page, or the form again
// with the bad fields named.
func (s *Server) sloForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	var errs rundoc.FieldErrors
	req := launch.SLORequest{Config: launch.SweepConfigRequest{Label: strings.TrimSpace(form.Get(ui.SLOFieldLabel)),
		Queue: form.Get(ui.SLOFieldQueue), Params: map[string]json.RawMessage{}}}
	if params := strings.TrimSpace(form.Get(ui.SLOFieldParams)); params != "" {
		if err := json.Unmarshal([]byte(params), &req.Config.Params); err != nil {
			errs.Add("config.params", "must be a JSON object of parameters: %v", err)
		}
	}
	number := func(field string, into *float64) bool {
		raw := strings.TrimSpace(form.Get(field))
		if raw == "" {
			return false
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			errs.Add(field, "%q is not a number", raw)
			return false
		}
		*into = f
		return true
	}
	var pct, prec float64
	if number(ui.SLOFieldPercentile, &pct) {
		req.Percentile = &pct
	}
	if number(ui.SLOFieldPrecision, &prec) {
		req.PrecisionPct = &prec
	}
	number(ui.SLOFieldLatency, &req.LatencyMs)
	number(ui.SLOFieldMinRate, &req.MinRate)
	number(ui.SLOFieldMaxRate, &req.MaxRate)
	if raw := strings.TrimSpace(form.Get(ui.SLOFieldRepetitions)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			errs.Add(ui.SLOFieldRepetitions, "must be a whole number, got %q", raw)
		} else {
			req.Repetitions = &n
		}
	}
	var id string
	var err error
	if len(errs) == 0 {
		id, err = s.launcher.CreateSLO(c.Request.Context(), &req)
	} else {
		_, _, _, err = s.launcher.PrepareSLO(&req)
	}
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		s.renderSLOForm(c, http.StatusBadRequest, form, formErrors(errs))
		return
	}
	c.Redirect(http.StatusSeeOther, ui.SLOURL(id))
}

// sloPage is /slos/<id>: the answer, the probes' chart and runs; it
// reloads itself while the search runs.
func (s *Server) sloPage(c *gin.Context) {
	res, err := s.loadSLO(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := sloView(res)
	v.Page = s.page(c, v.Page.Title)
	s.render(c, http.StatusOK, "slos", v)
}

// sloView is the search page's view of res.
func sloView(res *wire.SLO) ui.SLOView {
	v := ui.SLOView{Page: ui.Page{Title: "Latency target " + res.SLO}, Result: true, ID: res.SLO, Phase: res.Phase, Note: res.Note,
		Label: res.Config.Label, Workload: string(res.Config.Workload), Question: ui.SLOQuestion(*res), Answer: ui.SLOAnswer(*res),
		APIURL: "/api/slos/" + res.SLO, Chart: ui.SLOChart(*res)}
	v.How = fmt.Sprintf("Each run holds at least %d latencies (1000/(100 − %s)); its latency is the p%s of its %s histogram (µs, 3 significant digits), its rate %s; it must reach %.0f%% of its probe's rate.",
		res.MinSamples, ui.FormatNumber(res.Percentile), ui.FormatNumber(res.Percentile), res.Config.Latency, res.Config.RateMetric, 98.0)
	if !store.SLOEnded(res.Phase) {
		v.CancelURL = ui.SLOURL(res.SLO) + "/cancel"
		v.Refresh = true
		if res.Hi > 0 || res.Lo > 0 {
			v.Bracket = "so far between " + ui.FormatNumber(res.Lo) + " and " + ui.FormatNumber(res.Hi) + " records/s"
		}
	}
	for _, p := range res.Probes {
		rate := ui.FormatNumber(p.Rate)
		if p.Max {
			rate = "max"
		}
		for _, r := range p.Runs {
			row := ui.SLOProbeRow{Probe: p.Probe, Rate: rate, RunID: r.ID, RunURL: r.URL, Status: string(r.Status), Achieved: "—", LatencyMs: "—", Samples: "—", Reason: r.Reason}
			if r.Status.Final() {
				if r.Achieved > 0 {
					row.Achieved = ui.FormatNumber(r.Achieved)
				}
				if r.Samples > 0 {
					row.LatencyMs, row.Samples = ui.FormatNumber(r.LatencyMs), strconv.FormatInt(r.Samples, 10)
				}
				row.Verdict = "fail"
				if r.Pass {
					row.Verdict = "pass"
				}
			}
			v.Rows = append(v.Rows, row)
		}
	}
	return v
}
