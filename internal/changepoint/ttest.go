package changepoint

import "math"

// stats are Otava's TTestStats: the means, population standard deviations
// and t-test p-value of the two sides of a change point.
type stats struct {
	mean1, mean2, std1, std2, p float64
}

// magnitude is Otava's change_magnitude: the larger relative change of the
// two directions, each 0 when its denominator is 0.
func (s stats) magnitude() float64 {
	var fwd, back float64
	if s.mean1 != 0 {
		fwd = s.mean2/s.mean1 - 1
	}
	if s.mean2 != 0 {
		back = s.mean1/s.mean2 - 1
	}
	m := math.Abs(fwd)
	if b := math.Abs(back); b > m {
		m = b
	}
	return m
}

// compare is Otava's TTestSignificanceTester.compare: it summarises both
// sides (neither may be empty) and tests them with Student's two-sample
// t-test, pooled variance, on the population standard deviations, exactly
// the inputs Otava hands scipy's ttest_ind_from_stats.
func compare(left, right []float64) stats {
	s := stats{mean1: mean(left), mean2: mean(right), p: 1}
	if len(left) >= 2 {
		s.std1 = popStdDev(left, s.mean1)
	}
	if len(right) >= 2 {
		s.std2 = popStdDev(right, s.mean2)
	}
	if len(left)+len(right) > 2 {
		s.p = pooledTTest(s.mean1, s.std1, len(left), s.mean2, s.std2, len(right))
	}
	return s
}

func mean(x []float64) float64 {
	var sum float64
	for _, v := range x {
		sum += v
	}
	return sum / float64(len(x))
}

// popStdDev is the standard deviation with divisor n (numpy's default).
func popStdDev(x []float64, m float64) float64 {
	var ss float64
	for _, v := range x {
		d := v - m
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(x)))
}

// pooledTTest is the two-sided p-value of Student's t-test for two samples
// of sizes n1 and n2 with the given means and standard deviations, assuming
// equal variances: t = (m1-m2) / sqrt(s²(1/n1+1/n2)) with
// s² = ((n1-1)s1² + (n2-1)s2²)/(n1+n2-2), on n1+n2-2 degrees of freedom.
// Like scipy, a zero denominator gives p = 0 when the means differ and NaN
// when they are equal.
func pooledTTest(m1, s1 float64, n1 int, m2, s2 float64, n2 int) float64 {
	df := float64(n1 + n2 - 2)
	pooled := (float64(n1-1)*s1*s1 + float64(n2-1)*s2*s2) / df
	denom := math.Sqrt(pooled * (1/float64(n1) + 1/float64(n2)))
	return studentTwoSided((m1-m2)/denom, df)
}

// studentTwoSided is P(|T| >= |t|) for Student's t distribution with df
// degrees of freedom: the regularised incomplete beta function
// I_x(df/2, 1/2) at x = df/(df+t²).
func studentTwoSided(t, df float64) float64 {
	switch {
	case math.IsNaN(t):
		return math.NaN()
	case math.IsInf(t, 0):
		return 0
	}
	t2 := t * t
	// Pass both x and 1-x, each computed without cancellation.
	return regIncBeta(df/2, 0.5, df/(df+t2), t2/(df+t2))
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), given x
// and y = 1-x. It evaluates the continued fraction of I_x(a, b) where it
// converges fast (x below (a+1)/(a+b+2)) and uses I_x(a, b) = 1 - I_y(b, a)
// otherwise.
func regIncBeta(a, b, x, y float64) float64 {
	switch {
	case x <= 0:
		return 0
	case y <= 0:
		return 1
	case x > (a+1)/(a+b+2):
		return 1 - regIncBeta(b, a, y, x)
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x)+b*math.Log(y)-(lga+lgb-lgab)) / a
	return front / betaFraction(a, b, x)
}

// betaFraction evaluates 1 + d1/(1 + d2/(1 + ...)), the continued fraction
// whose reciprocal times x^a y^b / (a B(a, b)) is I_x(a, b), with the
// coefficients
//
//	d(2k+1) = -(a+k)(a+b+k) x / ((a+2k)(a+2k+1))
//	d(2k)   = k(b-k) x / ((a+2k-1)(a+2k))
//
// by the modified Lentz method (each step multiplies the value by the
// ratio of successive convergents, kept away from zero by tiny).
func betaFraction(a, b, x float64) float64 {
	const (
		tiny = 1e-300
		// A few ulps: a tighter bound (below the spacing of floats around
		// 1) can leave the ratio alternating around 1 without ever passing.
		eps = 1e-15
		// Plenty: the fraction needs O(sqrt(max(a, b))) terms, and a is at
		// most half the series length.
		maxTerm = 1 << 16
	)
	f, c, d := 1.0, 1.0, 0.0
	for j := 1; j < maxTerm; j++ {
		k := float64(j / 2)
		var coef float64
		if j%2 == 1 {
			coef = -(a + k) * (a + b + k) * x / ((a + 2*k) * (a + 2*k + 1))
		} else {
			coef = k * (b - k) * x / ((a + 2*k - 1) * (a + 2*k))
		}
		d = 1 + coef*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + coef/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		ratio := c * d
		f *= ratio
		if math.Abs(ratio-1) < eps {
			break
		}
	}
	return f
}
