// Regressions across every series: GET /regressions (the page) and
// GET /api/regressions, and the badges of runs at which their series
// regressed.

package server

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// parseRegressionsQuery reads threshold (percent, default 5) and the
// detector's parameters as a history takes them; every bad field is
// reported at once, named.
func parseRegressionsQuery(q url.Values) (ui.RegressionsQuery, error) {
	var errs rundoc.FieldErrors
	rq := ui.RegressionsQuery{Threshold: ui.DefaultRegressionThreshold}
	if v := q.Get("threshold"); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || t < 0 || math.IsInf(t, 0) || math.IsNaN(t) {
			errs.Add("threshold", "%q: want a percentage at least 0 (default %g)", v, ui.DefaultRegressionThreshold)
		}
		rq.Threshold = t
	}
	rq.Options = parseDetectOptions(q, &errs, minSegmentFloor)
	return rq, errs.Err()
}

// regressionCache keeps what the regressions list derives from the
// store: per set of detection parameters, each series' worsening change
// points, kept while the series' signature (store.SeriesInfo: its
// succeeded runs' count and ids) is unchanged, and the whole list while
// the store's series generation (store.SeriesGeneration) is. A write
// that may change series costs the SeriesInfos of the series it touched
// (store.SeriesChangedSince) and their detection, not a ListSeries over
// every run (100 ms and more over 100,000 runs) nor the detection of
// every series; only when the store cannot say which series changed
// (another process's write without them, a lost PostgreSQL connection,
// a cache thousands of writes behind) does it read them all. Any other
// write costs nothing: the runs list (which badges runs from it) stays
// fast while runs start and finish.
type regressionCache struct {
	mu   sync.Mutex
	sets map[changepoint.Options]*regressionSet
	// warm is the warm-up at start (warmRegressions).
	warm background
	// lists counts the reads of every series (ListSeries), what an
	// update series by series avoids (tests check it is not taken).
	lists int
}

// warmRegressions computes the default regressions list in the
// background at start, so that the first runs list (whose badges come
// from it) and the first regressions page do not wait for every series'
// detection (about half a second over 20,000 runs).
func (s *Server) warmRegressions(ctx context.Context) {
	s.regressions.warm.start(ctx, func(ctx context.Context) {
		if _, err := s.allRegressions(ctx, changepoint.Options{}); err != nil && ctx.Err() == nil {
			s.log.Error("regressions: warm-up", "err", err)
		}
	})
}

// maxRegressionSets bounds the parameter sets kept (each person trying
// parameters on the page adds one).
const maxRegressionSets = 8

// maxChangedSeries is the most changed series read one key at a time
// (store.SeriesInfos) rather than by listing them all: beyond it the
// keys' reads cost about what the whole list does.
const maxChangedSeries = 2000

type regressionSet struct {
	gen   uint64
	valid bool
	// all is every worsening change point, newest first.
	all      []ui.Regression
	bySeries map[string]seriesRegressions
}

type seriesRegressions struct {
	sig  store.SeriesInfo
	regs []ui.Regression
}

// allRegressions returns every change point that made a headline metric
// of a series worse by its direction, newest first (by the time of the
// first run after it), with opts (zero fields Otava's defaults). The
// slice is shared: callers must not modify it.
func (s *Server) allRegressions(ctx context.Context, opts changepoint.Options) ([]ui.Regression, error) {
	opts = opts.WithDefaults()
	c := &s.regressions
	// One computation at a time: concurrent requests after a write would
	// otherwise each repeat it.
	c.mu.Lock()
	defer c.mu.Unlock()
	// Regressions are derived from the series alone: writes that change
	// none (a run started, canceled or failed, profiles, reports) keep
	// them, so the runs list built again after such a write reads no
	// series at all.
	gen := s.store.SeriesGeneration()
	set := c.sets[opts]
	if set != nil && set.valid && set.gen == gen {
		return set.all, nil
	}
	if set == nil {
		if c.sets == nil || len(c.sets) >= maxRegressionSets {
			c.sets = map[changepoint.Options]*regressionSet{}
		}
		set = &regressionSet{bySeries: map[string]seriesRegressions{}}
		c.sets[opts] = set
	}
	// changed is the keys of the series that may have changed since the
	// set's generation, when the store knows them; list their signatures
	// now (those of the changed keys that still have succeeded runs).
	var changed []string
	known := false
	if set.valid {
		changed, known = s.store.SeriesChangedSince(set.gen)
		known = known && len(changed) <= maxChangedSeries
	}
	var list []store.SeriesInfo
	var err error
	if known {
		list, err = s.store.SeriesInfos(ctx, changed)
	} else {
		c.lists++
		list, err = s.store.ListSeries(ctx)
	}
	if err != nil {
		return nil, err
	}
	// The series whose runs changed are detected again, in parallel: the
	// store reads them through several connections (WAL), and detection
	// is CPU work.
	next := make([]seriesRegressions, len(list))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, si := range list {
		if sr, ok := set.bySeries[si.Key]; ok && sr.sig == si {
			next[i] = sr
			continue
		}
		g.Go(func() error {
			regs, err := s.seriesRegressions(gctx, si, opts)
			next[i] = seriesRegressions{sig: si, regs: regs}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Only now, all read, is the set changed: an error above leaves it
	// as it was, still right for its generation.
	bySeries := set.bySeries
	if known {
		// The changed series without succeeded runs are gone.
		for _, k := range changed {
			delete(bySeries, k)
		}
	} else {
		bySeries = make(map[string]seriesRegressions, len(list))
	}
	for _, sr := range next {
		bySeries[sr.sig.Key] = sr
	}
	var all []ui.Regression
	for _, sr := range bySeries {
		all = append(all, sr.regs...)
	}
	slices.SortFunc(all, func(a, b ui.Regression) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.RunID, a.RunID), cmp.Compare(a.Series, b.Series), cmp.Compare(a.Metric, b.Metric))
	})
	set.bySeries = bySeries
	set.all = all
	// What was read after gen was read holds every write up to it; a
	// write during the reads moved the generation past gen, and
	// SeriesChangedSince(gen) names its series next time (or says it
	// cannot), so they are read again then.
	set.gen, set.valid = gen, true
	return all, nil
}

// seriesRegressions detects the worsening change points of one series'
// headline metrics (those of its workload that its runs hold), with
// history.Build as the history page does. The series is read without
// metadata, and the commits either side of each regression are read
// after, for those runs alone.
func (s *Server) seriesRegressions(ctx context.Context, si store.SeriesInfo, opts changepoint.Options) ([]ui.Regression, error) {
	metrics := compare.HeadlineMetrics(si.Workload)
	runs, err := s.store.SeriesRunsMetrics(ctx, si.Key, metrics)
	if errors.Is(err, store.ErrNotFound) { // deleted since ListSeries
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []ui.Regression
	// befores[i] is the last run before out[i]'s change; ids are the runs
	// whose commits name the regressions' ranges.
	var befores, ids []uint
	for _, m := range metrics {
		h := history.Build(runs, m, opts)
		for k, c := range h.ChangePoints {
			// A tentative change point (a side shorter than min_segment)
			// is shown on its history, never listed, badged or notified.
			if c.Direction != history.Worse || c.Tentative {
				continue
			}
			before := h.Points[c.Index-1].RunID
			out = append(out, ui.Regression{Series: si.Key, Workload: si.Workload, Metric: m, Unit: h.Unit,
				RunID: c.RunID, Index: c.Index, Time: h.Points[c.Index].Time,
				Before: c.Before, After: c.After, ChangePct: c.ChangePct, PValue: c.PValue,
				CompareURL: ui.BeforeAfterURL(h, k),
				HistoryURL: ui.HistoryURL(ui.HistoryQuery{Series: si.Key, Metric: m, Options: opts.WithoutDefaults()})})
			befores = append(befores, before)
			ids = append(ids, before, c.RunID)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	meta, err := s.store.RunsMeta(ctx, ids)
	if err != nil {
		return nil, err
	}
	// The series' newest run names it, read only for series that
	// regressed.
	name, err := s.headName(ctx, si)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].CommitBefore = history.Commit(meta[befores[i]])
		out[i].CommitAfter = history.Commit(meta[out[i].RunID])
		out[i].Name = name
	}
	return out, nil
}

// regressionsOf is the regressions q asks for: those of at least its
// threshold, newest first.
func (s *Server) regressionsOf(ctx context.Context, q ui.RegressionsQuery) ([]ui.Regression, error) {
	all, err := s.allRegressions(ctx, q.Options)
	if err != nil {
		return nil, err
	}
	out := []ui.Regression{}
	for _, r := range all {
		if math.Abs(r.ChangePct) >= q.Threshold {
			out = append(out, r)
		}
	}
	return out, nil
}

// regressedRuns maps each run at which its series regressed (by the
// default detection and threshold) to those regressions: the badges.
func (s *Server) regressedRuns(ctx context.Context) (map[uint][]ui.Regression, error) {
	regs, err := s.regressionsOf(ctx, ui.RegressionsQuery{Threshold: ui.DefaultRegressionThreshold})
	if err != nil {
		return nil, err
	}
	at := make(map[uint][]ui.Regression, len(regs))
	for _, r := range regs {
		at[r.RunID] = append(at[r.RunID], r)
	}
	return at, nil
}

// apiRegression is one regression as the API names it (client's).
type apiRegression = client.Regression

func newAPIRegression(r ui.Regression) apiRegression {
	a := apiRegression{Series: r.Series, Name: r.Name, Metric: r.Metric, RunID: r.RunID, Index: r.Index, Before: r.Before, After: r.After,
		ChangePct: r.ChangePct, CompareURL: r.CompareURL, HistoryURL: r.HistoryURL, CommitBefore: r.CommitBefore,
		CommitAfter: r.CommitAfter, Time: r.Time, Unit: r.Unit, Workload: r.Workload}
	if !math.IsNaN(r.PValue) && !math.IsInf(r.PValue, 0) {
		p := r.PValue
		a.PValue = &p
	}
	return a
}

// apiRegressions answers GET /api/regressions?threshold=5 (percent; and
// window, max_pvalue, min_magnitude and min_segment as /api/history takes
// them, min_segment at least 2), kept in the JSON cache until the next
// write to the store.
func (s *Server) apiRegressions(c *gin.Context) {
	q, err := parseRegressionsQuery(c.Request.URL.Query())
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	s.cachedJSON(c, "regressions?"+q.Values().Encode(), func() (any, error) {
		regs, err := s.regressionsOf(ctx, q)
		if err != nil {
			return nil, err
		}
		out := make([]apiRegression, 0, len(regs))
		for _, r := range regs {
			out = append(out, newAPIRegression(r))
		}
		return client.Regressions{Regressions: out}, nil
	})
}

// regressionsPage renders GET /regressions?…, kept in the page cache
// until the next write to the store.
func (s *Server) regressionsPage(c *gin.Context) {
	q, err := parseRegressionsQuery(c.Request.URL.Query())
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	s.cachedRender(c, "regressions?"+q.Values().Encode(), func(csrf string) (string, any, error) {
		regs, err := s.regressionsOf(ctx, q)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewRegressionsView(regs, q)
		v.Page.CSRF = csrf
		return "regressions", v, nil
	})
}
