package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestULowerCDF checks the U distribution's recurrence against an
// enumeration of every arrangement of m baseline and n candidate values.
func TestULowerCDF(t *testing.T) {
	for m := 1; m <= 7; m++ {
		for n := 1; n <= 7; n++ {
			counts := bruteNullCounts(m, n)
			total := 0.0
			for _, c := range counts {
				total += c
			}
			cdf := uLowerCDF(m, n)
			if len(cdf) != m*n+1 {
				t.Fatalf("%d×%d: %d values, want %d", m, n, len(cdf), m*n+1)
			}
			sum := 0.0
			for u, c := range counts {
				sum += c
				if math.Abs(cdf[u]-sum/total) > 1e-12 {
					t.Fatalf("%d×%d: P(U ≤ %d) = %v, want %v", m, n, u, cdf[u], sum/total)
				}
			}
		}
	}
}

// TestUCutoff checks the interval's rank: against the enumeration for
// small samples, against the two-sided α = 0.05 critical values of U
// printed in Mann-Whitney tables (reject when U ≤ k−1), and the normal
// approximation against the exact rank where both apply.
func TestUCutoff(t *testing.T) {
	for _, alpha := range []float64{0.01, 0.05, 0.1, 0.2} {
		for m := 1; m <= 7; m++ {
			for n := 1; n <= 7; n++ {
				counts := bruteNullCounts(m, n)
				total, sum, want := 0.0, 0.0, 0
				for _, c := range counts {
					total += c
				}
				for u, c := range counts {
					sum += c
					if sum/total > alpha/2 || u+1 > (m*n+1)/2 {
						break
					}
					want = u + 1
				}
				if got, exact := uCutoff(m, n, alpha); got != want || !exact {
					t.Errorf("α %v, %d×%d: k = %d (exact %v), want %d", alpha, m, n, got, exact, want)
				}
			}
		}
	}
	// Critical values of U, two-sided α = 0.05, equal sizes.
	for n, crit := range map[int]int{4: 0, 5: 2, 6: 5, 7: 8, 8: 13, 9: 17, 10: 23, 12: 37, 15: 64, 20: 127} {
		if k, _ := uCutoff(n, n, 0.05); k-1 != crit {
			t.Errorf("%d×%d: critical U = %d, want %d", n, n, k-1, crit)
		}
	}
	if k, _ := uCutoff(3, 3, 0.05); k != 0 {
		t.Errorf("3×3 at α 0.05: k = %d, want 0 (no bounded interval: P(U = 0) = 1/20 > 0.025)", k)
	}
	for _, mn := range [][2]int{{20, 20}, {30, 25}, {40, 40}, {50, 50}, {12, 45}} {
		exact, _ := uCutoff(mn[0], mn[1], 0.05)
		if approx := uCutoffNormal(mn[0], mn[1], 0.05); abs(approx-exact) > 1 {
			t.Errorf("%d×%d: normal k = %d, exact %d", mn[0], mn[1], approx, exact)
		}
	}
	if k, exact := uCutoff(60, 80, 0.05); exact || k != uCutoffNormal(60, 80, 0.05) || k < 1 {
		t.Errorf("60×80: k %d exact %v, want the normal approximation", k, exact)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// TestHodgesLehmann checks the estimate and interval on random small
// samples against the brute-force test inversion, at several levels.
func TestHodgesLehmann(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	for i := range 300 {
		m, n := 4+rng.IntN(4), 4+rng.IntN(4)
		alpha := []float64{0.05, 0.1, 0.2}[i%3]
		x, y := make([]float64, m), make([]float64, n)
		for j := range x {
			x[j] = 100 * math.Exp(0.1*rng.NormFloat64())
		}
		shift := math.Exp(0.1 * rng.NormFloat64())
		for j := range y {
			y[j] = 100 * shift * math.Exp(0.1*rng.NormFloat64())
		}
		s, ok := hodgesLehmann(x, y, 0, alpha)
		est, lo, hi, bounded := bruteChange(x, y, alpha)
		if !ok || !s.Log || !s.Exact || s.Interval != bounded {
			t.Fatalf("%v vs %v: ok %v, %+v; brute force bounded %v", x, y, ok, s, bounded)
		}
		if math.Abs(s.Est-est) > 1e-9 || (bounded && (math.Abs(s.Lo-lo) > 1e-9 || math.Abs(s.Hi-hi) > 1e-9)) {
			t.Fatalf("α %v, %v vs %v: %v [%v, %v], want %v [%v, %v]", alpha, x, y, s.Est, s.Lo, s.Hi, est, lo, hi)
		}
	}

	// Values that are 0 or negative: the shift of the values over the
	// baseline median. Baseline 1, 2, 3, 4 (median 2.5), candidate +1
	// each: every difference is in 0…2 around 1, estimate 1 → +40%.
	s, ok := hodgesLehmann([]float64{0, 1, 2, 3}, []float64{1, 2, 3, 4}, 1.5, 0.05)
	if !ok || s.Log || math.Abs(s.Est-1/1.5*100) > 1e-9 || !s.Interval || math.Abs(s.Lo-(-2)/1.5*100) > 1e-9 || math.Abs(s.Hi-4/1.5*100) > 1e-9 {
		t.Errorf("values with 0: %+v ok %v; want the shift 1 over the median 1.5 (+66.7%%), interval −2…4 of it", s, ok)
	}
	if _, ok := hodgesLehmann([]float64{0, 0, 0, 1}, []float64{0, 1, 1, 1}, 0, 0.05); ok {
		t.Error("baseline median 0 with zero values: want no percentage")
	}
}

// TestHodgesLehmannCoverage draws samples with a known ratio and checks
// that the 95% interval holds it in at least 95% of the draws (less a
// tolerance of three standard errors): the interval's guarantee.
func TestHodgesLehmannCoverage(t *testing.T) {
	for _, mn := range [][2]int{{4, 4}, {5, 7}, {10, 10}, {55, 60}} {
		t.Run(fmt.Sprintf("%d×%d", mn[0], mn[1]), func(t *testing.T) {
			sims := 2000
			if mn[0] > exactUMaxN || mn[1] > exactUMaxN {
				sims = 600 // the normal approximation; 3,300 pairs a draw
			}
			rng := rand.New(rand.NewPCG(5, uint64(mn[0]*100+mn[1])))
			const ratio = 1.07
			hit := 0
			for range sims {
				x, y := make([]float64, mn[0]), make([]float64, mn[1])
				for j := range x {
					x[j] = 50 * math.Exp(0.2*rng.NormFloat64())
				}
				for j := range y {
					y[j] = 50 * ratio * math.Exp(0.2*rng.NormFloat64())
				}
				s, _ := hodgesLehmann(x, y, 0, 0.05)
				if s.Interval && s.Lo <= (ratio-1)*100 && (ratio-1)*100 <= s.Hi {
					hit++
				}
			}
			cov := float64(hit) / float64(sims)
			if tol := 3 * math.Sqrt(0.95*0.05/float64(sims)); cov < 0.95-tol {
				t.Errorf("coverage %.3f, want ≥ 0.95 (−%.3f)", cov, tol)
			}
		})
	}
}

// TestBHAdjust checks Benjamini-Hochberg on the example of their 1995
// paper (15 p-values, q = 0.05: the four smallest are rejected) and the
// adjusted values against the step-up rule on random p-values.
func TestBHAdjust(t *testing.T) {
	ps := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000}
	adj := bhAdjust(ps)
	for i, a := range adj {
		if (a <= 0.05) != (i < 4) {
			t.Errorf("p %v: adjusted %v, significant %v; want the first four only", ps[i], a, a <= 0.05)
		}
	}
	if math.Abs(adj[0]-0.0015) > 1e-12 || adj[14] != 1 {
		t.Errorf("adjusted = %v", adj)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		k := 1 + rng.IntN(12)
		ps := make([]float64, k)
		for i := range ps {
			ps[i] = math.Pow(rng.Float64(), 3)
		}
		adj := bhAdjust(ps)
		for _, q := range []float64{0.01, 0.05, 0.1, 0.3} {
			// Step-up: the largest i with p(i) ≤ i·q/k; reject p ≤ p(i).
			sorted := slices.Sorted(slices.Values(ps))
			cut := -1.0
			for i := k; i >= 1; i-- {
				if sorted[i-1] <= float64(i)*q/float64(k) {
					cut = sorted[i-1]
					break
				}
			}
			for i, p := range ps {
				if (adj[i] <= q) != (p <= cut) {
					t.Fatalf("q %v, p-values %v: adjusted %v of %v says %v, step-up says %v", q, ps, adj[i], p, adj[i] <= q, p <= cut)
				}
				if adj[i] < p {
					t.Fatalf("adjusted %v below raw %v", adj[i], p)
				}
			}
		}
	}
	if len(bhAdjust(nil)) != 0 {
		t.Error("bhAdjust(nil) not empty")
	}
}

// TestMoreRepetitionsRule checks the rules behind "run N more" against
// the arithmetic worked by hand.
func TestMoreRepetitionsRule(t *testing.T) {
	tab := &Table{Alpha: 0.05, MinChange: 5}
	// Inconclusive: estimate 0 on the log scale, half-width 0.1, 6 vs 6.
	// The half-width must fall to ln(1.05) = 0.04879: √(6/(6+N)) ≤
	// 0.4879, 6+N ≥ 25.2, N = 20.
	lo, hi, est := math.Expm1(-0.1)*100, math.Expm1(0.1)*100, 0.0
	c := &Cell{N: 6, ChangeEst: &est, ChangeLo: &lo, ChangeHi: &hi, logChange: true}
	if got := morePerSide(6, 6, tab.moreInterval(c, 6)); got != 20 {
		t.Errorf("inconclusive 6 vs 6, ±0.1 around 0: %d more, want 20", got)
	}
	// Estimate 0.04 with half-width 0.06: the target is max(0.04,
	// 0.00879) = 0.04: √(6/(6+N)) ≤ 2/3, 6+N ≥ 13.5, N = 8.
	lo, hi, est = math.Expm1(-0.02)*100, math.Expm1(0.1)*100, math.Expm1(0.04)*100
	c = &Cell{N: 6, ChangeEst: &est, ChangeLo: &lo, ChangeHi: &hi, logChange: true}
	if got := morePerSide(6, 6, tab.moreInterval(c, 6)); got != 8 {
		t.Errorf("inconclusive 6 vs 6, 0.04 ± 0.06: %d more, want 8", got)
	}
	// Borderline: p = 0.08 (z = 1.7507) alone (adjusted = raw), 5 vs 5:
	// z must reach 1.95996: √((5+N)/5) ≥ 1.11952, N ≥ 1.267, N = 2.
	if got := morePerSide(5, 5, tab.morePValue(0.08, 0.08, 5, 5)); got != 2 {
		t.Errorf("borderline p 0.08, 5 vs 5: %d more, want 2", got)
	}
	// Beyond the cap.
	lo, hi, est = -50, 100, 0
	c = &Cell{N: 4, ChangeEst: &est, ChangeLo: &lo, ChangeHi: &hi, logChange: true}
	if got := morePerSide(4, 4, tab.moreInterval(c, 4)); got != MaxMoreRepetitions+1 {
		t.Errorf("very wide interval: %d more, want %d (more than the cap)", got, MaxMoreRepetitions+1)
	}
}
