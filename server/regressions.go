// Regressions across every series: GET /regressions (the page) and
// GET /api/regressions, and the badges of runs at which their series
// regressed. The list is the regressions cache's (internal/regressions).

package server

import (
	"context"
	"math"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

// parseRegressionsQuery reads threshold (percent, default 5) and the
// detector's parameters as a history takes them; every bad field is
// reported at once, named.
func parseRegressionsQuery(q url.Values) (ui.RegressionsQuery, error) {
	var errs rundoc.FieldErrors
	rq := ui.RegressionsQuery{Threshold: regressions.DefaultThreshold}
	if v := q.Get("threshold"); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || t < 0 || math.IsInf(t, 0) || math.IsNaN(t) {
			errs.Add("threshold", "%q: want a percentage at least 0 (default %g)", v, regressions.DefaultThreshold)
		}
		rq.Threshold = t
	}
	rq.Options = parseDetectOptions(q, &errs, minSegmentFloor)
	return rq, errs.Err()
}

// regressionsOf is the regressions q asks for: those of at least its
// threshold, newest first.
func (s *Server) regressionsOf(ctx context.Context, q ui.RegressionsQuery) ([]regressions.Regression, error) {
	return s.regressions.Over(ctx, q.Options, q.Threshold)
}

// regressedRuns maps each run at which its series regressed (by the
// default detection and threshold) to those regressions: the badges.
func (s *Server) regressedRuns(ctx context.Context) (map[uint][]regressions.Regression, error) {
	return s.regressions.ByRun(ctx)
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
		out := make([]regressions.APIRegression, 0, len(regs))
		for _, r := range regs {
			out = append(out, regressions.NewAPIRegression(r))
		}
		if computing, err := s.regressionFunctions(ctx, regs, out, nil); err != nil || computing {
			return volatileAnswer{client.Regressions{Regressions: out}}, err
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
		if v.Computing, err = s.regressionFunctions(ctx, regs, nil, v.Rows); err != nil {
			return "", nil, err
		}
		v.Page.CSRF = csrf
		return "regressions", v, nil
	})
}
