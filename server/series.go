// The index of every series: GET /series.

package server

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/seriescache"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// sparklineRuns is how many of a series' newest runs its sparkline draws.
const sparklineRuns = 60

// seriesIndexCache keeps each series' row of /series while its signature
// (store.SeriesInfo) is unchanged (seriescache, as the regressions cache
// does): a write costs the SeriesInfos of the series it touched and
// their rows, not a read of every run.
type seriesIndexCache struct {
	mu   sync.Mutex
	rows seriescache.Cache[seriesIndexRow]
}

type seriesIndexRow struct {
	row ui.SeriesRow
	// newest is the newest point's time, for the order of the index.
	newest int64
}

// seriesRows returns every series' row, the most recently run first.
func (s *Server) seriesRows(ctx context.Context) ([]ui.SeriesRow, error) {
	c := &s.seriesIndex
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.rows.Update(ctx, s.store, func(ctx context.Context, todo []store.SeriesInfo) ([]seriesIndexRow, error) {
		// The newest run of each series names it: one read for all of
		// them.
		ids := make([]uint, len(todo))
		for i, si := range todo {
			ids[i] = si.MaxID
		}
		heads, err := s.store.SeriesHeads(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make([]seriesIndexRow, len(todo))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(runtime.GOMAXPROCS(0))
		for i, si := range todo {
			g.Go(func() error {
				var err error
				out[i], err = s.seriesIndexRow(gctx, si, heads[si.MaxID])
				return err
			})
		}
		return out, g.Wait()
	})
	if err != nil {
		return nil, err
	}
	return sortedSeriesRows(&c.rows), nil
}

func sortedSeriesRows(rows *seriescache.Cache[seriesIndexRow]) []ui.SeriesRow {
	all := make([]seriesIndexRow, 0, rows.Len())
	for _, r := range rows.All() {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b seriesIndexRow) int {
		return cmp.Or(cmp.Compare(b.newest, a.newest), cmp.Compare(a.row.Key, b.row.Key))
	})
	out := make([]ui.SeriesRow, len(all))
	for i, r := range all {
		out[i] = r.row
	}
	return out
}

// seriesIndexRow builds one series' row: its headline metric (the first
// of its workload's that its runs hold), read for that series alone
// without environments or metadata, and its history by the default
// detection.
func (s *Server) seriesIndexRow(ctx context.Context, si store.SeriesInfo, head store.SeriesHead) (seriesIndexRow, error) {
	var out seriesIndexRow
	row := ui.SeriesRow{Key: si.Key, Workload: si.Workload, Runs: si.Runs,
		Name:       seriesHeadName(si.Key, head),
		HistoryURL: ui.HistoryURL(ui.HistoryQuery{Series: si.Key})}
	metrics := compare.HeadlineMetrics(si.Workload)
	runs, err := s.store.SeriesRunsMetrics(ctx, si.Key, metrics)
	if errors.Is(err, store.ErrNotFound) { // deleted since it was listed
		out.row = row
		return out, nil
	}
	if err != nil {
		return out, err
	}
	for _, m := range metrics {
		h := history.Build(runs, m, changepoint.Options{})
		n := len(h.Points)
		if n == 0 {
			continue
		}
		last := h.Points[n-1]
		row.Metric, row.Last = m, numfmt.Value(last.Value, h.Unit)
		row.SetLastTime(last.Time)
		out.newest = last.Time.UnixNano()
		row.HistoryURL = ui.HistoryURL(ui.HistoryQuery{Series: si.Key, Metric: m})
		from := max(0, n-sparklineRuns)
		values := make([]float64, 0, n-from)
		for _, p := range h.Points[from:] {
			values = append(values, p.Value)
		}
		var cps []int
		for _, c := range h.ChangePoints {
			if c.Index > from {
				cps = append(cps, c.Index-from)
			}
		}
		row.Sparkline = ui.Sparkline(values, cps, sparklineTitle(m, len(values)))
		if k := len(h.ChangePoints) - 1; k >= 0 {
			c := h.ChangePoints[k]
			row.Change = numfmt.SignedPercent(c.ChangePct) + " at #" + strconv.FormatUint(uint64(c.RunID), 10)
			if c.Direction != "" {
				row.ChangeClass = "delta-" + c.Direction
			}
			row.ChangeURL = ui.BeforeAfterURL(h, k)
			row.Tentative = c.Tentative
		}
		break
	}
	out.row = row
	return out, nil
}

// seriesPage renders GET /series, kept in the page cache until the next
// write to the store.
func (s *Server) seriesPage(c *gin.Context) {
	ctx := c.Request.Context()
	s.cachedRender(c, "series", func(csrf string) (string, any, error) {
		rows, err := s.seriesRows(ctx)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewSeriesView(rows)
		v.Page.CSRF = csrf
		return "series", v, nil
	})
}

// seriesName names series as /series does (ui.SeriesName, from its newest
// run), "" when it has no succeeded run.
func (s *Server) seriesName(ctx context.Context, series string) (string, error) {
	infos, err := s.store.SeriesInfos(ctx, []string{series})
	if err != nil || len(infos) == 0 {
		return "", err
	}
	return s.headName(ctx, infos[0])
}

// headName names series si from its newest run, "" when that run is gone.
func (s *Server) headName(ctx context.Context, si store.SeriesInfo) (string, error) {
	heads, err := s.store.SeriesHeads(ctx, []uint{si.MaxID})
	if err != nil {
		return "", err
	}
	h, ok := heads[si.MaxID]
	if !ok {
		return "", nil
	}
	return seriesHeadName(si.Key, h), nil
}

// seriesHeadName is the name of series key whose newest run is head.
func seriesHeadName(key string, head store.SeriesHead) string {
	return ui.SeriesName(key, head.Label, string(head.Workload), head.Spec)
}

// sparklineTitle says what a sparkline draws: "record-send-rate over the
// newest 60 runs".
func sparklineTitle(metric string, n int) string {
	if n == 1 {
		return metric + " of the one run"
	}
	return metric + " over the newest " + strconv.Itoa(n) + " runs"
}
