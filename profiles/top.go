package profiles

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// TopFunction is one function of a flame graph's top table: Self sums
// the function's flat values over every frame of it, Total its
// cumulative value counted once per stack (a recursive call inside
// itself is not counted again), as pprof's top does. BaseSelf and
// BaseTotal are a diff's base values (0 for a profile).
type TopFunction struct {
	Name      string
	Self      float64
	Total     float64
	BaseSelf  float64
	BaseTotal float64
}

// TopSort is the column a top table is sorted by, largest first.
type TopSort string

// The top table's sort columns. The delta ones (a diff's) sort by the
// size of the change, |target − base|, largest first.
const (
	TopBySelf       TopSort = "self"
	TopByTotal      TopSort = "total"
	TopByDeltaSelf  TopSort = "delta_self"
	TopByDeltaTotal TopSort = "delta_total"
)

// ParseTopSort reads a sort= parameter ("" is TopBySelf); the delta
// columns need a diff.
func ParseTopSort(s string, diff bool) (TopSort, error) {
	switch TopSort(s) {
	case "", TopBySelf:
		return TopBySelf, nil
	case TopByTotal:
		return TopByTotal, nil
	case TopByDeltaSelf, TopByDeltaTotal:
		if diff {
			return TopSort(s), nil
		}
		return "", fmt.Errorf("profiles: sort %q needs a diff", s)
	}
	return "", fmt.Errorf("profiles: sort %q: must be self, total, delta_self or delta_total", s)
}

// Functions lists every function of the graph (the root left out) with
// its self and total values, computed over the whole, untruncated tree,
// in name order.
func (f *Flat) Functions() []TopFunction {
	n := int32(len(f.name))
	if n == 0 {
		return nil
	}
	byName := make([]TopFunction, len(f.names))
	seen := make([]bool, len(f.names))
	onStack := make([]int32, len(f.names)) // frames of each name among the current frame's ancestors
	var stack []int32
	for i := int32(1); i < n; i++ {
		for len(stack) > 0 && f.end[stack[len(stack)-1]] <= i {
			onStack[f.name[stack[len(stack)-1]]]--
			stack = stack[:len(stack)-1]
		}
		id := f.name[i]
		t := &byName[id]
		seen[id] = true
		t.Self += f.self[i]
		if f.base != nil {
			t.BaseSelf += f.baseSelf[i]
		}
		if onStack[id] == 0 {
			t.Total += f.value[i]
			if f.base != nil {
				t.BaseTotal += f.base[i]
			}
		}
		onStack[id]++
		stack = append(stack, i)
	}
	out := make([]TopFunction, 0, len(byName))
	for id := range byName {
		if seen[id] {
			byName[id].Name = f.names[id]
			out = append(out, byName[id])
		}
	}
	slices.SortFunc(out, func(a, b TopFunction) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Function returns the top-table line of the function named name, and
// whether the graph has a frame of it.
func (f *Flat) Function(name string) (TopFunction, bool) {
	for _, t := range f.Functions() {
		if t.Name == name {
			return t, true
		}
	}
	return TopFunction{}, false
}

// SortTop orders fs by the column by, largest first (ties by name), and
// keeps the first limit (all when limit <= 0). fs is sorted in place.
func SortTop(fs []TopFunction, by TopSort, limit int) []TopFunction {
	key := func(t TopFunction) float64 {
		switch by {
		case TopByTotal:
			return t.Total
		case TopByDeltaSelf:
			return math.Abs(t.Self - t.BaseSelf)
		case TopByDeltaTotal:
			return math.Abs(t.Total - t.BaseTotal)
		}
		return t.Self
	}
	slices.SortStableFunc(fs, func(a, b TopFunction) int {
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if limit > 0 && len(fs) > limit {
		fs = fs[:limit]
	}
	return fs
}
