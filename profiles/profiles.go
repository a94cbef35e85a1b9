package profiles

import (
	"fmt"

	"github.com/google/pprof/profile"
)

// Summary describes a profile without its samples.
type Summary struct {
	// Samples is the number of distinct samples (stacks with values).
	Samples int64
	// SampleTypes are "type/unit" pairs, e.g. "cpu/nanoseconds".
	SampleTypes []string
	// DurationNanos is how long the profile was collected, when known.
	DurationNanos int64
}

// Summarize parses a pprof profile (gzipped or not) and describes it.
func Summarize(data []byte) (Summary, error) {
	p, err := profile.ParseData(data)
	if err != nil {
		return Summary{}, fmt.Errorf("profiles: parse: %w", err)
	}
	s := Summary{Samples: int64(len(p.Sample)), DurationNanos: p.DurationNanos}
	for _, st := range p.SampleType {
		s.SampleTypes = append(s.SampleTypes, st.Type+"/"+st.Unit)
	}
	return s, nil
}
