// pprof's own web UI: /profiles/:id/pprof/… and /diff/:base/:target/pprof/….

package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/profiles"
)

// pprofUI serves the full pprof web UI of one stored profile under
// /profiles/:id/pprof/.
func (s *Server) pprofUI(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	prefix := fmt.Sprintf("/profiles/%d/pprof", id)
	lp, err := s.loadProfile(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if lp.meta.Uploaded && readsServerFiles(c.Request.URL.Path) {
		s.fail(c, badInput("path", "the source and disassembly views are off for uploaded profiles: they would read files the profile names from this server's disk"))
		return
	}
	s.servePprof(c, prefix, "profile/"+strconv.Itoa(int(id)), func() (*profile.Profile, error) {
		return lp.fresh() // the driver keeps and changes what it is given
	})
}

// pprofDiffUI serves pprof's UI for base − target built like
// `go tool pprof -diff_base`, under /diff/:base/:target/pprof/.
func (s *Server) pprofDiffUI(c *gin.Context) {
	var ids [2]uint
	for i, name := range []string{"base", "target"} {
		id, err := strconv.ParseUint(c.Param(name), 10, 32)
		if err != nil || id == 0 {
			s.fail(c, errNotFound)
			return
		}
		ids[i] = uint(id)
	}
	prefix := fmt.Sprintf("/diff/%d/%d/pprof", ids[0], ids[1])
	if readsServerFiles(c.Request.URL.Path) {
		s.fail(c, badInput("path", "the source and disassembly views are not offered for diffs"))
		return
	}
	s.servePprof(c, prefix, fmt.Sprintf("diff/%d/%d", ids[0], ids[1]), func() (*profile.Profile, error) {
		base, err := s.loadProfile(c.Request.Context(), ids[0])
		if err != nil {
			return nil, err
		}
		target, err := s.loadProfile(c.Request.Context(), ids[1])
		if err != nil {
			return nil, err
		}
		if err := sameSampleTypes(base, target); err != nil {
			return nil, err
		}
		bp, err := base.fresh()
		if err != nil {
			return nil, err
		}
		tp, err := target.fresh()
		if err != nil {
			return nil, err
		}
		d, err := profiles.DiffProfile(bp, tp, 1)
		if err != nil {
			// Profiles of other sample types (a CPU against a heap
			// profile): the request's fault, not the server's.
			return nil, badInput("target", "%v", err)
		}
		return d, nil
	})
}

// readsServerFiles: pprof's source and disassembly views open the files
// and binaries a profile names.
func readsServerFiles(path string) bool {
	return strings.HasSuffix(path, "/source") || strings.HasSuffix(path, "/disasm")
}

func (s *Server) servePprof(c *gin.Context, prefix, key string, load func() (*profile.Profile, error)) {
	if c.Request.URL.Path == prefix {
		// pprof's links are relative: they need the trailing slash.
		c.Redirect(http.StatusMovedPermanently, prefix+"/")
		return
	}
	h, err := s.pprof.Handler(key, load)
	if err != nil {
		s.fail(c, err)
		return
	}
	http.StripPrefix(prefix, h).ServeHTTP(c.Writer, c.Request)
}
