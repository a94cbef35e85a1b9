package stats

import (
	"errors"
	"fmt"
	"math"
)

// Mean returns the arithmetic mean of xs (NaN when xs is empty).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Variance returns the sample variance of xs (divisor n−1), computed in
// two passes so that values far from 0 with a small spread keep their
// precision. NaN with fewer than two values.
func Variance(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	s, c := 0.0, 0.0
	for _, x := range xs {
		d := x - m
		s += d * d
		c += d
	}
	// c is 0 in exact arithmetic; subtracting c²/n corrects the rounding
	// of m (the corrected two-pass algorithm).
	return (s - c*c/float64(len(xs))) / float64(len(xs)-1)
}

// TTest is the outcome of a two-sample t test of y against x.
type TTest struct {
	// Diff is mean(y) − mean(x).
	Diff float64
	// T is Diff divided by its standard error; ±Inf when both samples
	// have no spread and their means differ, 0 when they are equal.
	T float64
	// DF is the Welch-Satterthwaite degrees of freedom.
	DF float64
	// P is the two-sided p-value: the probability under equal means of a
	// |T| at least as large.
	P float64
}

// ErrTooFew is returned by Welch when a sample has fewer than two values,
// so its variance is unknown.
var ErrTooFew = errors.New("stats: a t test needs at least two values per sample")

// Welch runs Welch's unequal-variances t test of y against x:
//
//	T  = (ȳ − x̄) / √(s²x/m + s²y/n)
//	DF = (s²x/m + s²y/n)² / ((s²x/m)²/(m−1) + (s²y/n)²/(n−1))
//
// and P from Student's t distribution with DF degrees of freedom (not an
// integer in general). Unlike the pooled (Student) test it does not assume
// both samples share one variance; unlike a rank test its smallest p-value
// is not bounded by the sample sizes, so a large change with little spread
// can be told apart from noise with three values a side. Each sample needs
// two values; every value must be finite.
func Welch(x, y []float64) (TTest, error) {
	if len(x) < 2 || len(y) < 2 {
		return TTest{}, fmt.Errorf("%w (have %d and %d)", ErrTooFew, len(x), len(y))
	}
	for _, s := range [][]float64{x, y} {
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return TTest{}, fmt.Errorf("stats: t test: value %v is not finite", v)
			}
		}
	}
	m, n := float64(len(x)), float64(len(y))
	vx, vy := Variance(x)/m, Variance(y)/n
	r := TTest{Diff: Mean(y) - Mean(x)}
	se2 := vx + vy
	if se2 == 0 {
		// No spread on either side: the means are either equal (no
		// evidence of a change) or different with certainty.
		r.DF = m + n - 2
		r.P = 1
		if r.Diff != 0 {
			r.T = math.Copysign(math.Inf(1), r.Diff)
			r.P = 0
		}
		return r, nil
	}
	r.T = r.Diff / math.Sqrt(se2)
	r.DF = se2 * se2 / (vx*vx/(m-1) + vy*vy/(n-1))
	r.P = StudentTTwoSided(r.T, r.DF)
	return r, nil
}

// StudentTTwoSided returns P(|T| ≥ |t|) for T with Student's t distribution
// of df > 0 degrees of freedom (df may be fractional or +Inf, the standard
// normal). It is I_x(df/2, 1/2) at x = df/(df + t²), computed directly rather
// than as 1 − CDF so that tiny p-values keep their precision.
func StudentTTwoSided(t, df float64) float64 {
	switch {
	case math.IsNaN(t) || !(df > 0):
		return math.NaN()
	case math.IsInf(t, 0):
		return 0
	case math.IsInf(df, 1):
		return math.Erfc(math.Abs(t) / math.Sqrt2)
	}
	t2 := t * t
	// x = df/(df+t²) and 1−x = t²/(df+t²), each computed without the
	// other's rounding.
	return regIncBeta2(df/2, 0.5, df/(df+t2), t2/(df+t2))
}

// StudentTCDF returns P(T ≤ t) for Student's t distribution with df > 0
// degrees of freedom (+Inf: the standard normal).
func StudentTCDF(t, df float64) float64 {
	p := StudentTTwoSided(t, df) / 2
	if t > 0 {
		return 1 - p
	}
	return p
}

// RegIncBeta returns the regularized incomplete beta function
//
//	I_x(a, b) = B(x; a, b) / B(a, b),  B(x; a, b) = ∫₀ˣ u^(a−1) (1−u)^(b−1) du
//
// for a, b > 0 and 0 ≤ x ≤ 1 (NaN otherwise): the CDF at x of the
// Beta(a, b) distribution.
func RegIncBeta(a, b, x float64) float64 { return regIncBeta2(a, b, x, 1-x) }

// regIncBeta2 is RegIncBeta with y = 1 − x given by the caller, so a y
// near 0 need not be recovered from an x near 1.
func regIncBeta2(a, b, x, y float64) float64 {
	switch {
	case !(a > 0) || !(b > 0) || !(x >= 0) || !(y >= 0) || math.IsInf(a, 0) || math.IsInf(b, 0):
		return math.NaN()
	case x == 0:
		return 0
	case y == 0:
		return 1
	}
	// The continued fraction converges quickly for x < (a+1)/(a+b+2);
	// beyond, use I_x(a, b) = 1 − I_{1−x}(b, a).
	if x > (a+1)/(a+b+2) {
		return 1 - betaFraction(b, a, y, x)
	}
	return betaFraction(a, b, x, y)
}

// betaFraction evaluates I_x(a, b) as x^a y^b / (a B(a, b)) times the
// continued fraction
//
//	1 / (1 + d₁ / (1 + d₂ / (1 + …)))
//	d_{2m+1} = −(a+m)(a+b+m) x / ((a+2m)(a+2m+1))
//	d_{2m}   = m(b−m) x / ((a+2m−1)(a+2m))
//
// by the modified Lentz method; y = 1 − x.
func betaFraction(a, b, x, y float64) float64 {
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x)+b*math.Log(y)-(lga+lgb-lgab)) / a

	const (
		tiny    = 1e-300
		eps     = 1e-15
		maxIter = 100000
	)
	f, c, d := 1.0, 1.0, 0.0
	for i := 0; i <= maxIter; i++ {
		var num float64
		m := float64(i / 2)
		switch {
		case i == 0:
			num = 1
		case i%2 == 0:
			num = m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		default:
			num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		}
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		d = 1 / d
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		cd := c * d
		f *= cd
		if math.Abs(1-cd) < eps {
			break
		}
	}
	return front * (f - 1)
}
