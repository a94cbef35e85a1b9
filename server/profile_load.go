// Loading and describing stored profiles, shared by the profile handlers.

package server

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// profileMeta is a profile as the API names it (client's).
type profileMeta = client.ProfileMeta

func metaOf(p *store.Profile) profileMeta {
	return profileMeta{ID: p.ID, RunID: p.RunID, Role: string(p.Role), Kind: string(p.Kind), Bytes: p.Bytes, Samples: p.Samples, Uploaded: p.Uploaded}
}

// loadedProfile is a stored profile, parsed. prof is shared by every
// request and must only be read: even profile.Copy writes to the profile
// it copies (it encodes it first), so whoever needs to change or hand one
// over takes fresh().
type loadedProfile struct {
	meta profileMeta
	data []byte
	prof *profile.Profile

	// flats holds the flame graph of each sample type shown so far, by
	// sample index, flattened for cutting views (profiles.Flat): building
	// a large one costs ~0.1 s, cutting a view from it ~1 ms. The parsed
	// cache bounds how many are kept.
	flatMu sync.Mutex
	flats  map[int]*profiles.Flat
	// views holds the graphs built with filters or another order
	// (viewFlat), bounded by maxViewFlats.
	views map[string]*profiles.Flat
	// labels are the profile's string labels (profiles.Labels), listed
	// once: every rows answer carries them.
	labels map[string][]string
	// variants are the raw frame names merged under each normalised one
	// (profiles.NameVariants), for the tooltip; variantsDone says they
	// were listed (nil is a valid answer: nothing was rewritten).
	variants     map[string][]string
	variantsDone bool
	// wps holds the write-path report of each sample index shown: the
	// profile page shows it on every visit.
	wps map[int]profiles.WritePathReport
}

// writePaths returns the write-path report of sample index idx, built once.
func (lp *loadedProfile) writePaths(idx int) profiles.WritePathReport {
	lp.flatMu.Lock()
	defer lp.flatMu.Unlock()
	if r, ok := lp.wps[idx]; ok {
		return r
	}
	r := profiles.WritePaths(lp.prof, idx)
	if lp.wps == nil {
		lp.wps = map[int]profiles.WritePathReport{}
	}
	lp.wps[idx] = r
	return r
}

// flat returns the flattened flame graph of sample index idx, built once.
func (lp *loadedProfile) flat(idx int) *profiles.Flat {
	lp.flatMu.Lock()
	defer lp.flatMu.Unlock()
	if f, ok := lp.flats[idx]; ok {
		return f
	}
	f := profiles.NewFlat(profiles.BuildTree(lp.prof, idx), profiles.OrderName)
	if lp.flats == nil {
		lp.flats = map[int]*profiles.Flat{}
	}
	lp.flats[idx] = f
	return f
}

// fresh parses the stored bytes again: a private profile to modify.
func (lp *loadedProfile) fresh() (*profile.Profile, error) { return profiles.Load(lp.data) }

// loadProfile parses a stored profile, through a small cache: stored
// profiles never change, and parsing a large one costs far more than
// building its flame graph. Concurrent first requests for one profile
// share one parse; it outlives a request that goes away meanwhile
// (context.WithoutCancel), so the others still get it.
func (s *Server) loadProfile(ctx context.Context, id uint) (*loadedProfile, error) {
	if lp, ok := s.parsed.Get(id); ok {
		return lp, nil
	}
	v, err, _ := s.parsing.Do(strconv.FormatUint(uint64(id), 10), func() (any, error) {
		// Parsed and cached between the miss above and this flight?
		if lp, ok := s.parsed.Get(id); ok {
			return lp, nil
		}
		sp, err := s.store.GetProfile(context.WithoutCancel(ctx), id)
		if err != nil {
			return nil, err
		}
		p, err := profiles.Load(sp.Data)
		if err != nil {
			return nil, fmt.Errorf("server: stored profile %d: %w", id, err)
		}
		lp := &loadedProfile{meta: metaOf(sp), data: sp.Data, prof: p}
		s.parsed.Add(id, lp)
		return lp, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*loadedProfile), nil
}

// profileSample loads the profile named by the :id parameter and picks the
// sample type named by ?sample= (the profile's default when absent).
func (s *Server) profileSample(c *gin.Context) (*loadedProfile, int, error) {
	id, err := parseID(c)
	if err != nil {
		return nil, 0, err
	}
	lp, err := s.loadProfile(c.Request.Context(), id)
	if err != nil {
		return nil, 0, err
	}
	idx, err := profiles.PickSample(lp.prof, c.Query("sample"))
	if err != nil {
		return nil, 0, badInput("sample", "%v", err)
	}
	return lp, idx, nil
}

// sampleType is one of a profile's sample values as the API names it.
type sampleType = client.SampleType

func sampleTypes(p *profile.Profile) []sampleType {
	out := make([]sampleType, 0, len(p.SampleType))
	for _, st := range p.SampleType {
		out = append(out, sampleType{Type: st.Type, Unit: st.Unit})
	}
	return out
}

func (s *Server) uiMeta(ctx context.Context, m profileMeta) ui.ProfileMeta {
	label := ""
	if runs, _, err := s.store.ListRuns(ctx, store.RunFilter{IDs: []uint{m.RunID}, Limit: 1}); err == nil && len(runs) == 1 {
		label = runs[0].Label
	}
	return ui.ProfileMeta{ID: m.ID, RunID: m.RunID, RunLabel: label, Role: m.Role, Kind: m.Kind, Bytes: m.Bytes, Samples: m.Samples}
}

func sampleNames(p *profile.Profile) []string {
	out := make([]string, 0, len(p.SampleType))
	for _, st := range p.SampleType {
		out = append(out, st.Type+"/"+st.Unit)
	}
	return out
}
