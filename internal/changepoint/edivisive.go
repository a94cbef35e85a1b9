package changepoint

import (
	"math"
	"slices"
)

// scratch holds buffers reused across windows and intervals, so a detection
// allocates O(Window) memory once rather than per candidate search.
type scratch struct {
	first, row []float64
}

func (s *scratch) grow(n int) {
	if cap(s.first) < n {
		s.first = make([]float64, n)
		s.row = make([]float64, n)
	}
	s.first, s.row = s.first[:n], s.row[:n]
}

// detectWindow is the divisive detector of Otava's ChangePointDetector with
// the t-test, over one window w: starting from the whole window as one
// interval, it takes the candidate with the largest divergence over all
// intervals, tests the two sides of that candidate within its interval,
// and if the p-value is at most p splits the interval there and repeats;
// it stops at the first candidate that fails. It returns the split indexes
// (relative to w), sorted.
func detectWindow(w []float64, p float64, sc *scratch) []int {
	type interval struct {
		lo, hi, tau int
		q           float64
	}
	search := func(lo, hi int) interval {
		iv := interval{lo: lo, hi: hi, tau: -1}
		if hi-lo > 1 {
			iv.tau, iv.q = candidate(w, lo, hi, sc)
		}
		return iv
	}
	// Intervals stay in index order; each remembers its best candidate,
	// which does not change until the interval is split.
	ivs := []interval{search(0, len(w))}
	var cps []int
	for {
		best := -1
		for i, iv := range ivs {
			// The first largest, as Python's max over the intervals in order.
			if iv.tau >= 0 && (best < 0 || iv.q > ivs[best].q) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		iv := ivs[best]
		// NaN (equal constant sides) fails the test, as in Otava.
		if !(compare(w[iv.lo:iv.tau], w[iv.tau:iv.hi]).p <= p) {
			break
		}
		cps = append(cps, iv.tau)
		ivs = slices.Replace(ivs, best, best+1, search(iv.lo, iv.tau), search(iv.tau, iv.hi))
	}
	slices.Sort(cps)
	return cps
}

// candidate finds, in z[lo:hi] (at least 2 points), the split tau
// (lo < tau < hi) of the pair (tau, kappa), tau < kappa <= hi, that
// maximises the E-divisive divergence of X = z[lo:tau] and Y = z[tau:kappa]:
//
//	Q = 2/(n+m) ΣΣ|x-y| - 2m/((n+m)(n-1)) Σ|x-x'| - 2n/((n+m)(m-1)) Σ|y-y'|
//
// with n = |X|, m = |Y|, the within sums over unordered pairs and a within
// term taken as 0 when its side has one point. Among equal maxima it takes
// the smallest tau, then the smallest kappa, as numpy's argmax over Otava's
// Q matrix does. It returns tau and the maximum.
//
// With W(a, b) the sum of |z_i - z_j| over lo-relative pairs a <= i < j < b,
// the three sums are W(lo, kappa) - W(lo, tau) - W(tau, kappa), W(lo, tau)
// and W(tau, kappa). W(lo, ·) is computed first by columns; W(tau, ·) is then
// built row by row for tau going down from hi-1, each row from the one
// below, so the search takes O((hi-lo)²) time and O(hi-lo) memory.
func candidate(z []float64, lo, hi int, sc *scratch) (int, float64) {
	n := hi - lo
	sc.grow(n + 1)
	// first[k] = W(lo, lo+k) for k in [0, n].
	first, row := sc.first, sc.row
	first[0] = 0
	for k := 1; k <= n; k++ {
		// Add the distances from z[lo+k-1] to the points before it.
		var col float64
		v := z[lo+k-1]
		for i := lo; i < lo+k-1; i++ {
			col += math.Abs(z[i] - v)
		}
		first[k] = first[k-1] + col
	}
	clear(row)
	bestTau, bestQ := -1, 0.0
	// row[k] = W(lo+t, lo+k) for the current t, k in [t, n].
	for t := n - 1; t >= 1; t-- {
		// Extend row from t+1 to t: add the distances from z[lo+t] to
		// z[lo+t+1 .. lo+k-1] to every row[k].
		var acc float64
		v := z[lo+t]
		for k := t + 2; k <= n; k++ {
			acc += math.Abs(v - z[lo+k-1])
			row[k] += acc
		}
		nx := float64(t)
		wx := first[t]
		rowTau, rowQ := -1, 0.0
		for k := t + 1; k <= n; k++ {
			my := float64(k - t)
			wy := row[k]
			between := first[k] - wx - wy
			q := 2 / (nx + my) * between
			if t > 1 {
				q -= 2 * my / ((nx + my) * (nx - 1)) * wx
			}
			if k-t > 1 {
				q -= 2 * nx / ((nx + my) * (my - 1)) * wy
			}
			// Strict: the first (smallest kappa) of equal values in the row.
			if rowTau < 0 || q > rowQ {
				rowTau, rowQ = t, q
			}
		}
		// Going down in tau, an equal value replaces the best so far, so
		// the smallest tau of equals wins. NaN never replaces a number.
		if bestTau < 0 || rowQ >= bestQ {
			bestTau, bestQ = rowTau, rowQ
		}
	}
	return lo + bestTau, bestQ
}
