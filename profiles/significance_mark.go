package profiles

// SignificanceMethod names the test Significance applies, as the diff
// answers say it: Welch's t on the log of each run's share, adjusted by
// Benjamini-Hochberg.
const SignificanceMethod = "welch-log-share"

// Verdict is the cumulative-share verdict of the function called name:
// nil when it was not tested (not in the family, or the result is not
// Decided) or holds no value in the runs.
func (r *SignificanceResult) Verdict(name string) *bool {
	if r == nil || !r.Decided {
		return nil
	}
	f, ok := r.Function(name)
	if !ok {
		return nil
	}
	return f.Significant
}

// Mark sets every frame's Significant of the tree under root to its
// function's Verdict, so a graph can draw the tested functions that did
// not change apart from those that did.
func (r *SignificanceResult) Mark(root *DiffNode) {
	if r == nil || root == nil || !r.Decided {
		return
	}
	stack := []*DiffNode{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n.Significant = r.Verdict(n.Name)
		stack = append(stack, n.Children...)
	}
}

// Verdicts returns the Verdict of each of names, in order: the per-name
// column a rows answer carries beside its names.
func (r *SignificanceResult) Verdicts(names []string) []*bool {
	out := make([]*bool, len(names))
	for i, n := range names {
		out[i] = r.Verdict(n)
	}
	return out
}
