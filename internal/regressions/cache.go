package regressions

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kbench/kbench/internal/bgloop"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/seriescache"
)

// Source is what the regressions are read from; *store.Store satisfies
// it. SeriesRunsMetrics of a series without any run any more returns an
// error matching rundoc.ErrNotFound.
type Source interface {
	seriescache.Source
	// SeriesRunsMetrics reads a series' succeeded runs with the named
	// metrics, without metadata.
	SeriesRunsMetrics(ctx context.Context, series string, metrics []string) ([]rundoc.Run, error)
	// RunsMeta reads the metadata of the runs ids.
	RunsMeta(ctx context.Context, ids []uint) (map[uint]map[string]string, error)
	// SeriesHeads reads what names the series whose newest runs are ids.
	SeriesHeads(ctx context.Context, ids []uint) (map[uint]rundoc.SeriesHead, error)
}

// Links are the URLs and names a regression carries, as the pages write
// them (ui.RegressionLinks): this package builds regressions for the
// pages, which import it, so it takes their links as functions.
type Links struct {
	// BeforeAfter is the comparison of change point k of h, "" when a
	// side has no run.
	BeforeAfter func(h history.History, k int) string
	// History is the history page of metric in series, with the
	// detection's parameters opts (zero fields left out).
	History func(series, metric string, opts changepoint.Options) string
	// SeriesName names the series key from its newest run's label,
	// workload and spec.
	SeriesName func(key, label, workload, spec string) string
}

// Cache keeps what the regressions list derives from the store: per set
// of detection parameters, each series' worsening change points, kept
// while the series' signature is unchanged (seriescache), and the whole
// list while the store's series generation is. A write that may change
// series costs the detection of the series it touched; any other write
// costs nothing: the runs list (which badges runs from it) stays fast
// while runs start and finish.
type Cache struct {
	src   Source
	links Links
	log   *slog.Logger

	mu   sync.Mutex
	sets map[changepoint.Options]*regressionSet
	// lists counts the reads of every series (ListSeries), what an
	// update series by series avoids (tests check it is not taken).
	lists int
	// warm is the warm-up (Warm).
	warm bgloop.Loop
}

// New is an empty cache of the regressions of src's series, whose links
// links builds; log takes the warm-up's failure.
func New(src Source, links Links, log *slog.Logger) *Cache {
	if log == nil {
		log = slog.Default()
	}
	return &Cache{src: src, links: links, log: log}
}

// Warm computes the default regressions list in the background, so that
// the first runs list (whose badges come from it) and the first
// regressions page do not wait for every series' detection (about half a
// second over 20,000 runs). Close stops it.
func (c *Cache) Warm(ctx context.Context) {
	c.warm.Start(ctx, func(ctx context.Context) {
		if _, err := c.All(ctx, changepoint.Options{}); err != nil && ctx.Err() == nil {
			c.log.Error("regressions: warm-up", "err", err)
		}
	})
}

// Close stops the warm-up and waits for it; without one it does nothing.
func (c *Cache) Close() { c.warm.Close() }

// maxSets bounds the parameter sets kept (each person trying parameters
// on the page adds one).
const maxSets = 8

type regressionSet struct {
	// all is every worsening change point, newest first.
	all      []Regression
	bySeries seriescache.Cache[[]Regression]
}

// All returns every change point that made a headline metric of a
// series worse by its direction, newest first (by the time of the first
// run after it), with opts (zero fields Otava's defaults). The slice is
// shared: callers must not modify it.
func (c *Cache) All(ctx context.Context, opts changepoint.Options) ([]Regression, error) {
	opts = opts.WithDefaults()
	// One computation at a time: concurrent requests after a write would
	// otherwise each repeat it.
	c.mu.Lock()
	defer c.mu.Unlock()
	set := c.sets[opts]
	if set == nil {
		if c.sets == nil || len(c.sets) >= maxSets {
			c.sets = map[changepoint.Options]*regressionSet{}
		}
		set = &regressionSet{}
		c.sets[opts] = set
	}
	// Regressions are derived from the series alone: writes that change
	// none (a run started, canceled or failed, profiles, reports) keep
	// them, so the runs list built again after such a write reads no
	// series at all.
	lists := set.bySeries.Lists()
	updated, err := set.bySeries.Update(ctx, c.src, func(ctx context.Context, todo []rundoc.SeriesInfo) ([][]Regression, error) {
		// The series whose runs changed are detected again, in
		// parallel: the store reads them through several connections
		// (WAL), and detection is CPU work.
		out := make([][]Regression, len(todo))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(runtime.GOMAXPROCS(0))
		for i, si := range todo {
			g.Go(func() error {
				var err error
				out[i], err = c.seriesRegressions(gctx, si, opts)
				return err
			})
		}
		return out, g.Wait()
	})
	c.lists += set.bySeries.Lists() - lists
	if err != nil {
		return nil, err
	}
	if !updated {
		return set.all, nil
	}
	var all []Regression
	for _, regs := range set.bySeries.All() {
		all = append(all, regs...)
	}
	slices.SortFunc(all, func(a, b Regression) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.RunID, a.RunID), cmp.Compare(a.Series, b.Series), cmp.Compare(a.Metric, b.Metric))
	})
	set.all = all
	return all, nil
}

// seriesRegressions detects the worsening change points of one series'
// headline metrics (those of its workload that its runs hold), with
// history.Build as the history page does. The series is read without
// metadata, and the commits either side of each regression are read
// after, for those runs alone.
func (c *Cache) seriesRegressions(ctx context.Context, si rundoc.SeriesInfo, opts changepoint.Options) ([]Regression, error) {
	metrics := compare.HeadlineMetrics(si.Workload)
	runs, err := c.src.SeriesRunsMetrics(ctx, si.Key, metrics)
	if errors.Is(err, rundoc.ErrNotFound) { // deleted since it was listed
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Regression
	// befores[i] is the last run before out[i]'s change; ids are the runs
	// whose commits name the regressions' ranges.
	var befores, ids []uint
	for _, m := range metrics {
		h := history.Build(runs, m, opts)
		for k, cp := range h.ChangePoints {
			// A tentative change point (a side shorter than min_segment)
			// is shown on its history, never listed, badged or notified.
			if cp.Direction != history.Worse || cp.Tentative {
				continue
			}
			before := h.Points[cp.Index-1].RunID
			segBefore, segAfter := h.BeforeAfter(k, len(h.Points))
			out = append(out, Regression{Series: si.Key, Workload: si.Workload, Metric: m, Unit: h.Unit,
				RunID: cp.RunID, Index: cp.Index, Time: h.Points[cp.Index].Time,
				Before: cp.Before, After: cp.After, ChangePct: cp.ChangePct, PValue: cp.PValue,
				CompareURL: c.links.BeforeAfter(h, k),
				HistoryURL: c.links.History(si.Key, m, opts.WithoutDefaults()),
				BeforeRuns: segBefore, AfterRuns: segAfter})
			befores = append(befores, before)
			ids = append(ids, before, cp.RunID)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	meta, err := c.src.RunsMeta(ctx, ids)
	if err != nil {
		return nil, err
	}
	// The series' newest run names it, read only for series that
	// regressed.
	heads, err := c.src.SeriesHeads(ctx, []uint{si.MaxID})
	if err != nil {
		return nil, err
	}
	name := ""
	if h, ok := heads[si.MaxID]; ok {
		name = c.links.SeriesName(si.Key, h.Label, string(h.Workload), h.Spec)
	}
	for i := range out {
		out[i].CommitBefore = history.Commit(meta[befores[i]])
		out[i].CommitAfter = history.Commit(meta[out[i].RunID])
		out[i].Name = name
	}
	return out, nil
}

// Over is the regressions of at least threshold percent found with
// opts, newest first.
func (c *Cache) Over(ctx context.Context, opts changepoint.Options, threshold float64) ([]Regression, error) {
	all, err := c.All(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := []Regression{}
	for _, r := range all {
		if math.Abs(r.ChangePct) >= threshold {
			out = append(out, r)
		}
	}
	return out, nil
}

// Default is the regressions badges and notifications are about: those
// of the default detection and threshold, newest first.
func (c *Cache) Default(ctx context.Context) ([]Regression, error) {
	return c.Over(ctx, changepoint.Options{}, DefaultThreshold)
}

// ByRun maps each run at which its series regressed (Default) to those
// regressions: the badges.
func (c *Cache) ByRun(ctx context.Context) (map[uint][]Regression, error) {
	regs, err := c.Default(ctx)
	if err != nil {
		return nil, err
	}
	at := make(map[uint][]Regression, len(regs))
	for _, r := range regs {
		at[r.RunID] = append(at[r.RunID], r)
	}
	return at, nil
}
