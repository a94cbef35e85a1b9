package profiles

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/stats"
)

// Significance per function: which functions' shares moved between two
// sets of runs by more than run-to-run noise.
//
// Each run i has a reference r_i (RunInput.Ref: its work, its total, or
// 1). A function's cumulative share in run i is its cum value (pprof's
// cum: samples with the function anywhere on the stack, once per sample)
// divided by r_i, its flat share its flat value divided by r_i. Functions
// are named as the flame graphs name them (the same stacker and name
// table as TopChanges), so whatever naming rule the stacker applies holds
// here too.
//
// The family tested is the functions holding at least FamilyShare (1 %) of
// the pooled total: Σ_i cum_i/r_i ≥ 0.01 · Σ_i total_i/r_i over every run
// of both sides; for the flat test, the functions whose pooled flat share
// is ≥ 1 %. (A function that is never a leaf has nothing to test in
// flat: its values would be the pseudo-count alone, which varies with the
// runs' references, so a difference in the runs' totals would read as a
// flat change.)
//
// The test is Welch's t on log(share + pseudo), two-sided, where pseudo
// is half of one sample's worth in that run divided by r_i (one sample's
// worth: 1 for a count of samples, the profile's period when it is in the
// sample type's unit, as a CPU profile's is, else the run's smallest
// positive sample value), so a function absent from a run has a finite
// log. Logs, because noise in a
// share is multiplicative (a run that is 3 % slower is 3 % slower in every
// function) and a change is a ratio; Welch, because the two sides' spreads
// differ (different run counts, different run lengths). The p-values of
// the family are adjusted together by Benjamini-Hochberg (stats.BHAdjust)
// at q, separately for cum (QValue, Significant) and flat (FlatQValue,
// FlatSignificant).
//
// Why not the Mann-Whitney test of the metric table: its p-value has a
// floor set by the run counts alone, 2/C(m+n, m): 0.100 at 3 against 3,
// 0.029 at 4v4, 0.0079 at 5v5, 0.0022 at 6v6, 0.00058 at 7v7. With one
// function of a family of k changed, Benjamini-Hochberg rejects only
// p ≤ q/k: 0.00083 for 60 functions, 0.00031 for 160. So below 7 runs a
// side (60 functions) or 8 (160) no single change can ever be significant,
// however large. Welch's p-value has no floor: it depends on the change
// against the spread of the runs.
//
// From how many runs Welch decides: 3 a side (MinSignificanceRuns).
// Measured on the synthetic profiles of the tests (a family of 43
// functions, per-function run-to-run noise log-normal with σ 2–3 %,
// normalize=total, q 0.05; a planted change in a leaf holding 5 %; 100
// seeds per cell):
//
//	samples/run  runs a side   ×1.2 found   ×1.5 found   ×2 found
//	20,000 (σ 2 %)     2            0 %          3 %         14 %
//	                   3           10 %         78 %         99 %
//	                   4           59 %        100 %        100 %
//	                   5           97 %        100 %        100 %
//	10,000 (σ 3 %)     3            8 %         39 %         87 %
//	                   5           58 %        100 %        100 %
//	                   8           99 %        100 %        100 %
//	 2,000 (σ 3 %)     5            7 %         77 %        100 %
//	                   8           39 %        100 %        100 %
//
// At 2 a side each variance rests on one degree of freedom and Welch's
// can fall to 1, where t has Cauchy tails: p ≤ 0.05/43 needs t ≈ 550,
// and even a doubling is found 14 % of the time. From 3 a side large
// changes are found; a 20 % change in a 5 % function takes 5 a side with
// 20,000 samples a run, 7 to 8 with 10,000 (97 % and 99 %). Between identical sides, the share
// of 200 pairs with any significant function was 1.5–5.5 % (cum) and 0.5–
// 6.5 % (flat) for 3 to 8 runs a side, within the binomial noise of
// q = 5 %. Since every rejection between identical sides is false, that
// share is the false discovery rate itself.
const (
	// MinSignificanceRuns is the number of runs each side needs for the
	// test to decide; with fewer, Significance leaves every function's
	// Significant nil.
	MinSignificanceRuns = 3
	// FamilyShare is the share of the pooled total a function must hold
	// to be tested.
	FamilyShare = 0.01
	// DefaultSignificanceQ is the false discovery rate Significance
	// controls when its q is not in (0, 1).
	DefaultSignificanceQ = 0.05
)

// SignificanceResult is the per-function significance of target's runs
// against base's.
type SignificanceResult struct {
	// Q is the false discovery rate the family is adjusted at.
	Q float64 `json:"q"`
	// RunsNeeded is the number of runs each side needs for the test to
	// decide (MinSignificanceRuns); Decided reports whether both sides
	// have it. When they do not, every Significant, QValue and P is nil:
	// the runs cannot separate a change from noise.
	RunsNeeded int  `json:"runs_needed"`
	Decided    bool `json:"decided"`
	// BaseRuns and TargetRuns are the runs used, in input order; the
	// per-run values of Functions follow this order.
	BaseRuns   []uint `json:"base_runs"`
	TargetRuns []uint `json:"target_runs"`
	// Unusable lists the runs left out, and why.
	Unusable []UnusableRun `json:"unusable,omitempty"`
	// Tested and TestedFlat are the sizes of the cum and flat families
	// (0 when not Decided).
	Tested     int `json:"tested"`
	TestedFlat int `json:"tested_flat"`
	// Functions holds every function with a value in a run used, sorted
	// by name.
	Functions []FunctionSignificance `json:"functions"`
}

// UnusableRun is a run Significance left out.
type UnusableRun struct {
	RunID  uint   `json:"run_id"`
	Side   string `json:"side"` // "base" or "target"
	Reason string `json:"reason"`
}

// FunctionSignificance is one function's shares in every run and the
// outcome of its tests. Shares are values divided by the run's Ref.
type FunctionSignificance struct {
	Name string `json:"name"`
	// Per-run cumulative and flat shares, in the order of the result's
	// BaseRuns and TargetRuns.
	BaseRuns       []float64 `json:"base_runs"`
	TargetRuns     []float64 `json:"target_runs"`
	BaseRunsFlat   []float64 `json:"base_runs_flat"`
	TargetRunsFlat []float64 `json:"target_runs_flat"`
	// The sides' mean shares and Delta = TargetMean − BaseMean (per unit
	// of Ref: per record for work, a fraction of the total for total).
	BaseMean       float64 `json:"base_mean"`
	TargetMean     float64 `json:"target_mean"`
	Delta          float64 `json:"delta"`
	BaseMeanFlat   float64 `json:"base_mean_flat"`
	TargetMeanFlat float64 `json:"target_mean_flat"`
	DeltaFlat      float64 `json:"delta_flat"`
	// Pooled and PooledFlat are the function's shares of the pooled
	// total, which decide whether it is tested (≥ FamilyShare).
	Pooled     float64 `json:"pooled"`
	PooledFlat float64 `json:"pooled_flat"`
	// P and QValue are the cum test's raw and Benjamini-Hochberg adjusted
	// p-values, and Significant whether QValue ≤ Q: nil when the function
	// is not in the family or the result is not Decided. Likewise FlatP,
	// FlatQValue and FlatSignificant for flat.
	P               *float64 `json:"p,omitempty"`
	QValue          *float64 `json:"q_value,omitempty"`
	Significant     *bool    `json:"significant,omitempty"`
	FlatP           *float64 `json:"flat_p,omitempty"`
	FlatQValue      *float64 `json:"flat_q_value,omitempty"`
	FlatSignificant *bool    `json:"flat_significant,omitempty"`
}

// Function returns the entry of the function called name.
func (r *SignificanceResult) Function(name string) (*FunctionSignificance, bool) {
	i, ok := slices.BinarySearchFunc(r.Functions, name, func(f FunctionSignificance, n string) int { return strings.Compare(f.Name, n) })
	if !ok {
		return nil, false
	}
	return &r.Functions[i], true
}

// runShares is one usable run's function values as shares.
type runShares struct {
	id         uint
	cum, flat  []float64 // per name ID, divided by Ref; may be shorter than the name table
	total      float64   // the run's total divided by Ref
	pseudo     float64   // half a sample's worth divided by Ref
	unit       string
	targetSide bool
}

// Significance tests, function by function, whether target's runs differ
// from base's (see the comment above MinSignificanceRuns for the method).
// Runs whose profile is nil, whose sample index is out of range, whose
// Ref is not positive and finite, whose sample type's unit differs from
// the first usable run's, or that hold no sample of the type are left out
// and listed in Unusable. q outside (0, 1) is DefaultSignificanceQ.
func Significance(base, target []RunInput, q float64) SignificanceResult {
	return significance(base, target, q, MinSignificanceRuns)
}

// significance is Significance deciding from minRuns runs a side (the
// tests measure what fewer than MinSignificanceRuns would do).
func significance(base, target []RunInput, q float64, minRuns int) SignificanceResult {
	if !(q > 0 && q < 1) {
		q = DefaultSignificanceQ
	}
	res := SignificanceResult{Q: q, RunsNeeded: MinSignificanceRuns, BaseRuns: []uint{}, TargetRuns: []uint{}}
	names := newNameTable()
	var runs []runShares
	unit := ""
	for side, ins := range [][]RunInput{base, target} {
		sideName := [2]string{"base", "target"}[side]
		for _, in := range ins {
			rs, reason := shares(in, names)
			if reason == "" && len(runs) > 0 && rs.unit != unit {
				reason = fmt.Sprintf("its sample unit %q differs from the first run's %q", rs.unit, unit)
			}
			if reason != "" {
				res.Unusable = append(res.Unusable, UnusableRun{RunID: in.RunID, Side: sideName, Reason: reason})
				continue
			}
			if len(runs) == 0 {
				unit = rs.unit
			}
			rs.targetSide = side == 1
			runs = append(runs, rs)
			if rs.targetSide {
				res.TargetRuns = append(res.TargetRuns, in.RunID)
			} else {
				res.BaseRuns = append(res.BaseRuns, in.RunID)
			}
		}
	}
	nb, nt := len(res.BaseRuns), len(res.TargetRuns)
	res.Decided = nb >= minRuns && nt >= minRuns

	pooledTotal := 0.0
	var basePseudo, targetPseudo []float64
	for _, r := range runs {
		pooledTotal += r.total
		if r.targetSide {
			targetPseudo = append(targetPseudo, r.pseudo)
		} else {
			basePseudo = append(basePseudo, r.pseudo)
		}
	}
	at := func(vs []float64, id int) float64 {
		if id < len(vs) {
			return vs[id]
		}
		return 0
	}
	fns := make([]FunctionSignificance, len(names.list))
	// One backing array for all per-run slices.
	backing := make([]float64, 2*len(names.list)*len(runs))
	var cumIdx, flatIdx []int
	var cumX, cumY, flatX, flatY [][]float64
	for id, name := range names.list {
		f := &fns[id]
		f.Name = name
		cut := func(n int) []float64 {
			s := backing[:n:n]
			backing = backing[n:]
			return s
		}
		f.BaseRuns, f.BaseRunsFlat = cut(nb), cut(nb)
		f.TargetRuns, f.TargetRunsFlat = cut(nt), cut(nt)
		bi, ti := 0, 0
		pooled, pooledFlat := 0.0, 0.0
		for _, r := range runs {
			c, fl := at(r.cum, id), at(r.flat, id)
			pooled += c
			pooledFlat += fl
			if r.targetSide {
				f.TargetRuns[ti], f.TargetRunsFlat[ti] = c, fl
				ti++
			} else {
				f.BaseRuns[bi], f.BaseRunsFlat[bi] = c, fl
				bi++
			}
		}
		f.BaseMean, f.TargetMean = meanOr0(f.BaseRuns), meanOr0(f.TargetRuns)
		f.BaseMeanFlat, f.TargetMeanFlat = meanOr0(f.BaseRunsFlat), meanOr0(f.TargetRunsFlat)
		f.Delta, f.DeltaFlat = f.TargetMean-f.BaseMean, f.TargetMeanFlat-f.BaseMeanFlat
		if pooledTotal > 0 {
			f.Pooled, f.PooledFlat = pooled/pooledTotal, pooledFlat/pooledTotal
		}
		if !res.Decided {
			continue
		}
		if f.Pooled >= FamilyShare {
			cumIdx = append(cumIdx, id)
			cumX, cumY = append(cumX, logShares(f.BaseRuns, basePseudo)), append(cumY, logShares(f.TargetRuns, targetPseudo))
		}
		if f.PooledFlat >= FamilyShare {
			flatIdx = append(flatIdx, id)
			flatX, flatY = append(flatX, logShares(f.BaseRunsFlat, basePseudo)), append(flatY, logShares(f.TargetRunsFlat, targetPseudo))
		}
	}
	if res.Decided {
		res.Tested = testFamily(fns, cumIdx, cumX, cumY, q, false)
		res.TestedFlat = testFamily(fns, flatIdx, flatX, flatY, q, true)
	}
	// The stacker names every location of a profile, and runs left out
	// were read too: keep the functions some used run has a value for.
	// (A flat value counts in the cum too.)
	nonzero := func(v float64) bool { return v != 0 }
	fns = slices.DeleteFunc(fns, func(f FunctionSignificance) bool {
		return !slices.ContainsFunc(f.BaseRuns, nonzero) && !slices.ContainsFunc(f.TargetRuns, nonzero)
	})
	slices.SortFunc(fns, func(a, b FunctionSignificance) int { return strings.Compare(a.Name, b.Name) })
	res.Functions = fns
	return res
}

// testFamily runs Welch's test on each function of a family (its log
// values xs[k] against ys[k]), adjusts the p-values together and records
// them in fns (the flat fields when flat). It returns the family's size.
func testFamily(fns []FunctionSignificance, ids []int, xs, ys [][]float64, q float64, flat bool) int {
	var ps []float64
	var tested []int
	for k, id := range ids {
		t, err := stats.Welch(xs[k], ys[k])
		if err != nil {
			// Not reached: a decided result has ≥ 3 finite values a side.
			continue
		}
		ps = append(ps, t.P)
		tested = append(tested, id)
	}
	for k, adj := range stats.BHAdjust(ps) {
		f := &fns[tested[k]]
		p, a, sig := ps[k], adj, adj <= q
		if flat {
			f.FlatP, f.FlatQValue, f.FlatSignificant = &p, &a, &sig
		} else {
			f.P, f.QValue, f.Significant = &p, &a, &sig
		}
	}
	return len(ps)
}

// logShares returns log(share + pseudo) run by run: the values the tests
// compare.
func logShares(shares, pseudo []float64) []float64 {
	out := make([]float64, len(shares))
	for i, s := range shares {
		out[i] = math.Log(s + pseudo[i])
	}
	return out
}

func meanOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Mean(xs)
}

// shares reads one run's function values (through functionValues, the
// stacker and names) as shares of in.Ref, or says why the run cannot be
// used.
func shares(in RunInput, names *nameTable) (runShares, string) {
	p := in.Prof
	switch {
	case p == nil:
		return runShares{}, "no profile"
	case in.SampleIndex < 0 || in.SampleIndex >= len(p.SampleType) || p.SampleType[in.SampleIndex] == nil:
		return runShares{}, fmt.Sprintf("sample index %d out of range (%d sample types)", in.SampleIndex, len(p.SampleType))
	case !(in.Ref > 0) || math.IsInf(in.Ref, 0):
		return runShares{}, fmt.Sprintf("reference %v is not positive and finite", in.Ref)
	}
	one := oneSample(p, in.SampleIndex)
	if !(one > 0) {
		return runShares{}, "no sample of the type"
	}
	vals := functionValues(p, in.SampleIndex, 1, names, nil)
	rs := runShares{
		id:     in.RunID,
		cum:    make([]float64, len(vals)),
		flat:   make([]float64, len(vals)),
		pseudo: one / 2 / in.Ref,
		unit:   p.SampleType[in.SampleIndex].Unit,
	}
	total := 0.0
	for id, v := range vals {
		rs.cum[id] = v.cum / in.Ref
		rs.flat[id] = v.flat / in.Ref
		// Every counted sample has exactly one leaf: the flat values add
		// up to the run's total.
		total += v.flat
	}
	if !(total > 0) {
		return runShares{}, "no sample of the type"
	}
	rs.total = total / in.Ref
	return rs, ""
}

// oneSample is one sample's worth of sample type i: 1 for samples/count,
// the period when it is in the sample type's unit (a CPU profile's
// cpu/nanoseconds), else the smallest positive value a sample holds. 0
// when no sample holds one.
func oneSample(p *profile.Profile, i int) float64 {
	if st := p.SampleType[i]; st.Type == "samples" && st.Unit == "count" {
		return 1
	}
	if p.PeriodType != nil && p.Period > 0 && p.PeriodType.Unit == p.SampleType[i].Unit {
		return float64(p.Period)
	}
	var least int64
	for _, x := range p.Sample {
		if x != nil && i < len(x.Value) && x.Value[i] > 0 && (least == 0 || x.Value[i] < least) {
			least = x.Value[i]
		}
	}
	return float64(least)
}
