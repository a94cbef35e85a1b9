// One profile: GET /profiles/:id, GET /api/profiles/:id/flamegraph and
// GET /api/profiles/:id/writepaths.

package server

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// flameGraph answers GET /api/profiles/:id/flamegraph: with format=rows
// the frames of one view cut to a width (see profile_rows.go), which
// every page draws from; with format=tree (the default) the whole tree as
// nested JSON and with format=compact flattened, both deprecated.
func (s *Server) flameGraph(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	format := c.DefaultQuery("format", "tree")
	switch format {
	case "tree", "compact":
	case "rows":
		s.serveProfileRows(c, lp, idx)
		return
	default:
		s.fail(c, badInput("format", "must be rows, tree or compact"))
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

// maxSearchLen bounds a search's length in bytes: a flame graph's search
// names a function or a few, and a longer expression is no search.
const maxSearchLen = 1000

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
// picker, search, zoom, filters and order kept in the URL, and the
// write-path panel. A legacy focus= that is a zoom path of the graph
// redirects to zoom=.
func (s *Server) profilePage(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if legacyZoom(c, nil, func(path string) bool { return lp.flat(idx).Resolves(profiles.SplitZoom(path)) }) {
		return
	}
	st := lp.prof.SampleType[idx]
	wp := uiWritePaths(lp.writePaths(idx))
	q := c.Request.URL.Query()
	v := ui.NewProfileView(s.uiMeta(c.Request.Context(), lp.meta), sampleNames(lp.prof), st.Type+"/"+st.Unit, q.Get("zoom"), q.Get("search"), wp)
	v.Filters = ui.NewFilterBar(q, lp.stringLabels(), "zoom", "search")
	v.FlameGraph.DataURL = withGraphView(ui.WithView(v.FlameGraph.DataURL, q), q)
	// The first view goes into the page: the graph draws without a
	// request. With parameters the server cannot read there is none: the
	// page asks and shows the server's 400, which names the parameter.
	if view, err := readView(pageGraphQuery(q)); err == nil {
		if a, err := profileRows(lp, idx, view); err == nil {
			if body, err := json.Marshal(a); err == nil {
				v.FlameGraph.Initial = template.JS(body)
			}
		}
	}
	title := v.Page.Title
	v.Page = s.page(c, title)
	s.render(c, http.StatusOK, "profile", v)
}
