package server

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
	"github.com/kbench/kbench/internal/store"
)

// histogramQuery is what GET /api/runs/:id/histograms selects: kinds
// (none: every kind), a scope ("": both) and the answer's format.
type histogramQuery struct {
	kinds []string
	scope string
	hlog  bool
}

// parseHistogramQuery reads ?kind= (repeatable, or comma-separated),
// ?scope= and ?format=, each refused with a 400 naming it when it is
// not one the API knows.
func parseHistogramQuery(c *gin.Context) (histogramQuery, error) {
	var q histogramQuery
	for _, v := range c.QueryArray("kind") {
		for k := range strings.SplitSeq(v, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			if !rundoc.ValidHistogramKind(k) {
				return q, badInput("kind", "%q is not a kind of histogram (%s)", k, strings.Join(rundoc.HistogramKinds, ", "))
			}
			q.kinds = append(q.kinds, k)
		}
	}
	switch q.scope = c.Query("scope"); q.scope {
	case "", rundoc.HistogramWindow, rundoc.HistogramInterval:
	default:
		return q, badInput("scope", "%q is neither %s nor %s", q.scope, rundoc.HistogramWindow, rundoc.HistogramInterval)
	}
	switch f := c.Query("format"); f {
	case "", "json":
	case "hlog":
		q.hlog = true
	default:
		return q, badInput("format", "%q is neither json nor hlog", f)
	}
	return q, nil
}

// selected reports whether h is one q asks for.
func (q histogramQuery) selected(h rundoc.Histogram) bool {
	return (len(q.kinds) == 0 || slices.Contains(q.kinds, h.Kind)) && (q.scope == "" || q.scope == h.Scope)
}

// apiRunHistograms answers a run's latency histograms: the measured
// window's of each kind and the intervals of its histogram log, as JSON
// or, with ?format=hlog, as an HdrHistogram log (the intervals, or the
// window's with scope=window: a log of both would count every value
// twice for the tools that read it).
func (s *Server) apiRunHistograms(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := parseHistogramQuery(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	if _, err := s.store.GetRunsParts(ctx, []uint{id}, store.RunParts{}); err != nil {
		s.fail(c, err)
		return
	}
	if q.hlog && q.scope == "" {
		q.scope = rundoc.HistogramInterval
	}
	var hs []rundoc.Histogram
	// The log's start time, when the intervals are read; a log of the
	// window's histograms has none (their times are the window's own).
	var start time.Time
	if q.scope != rundoc.HistogramInterval {
		byRun, err := s.store.RunsHistograms(ctx, []uint{id}, q.kinds...)
		if err != nil {
			s.fail(c, err)
			return
		}
		hs = byRun[id]
	}
	if q.scope != rundoc.HistogramWindow {
		log, err := s.store.RunHistogramLog(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			s.fail(c, err)
			return
		default:
			var intervals []rundoc.Histogram
			start, intervals, err = runhist.ReadLog(bytes.NewReader(log))
			if err != nil {
				s.fail(c, fmt.Errorf("server: run %d: stored %w", id, err))
				return
			}
			for _, h := range intervals {
				if q.selected(h) {
					hs = append(hs, h)
				}
			}
		}
	}
	if q.hlog {
		if len(hs) == 0 {
			s.fail(c, fmt.Errorf("run %d has no %s histograms of that kind (it measured no latency, or ran before kbench kept them): %w",
				id, q.scope, errNotFound))
			return
		}
		var buf bytes.Buffer
		if err := runhist.WriteLog(&buf, start, hs); err != nil {
			s.fail(c, err)
			return
		}
		c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="run-%d-%s.hlog"`, id, q.scope))
		c.Data(http.StatusOK, "text/plain; charset=utf-8", buf.Bytes())
		return
	}
	if hs == nil {
		hs = []rundoc.Histogram{}
	}
	c.JSON(http.StatusOK, client.RunHistograms{Run: id, Unit: rundoc.HistogramUnit, Encoding: rundoc.HistogramEncoding,
		Lowest: rundoc.HistogramLowest, Highest: rundoc.HistogramHighest, Digits: rundoc.HistogramDigits, Histograms: hs})
}
