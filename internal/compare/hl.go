package compare

import (
	"math"
	"slices"
	"sync"

	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/internal/stats"
)

// This file holds the statistics of a change between two samples that
// benchmath does not offer: the Hodges-Lehmann estimate of the shift
// between them and its distribution-free confidence interval from the
// Mann-Whitney U distribution. The Benjamini-Hochberg adjustment of a
// table's p-values is internal/stats's (bhAdjust).
//
// With x the baseline's m values and y the candidate's n, let D(1) ≤ … ≤
// D(mn) be the sorted pairwise differences y_j − x_i (of log values, so
// a difference is the log of a ratio). If the candidate is the baseline
// shifted by δ, the number of differences above δ has the null
// distribution of the Mann-Whitney U statistic, symmetric on 0…mn. So
// with k the largest integer such that P(U ≤ k−1) ≤ α/2,
//
//	P(D(k) ≤ δ ≤ D(mn+1−k)) ≥ 1 − 2·P(U ≤ k−1) ≥ 1 − α,
//
// and [D(k), D(mn+1−k)] is a 1−α confidence interval for δ; the median
// of the D is the Hodges-Lehmann estimate. The interval is the set of
// shifts the two-sided U test (the test behind the verdict) does not
// reject at α. When even k = 1 has P(U ≤ 0) = 1/C(m+n, m) > α/2 there is
// no bounded interval: too few samples.

// exactUMaxN is the largest sample size on either side for which
// uCutoff computes the U distribution exactly; above it, the normal
// approximation is within one rank of the exact cut-off (see the tests)
// and the exact table would cost O(m²n²).
const exactUMaxN = 50

// uLowerCDF returns P(U ≤ u) for u = 0…mn under the null hypothesis (no
// ties), U counting the (baseline, candidate) pairs with the baseline
// value above. It uses the recurrence on the largest of the m+n values:
// with probability m/(m+n) it is a baseline value, above all n candidate
// values (adding n to U), else a candidate value (adding nothing):
//
//	P_{m,n}(u) = m/(m+n)·P_{m−1,n}(u−n) + n/(m+n)·P_{m,n−1}(u)
//
// Every term is a positive probability, so no precision is lost to
// cancellation. Cost O(m·n·mn).
func uLowerCDF(m, n int) []float64 {
	// row[j] is the distribution (probabilities of u = 0…i·j) for i
	// baseline and j candidate values; start with i = 0.
	row := make([][]float64, n+1)
	for j := range row {
		row[j] = []float64{1}
	}
	for i := 1; i <= m; i++ {
		next := make([][]float64, n+1)
		next[0] = []float64{1}
		for j := 1; j <= n; j++ {
			d := make([]float64, i*j+1)
			wx, wy := float64(i)/float64(i+j), float64(j)/float64(i+j)
			for u, p := range row[j] { // (i−1, j): the largest is a baseline value
				d[u+j] += wx * p
			}
			for u, p := range next[j-1] { // (i, j−1): the largest is a candidate value
				d[u] += wy * p
			}
			next[j] = d
		}
		row = next
	}
	dist := row[n]
	cdf := make([]float64, len(dist))
	s := 0.0
	for u, p := range dist {
		s += p
		cdf[u] = s
	}
	return cdf
}

// uCutoff returns k, the rank of the pairwise difference that bounds the
// two-sided 1−alpha interval from below (the upper bound is rank mn+1−k):
// the largest k with P(U ≤ k−1) ≤ alpha/2, exactly when both samples
// have at most exactUMaxN values, else by the normal approximation with
// continuity correction. k is 0 when no k ≥ 1 qualifies (too few samples
// for a bounded interval).
func uCutoff(m, n int, alpha float64) (k int, exact bool) {
	if m < 1 || n < 1 {
		return 0, true
	}
	if m <= exactUMaxN && n <= exactUMaxN {
		key := uKey{m, n, alpha}
		if k, ok := uCutoffs.Load(key); ok {
			return k.(int), true
		}
		cdf := uLowerCDF(m, n)
		// Allow for rounding in the sums: a tail of exactly α/2 counts.
		limit := alpha / 2 * (1 + 1e-9)
		for k = 0; k < len(cdf) && cdf[k] <= limit; k++ {
		}
		k = min(k, (m*n+1)/2)
		uCutoffs.Store(key, k)
		return k, true
	}
	return uCutoffNormal(m, n, alpha), false
}

// uCutoffs caches uCutoff's exact ranks: a table asks for the same sizes
// for every headline row, and the exact distribution costs O(m²n²). At
// most 50 × 50 sizes per α.
var uCutoffs sync.Map // uKey → int

type uKey struct {
	m, n  int
	alpha float64
}

// uCutoffNormal is uCutoff by the normal approximation of U (mean mn/2,
// variance mn(m+n+1)/12) with continuity correction:
// P(U ≤ k−1) ≈ Φ((k − 1 + ½ − mn/2)/σ) ≤ α/2.
func uCutoffNormal(m, n int, alpha float64) int {
	mn := float64(m) * float64(n)
	sigma := math.Sqrt(mn * float64(m+n+1) / 12)
	k := int(math.Floor(mn/2 + 0.5 - normalQuantile(1-alpha/2)*sigma))
	return max(0, min(k, (m*n+1)/2))
}

// normalQuantile is the standard normal distribution's quantile
// function Φ⁻¹(p), for 0 < p < 1.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// A shift is the Hodges-Lehmann comparison of a candidate sample with a
// baseline sample.
type shift struct {
	// Est, Lo and Hi are the estimate and the interval's bounds as a
	// change in percent of the baseline.
	Est, Lo, Hi float64
	// Interval reports whether Lo and Hi bound a 1−α interval; false
	// when the samples are too small for one.
	Interval bool
	// Log reports whether the shift is of log values (a ratio); false
	// when a value is 0 or negative and the shift is of the values,
	// divided by the baseline's median.
	Log bool
	// Exact reports whether the interval's ranks come from the exact U
	// distribution rather than the normal approximation.
	Exact bool
}

// hodgesLehmann compares the candidate values y with the baseline values
// x (neither empty). With every value positive it works on log values,
// so the shift is a ratio shown as a percentage: (e^δ − 1)·100. Otherwise
// it works on the values and divides by |baseMedian|; ok is false when
// that is 0.
func hodgesLehmann(x, y []float64, baseMedian, alpha float64) (s shift, ok bool) {
	s.Log = allPositive(x) && allPositive(y)
	d := make([]float64, 0, len(x)*len(y))
	for _, a := range x {
		for _, b := range y {
			if s.Log {
				d = append(d, math.Log(b)-math.Log(a))
			} else {
				d = append(d, b-a)
			}
		}
	}
	if !s.Log && baseMedian == 0 {
		return s, false
	}
	slices.Sort(d)
	toPct := func(v float64) float64 {
		if s.Log {
			return math.Expm1(v) * 100
		}
		return v / math.Abs(baseMedian) * 100
	}
	s.Est = toPct(median.Sorted(d))
	k, exact := uCutoff(len(x), len(y), alpha)
	s.Exact = exact
	if k >= 1 {
		s.Interval = true
		s.Lo, s.Hi = toPct(d[k-1]), toPct(d[len(d)-k])
	}
	return s, true
}

func allPositive(vs []float64) bool {
	for _, v := range vs {
		if !(v > 0) {
			return false
		}
	}
	return true
}

// bhAdjust is stats.BHAdjust, the one Benjamini-Hochberg adjustment that
// the table and the profiles' per-function significance share.
func bhAdjust(ps []float64) []float64 { return stats.BHAdjust(ps) }
