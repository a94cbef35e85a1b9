// Two profiles compared: GET /api/diff and GET /compare/profiles.

package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// comparison is everything the diff endpoint and the compare page share.
type comparison struct {
	base, target    *loadedProfile
	sb, st          int
	norm            profiles.Normalization
	workAvailable   bool
	workUnavailable string
}

// compare loads two profiles and works out the normalisation asked for.
// "work" divides by the records each run moved, so runs that did
// different amounts of work compare per record.
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
	cmp := &comparison{base: base, target: target}
	if cmp.sb, err = profiles.PickSample(base.prof, sample); err != nil {
		return nil, badInput("sample", "base: %v", err)
	}
	if cmp.st, err = profiles.PickSample(target.prof, sample); err != nil {
		return nil, badInput("sample", "target: %v", err)
	}
	// The difference of two sample types ("7.7 MiB / 390 ms", a CPU
	// profile against a heap profile) means nothing; nor does that of
	// each profile's own default (a heap profile's inuse_space against an
	// allocs profile's alloc_space). The report, A/B and write-path pages
	// draw their diffs from /api/diff, so they are refused here too.
	if b, t := base.prof.SampleType[cmp.sb], target.prof.SampleType[cmp.st]; b.Type != t.Type || b.Unit != t.Unit {
		return nil, badInput("target", "cannot compare %s (%s) of the %s profile #%d with %s (%s) of the %s profile #%d: different sample types; "+
			"compare profiles of one kind (CPU with CPU, heap with heap), or pick a sample type both have with sample=",
			b.Type, b.Unit, base.meta.Kind, base.meta.ID, t.Type, t.Unit, target.meta.Kind, target.meta.ID)
	}
	bw, bErr := s.runWork(ctx, base.meta.RunID)
	tw, tErr := s.runWork(ctx, target.meta.RunID)
	cmp.workAvailable = bErr == nil && tErr == nil
	if !cmp.workAvailable {
		cmp.workUnavailable = ui.Sentences(s.workReasons(base.meta.RunID, target.meta.RunID, bErr, tErr))
	}
	switch normalize {
	case "", "total":
		cmp.norm = profiles.NormalizeTotal(base.prof, target.prof, cmp.sb, cmp.st)
	case "none":
		cmp.norm = profiles.NormalizeNone()
	case "work":
		if !cmp.workAvailable {
			return nil, badInput("normalize", "work is not available: %s", cmp.workUnavailable)
		}
		if cmp.norm, err = profiles.NormalizeWork(bw, tw, "records"); err != nil {
			return nil, badInput("normalize", "%v", err)
		}
	default:
		return nil, badInput("normalize", "must be total, work or none")
	}
	return cmp, nil
}

// compareQuery is compare for the ?base=&target=&sample= of a request.
func (s *Server) compareQuery(c *gin.Context, normalize string) (*comparison, error) {
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

// runWork is how many records a run moved in its measured window: its
// record-count metric (records-sent of producers, records-consumed-total
// of consumers, records of older results) or else the measured_records of
// its measurement, which every kbench run writes (a write-path run's
// measured requests × records per request) and imports of Kafka's output
// fill in.
func (s *Server) runWork(ctx context.Context, runID uint) (float64, error) {
	run, err := s.store.GetRun(ctx, runID)
	if err != nil {
		return 0, err
	}
	for _, name := range []string{"records-sent", "records-consumed-total", "records"} {
		for _, m := range run.Metrics {
			if m.Name == name && m.Value > 0 {
				return m.Value, nil
			}
		}
	}
	if m := run.Measurement; m != nil && m.MeasuredRecords > 0 {
		return float64(m.MeasuredRecords), nil
	}
	return 0, fmt.Errorf("run %d: %w", runID, errNoRecordCount)
}

// workReasons says why per-record normalisation is not available, one
// reason per entry: the same reason for both runs is said once.
func (s *Server) workReasons(baseRun, targetRun uint, bErr, tErr error) []string {
	if errors.Is(bErr, errNoRecordCount) && errors.Is(tErr, errNoRecordCount) {
		if baseRun == targetRun {
			return []string{fmt.Sprintf("run %d has no record count", baseRun)}
		}
		return []string{fmt.Sprintf("neither run has a record count (runs %d and %d)", baseRun, targetRun)}
	}
	var out []string
	for _, side := range []struct {
		name string
		run  uint
		err  error
	}{{"base", baseRun, bErr}, {"target", targetRun, tErr}} {
		switch {
		case side.err == nil:
		case errors.Is(side.err, errNoRecordCount):
			out = append(out, fmt.Sprintf("the %s run (run %d) has no record count", side.name, side.run))
		default:
			s.log.Error("read a run's record count", "run", side.run, "err", side.err)
			out = append(out, fmt.Sprintf("the %s run (run %d) could not be read", side.name, side.run))
		}
	}
	return out
}

// diff answers GET /api/diff: the differential tree with base and target
// values, the functions that changed most and both write-path panels.
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
	tree, err := profiles.Diff(cmp.base.prof, cmp.target.prof, cmp.sb, cmp.st, cmp.norm.Scale)
	if err != nil {
		s.fail(c, badInput("base", "%v", err))
		return
	}
	st := cmp.target.prof.SampleType[cmp.st]
	body := gin.H{
		"base": cmp.base.meta, "target": cmp.target.meta, "sample": st.Type, "unit": st.Unit,
		"normalization": cmp.norm,
		"changes":       profiles.TopChanges(cmp.base.prof, cmp.target.prof, cmp.sb, cmp.st, cmp.norm.Scale, 30),
		"write_paths": gin.H{
			"base":   profiles.WritePaths(cmp.base.prof, cmp.sb),
			"target": profiles.WritePaths(cmp.target.prof, cmp.st),
		},
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

// compareProfilesPage is /compare/profiles: both flame graphs, the
// differential one, the normalisation, the biggest changes and the write
// paths side by side.
func (s *Server) compareProfilesPage(c *gin.Context) {
	normalize := c.DefaultQuery("normalize", "total")
	cmp, err := s.compareQuery(c, normalize)
	if err != nil {
		s.fail(c, err)
		return
	}
	if compareLegacyZoom(c, cmp) {
		return
	}
	var changes []ui.Change
	for _, ch := range profiles.TopChanges(cmp.base.prof, cmp.target.prof, cmp.sb, cmp.st, cmp.norm.Scale, 50) {
		changes = append(changes, ui.Change{Name: ch.Name, BaseFlat: float64(ch.BaseFlat), TargetFlat: float64(ch.TargetFlat),
			BaseCum: float64(ch.BaseCum), TargetCum: float64(ch.TargetCum), DeltaFlat: float64(ch.DeltaFlat), DeltaCum: float64(ch.DeltaCum),
			DeltaFlatPct: ch.DeltaFlatPct, DeltaCumPct: ch.DeltaCumPct})
	}
	st := cmp.target.prof.SampleType[cmp.st]
	norm := ui.Normalization{Mode: cmp.norm.Mode, Scale: cmp.norm.Scale, Explain: cmp.norm.Explain}
	v := ui.NewCompareProfilesView(s.uiMeta(c.Request.Context(), cmp.base.meta), s.uiMeta(c.Request.Context(), cmp.target.meta), st.Type+"/"+st.Unit, normalize, norm,
		cmp.workAvailable, cmp.workUnavailable, changes,
		uiWritePaths(profiles.WritePaths(cmp.base.prof, cmp.sb)), uiWritePaths(profiles.WritePaths(cmp.target.prof, cmp.st)))
	comparePageFilters(&v, c.Request.URL.Query(), cmp)
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

// errNoRecordCount: a run that records no count of the records it moved
// (an imported profile without Kafka's output, say).
var errNoRecordCount = errors.New("no record count")
