// One profile: GET /profiles/:id, GET /api/profiles/:id/flamegraph and
// GET /api/profiles/:id/writepaths.

package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// flameGraph answers GET /api/profiles/:id/flamegraph: the tree as JSON, or
// with format=compact the flat encoding the browser draws from.
func (s *Server) flameGraph(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	format := c.DefaultQuery("format", "tree")
	if format != "tree" && format != "compact" {
		s.fail(c, badInput("format", "must be tree or compact"))
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

func (s *Server) writePaths(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, profiles.WritePaths(lp.prof, idx))
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
	wp := uiWritePaths(profiles.WritePaths(lp.prof, idx))
	v := ui.NewProfileView(s.uiMeta(c.Request.Context(), lp.meta), sampleNames(lp.prof), st.Type+"/"+st.Unit, c.Query("focus"), c.Query("search"), wp)
	title := v.Page.Title
	v.Page = s.page(c, title)
	s.render(c, http.StatusOK, "profile", v)
}
