// One profile: GET /profiles/:id, GET /api/profiles/:id/flamegraph and
// GET /api/profiles/:id/writepaths.

package server

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// flameGraph answers GET /api/profiles/:id/flamegraph: the tree as JSON;
// with format=compact the whole tree flattened; with format=pruned the
// frames of one view (focus, width) that are wide enough to draw, which
// the profile page draws from; with format=match only a search's totals.
func (s *Server) flameGraph(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	format := c.DefaultQuery("format", "tree")
	switch format {
	case "tree", "compact":
	case "pruned", "match":
		s.flameView(c, lp, idx, format)
		return
	default:
		s.fail(c, badInput("format", "must be tree, compact, pruned or match"))
		return
	}
	// Stored profiles never change, so neither does their flame graph:
	// building and encoding a large one costs ~150 ms, compressing it
	// ~0.1 s, serving it again nothing.
	key := fmt.Sprintf("%d/%d/%s", lp.meta.ID, idx, format)
	if body, ok := s.flames.Get(key); ok {
		s.serveEncoded(c, body)
		return
	}
	tree := profiles.BuildTree(lp.prof, idx)
	st := lp.prof.SampleType[idx]
	resp := gin.H{"profile": lp.meta, "sample_types": sampleTypes(lp.prof), "sample": st.Type, "unit": st.Unit, "total": tree.Value}
	if format == "compact" {
		resp["compact"] = tree.Compact()
	} else {
		resp["tree"] = tree
	}
	body, err := json.Marshal(resp)
	if err != nil {
		s.fail(c, fmt.Errorf("server: encode flame graph: %w", err))
		return
	}
	eb := newEncodedBody("application/json; charset=utf-8", body)
	s.flames.Add(key, eb)
	s.serveEncoded(c, eb)
}

// defaultPruneWidth is the width (CSS pixels) the profile page's first
// view is cut for: pages are at most 1200 px wide, so the canvas is
// narrower. A wider canvas asks for its own width.
const defaultPruneWidth = 1200

// flameView answers format=pruned (the view at focus, cut for width
// pixels, with the totals of search when one is given) and format=match
// (the totals only; search required).
func (s *Server) flameView(c *gin.Context, lp *loadedProfile, idx int, format string) {
	width := defaultPruneWidth
	if v, ok := c.GetQuery("width"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > profiles.MaxPruneWidth {
			s.fail(c, badInput("width", "must be a whole number of pixels from 1 to %d", profiles.MaxPruneWidth))
			return
		}
		width = n
	}
	re, err := compileSearch(c.Query("search"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if re == nil && format == "match" {
		s.fail(c, badInput("search", "required with format=match"))
		return
	}
	body, err := json.Marshal(flameViewAnswer(lp, idx, format, profiles.SplitFocus(c.Query("focus")), width, re))
	if err != nil {
		s.fail(c, fmt.Errorf("server: encode flame graph: %w", err))
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}

// flameViewAnswer is the body of a format=pruned or format=match answer.
func flameViewAnswer(lp *loadedProfile, idx int, format string, focus []string, width int, re *regexp.Regexp) gin.H {
	f := lp.flat(idx)
	st := lp.prof.SampleType[idx]
	resp := gin.H{"sample": st.Type, "unit": st.Unit, "total": f.Total()}
	if format == "pruned" {
		resp["profile"] = lp.meta
		resp["sample_types"] = sampleTypes(lp.prof)
		resp["pruned"] = f.Pruned(focus, width)
	}
	if re != nil {
		resp["match"] = f.Match(re, focus)
		resp["matched_names"] = f.MatchNames(re)
	}
	return resp
}

// maxSearchLen bounds a search's length in bytes: a flame graph's search
// names a function or a few, and a longer expression is no search.
const maxSearchLen = 1000

// compileSearch reads a flame graph's search ("" for none: nil): Go's RE2
// syntax, whose matching takes time linear in the names searched, so no
// expression, shared in a link, can stall the server. The pages never run
// the expression themselves; they ask for the names it matches.
func compileSearch(q string) (*regexp.Regexp, error) {
	if q == "" {
		return nil, nil
	}
	if len(q) > maxSearchLen {
		return nil, badInput("search", "must be at most %d bytes, not %d", maxSearchLen, len(q))
	}
	re, err := regexp.Compile(q)
	if err != nil {
		return nil, badInput("search", "not a regular expression in Go's RE2 syntax (no look-around or back-references): %v", err)
	}
	return re, nil
}

func (s *Server) writePaths(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, lp.writePaths(idx))
}

func uiWritePaths(r profiles.WritePathReport) *ui.WritePaths {
	w := &ui.WritePaths{Total: float64(r.Total), Unit: r.Unit}
	for _, row := range r.Rows {
		w.Rows = append(w.Rows, ui.WritePathRow{Direction: row.Direction, Path: row.Path, Value: float64(row.Value),
			Samples: row.Samples, Percent: row.Percent, Frames: row.Frames})
	}
	return w
}

// profilePage is /profiles/:id: the flame graph with its sample-type
// picker, search and zoom kept in the URL, and the write-path panel.
func (s *Server) profilePage(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	st := lp.prof.SampleType[idx]
	wp := uiWritePaths(lp.writePaths(idx))
	v := ui.NewProfileView(s.uiMeta(c.Request.Context(), lp.meta), sampleNames(lp.prof), st.Type+"/"+st.Unit, c.Query("focus"), c.Query("search"), wp)
	// The first view goes into the page: the graph draws without a
	// request. A search the server cannot read is drawn without it; the
	// page asks again and shows the server's error.
	re, _ := compileSearch(c.Query("search"))
	if body, err := json.Marshal(flameViewAnswer(lp, idx, "pruned", profiles.SplitFocus(c.Query("focus")), defaultPruneWidth, re)); err == nil {
		v.FlameGraph.Initial = template.JS(body)
	}
	title := v.Page.Title
	v.Page = s.page(c, title)
	s.render(c, http.StatusOK, "profile", v)
}
