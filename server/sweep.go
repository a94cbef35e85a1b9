package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// Latency-vs-throughput sweeps are checked, stored, queued and advanced
// phase by phase by launch (launch.CreateSweep, launch.AdvanceSweeps);
// here are their requests, the sweep as GET /api/sweeps/{id} answers it,
// and its pages.

// sweepResult is a sweep as GET /api/sweeps/{id} answers it: the client
// package's type (sweepAnswer), and the runs read for it.
type sweepResult struct {
	sweepAnswer

	// stored are the runs read for Runs and Points, with their plotted
	// metrics as stored (units and directions), so that a report's
	// export reads them once.
	stored map[uint]rundoc.Run
}

// sweepAnswer and its parts are client's: the names the API promises.
type (
	sweepAnswer  = client.Sweep
	sweepConfigV = client.SweepConfig
	sweepPhaseV  = client.SweepPhase
	sweepRunV    = client.SweepRun
)

// loadSweep reads sweep id with its runs and points.
func (s *Server) loadSweep(ctx context.Context, id string) (*sweepResult, error) {
	if !launch.ValidSweepID(id) {
		return nil, errNotFound
	}
	sw, links, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &sweepResult{sweepAnswer: sweepAnswer{Sweep: sw.ID, URL: ui.SweepURL(sw.ID), Phase: sw.Phase, CreatedAt: sw.CreatedAt,
		Repetitions: sw.Repetitions, Runs: []sweepRunV{}, Points: []ui.SweepPoint{}}}
	var configs []launch.SweepConfig
	if err := json.Unmarshal([]byte(sw.Configs), &configs); err != nil {
		return nil, fmt.Errorf("server: sweep %s: configurations: %w", id, err)
	}
	if err := json.Unmarshal([]byte(sw.RatesPct), &res.RatesPct); err != nil {
		return nil, fmt.Errorf("server: sweep %s: rates: %w", id, err)
	}
	var maxes []launch.SweepMax
	if sw.MaxRates != "" {
		if err := json.Unmarshal([]byte(sw.MaxRates), &maxes); err != nil {
			return nil, fmt.Errorf("server: sweep %s: maximum rates: %w", id, err)
		}
	}
	var names []string
	for i, c := range configs {
		kind, _ := launch.SweepKindOf(c.Workload)
		v := sweepConfigV{Label: c.Label, Queue: c.Queue, Workload: c.Workload, Spec: c.Spec, Metrics: map[string]string{
			"throughput": kind.RateMetric, "p50": kind.Latency[0], "p99": kind.Latency[1], "p999": kind.Latency[2]}}
		for j := range maxes {
			if maxes[j].Config == i {
				m := maxes[j]
				v.MaxRate = &m
			}
		}
		res.Configs = append(res.Configs, v)
		names = append(names, kind.RateMetric, kind.Latency[0], kind.Latency[1], kind.Latency[2])
	}
	ids := make([]uint, len(links))
	for i, l := range links {
		ids[i] = l.RunID
	}
	runs, err := s.store.SweepRunsMetrics(ctx, ids, names)
	if err != nil {
		return nil, err
	}
	byID := map[uint]rundoc.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	res.stored = byID
	res.Phases = []sweepPhaseV{{Phase: 1, Name: store.SweepMaxRate}, {Phase: 2, Name: store.SweepRates}}
	deleted := 0
	for _, l := range links {
		r, ok := byID[l.RunID]
		if !ok {
			deleted++
			continue // deleted since
		}
		if l.Config < 0 || l.Config >= len(configs) {
			continue
		}
		kind, _ := launch.SweepKindOf(configs[l.Config].Workload)
		v := sweepRunV{ID: r.ID, URL: ui.RunURL(r.ID), Config: l.Config, Label: configs[l.Config].Label, Phase: l.Phase,
			RatePct: l.RatePct, TargetRate: l.TargetRate, Status: r.Status, Metrics: map[string]float64{}}
		for _, m := range r.Metrics {
			v.Metrics[m.Name] = m.Value
		}
		res.Runs = append(res.Runs, v)
		if l.Phase == 1 || l.Phase == 2 {
			ph := &res.Phases[l.Phase-1]
			ph.Runs++
			if r.Final() {
				ph.Finished++
			}
		}
		if l.Phase != 2 || r.Status != rundoc.StatusSucceeded {
			continue
		}
		tp, ok1 := v.Metrics[kind.RateMetric]
		p50, ok2 := v.Metrics[kind.Latency[0]]
		p99, ok3 := v.Metrics[kind.Latency[1]]
		p999, ok4 := v.Metrics[kind.Latency[2]]
		if ok1 && ok2 && ok3 && ok4 {
			res.Points = append(res.Points, ui.SweepPoint{Label: v.Label, RatePct: l.RatePct, TargetRate: l.TargetRate, RunID: r.ID,
				URL: v.URL, Throughput: tp, P50: p50, P99: p99, P999: p999})
		}
	}
	res.Note = sweepNote(res, maxes, len(links), deleted)
	return res, nil
}

// sweepNote says why a sweep ended as it did, "" when it has not ended
// or ended with points and nothing to explain.
func sweepNote(res *sweepResult, maxes []launch.SweepMax, links, deleted int) string {
	switch res.Phase {
	case store.SweepCanceled:
		return "canceled: its queued runs were canceled and its running runs stopped; no further phase is queued"
	case store.SweepFailed:
		return fmt.Sprintf("failed: its runs were deleted (%d of %d) before it ended, so nothing was left to measure", deleted, links)
	case store.SweepDone:
	default:
		return ""
	}
	if len(res.Points) > 0 {
		return ""
	}
	var why []string
	for _, m := range maxes {
		if m.Note != "" && m.Config >= 0 && m.Config < len(res.Configs) {
			why = append(why, res.Configs[m.Config].Label+": "+m.Note)
		}
	}
	phase2, succeeded := 0, 0
	for _, r := range res.Runs {
		if r.Phase == 2 {
			phase2++
			if r.Status == rundoc.StatusSucceeded {
				succeeded++
			}
		}
	}
	switch {
	case phase2 > 0 && succeeded == 0:
		why = append(why, fmt.Sprintf("none of its %d runs at the target rates succeeded", phase2))
	case phase2 > 0:
		why = append(why, "its succeeded runs at the target rates lack a throughput or latency percentile")
	case deleted > 0:
		why = append(why, fmt.Sprintf("%d of its runs were deleted", deleted))
	}
	if len(why) == 0 {
		why = append(why, "no run at a target rate was queued")
	}
	return "no points: " + strings.Join(why, "; ")
}

// apiCreateSweep answers POST /api/presets/sweep with 201 {"sweep", "url"}.
func (s *Server) apiCreateSweep(c *gin.Context) {
	var req launch.SweepRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	id, err := s.launcher.CreateSweep(c.Request.Context(), &req)
	if err != nil {
		s.fail(c, err)
		return
	}
	u := ui.SweepURL(id)
	c.Header("Location", u)
	c.JSON(http.StatusCreated, client.SweepCreated{Sweep: id, URL: u})
}

// apiGetSweep answers GET /api/sweeps/{id}.
func (s *Server) apiGetSweep(c *gin.Context) {
	res, err := s.loadSweep(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// sweepsPage is /sweeps: the form and the recent sweeps.
func (s *Server) sweepsPage(c *gin.Context) {
	s.renderSweepForm(c, http.StatusOK, url.Values{}, nil)
}

func (s *Server) renderSweepForm(c *gin.Context, status int, form url.Values, errs map[string]string) {
	list, err := s.store.ListSweeps(c.Request.Context(), "", 20)
	if err != nil {
		s.fail(c, err)
		return
	}
	var rows []ui.SweepListRow
	for _, sw := range list {
		var configs []launch.SweepConfig
		_ = json.Unmarshal([]byte(sw.Configs), &configs)
		var labels []string
		for _, cfg := range configs {
			labels = append(labels, cfg.Label)
		}
		rows = append(rows, ui.SweepListRow{ID: sw.ID, URL: ui.SweepURL(sw.ID), Phase: sw.Phase,
			Created: sw.CreatedAt.UTC().Format("2006-01-02 15:04"), Labels: strings.Join(labels, ", ")})
	}
	v := ui.NewSweepForm(form, errs, rows)
	v.Page = s.page(c, v.Page.Title)
	s.render(c, status, "sweeps", v)
}

// sweepForm handles the form: 303 to the sweep's page, or the form again
// with the bad fields named.
func (s *Server) sweepForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	var errs rundoc.FieldErrors
	req := launch.SweepRequest{}
	for i := 0; i < ui.SweepFormRows; i++ {
		is := strconv.Itoa(i)
		label, params, queue := strings.TrimSpace(form.Get("label-"+is)), strings.TrimSpace(form.Get("params-"+is)), form.Get("queue-"+is)
		if label == "" && params == "" && strings.TrimSpace(queue) == "" {
			continue
		}
		cfg := launch.SweepConfigRequest{Label: label, Queue: queue, Params: map[string]json.RawMessage{}}
		if params != "" {
			if err := json.Unmarshal([]byte(params), &cfg.Params); err != nil {
				errs.Add(fmt.Sprintf("configs[%d].params", len(req.Configs)), "must be a JSON object of parameters: %v", err)
			}
		}
		req.Configs = append(req.Configs, cfg)
	}
	if raw := strings.TrimSpace(form.Get(ui.SweepFieldRates)); raw != "" {
		req.RatesPct = []float64{}
		for _, part := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '%' }) {
			f, err := strconv.ParseFloat(part, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				errs.Add("rates_pct", "%q is not a number", part)
				continue
			}
			req.RatesPct = append(req.RatesPct, f)
		}
	}
	if raw := strings.TrimSpace(form.Get(ui.SweepFieldRepetitions)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			errs.Add("repetitions", "must be a whole number, got %q", raw)
		} else {
			req.Repetitions = &n
		}
	}
	var id string
	var err error
	if len(errs) == 0 {
		id, err = s.launcher.CreateSweep(c.Request.Context(), &req)
	} else {
		_, _, _, _, err = s.launcher.PrepareSweep(&req)
	}
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		s.renderSweepForm(c, http.StatusBadRequest, form, formErrors(errs))
		return
	}
	c.Redirect(http.StatusSeeOther, ui.SweepURL(id))
}

// sweepPage is /sweeps/<id>: the phases, maximum rates, the three charts
// and the runs; it reloads itself until every run has ended.
func (s *Server) sweepPage(c *gin.Context) {
	res, err := s.loadSweep(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := sweepView(res)
	v.Page = s.page(c, v.Page.Title)
	s.render(c, http.StatusOK, "sweeps", v)
}

// sweepView is the result page's view of res.
func sweepView(res *sweepResult) ui.SweepView {
	v := ui.SweepView{Page: ui.Page{Title: "Sweep " + res.Sweep}, Result: true, ID: res.Sweep, Phase: res.Phase,
		APIURL: "/api/sweeps/" + res.Sweep, Note: res.Note}
	if !store.SweepEnded(res.Phase) {
		v.CancelURL = ui.SweepURL(res.Sweep) + "/cancel"
	}
	var labels []string
	for _, c := range res.Configs {
		labels = append(labels, c.Label)
		row := ui.SweepMaxRow{Label: c.Label, Queue: c.Queue, Workload: string(c.Workload)}
		if c.MaxRate != nil {
			row.Runs, row.Note = c.MaxRate.Runs, c.MaxRate.Note
			if c.MaxRate.RecordsPerSec > 0 {
				row.MaxRate = ui.FormatNumber(c.MaxRate.RecordsPerSec)
			}
		}
		v.MaxRates = append(v.MaxRates, row)
	}
	v.Metrics = sweepMetricsNote(res.Configs)
	for _, r := range res.Runs {
		row := ui.SweepRunRow{ID: r.ID, URL: r.URL, Label: r.Label, Phase: r.Phase, Status: string(r.Status), Rate: "max", TargetRate: "unthrottled"}
		if r.Phase == 2 {
			row.Rate = strconv.FormatFloat(r.RatePct, 'g', -1, 64) + "%"
			row.TargetRate = ui.FormatNumber(r.TargetRate)
		}
		kind := res.Configs[r.Config].Metrics
		num := func(name string) string {
			if val, ok := r.Metrics[kind[name]]; ok {
				return ui.FormatNumber(val)
			}
			return "—"
		}
		row.Throughput, row.P50, row.P99, row.P999 = num("throughput"), num("p50"), num("p99"), num("p999")
		v.Runs = append(v.Runs, row)
		v.Total++
		if r.Status.Final() {
			v.Done++
		}
	}
	v.Refresh = !store.SweepEnded(res.Phase) || v.Done < v.Total
	v.Charts = ui.SweepCharts(labels, res.Points)
	return v
}

// sweepMetricsNote names the metrics plotted, once per workload: the
// sweep's page and a report's sweep section both show it.
func sweepMetricsNote(configs []sweepConfigV) string {
	var metrics []string
	seen := map[string]bool{}
	for _, c := range configs {
		m := c.Metrics["throughput"] + "; " + c.Metrics["p50"] + ", " + c.Metrics["p99"] + ", " + c.Metrics["p999"]
		if !seen[m] {
			seen[m] = true
			metrics = append(metrics, string(c.Workload)+": "+m)
		}
	}
	return strings.Join(metrics, "; ")
}
