// The significance of a comparison's changes (profiles.Significance) as
// GET /api/diff and the pages give it: computed once per comparison and
// kept beside its flattened graphs, so a page's zooms and searches do not
// run the tests again.

package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/profiles"
)

// maxDiffChanges is how many changed functions a comparison keeps: the
// pages show up to 50, GET /api/diff its first apiDiffChanges.
const (
	maxDiffChanges = 50
	apiDiffChanges = 30
)

// diffStats is what a comparison's tests found.
type diffStats struct {
	res profiles.SignificanceResult
	// changes are the functions that moved most (profiles.TopChangesRuns,
	// largest cumulative change first), each with its verdict.
	changes []client.FunctionChange
}

// summary is the answer's significance object.
func (st *diffStats) summary() *client.DiffSignificance {
	return &client.DiffSignificance{Method: profiles.SignificanceMethod, Q: st.res.Q, RunsNeeded: st.res.RunsNeeded,
		Decided: st.res.Decided, Tested: st.res.Tested, TestedFlat: st.res.TestedFlat}
}

// apiChanges are the changes an /api/diff answer lists.
func (st *diffStats) apiChanges() []client.FunctionChange {
	return st.changes[:min(len(st.changes), apiDiffChanges)]
}

// verdicts is the per-name column of a rows answer: nil when the tests
// did not decide, so the answer leaves it out.
func (st *diffStats) verdicts(names []string) []*bool {
	if !st.res.Decided {
		return nil
	}
	return st.res.Verdicts(names)
}

// statsKey names a comparison's sides: each run's sample index and
// reference, and the profiles read. It keys the comparison's tests here
// and, with the filters and order, its merged graphs (diffFlat).
func statsKey(cmp *comparison) string {
	var key strings.Builder
	for _, in := range slices.Concat(cmp.base, []profiles.RunInput{{}}, cmp.target) {
		fmt.Fprintf(&key, "/%d:%d:%g", in.RunID, in.SampleIndex, in.Ref)
	}
	for _, m := range slices.Concat(cmp.set.Base, cmp.set.Target) {
		fmt.Fprintf(&key, "/p%d", m.ProfileID)
	}
	return key.String()
}

// diffStatsOf returns the tested changes of cmp (of its unfiltered
// profiles: a filter shows part of the same comparison), computed once
// and kept among the first target profile's (maxViewFlats).
func diffStatsOf(cmp *comparison, sides *comparedSides) *diffStats {
	key := statsKey(cmp)
	lp := sides.target[0]
	lp.flatMu.Lock()
	if st, ok := lp.stats[key]; ok {
		lp.flatMu.Unlock()
		return st
	}
	lp.flatMu.Unlock()
	st := &diffStats{res: profiles.Significance(cmp.base, cmp.target, profiles.DefaultSignificanceQ)}
	for _, ch := range profiles.TopChangesRuns(cmp.base, cmp.target, maxDiffChanges) {
		st.changes = append(st.changes, wireChange(ch, &st.res))
	}
	if st.changes == nil {
		st.changes = []client.FunctionChange{}
	}
	lp.flatMu.Lock()
	defer lp.flatMu.Unlock()
	if lp.stats == nil || len(lp.stats) >= maxViewFlats {
		lp.stats = map[string]*diffStats{}
	}
	lp.stats[key] = st
	return st
}

// wireChange is a change with its function's tests and per-run shares.
func wireChange(ch profiles.Change, res *profiles.SignificanceResult) client.FunctionChange {
	w := client.FunctionChange{Name: ch.Name, BaseFlat: ch.BaseFlat, TargetFlat: ch.TargetFlat, BaseCum: ch.BaseCum, TargetCum: ch.TargetCum,
		DeltaFlat: ch.DeltaFlat, DeltaCum: ch.DeltaCum, DeltaFlatPct: ch.DeltaFlatPct, DeltaCumPct: ch.DeltaCumPct,
		BaseRuns: []float64{}, TargetRuns: []float64{}, BaseRunsFlat: []float64{}, TargetRunsFlat: []float64{}}
	f, ok := res.Function(ch.Name)
	if !ok {
		return w
	}
	w.BaseRuns, w.TargetRuns, w.BaseRunsFlat, w.TargetRunsFlat = f.BaseRuns, f.TargetRuns, f.BaseRunsFlat, f.TargetRunsFlat
	w.QValue, w.Significant, w.FlatQValue = f.QValue, f.Significant, f.FlatQValue
	return w
}
