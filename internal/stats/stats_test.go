package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestRegIncBeta checks I_x(a, b) against closed forms (a = 1 or b = 1,
// integer a and b, the arcsine law at a = b = ½) and values computed to 30
// digits with mpmath's betainc, on both sides of the symmetry switch.
func TestRegIncBeta(t *testing.T) {
	for _, c := range []struct {
		a, b, x, want float64
	}{
		{1, 1, 0.37, 0.37},                  // uniform
		{2, 3, 0.4, 0.5248},                 // 6x²/2·… = 1 − Σ binomial terms
		{1, 4, 0.25, 1 - math.Pow(0.75, 4)}, // b-th power
		{3, 1, 0.6, 0.216},                  // x^a
		{0.5, 0.5, 0.3, 2 / math.Pi * math.Asin(math.Sqrt(0.3))}, // arcsine
		{10, 0.5, 0.9, 0.15164090963470996856},
		{5, 20, 0.2, 0.54012267024242093262},
		{100, 0.5, 0.999, 0.65504351632442958775},
		{0.5, 3, 0.01, 0.18625375000000000191},
		{2, 3, 0, 0},
		{2, 3, 1, 1},
	} {
		if got := RegIncBeta(c.a, c.b, c.x); !near(got, c.want, 1e-12) {
			t.Errorf("I_%v(%v, %v) = %.15g, want %.15g", c.x, c.a, c.b, got, c.want)
		}
	}
	for _, bad := range [][3]float64{{0, 1, 0.5}, {1, -1, 0.5}, {1, 1, -0.1}, {1, 1, 1.5}, {math.NaN(), 1, 0.5}, {math.Inf(1), 1, 0.5}} {
		if got := RegIncBeta(bad[0], bad[1], bad[2]); !math.IsNaN(got) {
			t.Errorf("RegIncBeta%v = %v, want NaN", bad, got)
		}
	}
}

// TestStudentTQuantiles checks the two-sided p-value at the 95 % and
// 99 % quantiles of the t table (three decimals, so the p-values agree
// to the table's rounding), the exact CDFs at 1 and 2 degrees of freedom,
// symmetry, and the approach to the normal as df grows.
func TestStudentTQuantiles(t *testing.T) {
	for _, c := range []struct {
		df, t975, t995 float64
	}{
		{1, 12.706, 63.657},
		{2, 4.303, 9.925},
		{3, 3.182, 5.841},
		{5, 2.571, 4.032},
		{10, 2.228, 3.169},
		{30, 2.042, 2.750},
		{120, 1.980, 2.617},
		{math.Inf(1), 1.960, 2.576},
	} {
		if p := StudentTTwoSided(c.t975, c.df); !near(p, 0.05, 0.0002) {
			t.Errorf("df %v: P(|T| ≥ %v) = %.5f, want 0.05", c.df, c.t975, p)
		}
		if p := StudentTTwoSided(c.t995, c.df); !near(p, 0.01, 0.00005) {
			t.Errorf("df %v: P(|T| ≥ %v) = %.6f, want 0.01", c.df, c.t995, p)
		}
	}
	for _, x := range []float64{-30, -3, -1, -0.2, 0, 0.5, 1, 2.5, 40} {
		// df 1 is the Cauchy distribution; df 2 has a closed form too.
		if got, want := StudentTCDF(x, 1), 0.5+math.Atan(x)/math.Pi; !near(got, want, 1e-13) {
			t.Errorf("CDF(%v; 1) = %.15g, want %.15g", x, got, want)
		}
		if got, want := StudentTCDF(x, 2), 0.5+x/(2*math.Sqrt(2+x*x)); !near(got, want, 1e-13) {
			t.Errorf("CDF(%v; 2) = %.15g, want %.15g", x, got, want)
		}
		for _, df := range []float64{0.7, 3, 7.5, 1e3} {
			if s := StudentTCDF(x, df) + StudentTCDF(-x, df); !near(s, 1, 1e-13) {
				t.Errorf("CDF(%v; %v) + CDF(%v; %v) = %.15g, want 1", x, df, -x, df, s)
			}
		}
	}
	normal := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, x := range []float64{-4, -1.5, 0.3, 1.96, 3} {
		prev := math.Inf(1)
		for _, df := range []float64{10, 100, 1e4, 1e6} {
			d := math.Abs(StudentTCDF(x, df) - normal(x))
			if d > prev {
				t.Errorf("x %v: |CDF − Φ| grew from %g to %g at df %v", x, prev, d, df)
			}
			prev = d
		}
		if prev > 1e-5 {
			t.Errorf("x %v: at df 1e6 the CDF is %g from the normal's", x, prev)
		}
	}
	// Far tails keep their precision (mpmath, 30 digits).
	for _, c := range []struct{ t, df, want float64 }{
		{10, 3, 0.0021283990584141500574},
		{40, 5, 1.8411962171772954355e-07},
		{2.5, 7.5, 0.038820258273625557183},
	} {
		if got := StudentTTwoSided(c.t, c.df); !near(got/c.want, 1, 1e-11) {
			t.Errorf("P(|T| ≥ %v; %v) = %.15g, want %.15g", c.t, c.df, got, c.want)
		}
	}
	if p := StudentTTwoSided(0, 4); p != 1 {
		t.Errorf("P(|T| ≥ 0) = %v, want 1", p)
	}
	if p := StudentTTwoSided(math.Inf(-1), 4); p != 0 {
		t.Errorf("P(|T| ≥ ∞) = %v, want 0", p)
	}
	if p := StudentTTwoSided(1, 0); !math.IsNaN(p) {
		t.Errorf("df 0: %v, want NaN", p)
	}
}

// TestWelch checks the statistic, the Welch-Satterthwaite degrees of
// freedom and the p-value against a worked example (mpmath, 30 digits),
// and the edge cases.
func TestWelch(t *testing.T) {
	x := []float64{19.1, 20.3, 18.7, 21.0, 19.8}
	y := []float64{22.4, 21.1, 23.0, 20.9}
	r, err := Welch(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.T, 3.1681611790596064371, 1e-12) || !near(r.DF, 6.2249805643998108077, 1e-12) ||
		!near(r.P, 0.018422606022791456972, 1e-13) || !near(r.Diff, 21.85-19.78, 1e-12) {
		t.Errorf("Welch = %+v, want T 3.16816, DF 6.22498, P 0.0184226, Diff 2.07", r)
	}
	// Swapping the samples flips the sign, not the p-value.
	if s, _ := Welch(y, x); !near(s.T, -r.T, 1e-12) || !near(s.P, r.P, 1e-15) {
		t.Errorf("swapped: %+v against %+v", s, r)
	}
	// Adding a constant to both samples, or scaling both, changes nothing but Diff.
	xs, ys := slices.Clone(x), slices.Clone(y)
	for i := range xs {
		xs[i] = 1e6 + 3*xs[i]
	}
	for i := range ys {
		ys[i] = 1e6 + 3*ys[i]
	}
	if s, _ := Welch(xs, ys); !near(s.T, r.T, 1e-8) || !near(s.DF, r.DF, 1e-8) {
		t.Errorf("shifted and scaled: %+v against %+v", s, r)
	}

	for _, c := range []struct {
		name   string
		x, y   []float64
		t, p   float64
		errIs  error
		anyErr bool
	}{
		{name: "identical", x: []float64{1, 2, 3}, y: []float64{1, 2, 3}, t: 0, p: 1},
		{name: "no spread, equal", x: []float64{2, 2}, y: []float64{2, 2, 2}, t: 0, p: 1},
		{name: "no spread, different", x: []float64{2, 2}, y: []float64{3, 3}, t: math.Inf(1), p: 0},
		{name: "one value", x: []float64{1}, y: []float64{1, 2}, errIs: ErrTooFew},
		{name: "empty", x: nil, y: []float64{1, 2}, errIs: ErrTooFew},
		{name: "NaN", x: []float64{1, math.NaN()}, y: []float64{1, 2}, anyErr: true},
		{name: "Inf", x: []float64{1, 2}, y: []float64{math.Inf(-1), 2}, anyErr: true},
	} {
		r, err := Welch(c.x, c.y)
		switch {
		case c.errIs != nil || c.anyErr:
			if err == nil || (c.errIs != nil && !errors.Is(err, c.errIs)) {
				t.Errorf("%s: err %v, want %v", c.name, err, c.errIs)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case r.T != c.t || r.P != c.p:
			t.Errorf("%s: %+v, want T %v, P %v", c.name, r, c.t, c.p)
		}
	}
}

// TestWelchCalibrated draws normal samples with unequal variances and
// sizes under equal means: the share of p-values ≤ 0.05 must not exceed
// 0.05 by more than 3 binomial standard deviations over 20,000 tests
// (0.0046). Welch's test is conservative with three values a side (the
// estimated degrees of freedom are too few when the variances happen to
// differ: 0.036 at 3 against 3 with equal variances), so below 0.05 the
// bound is looser: at least 0.03.
func TestWelchCalibrated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		m, n     int
		sdx, sdy float64
	}{{3, 3, 1, 1}, {3, 5, 1, 3}, {5, 5, 0.2, 1}, {10, 4, 2, 1}} {
		const sims = 20000
		hits := 0
		x, y := make([]float64, c.m), make([]float64, c.n)
		for range sims {
			for i := range x {
				x[i] = 5 + c.sdx*rng.NormFloat64()
			}
			for i := range y {
				y[i] = 5 + c.sdy*rng.NormFloat64()
			}
			r, err := Welch(x, y)
			if err != nil {
				t.Fatal(err)
			}
			if r.P <= 0.05 {
				hits++
			}
		}
		rate := float64(hits) / sims
		if tol := 3 * math.Sqrt(0.05*0.95/sims); rate > 0.05+tol || rate < 0.03 {
			t.Errorf("%+v: %.4f of p-values ≤ 0.05, want 0.03 to 0.05 + %.4f", c, rate, tol)
		}
	}
}

func TestMeanVariance(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		m, v float64
	}{
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 32.0 / 7},
		{[]float64{1e9 + 1, 1e9 + 2, 1e9 + 3}, 1e9 + 2, 1},
		{[]float64{3, 3}, 3, 0},
	} {
		if m, v := Mean(c.xs), Variance(c.xs); !near(m, c.m, 1e-6) || !near(v, c.v, 1e-9) {
			t.Errorf("%v: mean %v variance %v, want %v %v", c.xs, m, v, c.m, c.v)
		}
	}
	if !math.IsNaN(Mean(nil)) || !math.IsNaN(Variance([]float64{1})) {
		t.Error("Mean(nil) or Variance of one value not NaN")
	}
}

// TestBHAdjust checks Benjamini-Hochberg on the example of their 1995
// paper (15 p-values, q = 0.05: the four smallest are rejected) and the
// adjusted values against the step-up rule on random p-values, ties
// included.
func TestBHAdjust(t *testing.T) {
	ps := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000}
	adj := BHAdjust(ps)
	for i, a := range adj {
		if (a <= 0.05) != (i < 4) {
			t.Errorf("p %v: adjusted %v; want only the first four ≤ 0.05", ps[i], a)
		}
	}
	if !near(adj[0], 0.0015, 1e-12) || !near(adj[3], 0.0095*15/4, 1e-12) || adj[14] != 1 {
		t.Errorf("adjusted = %v", adj)
	}

	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		k := 1 + rng.IntN(20)
		ps := make([]float64, k)
		for i := range ps {
			ps[i] = math.Pow(rng.Float64(), 3)
			if i > 0 && rng.IntN(4) == 0 {
				ps[i] = ps[rng.IntN(i)] // a tie
			}
		}
		adj := BHAdjust(ps)
		sorted := slices.Sorted(slices.Values(ps))
		for _, q := range []float64{0.01, 0.05, 0.1, 0.3} {
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
				if adj[i] < p || adj[i] > 1 {
					t.Fatalf("adjusted %v of raw %v outside [p, 1]", adj[i], p)
				}
			}
		}
	}
	if len(BHAdjust(nil)) != 0 {
		t.Error("BHAdjust(nil) not empty")
	}
}
