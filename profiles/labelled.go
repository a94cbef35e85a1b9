package profiles

import (
	"bytes"
	"fmt"

	"github.com/google/pprof/profile"
)

// MergeLabelled merges the stored profiles data (as kbench wrote them,
// gzipped pprof) of one kind from several processes into one, each
// sample of data[i] labelled with labels[i] (pprof labels, key to
// value), so that the label filter (tagfocus) shows one process: a fleet
// run's flame graph is its shards' merged, labelled by worker and shard.
// Frame names are normalised (NormalizeFrameName) before the merge, as
// in MergeRuns. It returns the merged profile gzipped.
func MergeLabelled(data [][]byte, labels []map[string]string) ([]byte, error) {
	if len(data) == 0 || len(data) != len(labels) {
		return nil, fmt.Errorf("profiles: merge labelled: %d profiles for %d label sets", len(data), len(labels))
	}
	ps := make([]*profile.Profile, len(data))
	for i, d := range data {
		p, err := Load(d)
		if err != nil {
			return nil, fmt.Errorf("profiles: merge labelled: profile %d: %w", i+1, err)
		}
		if i > 0 {
			if err := sameTypes(ps[0], p); err != nil {
				return nil, fmt.Errorf("profiles: merge labelled: profile %d: %w", i+1, err)
			}
		}
		for _, f := range p.Function {
			if f != nil {
				f.Name = NormalizeFrameName(f.Name)
				f.SystemName = NormalizeFrameName(f.SystemName)
			}
		}
		for _, s := range p.Sample {
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			for k, v := range labels[i] {
				s.Label[k] = []string{v}
			}
		}
		if p.PeriodType == nil {
			p.PeriodType = &profile.ValueType{} // profile.Merge dereferences it
		}
		ps[i] = p
	}
	merged, err := profile.Merge(ps)
	if err != nil {
		return nil, fmt.Errorf("profiles: merge labelled: %w", err)
	}
	var buf bytes.Buffer
	if err := merged.Write(&buf); err != nil {
		return nil, fmt.Errorf("profiles: merge labelled: %w", err)
	}
	return buf.Bytes(), nil
}
