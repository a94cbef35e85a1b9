// pprof's own web UI: /profiles/:id/pprof/… and /diff/:base/:target/pprof/….

package server

import (
	"fmt"
	"net/http"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
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
	if view, ok := readsServerFiles(c.Request.URL.Path); ok {
		s.pprofLocalPage(c, view, lp.meta, nil, prefix+"/")
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
	if view, ok := readsServerFiles(c.Request.URL.Path); ok {
		base, err := s.loadProfile(c.Request.Context(), ids[0])
		if err != nil {
			s.fail(c, err)
			return
		}
		target, err := s.loadProfile(c.Request.Context(), ids[1])
		if err != nil {
			s.fail(c, err)
			return
		}
		s.pprofLocalPage(c, view, target.meta, &base.meta, prefix+"/")
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

// readsServerFiles: pprof's source and disassembly views, which would
// open the files and binaries a profile names (profiles.UI does not serve
// them); view is "source" or "disasm".
func readsServerFiles(path string) (view string, ok bool) {
	for _, v := range profiles.PprofFileViews {
		if strings.HasSuffix(path, v) {
			return strings.TrimPrefix(v, "/"), true
		}
	}
	return "", false
}

// checkPivot vets pprof's p= parameter (its flame graph's pivots), the
// one expression from a URL that pprof's pages run in the browser, with
// JavaScript's backtracking regexps: a shared link with p=^(.+)+#$ would
// freeze the reader's tab. Only what pprof's own links hold is accepted:
// literal frame names, anchored, joined by | (pprofQuoteMeta), with no
// repetition at all, so no expression can backtrack. A pivot typed in
// pprof's search box never reaches the server (pprof changes the URL in
// the page), so this refuses only links.
func checkPivot(p string) error {
	if p == "" {
		return nil
	}
	if len(p) > maxSearchLen {
		return badInput("p", "must be at most %d bytes, not %d", maxSearchLen, len(p))
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err == nil && !hasRepeat(re) {
		return nil
	}
	return badInput("p", "a pivot in a link must be frame names (^name$, joined by |) without repetition: "+
		"pprof's page would run it as a JavaScript regular expression, which can take minutes on a crafted one")
}

// hasRepeat reports whether re holds a repetition (*, +, ?, {n,m}).
func hasRepeat(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return true
	}
	for _, sub := range re.Sub {
		if hasRepeat(sub) {
			return true
		}
	}
	return false
}

// pprofLocalPage answers pprof's source and disassembly views, for every
// profile (a run's own as well as an upload) and every diff: a page saying
// that they need the program's source and binary, which are where it ran,
// with the commands that download the profile(s) and run pprof there.
func (s *Server) pprofLocalPage(c *gin.Context, view string, target profileMeta, base *profileMeta, back string) {
	origin := s.baseURL(c)
	dl := func(m profileMeta) ui.PprofProfile {
		return ui.PprofProfile{URL: origin + ui.ProfileDownloadURL(m.ID), File: profileFileName(&store.Profile{RunID: m.RunID,
			Role: rundoc.ProfileRole(m.Role), Kind: rundoc.ProfileKind(m.Kind)})}
	}
	var bp *ui.PprofProfile
	if base != nil {
		b := dl(*base)
		if b.File == dl(target).File { // one run's two profiles of a kind
			b.File = "base-" + b.File
		}
		bp = &b
	}
	v := ui.NewPprofLocalView(view, dl(target), bp, c.Query("f"), back)
	v.Page = s.page(c, v.Page.Title)
	s.render(c, http.StatusOK, "pprof_local", v)
}

func (s *Server) servePprof(c *gin.Context, prefix, key string, load func() (*profile.Profile, error)) {
	if err := checkPivot(c.Query("p")); err != nil {
		s.fail(c, err)
		return
	}
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
