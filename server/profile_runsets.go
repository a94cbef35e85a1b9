// The merged sides of a run-set comparison: GET /api/diff/profile.pb.gz
// and pprof's UI of their difference, /diff/runs/…/pprof/.

package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"
	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/profileset"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// mergedSide returns side ("base" or "target") of a comparison as one
// pprof profile: profiles.MergeRuns of fresh copies of its runs' profiles
// with the comparison's scales.
func (s *Server) mergedSide(ctx context.Context, cmp *comparison, side string) (*profile.Profile, error) {
	bs, ts, err := profiles.RunScales(cmp.base, cmp.target)
	if err != nil {
		return nil, badInput("base_runs", "%v", err)
	}
	ms, ins, scales := cmp.set.Base, cmp.base, bs
	if side == "target" {
		ms, ins, scales = cmp.set.Target, cmp.target, ts
	}
	runs := slices.Clone(ins)
	for i, m := range ms {
		lp, err := s.loadProfile(ctx, m.ProfileID)
		if err != nil {
			return nil, err
		}
		// MergeRuns changes what it is given; the cached profile is shared.
		if runs[i].Prof, err = lp.fresh(); err != nil {
			return nil, err
		}
	}
	p, err := profiles.MergeRuns(runs, scales)
	if err != nil {
		return nil, badInput("base_runs", "%v", err)
	}
	return p, nil
}

// diffProfileDownload answers GET /api/diff/profile.pb.gz?side=base|target
// with the query of /api/diff: that side merged, as a gzipped pprof
// profile (values rounded per sample; see profiles.MergeRuns).
func (s *Server) diffProfileDownload(c *gin.Context) {
	side := c.Query("side")
	if side != "base" && side != "target" {
		s.fail(c, badInput("side", "must be base or target"))
		return
	}
	cmp, err := s.compareQuery(c, c.Query("normalize"))
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.mergedSide(c.Request.Context(), cmp, side)
	if err != nil {
		s.fail(c, err)
		return
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		s.fail(c, fmt.Errorf("server: write the merged %s profile: %w", side, err))
		return
	}
	ids := runIDs(cmp.set.Base)
	if side == "target" {
		ids = runIDs(cmp.set.Target)
	}
	name := fmt.Sprintf("kbench-%s-%s-%s-runs-%s.pb.gz", side, safeName(cmp.kind), safeName(cmp.role), joinDash(ids))
	c.Header("Content-Disposition", `attachment; filename="`+name+`"`)
	c.Data(http.StatusOK, "application/octet-stream", buf.Bytes())
}

// pprofRunSetsDiffUI serves pprof's UI of the merged target − the merged
// base under /diff/runs/:kind/:role/:base/:target/pprof/, the run ids
// comma-separated in the path (pprof's links keep the path, not the
// query). Like the pair form's, the sides are not normalised beyond the
// mean of their runs (normalize=none): pprof shows all sample types at
// once, and the page's normalisation is for one.
func (s *Server) pprofRunSetsDiffUI(c *gin.Context) {
	q := profileset.Query{Kind: c.Param("kind"), Role: c.Param("role")}
	var err error
	if q.BaseRuns, err = profileset.ParseIDs("base_runs", c.Param("base")); err != nil {
		s.fail(c, err)
		return
	}
	if q.TargetRuns, err = profileset.ParseIDs("target_runs", c.Param("target")); err != nil {
		s.fail(c, err)
		return
	}
	prefix := ui.DiffRunSetsPprofURL(q.BaseRuns, q.TargetRuns, q.Kind, q.Role)
	prefix = prefix[:len(prefix)-1]
	// The set is read on every request (one query; the profiles come
	// from the parse cache): pprof's handlers are cached by the profiles
	// merged, so a profile attached to a run later is not missed.
	set, err := profileset.Load(c.Request.Context(), s.store, s.parsedProfile, q)
	if err != nil {
		s.fail(c, err)
		return
	}
	cmp, err := s.normalized(set, "none")
	if err != nil {
		s.fail(c, err)
		return
	}
	if view, ok := readsServerFiles(c.Request.URL.Path); ok {
		base, err := s.loadProfile(c.Request.Context(), cmp.set.Base[0].ProfileID)
		if err != nil {
			s.fail(c, err)
			return
		}
		target, err := s.loadProfile(c.Request.Context(), cmp.set.Target[0].ProfileID)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.pprofLocalPage(c, view, target.meta, &base.meta, prefix+"/")
		return
	}
	key := fmt.Sprintf("diffruns/%v/%v", profileIDs(cmp.set.Base), profileIDs(cmp.set.Target))
	s.servePprof(c, prefix, key, func() (*profile.Profile, error) {
		bp, err := s.mergedSide(c.Request.Context(), cmp, "base")
		if err != nil {
			return nil, err
		}
		tp, err := s.mergedSide(c.Request.Context(), cmp, "target")
		if err != nil {
			return nil, err
		}
		d, err := profiles.DiffProfile(bp, tp, 1)
		if err != nil {
			return nil, badInput("target_runs", "%v", err)
		}
		return d, nil
	})
}

// parsedProfile is loadProfile as a profileset.Loader.
func (s *Server) parsedProfile(ctx context.Context, id uint) (*profile.Profile, error) {
	lp, err := s.loadProfile(ctx, id)
	if err != nil {
		return nil, err
	}
	return lp.prof, nil
}

// safeName keeps letters, digits, '-' and '_' of a name for a file name.
func safeName(s string) string {
	b := []byte(s)
	out := b[:0]
	for _, c := range b {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "profile"
	}
	return string(out)
}

func joinDash(ids []uint) string {
	var b bytes.Buffer
	for i, id := range ids {
		if i > 0 {
			b.WriteByte('-')
		}
		fmt.Fprint(&b, id)
	}
	return b.String()
}
