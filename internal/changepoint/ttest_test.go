package changepoint

import (
	"math"
	"testing"
)

// TestStudentTwoSided checks the t distribution's two-sided tail against
// closed forms for 1, 2 and 4 degrees of freedom and against the normal
// distribution for a very large number (they differ by O(t⁴/df) relatively).
func TestStudentTwoSided(t *testing.T) {
	closed := []struct {
		name string
		df   float64
		p    func(t float64) float64
	}{
		{"df=1", 1, func(t float64) float64 { return 1 - 2/math.Pi*math.Atan(math.Abs(t)) }},
		{"df=2", 2, func(t float64) float64 { return 1 - math.Abs(t)/math.Sqrt(2+t*t) }},
		// The CDF with 4 df is 1/2 + t(t²+6) / (2(t²+4)^1.5).
		{"df=4", 4, func(t float64) float64 {
			a := math.Abs(t)
			return 1 - a*(a*a+6)/math.Pow(a*a+4, 1.5)
		}},
	}
	for _, c := range closed {
		for _, tv := range []float64{0, 0.1, 0.5, 1, 2, 3.7, 10, -2.5, 100} {
			got, want := studentTwoSided(tv, c.df), c.p(tv)
			if math.Abs(got-want) > 1e-12*math.Max(want, 1e-3) {
				t.Errorf("%s t=%g: p = %.16g, closed form %.16g", c.name, tv, got, want)
			}
		}
	}
	for _, tv := range []float64{0.5, 1.96, 3, 5} {
		got, want := studentTwoSided(tv, 1e7), math.Erfc(tv/math.Sqrt2)
		if math.Abs(got-want) > 5e-5*want {
			t.Errorf("df=1e7 t=%g: p = %g, normal %g", tv, got, want)
		}
	}
	if p := studentTwoSided(math.Inf(-1), 5); p != 0 {
		t.Errorf("t=-Inf: p = %g, want 0", p)
	}
	if p := studentTwoSided(math.NaN(), 5); !math.IsNaN(p) {
		t.Errorf("t=NaN: p = %g, want NaN", p)
	}
}
