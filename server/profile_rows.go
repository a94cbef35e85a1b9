// The flame viewer's one format, format=rows, on GET
// /api/profiles/:id/flamegraph and GET /api/diff; its view parameters
// (zoom, width, search, order) and pprof's filters (focus, ignore, hide,
// show_from, tagfocus, tagignore, only_matching); and the 301 that turns
// a legacy focus= zoom path into zoom=.

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/profileset"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// viewParams are what a flame view is cut with, read from a request's
// query by readView: the same parameters on both routes and the pages.
type viewParams struct {
	zoom    []string // zoom=: the zoomed frame's path (profiles.SplitZoom)
	width   int      // width=: pixels the zoomed frame spans
	search  *regexp.Regexp
	order   profiles.Order
	filters profiles.Filters
	graph   graphView // view=, function=, sort=, limit= (profile_views.go)
}

// readView reads zoom=, width=, search=, order=, only_matching= (1: keep
// only the stacks with a frame search= matches; nothing without a
// search) and the filters; a bad value is a 400 naming its parameter.
func readView(q url.Values) (viewParams, error) {
	v := viewParams{zoom: profiles.SplitZoom(q.Get("zoom")), width: defaultPruneWidth}
	if s := q.Get("width"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > profiles.MaxPruneWidth {
			return v, badInput("width", "must be a whole number of pixels from 1 to %d", profiles.MaxPruneWidth)
		}
		v.width = n
	}
	var err error
	if v.search, err = compileParam("search", q.Get("search")); err != nil {
		return v, err
	}
	if v.order, err = profiles.ParseOrder(q.Get("order")); err != nil {
		return v, badInput("order", "must be name or left-heavy")
	}
	if v.filters, err = readFilters(q); err != nil {
		return v, err
	}
	if v.graph, err = readGraphView(q); err != nil {
		return v, err
	}
	switch q.Get("only_matching") {
	case "", "0":
	case "1":
		// Without a search every stack is kept: the toggle stays in the
		// page's URL while the search box is cleared.
		v.filters.OnlyMatching = v.search
	default:
		return v, badInput("only_matching", "must be 1 or 0")
	}
	return v, nil
}

// readFilters reads pprof's filters: focus=, ignore=, hide=, show_from=
// (regexps on frame names) and tagfocus=, tagignore= (key=regexp on
// string labels; repeatable, each must match).
func readFilters(q url.Values) (profiles.Filters, error) {
	var f profiles.Filters
	for _, p := range []struct {
		name string
		dst  **regexp.Regexp
	}{{"focus", &f.Focus}, {"ignore", &f.Ignore}, {"hide", &f.Hide}, {"show_from", &f.ShowFrom}} {
		re, err := compileParam(p.name, q.Get(p.name))
		if err != nil {
			return f, err
		}
		*p.dst = re
	}
	for _, p := range []struct {
		name string
		dst  *[]profiles.TagFilter
	}{{"tagfocus", &f.TagFocus}, {"tagignore", &f.TagIgnore}} {
		for _, s := range q[p.name] {
			if s == "" {
				continue
			}
			tf, err := profiles.ParseTagFilter(s, func(e string) (*regexp.Regexp, error) { return compileParam(p.name, e) })
			if err != nil {
				return f, badInput(p.name, "must be key=regexp (a string label's key, then Go's RE2 syntax): %v", err)
			}
			*p.dst = append(*p.dst, tf)
		}
	}
	return f, nil
}

// compileParam compiles a regexp parameter (search=, focus=, …; "" for
// none: nil) in Go's RE2 syntax, whose matching takes time linear in the
// names searched, so no expression, shared in a link, can stall the
// server; the pages never run an expression themselves. A bad or too
// long one is a 400 naming param.
func compileParam(param, q string) (*regexp.Regexp, error) {
	if q == "" {
		return nil, nil
	}
	if len(q) > maxSearchLen {
		return nil, badInput(param, "must be at most %d bytes, not %d", maxSearchLen, len(q))
	}
	re, err := regexp.Compile(q)
	if err != nil {
		return nil, badInput(param, "not a regular expression in Go's RE2 syntax (no look-around or back-references): %v", err)
	}
	return re, nil
}

// filtered returns lp's profile with f applied, on a private copy (nil
// error and lp.prof itself when f is empty).
func (lp *loadedProfile) filtered(f profiles.Filters) (*profile.Profile, error) {
	if f.Empty() {
		return lp.prof, nil
	}
	p, err := lp.fresh()
	if err != nil {
		return nil, fmt.Errorf("server: filter profile %d: %w", lp.meta.ID, err)
	}
	f.Apply(p)
	return p, nil
}

// stringLabels returns the profile's string labels, listed once.
func (lp *loadedProfile) stringLabels() map[string][]string {
	lp.flatMu.Lock()
	defer lp.flatMu.Unlock()
	if lp.labels == nil {
		lp.labels = profiles.Labels(lp.prof)
	}
	return lp.labels
}

// nameVariants returns the raw frame names merged under each normalised
// name of the profile, listed once.
func (lp *loadedProfile) nameVariants() map[string][]string {
	lp.flatMu.Lock()
	defer lp.flatMu.Unlock()
	if !lp.variantsDone {
		lp.variants, lp.variantsDone = profiles.NameVariants(lp.prof), true
	}
	return lp.variants
}

// maxViewFlats bounds the flattened graphs a profile keeps: each filter
// and order asked for builds one.
const maxViewFlats = 8

// viewFlat returns the flattened flame graph of sample index idx with
// filters f applied, children in order, built once per (profile, sample,
// filters, order) and kept among the profile's last maxViewFlats.
func (lp *loadedProfile) viewFlat(idx int, f profiles.Filters, order profiles.Order) (*profiles.Flat, error) {
	if f.Empty() && order == profiles.OrderName {
		return lp.flat(idx), nil
	}
	key := fmt.Sprintf("%d/%s/%s", idx, order, f.Key())
	lp.flatMu.Lock()
	if fl, ok := lp.views[key]; ok {
		lp.flatMu.Unlock()
		return fl, nil
	}
	lp.flatMu.Unlock()
	p, err := lp.filtered(f)
	if err != nil {
		return nil, err
	}
	fl := profiles.NewFlat(profiles.BuildTree(p, idx), order)
	lp.flatMu.Lock()
	defer lp.flatMu.Unlock()
	if lp.views == nil || len(lp.views) >= maxViewFlats {
		lp.views = map[string]*profiles.Flat{}
	}
	lp.views[key] = fl
	return fl, nil
}

// profileRows builds a profile's format=rows answer for view v.
func profileRows(lp *loadedProfile, idx int, v viewParams) (*client.FlameGraph, error) {
	f, err := lp.viewFlat(idx, v.filters, v.order)
	if err != nil {
		return nil, err
	}
	st := lp.prof.SampleType[idx]
	meta := lp.meta
	a := &client.FlameGraph{Profile: &meta, SampleTypes: sampleTypes(lp.prof), Sample: st.Type, Unit: st.Unit,
		Total: int64(f.Total()), WholeTotal: int64(lp.flat(idx).Total()), Labels: lp.stringLabels(), NameVariants: lp.nameVariants()}
	if v.graph.view == viewTop {
		a.Top, err = topTable(f, v.graph, false)
	} else {
		a.Rows, a.Function, err = viewRows(f, v)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// wireRows is rows as client names them.
func wireRows(r profiles.Rows) *client.FlameRows {
	w := &client.FlameRows{Names: r.Names, Levels: r.Levels, Stride: r.Stride, Width: r.Width, Order: string(r.Order),
		Zoom: r.Zoom, ZoomMissing: r.ZoomMissing, Frames: r.Frames, Sent: r.Sent}
	if m := r.Match; m != nil {
		w.Match = &client.RowsMatch{Total: m.Total, Zoom: m.Zoom, Count: m.Count, BaseTotal: m.BaseTotal, BaseZoom: m.BaseZoom, Names: m.Names}
	}
	return w
}

// serveProfileRows answers GET /api/profiles/:id/flamegraph?format=rows.
func (s *Server) serveProfileRows(c *gin.Context, lp *loadedProfile, idx int) {
	v, err := readView(c.Request.URL.Query())
	if err != nil {
		s.fail(c, err)
		return
	}
	a, err := profileRows(lp, idx, v)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeJSON(c, a)
}

func (s *Server) writeJSON(c *gin.Context, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.fail(c, fmt.Errorf("server: encode flame graph: %w", err))
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}

// diffRows answers GET /api/diff?format=rows: the differential graph of
// the filtered profiles (every run of both sides filtered alike; the
// normalisation is the unfiltered one, so a filter shows a part of the
// same comparison), cut as rows with base columns.
func (s *Server) diffRows(c *gin.Context, cmp *comparison) {
	v, err := readView(c.Request.URL.Query())
	if err != nil {
		s.fail(c, err)
		return
	}
	body, _, err := s.diffRowsAnswer(c.Request.Context(), cmp, v)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeJSON(c, body)
}

// diffRowsAnswer is the format=rows answer of cmp for view v, with the
// comparison's tested changes (also returned: the pages' tables use
// them).
func (s *Server) diffRowsAnswer(ctx context.Context, cmp *comparison, v viewParams) (*client.Diff, *diffStats, error) {
	sides, err := s.comparedProfiles(ctx, cmp)
	if err != nil {
		return nil, nil, err
	}
	f, err := diffFlat(cmp, sides, v.filters, v.order)
	if err != nil {
		return nil, nil, err
	}
	whole := f
	if !v.filters.Empty() {
		if whole, err = diffFlat(cmp, sides, profiles.Filters{}, profiles.OrderName); err != nil {
			return nil, nil, err
		}
	}
	norm := client.Normalization{Mode: cmp.norm.Mode, Scale: cmp.norm.Scale, Explain: cmp.norm.Explain}
	body := cmp.answer()
	body.Normalization = &norm
	body.Total, body.BaseTotal, body.WholeTotal, body.WholeBaseTotal = f.Total(), f.BaseTotal(), whole.Total(), whole.BaseTotal()
	body.Labels = sides.labels()
	if v.graph.view == viewTop {
		body.Top, err = topTable(f, v.graph, true)
	} else {
		body.Rows, body.Function, err = viewRows(f, v)
	}
	if err != nil {
		return nil, nil, err
	}
	stats := diffStatsOf(cmp, sides)
	body.Changes, body.Significance = stats.apiChanges(), stats.summary()
	if body.Rows != nil {
		body.Rows.Significant = stats.verdicts(body.Rows.Names)
	}
	return body, stats, nil
}

// comparedSides is the stored profiles of a comparison's runs, in the
// order of cmp.base and cmp.target.
type comparedSides struct{ base, target []*loadedProfile }

// comparedProfiles loads (from the server's cache) the stored profile of
// every run of cmp: filters work on private copies of them.
func (s *Server) comparedProfiles(ctx context.Context, cmp *comparison) (*comparedSides, error) {
	out := &comparedSides{}
	for _, side := range []struct {
		ms  []profileset.Member
		dst *[]*loadedProfile
	}{{cmp.set.Base, &out.base}, {cmp.set.Target, &out.target}} {
		for _, m := range side.ms {
			lp, err := s.loadProfile(ctx, m.ProfileID)
			if err != nil {
				return nil, err
			}
			*side.dst = append(*side.dst, lp)
		}
	}
	return out, nil
}

// labels is the string labels of every profile of both sides.
func (cs *comparedSides) labels() map[string][]string {
	out := map[string][]string{}
	for _, lp := range slices.Concat(cs.base, cs.target) {
		out = unionLabels(out, lp.stringLabels())
	}
	return out
}

// resolves says whether path is a zoom path of any compared profile.
func (cs *comparedSides) resolves(cmp *comparison, path string) bool {
	z := profiles.SplitZoom(path)
	for i, lp := range cs.base {
		if lp.flat(cmp.base[i].SampleIndex).Resolves(z) {
			return true
		}
	}
	for i, lp := range cs.target {
		if lp.flat(cmp.target[i].SampleIndex).Resolves(z) {
			return true
		}
	}
	return false
}

// unionLabels merges two profiles' label lists into a new map.
func unionLabels(a, b map[string][]string) map[string][]string {
	out := make(map[string][]string, len(a)+len(b))
	for k, vs := range a {
		out[k] = mergeSorted(nil, vs)
	}
	for k, vs := range b {
		out[k] = mergeSorted(out[k], vs)
	}
	return out
}

// diffFlat returns the flattened differential graph of cmp with filters
// f applied to every profile, children in order: built once per (the
// profiles and references of both sides, filters, order) and kept among
// the first target profile's flats (maxViewFlats), since a page's every
// zoom and search asks again.
func diffFlat(cmp *comparison, sides *comparedSides, f profiles.Filters, order profiles.Order) (*profiles.Flat, error) {
	var key strings.Builder
	fmt.Fprintf(&key, "diff%s/%s/%s", statsKey(cmp), order, f.Key())
	lp := sides.target[0]
	lp.flatMu.Lock()
	if fl, ok := lp.views[key.String()]; ok {
		lp.flatMu.Unlock()
		return fl, nil
	}
	lp.flatMu.Unlock()
	filter := func(ins []profiles.RunInput, lps []*loadedProfile) ([]profiles.RunInput, error) {
		out := slices.Clone(ins)
		for i := range out {
			p, err := lps[i].filtered(f)
			if err != nil {
				return nil, err
			}
			out[i].Prof = p
		}
		return out, nil
	}
	bIn, err := filter(cmp.base, sides.base)
	if err != nil {
		return nil, err
	}
	tIn, err := filter(cmp.target, sides.target)
	if err != nil {
		return nil, err
	}
	tree, err := profiles.DiffRuns(bIn, tIn)
	if err != nil {
		return nil, badInput("base", "%v", err)
	}
	fl := profiles.NewDiffFlat(tree, order)
	lp.flatMu.Lock()
	defer lp.flatMu.Unlock()
	if lp.views == nil || len(lp.views) >= maxViewFlats {
		lp.views = map[string]*profiles.Flat{}
	}
	lp.views[key.String()] = fl
	return fl, nil
}

// mergeSorted merges two sorted lists of label values, each value once,
// at most profiles.MaxLabelValues.
func mergeSorted(a, b []string) []string {
	set := map[string]bool{}
	for _, v := range a {
		set[v] = true
	}
	for _, v := range b {
		set[v] = true
	}
	out := slices.Sorted(maps.Keys(set))
	if len(out) > profiles.MaxLabelValues {
		out = out[:profiles.MaxLabelValues]
	}
	return out
}

// legacyZoom redirects (301) a page whose URL carries the zoom state
// under its old names to the same URL with the new ones, every other
// parameter kept: renames are always renamed (base_focus, focus-N, …: they
// had no other meaning); focus= only when resolves says its value is a
// zoom path of the page's graph, since otherwise it is pprof's focus
// regexp. It says whether it answered.
func legacyZoom(c *gin.Context, renames map[string]string, resolves func(path string) bool) bool {
	q := c.Request.URL.Query()
	moved := false
	for old, name := range renames {
		if vs, ok := q[old]; ok {
			if q.Get(name) == "" {
				q[name] = vs
			}
			delete(q, old)
			moved = true
		}
	}
	if f := q.Get("focus"); f != "" && q.Get("zoom") == "" && resolves != nil && resolves(f) {
		q.Set("zoom", f)
		q.Del("focus")
		moved = true
	}
	if !moved {
		return false
	}
	u := *c.Request.URL
	u.RawQuery = q.Encode()
	c.Redirect(http.StatusMovedPermanently, u.RequestURI())
	return true
}

// compareLegacyZoom is legacyZoom for /compare/profiles: base_focus and
// target_focus become base_zoom and target_zoom; focus= becomes zoom=
// when it is a zoom path of the differential graph (of any profile
// compared).
func compareLegacyZoom(c *gin.Context, cmp *comparison, sides *comparedSides) bool {
	return legacyZoom(c, map[string]string{"base_focus": "base_zoom", "target_focus": "target_zoom"}, func(path string) bool {
		return sides.resolves(cmp, path)
	})
}

// comparePageFilters gives /compare/profiles its filter bar (the labels
// of every profile compared) and passes the page's filters and order on
// to its graphs.
func comparePageFilters(v *ui.CompareProfilesView, q url.Values, sides *comparedSides) {
	v.Filters = ui.NewFilterBar(q, sides.labels(), "zoom", "base_zoom", "target_zoom", "search")
	for _, fg := range []*ui.FlameGraph{&v.Diff, &v.Base.FlameGraph, &v.Target.FlameGraph} {
		fg.DataURL = ui.WithView(fg.DataURL, q)
	}
}

// anyZoom resolves every path: for pages whose focus= never meant a
// filter (they have no filter bar), so a legacy focus= is their zoom.
func anyZoom(string) bool { return true }

// reportLegacyZoom renames a report page's focus-N (the zoom of its N-th
// differential graph) to zoom-N.
func reportLegacyZoom(c *gin.Context) bool {
	renames := map[string]string{}
	for k := range c.Request.URL.Query() {
		if n, ok := strings.CutPrefix(k, "focus-"); ok && n != "" {
			renames[k] = "zoom-" + n
		}
	}
	if len(renames) == 0 {
		return false
	}
	return legacyZoom(c, renames, nil)
}
