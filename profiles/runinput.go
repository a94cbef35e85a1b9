package profiles

import "github.com/google/pprof/profile"

// RunInput is one run's profile in a comparison of run sets (a merged
// diff, the per-function significance): RunID names the run, Prof is its
// profile and SampleIndex the sample type compared (an index into
// Prof.SampleType). Ref is the run's normaliser, the reference its values
// are divided by: its work in records (normalize=work), its total of the
// sample type (normalize=total), or 1 (normalize=none).
type RunInput struct {
	RunID       uint
	Prof        *profile.Profile
	SampleIndex int
	Ref         float64
}
