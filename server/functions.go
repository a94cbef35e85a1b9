// The functions that moved at a change: each change point of
// /api/history and /history, each regression of /api/regressions and
// /regressions, and GET /api/functions (kbench check's baseline against
// its candidates) name them through Config.Functions (package
// internal/regressions/funcs), which computes them in the background.
// An answer or page that says "computing" for some change is not cached,
// so that asking again shows them.

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/profileset"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// volatileAnswer is a JSON answer cachedJSON serves but does not keep:
// it says "computing" for some change's functions.
type volatileAnswer struct{ v any }

func (a volatileAnswer) MarshalJSON() ([]byte, error) { return json.Marshal(a.v) }

// historyFunctions fills in the functions of the trusted change points
// of a (built from h by newAPIHistory, tentative ones apart and in
// order) and of the page's rows v (nil for the API), and reports whether
// one is still being computed.
func (s *Server) historyFunctions(ctx context.Context, h history.History, a *apiHistory, v *ui.HistoryView) (computing bool, err error) {
	if s.functions == nil {
		return false, nil
	}
	i := 0
	for k, c := range h.ChangePoints {
		if c.Tentative {
			continue
		}
		before, after := h.BeforeAfter(k, len(h.Points))
		f, err := s.functions.Lookup(ctx, before, after)
		if err != nil {
			return false, err
		}
		computing = computing || f.Status == wire.FunctionsComputing
		if a != nil && i < len(a.ChangePoints) {
			a.ChangePoints[i].Functions, a.ChangePoints[i].FunctionNaming = f.Functions, &f.FunctionNaming
		}
		if v != nil && k < len(v.Changes) {
			v.Changes[k].Functions = ui.NewFunctionsCell(f.Functions, &f.FunctionNaming)
		}
		i++
	}
	return computing, nil
}

// regressionFunctions names the functions of each of regs into out (the
// API's, nil for none) and rows (the page's, nil for none), and reports
// whether one is still being computed.
func (s *Server) regressionFunctions(ctx context.Context, regs []regressions.Regression, out []regressions.APIRegression, rows []ui.RegressionRow) (computing bool, err error) {
	if s.functions == nil {
		return false, nil
	}
	for i, r := range regs {
		f, err := s.functions.Regression(ctx, r)
		if err != nil {
			return false, err
		}
		computing = computing || f.Status == wire.FunctionsComputing
		if i < len(out) {
			out[i].Functions, out[i].FunctionNaming = f.Functions, &f.FunctionNaming
		}
		if i < len(rows) {
			rows[i].Functions = ui.NewFunctionsCell(f.Functions, &f.FunctionNaming)
		}
	}
	return computing, nil
}

// apiFunctions answers GET /api/functions?base_runs=ID,…&target_runs=ID,…
// (each side in time order, at most 50 runs): the functions that moved
// from the base runs to the target runs, compared as a change point's
// segments are (the nearest 25 of each side with a CPU profile of the
// client), or status "computing" until they are named. kbench check asks
// it for its baseline against its candidates.
func (s *Server) apiFunctions(c *gin.Context) {
	q := c.Request.URL.Query()
	base, err := parseFunctionRuns("base_runs", q.Get("base_runs"))
	if err != nil {
		s.fail(c, err)
		return
	}
	target, err := parseFunctionRuns("target_runs", q.Get("target_runs"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.functions == nil {
		s.fail(c, fmt.Errorf("this server names no functions: %w", store.ErrNotFound))
		return
	}
	f, err := s.functions.Lookup(c.Request.Context(), base, target)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(200, f)
}

// parseFunctionRuns reads a side of GET /api/functions as a run-set
// diff's (profileset.ParseIDs: at most 50 run ids), each run once.
func parseFunctionRuns(field, v string) ([]uint, error) {
	ids, err := profileset.ParseIDs(field, v)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return nil, badInput(field, "names run %d twice", id)
		}
	}
	return ids, nil
}
