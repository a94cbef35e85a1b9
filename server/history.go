// A metric's history across a series' runs, with its change points:
// GET /history (the page) and GET /api/history.

package server

import (
	"context"
	"math"
	"net/url"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

// parseHistoryQuery reads a history's query: the series (run=ID, or
// series=KEY, or fingerprint=…&branch=…), metric, Otava's parameters
// window, max_pvalue and min_magnitude (a fraction), and min_segment.
// minSegment is the smallest min_segment taken: 2 for the page, 1 for the
// API, where min_segment=1 keeps Otava's raw answer (no change point
// tentative) so that parity with Otava stays testable. Every bad field is
// reported at once, named.
func parseHistoryQuery(q url.Values, minSegment int) (ui.HistoryQuery, error) {
	var errs rundoc.FieldErrors
	var hq ui.HistoryQuery
	given := 0
	if v := q.Get("run"); v != "" {
		given++
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			errs.Add("run", "%q is not a run id", v)
		}
		hq.Run = uint(n)
	}
	if v := q.Get("series"); v != "" {
		given++
		_ = errs.Append(rundoc.ValidateSeriesName(v)) // a FieldError: recorded, never returned
		hq.Series = v
	}
	if fp := q.Get("fingerprint"); fp != "" {
		given++
		hq.Series = rundoc.SeriesKey(fp, q.Get("branch"))
	} else if q.Get("branch") != "" {
		errs.Add("branch", "goes with fingerprint")
	}
	switch {
	case given == 0:
		errs.Add("run", "name the series: run=ID (the series of that run), series=KEY, or fingerprint=…&branch=…")
	case given > 1:
		errs.Add("run", "give one of run, series or fingerprint")
	}
	hq.Metric = q.Get("metric")
	if len(hq.Metric) > 100 {
		errs.Add("metric", "is %d bytes, at most 100", len(hq.Metric))
	}
	hq.Options = parseDetectOptions(q, &errs, minSegment)
	switch x := q.Get("x"); x {
	case "", ui.XIndex, ui.XTime, ui.XCommit:
		hq.X = x
	default:
		errs.Add("x", "%q: want index, time or commit", x)
	}
	return hq, errs.Err()
}

// Smallest min_segment values taken: a regressions list, a page or kbench
// check trusts no change point with a side of one run; /api/history takes
// 1 for Otava's raw answer.
const (
	minSegmentFloor    = 2
	minSegmentFloorRaw = 1
)

// parseDetectOptions reads Otava's parameters window, max_pvalue and
// min_magnitude (a fraction) from q, and min_segment (at least
// minSegment), recording each bad one in errs.
func parseDetectOptions(q url.Values, errs *rundoc.FieldErrors, minSegment int) changepoint.Options {
	var o changepoint.Options
	// Each parameter is checked alone by the detector's own Validate, so
	// that its message names the field it is about.
	if v := q.Get("window"); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil {
			err = changepoint.Options{Window: n}.Validate()
		}
		if err != nil {
			errs.Add("window", "%q: want a whole number of runs from 2 to %d (Otava's window_len; default %d)", v, changepoint.MaxWindow, changepoint.DefaultWindow)
		}
		o.Window = n
	}
	if v := q.Get("max_pvalue"); v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err == nil {
			err = changepoint.Options{MaxPValue: p}.Validate()
		}
		if err != nil || p == 0 {
			errs.Add("max_pvalue", "%q: want a probability in (0, 1] (default %g)", v, changepoint.DefaultMaxPValue)
		}
		o.MaxPValue = p
	}
	if v := q.Get("min_magnitude"); v != "" {
		m, err := strconv.ParseFloat(v, 64)
		if err == nil {
			err = changepoint.Options{MinMagnitude: m}.Validate()
		}
		if err != nil {
			errs.Add("min_magnitude", "%q: want a fraction at least 0 (0.05 = 5%%; default 0)", v)
		}
		o.MinMagnitude = m
	}
	if v := q.Get("min_segment"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < minSegment {
			errs.Add("min_segment", "%q: want a whole number of runs, at least %d: the fewest runs each side of a change point must hold for it to count (default %d)", v, minSegment, changepoint.DefaultMinSegment)
		}
		o.MinSegment = n
	}
	return o
}

// historyOf loads what q shows: the series' key, its metrics and the
// history of the chosen metric (the workload's headline metric when none
// is chosen). An unknown run or series is ErrNotFound; a metric the
// series' runs never recorded is a bad "metric".
func (s *Server) historyOf(ctx context.Context, q ui.HistoryQuery) (string, []rundoc.Metric, history.History, error) {
	series := q.Series
	if q.Run != 0 {
		key, err := s.store.RunSeries(ctx, q.Run)
		if err != nil {
			return "", nil, history.History{}, err
		}
		series = key
	}
	metrics, err := s.store.SeriesMetrics(ctx, series)
	if err != nil {
		return "", nil, history.History{}, err
	}
	metric := q.Metric
	if metric == "" {
		metric = headlineOf(metrics)
	} else if len(metrics) > 0 && !slices.ContainsFunc(metrics, func(m rundoc.Metric) bool { return m.Name == metric }) {
		return "", nil, history.History{}, badInput("metric", "the runs of series %q have no metric %q", series, metric)
	}
	runs, err := s.store.SeriesRuns(ctx, series, metric)
	if err != nil {
		return "", nil, history.History{}, err
	}
	return series, metrics, history.Build(runs, metric, q.Options), nil
}

// headlineOf is the metric a history shows by default: the first
// headline metric of the series' workload (each workload's first is its
// own: record-send-rate, records-consumed-rate, requests-per-sec), else
// the first metric the series has.
func headlineOf(metrics []rundoc.Metric) string {
	for _, w := range compare.HeadlineWorkloads() {
		first := compare.HeadlineMetrics(w)[0]
		if slices.ContainsFunc(metrics, func(m rundoc.Metric) bool { return m.Name == first }) {
			return first
		}
	}
	if len(metrics) > 0 {
		return metrics[0].Name
	}
	return ""
}

// apiHistory and its parts are /api/history's answer: the client
// package's types (see client.History), the names the API promises.
type (
	apiHistory       = client.History
	apiHistoryPoint  = client.HistoryPoint
	apiChangePoint   = client.ChangePoint
	apiSegment       = client.Segment
	apiMark          = client.Mark
	apiHistoryParams = client.HistoryParams
)

func newAPIHistory(series string, metrics []rundoc.Metric, h history.History, q ui.HistoryQuery) apiHistory {
	a := apiHistory{Series: series, Metric: h.Metric, Unit: h.Unit, Better: h.Better,
		Points: []apiHistoryPoint{}, ChangePoints: []apiChangePoint{}, Tentative: []apiChangePoint{}, Segments: []apiSegment{}, Marks: []apiMark{}, Metrics: []string{},
		Params: apiHistoryParams{Window: h.Options.Window, MaxPValue: h.Options.MaxPValue, MinMagnitude: h.Options.MinMagnitude,
			MinSegment: h.Options.MinSegment},
		HistoryURL: ui.HistoryURL(q)}
	for _, p := range h.Points {
		meta := p.Meta
		if meta == nil {
			meta = map[string]string{}
		}
		a.Points = append(a.Points, apiHistoryPoint{RunID: p.RunID, Time: p.Time, Value: p.Value, Meta: meta})
	}
	for k, c := range h.ChangePoints {
		cp := apiChangePoint{Index: c.Index, RunID: c.RunID, Before: c.Before, After: c.After, ChangePct: c.ChangePct,
			Direction: c.Direction, Magnitude: c.Magnitude, CommitBefore: c.CommitBefore, CommitAfter: c.CommitAfter,
			CompareURL: ui.BeforeAfterURL(h, k), RunsBefore: c.RunsBefore, RunsAfter: c.RunsAfter, Tentative: c.Tentative,
			TentativeReason: c.TentativeReason(h.Options.MinSegment)}
		if !math.IsNaN(c.PValue) && !math.IsInf(c.PValue, 0) {
			p := c.PValue
			cp.PValue = &p
		}
		if c.Tentative {
			a.Tentative = append(a.Tentative, cp)
		} else {
			a.ChangePoints = append(a.ChangePoints, cp)
		}
	}
	for _, sg := range h.Segments {
		a.Segments = append(a.Segments, apiSegment{Start: sg.Start, End: sg.End, Median: sg.Median})
	}
	for _, m := range h.Marks {
		a.Marks = append(a.Marks, apiMark{Index: m.Index, RunID: m.RunID, Changes: m.Changes})
	}
	for _, m := range metrics {
		a.Metrics = append(a.Metrics, m.Name)
	}
	return a
}

// apiHistory answers GET /api/history?run=ID&metric=NAME (or series=KEY,
// or fingerprint=…&branch=…) with the points in time order, the change
// points and the parameters used (window=50&max_pvalue=0.001&
// min_magnitude=0 by default, as Otava's; min_segment=4), kept in the
// JSON cache until the next write to the store.
func (s *Server) apiHistory(c *gin.Context) {
	q, err := parseHistoryQuery(c.Request.URL.Query(), minSegmentFloorRaw)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	s.cachedJSON(c, "history?"+q.Values().Encode(), func() (any, error) {
		series, metrics, h, err := s.historyOf(ctx, q)
		if err != nil {
			return nil, err
		}
		a := newAPIHistory(series, metrics, h, q)
		if a.Name, err = s.seriesName(ctx, series); err != nil {
			return nil, err
		}
		if computing, err := s.historyFunctions(ctx, h, &a, nil); err != nil || computing {
			return volatileAnswer{a}, err
		}
		return a, nil
	})
}

// historyPage renders GET /history?… (the API's query), kept in the page
// cache until the next write to the store.
func (s *Server) historyPage(c *gin.Context) {
	q, err := parseHistoryQuery(c.Request.URL.Query(), minSegmentFloor)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	s.cachedRender(c, "history?"+q.Values().Encode(), func(csrf string) (string, any, error) {
		series, metrics, h, err := s.historyOf(ctx, q)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewHistoryView(h, series, metrics, q)
		if v.Name, err = s.seriesName(ctx, series); err != nil {
			return "", nil, err
		}
		if v.Computing, err = s.historyFunctions(ctx, h, nil, &v); err != nil {
			return "", nil, err
		}
		v.Page.CSRF = csrf
		return "history", v, nil
	})
}
