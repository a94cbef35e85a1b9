package profiles

import "github.com/google/pprof/profile"

// RunInput is one run's profile as a member of a side of a comparison:
// DiffRuns, TopChangesRuns and MergeRuns merge the runs of a side, and
// Significance tests them run by run.
type RunInput struct {
	// RunID names the run, for messages.
	RunID uint
	// Prof is the run's profile; it is only read.
	Prof *profile.Profile
	// SampleIndex is the sample type compared (PickSample).
	SampleIndex int
	// Ref is the run's reference amount for normalisation: its total of
	// the sample type (normalize=total), the records it moved
	// (normalize=work) or 1 (normalize=none). Positive and finite.
	Ref float64
}
