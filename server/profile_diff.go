// Two profiles compared: GET /api/diff and GET /compare/profiles.

package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/profileset"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// comparison is everything the diff endpoint and the compare page share:
// the two sides as run sets (the pair form, ?base=&target= profile ids,
// is a set of one profile a side), normalised.
type comparison struct {
	set             *profileset.Set
	base, target    []profiles.RunInput
	norm            profiles.Normalization
	kind, role      string
	sample, unit    string
	workAvailable   bool
	workUnavailable string
	// pair holds the two profiles of the pair form, nil for run sets.
	pair *[2]*loadedProfile
}

// compare loads two profiles as a set of one a side and works out the
// normalisation asked for. "work" divides by the records each run
// moved, so runs that did different amounts of work compare per record.
func (s *Server) compare(ctx context.Context, baseID, targetID uint, sample, normalize string) (*comparison, error) {
	base, err := s.loadProfile(ctx, baseID)
	if err != nil {
		return nil, err
	}
	target, err := s.loadProfile(ctx, targetID)
	if err != nil {
		return nil, err
	}
	if err := comparableKinds(base.meta, target.meta); err != nil {
		return nil, err
	}
	sb, err := profiles.PickSample(base.prof, sample)
	if err != nil {
		return nil, badInput("sample", "base: %v", err)
	}
	st, err := profiles.PickSample(target.prof, sample)
	if err != nil {
		return nil, badInput("sample", "target: %v", err)
	}
	// The difference of two sample types ("7.7 MiB / 390 ms", a CPU
	// profile against a heap profile) means nothing; nor does that of
	// each profile's own default (a heap profile's inuse_space against an
	// allocs profile's alloc_space). The report, A/B and write-path pages
	// draw their diffs from /api/diff, so they are refused here too.
	if b, t := base.prof.SampleType[sb], target.prof.SampleType[st]; b.Type != t.Type || b.Unit != t.Unit {
		return nil, badInput("target", "cannot compare %s (%s) of the %s profile #%d with %s (%s) of the %s profile #%d: different sample types; "+
			"compare profiles of one kind (CPU with CPU, heap with heap), or pick a sample type both have with sample=",
			b.Type, b.Unit, base.meta.Kind, base.meta.ID, t.Type, t.Unit, target.meta.Kind, target.meta.ID)
	}
	set, err := profileset.Pair(ctx, s.store,
		profileset.Member{RunID: base.meta.RunID, ProfileID: base.meta.ID, Prof: base.prof},
		profileset.Member{RunID: target.meta.RunID, ProfileID: target.meta.ID, Prof: target.prof}, sample)
	if err != nil {
		return nil, err
	}
	cmp, err := s.normalized(set, normalize)
	if err != nil {
		return nil, err
	}
	cmp.pair = &[2]*loadedProfile{base, target}
	cmp.kind, cmp.role = target.meta.Kind, target.meta.Role
	return cmp, nil
}

// compareRuns loads the run sets of a request's base_runs and
// target_runs: each run's profile of ?kind= and ?role=.
func (s *Server) compareRuns(c *gin.Context, normalize string) (*comparison, error) {
	q := profileset.Query{Kind: c.Query("kind"), Role: c.Query("role"), Sample: c.Query("sample")}
	var err error
	if q.BaseRuns, err = profileset.ParseIDs("base_runs", c.Query("base_runs")); err != nil {
		return nil, err
	}
	if q.TargetRuns, err = profileset.ParseIDs("target_runs", c.Query("target_runs")); err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	set, err := profileset.Load(ctx, s.store, s.parsedProfile, q)
	if err != nil {
		return nil, err
	}
	cmp, err := s.normalized(set, normalize)
	if err != nil {
		return nil, err
	}
	cmp.kind, cmp.role = q.Kind, q.Role
	return cmp, nil
}

// normalized turns a loaded set into a comparison with its normalisation.
func (s *Server) normalized(set *profileset.Set, normalize string) (*comparison, error) {
	cmp := &comparison{set: set}
	for _, m := range slices.Concat(set.Base, set.Target) {
		if m.WorkErr != nil && !errors.Is(m.WorkErr, profileset.ErrNoRecordCount) {
			s.log.Error("read a run's record count", "run", m.RunID, "err", m.WorkErr)
		}
	}
	reasons := set.WorkReasons()
	cmp.workAvailable = len(reasons) == 0
	if !cmp.workAvailable {
		cmp.workUnavailable = ui.Sentences(reasons)
		if normalize == "work" {
			return nil, badInput("normalize", "work is not available: %s", cmp.workUnavailable)
		}
	}
	var err error
	if cmp.base, cmp.target, cmp.norm, err = set.Inputs(normalize); err != nil {
		return nil, err
	}
	t := set.Target[0]
	st := t.Prof.SampleType[t.SampleIndex]
	cmp.sample, cmp.unit = st.Type, st.Unit
	return cmp, nil
}

// compareQuery is compare for a request: ?base_runs=&target_runs=&kind=
// &role= (run sets) or ?base=&target= (profile ids), with &sample=.
func (s *Server) compareQuery(c *gin.Context, normalize string) (*comparison, error) {
	if isRunSetQuery(c) {
		return s.compareRuns(c, normalize)
	}
	baseID, err := queryID(c, "base")
	if err != nil {
		return nil, err
	}
	targetID, err := queryID(c, "target")
	if err != nil {
		return nil, err
	}
	return s.compare(c.Request.Context(), baseID, targetID, c.Query("sample"), normalize)
}

// isRunSetQuery: the request names run sets, not two profiles.
func isRunSetQuery(c *gin.Context) bool {
	_, b := c.GetQuery("base_runs")
	_, t := c.GetQuery("target_runs")
	return b || t
}

// runIDs and profileIDs list a side's members.
func runIDs(ms []profileset.Member) []uint {
	out := make([]uint, len(ms))
	for i, m := range ms {
		out[i] = m.RunID
	}
	return out
}

func profileIDs(ms []profileset.Member) []uint {
	out := make([]uint, len(ms))
	for i, m := range ms {
		out[i] = m.ProfileID
	}
	return out
}

// sideWritePaths is a side's write-path report: its runs' reports summed.
func (s *Server) sideWritePaths(ms []profileset.Member) profiles.WritePathReport {
	reps := make([]profiles.WritePathReport, 0, len(ms))
	for _, m := range ms {
		reps = append(reps, profiles.WritePaths(m.Prof, m.SampleIndex))
	}
	return profiles.SumWritePaths(reps...)
}

// diff answers GET /api/diff: the differential tree with base and target
// values (each side the mean of its runs' normalised profiles), the
// functions that changed most and both write-path panels.
func (s *Server) diff(c *gin.Context) {
	cmp, err := s.compareQuery(c, c.Query("normalize"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if c.Query("format") == "rows" {
		s.diffRows(c, cmp)
		return
	}
	tree, err := profiles.DiffRuns(cmp.base, cmp.target)
	if err != nil {
		s.fail(c, badInput("base", "%v", err))
		return
	}
	skipped := cmp.set.Skipped
	if skipped == nil {
		skipped = []profileset.Skip{}
	}
	body := gin.H{
		"sample": cmp.sample, "unit": cmp.unit,
		"normalization": cmp.norm,
		"changes":       profiles.TopChangesRuns(cmp.base, cmp.target, 30),
		"write_paths": gin.H{
			"base":   s.sideWritePaths(cmp.set.Base),
			"target": s.sideWritePaths(cmp.set.Target),
		},
		"runs_base": runIDs(cmp.set.Base), "runs_target": runIDs(cmp.set.Target),
		"profiles_base": profileIDs(cmp.set.Base), "profiles_target": profileIDs(cmp.set.Target),
		"skipped": skipped, "kind": cmp.kind, "role": cmp.role,
	}
	if cmp.pair != nil {
		body["base"], body["target"] = cmp.pair[0].meta, cmp.pair[1].meta
	}
	if v := profiles.NameVariants(cmp.profiles()...); v != nil {
		body["name_variants"] = v
	}
	switch c.DefaultQuery("format", "tree") {
	case "tree":
		body["tree"] = tree
	case "compact":
		body["compact"] = tree.Compact()
	default:
		s.fail(c, badInput("format", "must be rows, tree or compact"))
		return
	}
	c.JSON(http.StatusOK, body)
}

// answer is what every /api/diff answer says of its sides: the runs and
// profiles merged, the runs skipped, what is compared, and the raw names
// merged under each normalised one.
func (cmp *comparison) answer() *client.Diff {
	d := &client.Diff{Sample: cmp.sample, Unit: cmp.unit, Kind: cmp.kind, Role: cmp.role,
		RunsBase: runIDs(cmp.set.Base), RunsTarget: runIDs(cmp.set.Target),
		ProfilesBase: profileIDs(cmp.set.Base), ProfilesTarget: profileIDs(cmp.set.Target),
		Skipped: []client.SkippedRun{}, NameVariants: profiles.NameVariants(cmp.profiles()...)}
	for _, sk := range cmp.set.Skipped {
		d.Skipped = append(d.Skipped, client.SkippedRun{RunID: sk.RunID, Side: sk.Side, Reason: sk.Reason})
	}
	if cmp.pair != nil {
		bm, tm := cmp.pair[0].meta, cmp.pair[1].meta
		d.Base, d.Target = &bm, &tm
	}
	return d
}

// profiles lists every profile of both sides.
func (cmp *comparison) profiles() []*profile.Profile {
	var out []*profile.Profile
	for _, r := range slices.Concat(cmp.base, cmp.target) {
		out = append(out, r.Prof)
	}
	return out
}

// compareProfilesPage is /compare/profiles: both flame graphs (of one
// profile a side) or the runs of each side (run sets), the differential
// graph, the normalisation, the biggest changes and the write paths.
func (s *Server) compareProfilesPage(c *gin.Context) {
	normalize := c.DefaultQuery("normalize", "total")
	cmp, err := s.compareQuery(c, normalize)
	if err != nil {
		s.fail(c, err)
		return
	}
	sides, err := s.comparedProfiles(c.Request.Context(), cmp)
	if err != nil {
		s.fail(c, err)
		return
	}
	if compareLegacyZoom(c, cmp, sides) {
		return
	}
	var changes []ui.Change
	for _, ch := range profiles.TopChangesRuns(cmp.base, cmp.target, 50) {
		changes = append(changes, ui.Change{Name: ch.Name, BaseFlat: ch.BaseFlat, TargetFlat: ch.TargetFlat,
			BaseCum: ch.BaseCum, TargetCum: ch.TargetCum, DeltaFlat: ch.DeltaFlat, DeltaCum: ch.DeltaCum,
			DeltaFlatPct: ch.DeltaFlatPct, DeltaCumPct: ch.DeltaCumPct})
	}
	ctx := c.Request.Context()
	norm := ui.Normalization{Mode: cmp.norm.Mode, Scale: cmp.norm.Scale, Explain: cmp.norm.Explain}
	sample := cmp.sample + "/" + cmp.unit
	wpBase, wpTarget := uiWritePaths(s.sideWritePaths(cmp.set.Base)), uiWritePaths(s.sideWritePaths(cmp.set.Target))
	var v ui.CompareProfilesView
	if cmp.pair != nil {
		v = ui.NewCompareProfilesView(s.uiMeta(ctx, cmp.pair[0].meta), s.uiMeta(ctx, cmp.pair[1].meta), sample, normalize, norm,
			cmp.workAvailable, cmp.workUnavailable, changes, wpBase, wpTarget)
	} else {
		sets := ui.RunSets{BaseRuns: runIDs(cmp.set.Base), TargetRuns: runIDs(cmp.set.Target), Kind: cmp.kind, Role: cmp.role}
		for _, side := range []struct {
			ms  []profileset.Member
			out *[]ui.ProfileMeta
		}{{cmp.set.Base, &sets.Base}, {cmp.set.Target, &sets.Target}} {
			for _, m := range side.ms {
				lp, err := s.loadProfile(ctx, m.ProfileID)
				if err != nil {
					s.fail(c, err)
					return
				}
				*side.out = append(*side.out, s.uiMeta(ctx, lp.meta))
			}
		}
		for _, sk := range cmp.set.Skipped {
			sets.Skipped = append(sets.Skipped, ui.SkippedRun{RunID: sk.RunID, Side: sk.Side, Reason: sk.Reason})
		}
		v = ui.NewCompareRunSetsView(sets, sample, normalize, norm, cmp.workAvailable, cmp.workUnavailable, changes, wpBase, wpTarget)
	}
	comparePageFilters(&v, c.Request.URL.Query(), sides)
	title := v.Page.Title
	v.Page = s.page(c, title)
	s.render(c, http.StatusOK, "compare_profiles", v)
}

// sameSampleTypes refuses to diff, as pprof's diff UI does (every sample
// type at once), two profiles whose lists of sample types differ (a CPU
// profile's samples and nanoseconds against a heap profile's objects and
// bytes), with a 400 naming target; compare checks the one sample type it
// diffs.
func sameSampleTypes(base, target *loadedProfile) error {
	if err := comparableKinds(base.meta, target.meta); err != nil {
		return err
	}
	bl, tl := sampleNames(base.prof), sampleNames(target.prof)
	if !slices.Equal(bl, tl) {
		return badInput("target", "cannot compare the %s profile #%d (sample types %s) with the %s profile #%d (sample types %s): "+
			"different sample types; compare profiles of one kind (CPU with CPU, heap with heap)",
			base.meta.Kind, base.meta.ID, strings.Join(bl, ", "), target.meta.Kind, target.meta.ID, strings.Join(tl, ", "))
	}
	return nil
}

// comparableKinds refuses to diff a wall profile (thread samples by
// state: running Java code or inside a native method, blocked or not)
// with a profile of another kind. Both may count samples, so the units
// alone would not tell them apart, yet a difference between them means
// nothing. Other kinds of differing units are refused by profiles.Diff.
func comparableKinds(base, target profileMeta) error {
	if (base.Kind == string(rundoc.KindWall)) == (target.Kind == string(rundoc.KindWall)) {
		return nil
	}
	return badInput("target", "cannot compare the %s profile #%d with the %s profile #%d: wall profiles are thread samples by state "+
		"(running Java code, or inside a native method, blocked or not), not CPU time; compare a wall profile with another wall profile",
		base.Kind, base.ID, target.Kind, target.ID)
}
