package profiles

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// RankedFunction is a function named as a cause of the change between two
// sets of runs.
type RankedFunction struct {
	Name string `json:"name"`
	// Delta is the change of the function's mean cumulative share
	// (target − base, per unit of the runs' Ref: per record when Ref is
	// the work), DeltaPct the same in percent of the base mean (±100 when
	// the base mean is 0), DeltaFlat the change of its flat share.
	Delta     float64 `json:"delta"`
	DeltaPct  float64 `json:"delta_pct"`
	DeltaFlat float64 `json:"delta_flat"`
	// QValue is the Benjamini-Hochberg adjusted p-value of the cum test.
	QValue float64 `json:"q_value"`
	// Explains lists, sorted, the callers left out because this function
	// accounts for their change.
	Explains []string `json:"explains,omitempty"`
}

// RankFunctions names the functions that moved between base and target:
// the functions res found significant (cum), largest |Delta| first, at
// most n (all when n ≤ 0), leaving out a caller whose change its
// descendants explain. res must be Significance's result for the same
// base and target; an undecided result names nothing.
//
// When a leaf grows, every function above it grows by as much, so a
// ranking by |Delta| alone would put the call chain (main, the loop, the
// leaf's parent) above the leaf and fill the top 3 with one cause. An
// ancestor A is left out when its change is explained by its significant
// descendants: let D be the significant functions that move the same way
// as A and are strict descendants of A (below A on some stack, above it on
// none, so recursion explains nothing), and U the part of A's cumulative
// share in samples where some D lies below A. U's change ΔU explains A's
// ΔA when both have the same sign and the remainder is the smaller part:
//
//	|ΔA − ΔU| < |ΔU|   (equivalently, 0 < ΔA/ΔU < 2)
//
// The remainder is what changed in A outside those descendants: its own
// flat value and its other callees. When it is smaller than the
// descendants' part, naming A would mostly repeat them; when it is larger,
// A changed on its own and stays. U is measured on the samples, not taken
// as the sum of the descendants' deltas, because a descendant may also be
// called from outside A and descendants may share samples. An ancestor
// whose own flat change is significant (FlatSignificant) is never left
// out: its own code moved.
//
// The relation is decided once for every significant function against all
// others, so a chain A → B → C where C grew leaves out A and B (each is
// explained by what lies below it) and names C. Call graphs whose stacks
// order functions inconsistently (A above B on one stack, B above C on a
// second, C above A on a third) could explain every function away; then
// nothing is left out.
func RankFunctions(res SignificanceResult, base, target []RunInput, n int) []RankedFunction {
	if !res.Decided {
		return nil
	}
	var cands []*FunctionSignificance
	index := map[string]int32{}
	for i := range res.Functions {
		f := &res.Functions[i]
		if f.Significant != nil && *f.Significant {
			index[f.Name] = int32(len(cands))
			cands = append(cands, f)
		}
	}
	if len(cands) == 0 {
		return []RankedFunction{}
	}
	runs := rankRuns(res, base, target, index)
	k := len(cands)

	// below[x*k+d]: d occurs below x's outermost occurrence on some stack.
	below := make([]bool, k*k)
	for _, r := range runs {
		for _, s := range r.samples {
			for _, x := range s.cands {
				for _, d := range s.cands {
					if d.id != x.id && d.last > x.first {
						below[int(x.id)*k+int(d.id)] = true
					}
				}
			}
		}
	}
	dir := func(v float64) int {
		switch {
		case v > 0:
			return 1
		case v < 0:
			return -1
		}
		return 0
	}
	explainers := make([][]int32, k) // per x: the strict descendants of x that explain it
	for x := range k {
		fx := cands[x]
		if fx.FlatSignificant != nil && *fx.FlatSignificant {
			continue
		}
		var ds []int32
		for d := range k {
			if below[x*k+d] && !below[d*k+x] && dir(cands[d].Delta) == dir(fx.Delta) {
				ds = append(ds, int32(d))
			}
		}
		if len(ds) == 0 {
			continue
		}
		du := underDelta(runs, int32(x), ds, k)
		if dir(du) == dir(fx.Delta) && dir(du) != 0 && math.Abs(fx.Delta-du) < math.Abs(du) {
			explainers[x] = ds
		}
	}
	kept := 0
	for x := range k {
		if explainers[x] == nil {
			kept++
		}
	}
	if kept == 0 {
		clear(explainers) // an inconsistent call graph explained everything away
	}
	explains := make([][]string, k)
	for x, ds := range explainers {
		for _, d := range ds {
			if explainers[d] == nil {
				explains[d] = append(explains[d], cands[x].Name)
			}
		}
	}
	var out []RankedFunction
	for x, f := range cands {
		if explainers[x] != nil {
			continue
		}
		pct := 0.0
		switch {
		case f.BaseMean != 0:
			pct = 100 * f.Delta / math.Abs(f.BaseMean)
		case f.Delta > 0:
			pct = 100
		case f.Delta < 0:
			pct = -100
		}
		slices.Sort(explains[x])
		out = append(out, RankedFunction{Name: f.Name, Delta: f.Delta, DeltaPct: pct, DeltaFlat: f.DeltaFlat, QValue: *f.QValue, Explains: explains[x]})
	}
	slices.SortFunc(out, func(a, b RankedFunction) int {
		if c := cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if n > 0 && len(out) > n {
		out = out[:n:n]
	}
	return out
}

// rankOcc is a significant function's outermost and innermost positions
// on one stack.
type rankOcc struct {
	id          int32
	first, last int32
}

// rankSample is a sample holding at least one significant function.
type rankSample struct {
	v     float64
	cands []rankOcc
}

type rankRun struct {
	samples []rankSample
	ref     float64
	target  bool
}

// rankRuns reads the samples of the runs res used (matched to the inputs
// by run ID in order, as Significance kept them) through the same stacker
// and name table as Significance, keeping only the positions of the
// functions in index.
func rankRuns(res SignificanceResult, base, target []RunInput, index map[string]int32) []rankRun {
	var runs []rankRun
	for side, ins := range [][]RunInput{base, target} {
		used := [2][]uint{res.BaseRuns, res.TargetRuns}[side]
		for _, in := range ins {
			if len(used) == 0 || in.RunID != used[0] || in.Prof == nil {
				continue
			}
			used = used[1:]
			names := newNameTable()
			st := newStacker(in.Prof, names)
			r := rankRun{ref: in.Ref, target: side == 1}
			var buf []int32
			var toCand []int32 // name ID → candidate index + 1
			for _, x := range in.Prof.Sample {
				if x == nil {
					continue
				}
				v, ok := sampleValue(x, in.SampleIndex, 1)
				if !ok || v == 0 {
					continue
				}
				buf = st.stack(x, buf[:0])
				for len(toCand) < len(names.list) {
					c, ok := index[names.list[len(toCand)]]
					if !ok {
						c = -1
					}
					toCand = append(toCand, c+1)
				}
				var occ []rankOcc
				for pos, id := range buf {
					c := toCand[id] - 1
					if c < 0 {
						continue
					}
					if j := slices.IndexFunc(occ, func(o rankOcc) bool { return o.id == c }); j >= 0 {
						occ[j].last = int32(pos)
					} else {
						occ = append(occ, rankOcc{id: c, first: int32(pos), last: int32(pos)})
					}
				}
				if len(occ) > 0 {
					r.samples = append(r.samples, rankSample{v: float64(v), cands: occ})
				}
			}
			runs = append(runs, r)
		}
	}
	return runs
}

// underDelta is the change (target mean − base mean of the per-Ref
// shares) of x's value in the samples where one of ds lies below x's
// outermost occurrence.
func underDelta(runs []rankRun, x int32, ds []int32, k int) float64 {
	isD := make([]bool, k)
	for _, d := range ds {
		isD[d] = true
	}
	var sum [2]float64
	var count [2]int
	for _, r := range runs {
		u := 0.0
		for _, s := range r.samples {
			i := slices.IndexFunc(s.cands, func(o rankOcc) bool { return o.id == x })
			if i < 0 {
				continue
			}
			first := s.cands[i].first
			for _, o := range s.cands {
				if isD[o.id] && o.last > first {
					u += s.v
					break
				}
			}
		}
		side := 0
		if r.target {
			side = 1
		}
		sum[side] += u / r.ref
		count[side]++
	}
	if count[0] == 0 || count[1] == 0 {
		return 0
	}
	return sum[1]/float64(count[1]) - sum[0]/float64(count[0])
}
