package stats

import (
	"math"
	"slices"
)

// BHAdjust returns the Benjamini-Hochberg adjusted p-values of ps, in the
// same order: with the k p-values sorted ascending, the i-th smallest
// gets min over j ≥ i of k·p(j)/j, at most 1. A change is significant at
// false discovery rate q exactly when its adjusted p-value is ≤ q, which
// is the step-up rule "find the largest i with p(i) ≤ i·q/k, reject the
// first i".
func BHAdjust(ps []float64) []float64 {
	k := len(ps)
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	adj := make([]float64, k)
	running := 1.0
	for r := k - 1; r >= 0; r-- {
		i := order[r]
		// k/(r+1) ≥ 1 first, so that rounding never takes a p-value below itself.
		running = math.Min(running, ps[i]*(float64(k)/float64(r+1)))
		adj[i] = math.Min(running, 1)
	}
	return adj
}
