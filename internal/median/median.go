// Package median computes the plain median of a sample, the one
// implementation the pages and the bench tools share. (compare's medians
// come with a confidence interval, from benchmath.)
package median

import (
	"math"
	"slices"
)

// Of returns the median of xs, leaving xs as it is: the middle value, or
// the mean of the two middle values of an even count. An empty sample
// has none: NaN.
func Of(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Sorted(s)
}

// Sorted is Of for values already in ascending order, without a copy.
func Sorted(s []float64) float64 {
	n := len(s)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	}
	// Halves first: the sum of two large values would overflow.
	return s[n/2-1]/2 + s[n/2]/2
}
