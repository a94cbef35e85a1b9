package profiles

import (
	"fmt"
	"maps"
	"slices"

	"github.com/google/pprof/profile"
)

// MergeRuns returns one side of a comparison as a single pprof profile,
// for download and pprof's UI: each run's profile with its function names
// normalised (NormalizeFrameName, so lambdas of several JVMs are one
// function), its values multiplied by scales[i] / len(side) (RunScales'
// factor, so the result is the side's mean), then merged with
// profile.Merge.
//
// profile.Scale rounds every sample's value to an integer, as a pprof
// profile's values are, so the merged profile's figures differ from
// DiffRuns' and TopChangesRuns' exact floats by up to half a unit per
// sample: the .pb.gz is for pprof's UI, the JSON answers are the figures.
// Every sample type of a run is scaled by the one factor.
//
// MergeRuns changes the profiles it is given (names and values): pass
// copies. The profiles must have the same sample and period types.
func MergeRuns(side []RunInput, scales []float64) (*profile.Profile, error) {
	if len(side) == 0 {
		return nil, fmt.Errorf("profiles: merge: no runs")
	}
	if len(scales) != len(side) {
		return nil, fmt.Errorf("profiles: merge: %d scales for %d runs", len(scales), len(side))
	}
	for i, r := range side {
		if r.Prof == nil {
			return nil, fmt.Errorf("profiles: merge: run %d has no profile", r.RunID)
		}
		if err := checkScale(scales[i]); err != nil {
			return nil, fmt.Errorf("profiles: merge: run %d: %w", r.RunID, err)
		}
		if err := sameTypes(side[0].Prof, r.Prof); err != nil {
			return nil, fmt.Errorf("profiles: merge: run %d: %w", r.RunID, err)
		}
	}
	ps := make([]*profile.Profile, 0, len(side))
	for i, r := range side {
		s := scales[i] / float64(len(side))
		for _, f := range r.Prof.Function {
			if f != nil {
				f.Name = NormalizeFrameName(f.Name)
				f.SystemName = NormalizeFrameName(f.SystemName)
			}
		}
		if s != 1 {
			r.Prof.Scale(s)
		}
		if r.Prof.PeriodType == nil {
			// profile.Merge dereferences it.
			r.Prof.PeriodType = &profile.ValueType{}
		}
		ps = append(ps, r.Prof)
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, fmt.Errorf("profiles: merge: %w", err)
	}
	return p, nil
}

// SampleTotal is the sum of p's sample type i over all samples, the
// reference of normalize=total, and whether the index exists.
func SampleTotal(p *profile.Profile, i int) (int64, bool) { return total(p, i) }

// NormalizeRuns describes, for the page and the API, how RunScales scales
// two sides whose references are those of mode ("none", "total" or
// "work"; unit names work in the plural). One run against one says what
// NormalizeNone, NormalizeTotal or NormalizeWork say, word for word; more
// runs say that each run is scaled to the target side's mean reference
// and each side is the mean of its runs. Scale is the base side's overall
// factor, R_t / the base's mean reference. The sides must be non-empty.
func NormalizeRuns(mode string, base, target []RunInput, unit string) (Normalization, error) {
	if len(base) == 0 || len(target) == 0 {
		return Normalization{}, fmt.Errorf("profiles: normalize: a side has no runs")
	}
	if len(base) == 1 && len(target) == 1 {
		b, t := base[0], target[0]
		switch mode {
		case "none":
			return NormalizeNone(), nil
		case "total":
			return NormalizeTotal(b.Prof, t.Prof, b.SampleIndex, t.SampleIndex), nil
		case "work":
			return NormalizeWork(b.Ref, t.Ref, unit)
		}
		return Normalization{}, fmt.Errorf("profiles: normalize: unknown mode %q", mode)
	}
	mean := func(rs []RunInput) float64 {
		var s float64
		for _, r := range rs {
			s += r.Ref
		}
		return s / float64(len(rs))
	}
	rb, rt := mean(base), mean(target)
	sides := fmt.Sprintf("each side is the mean of its runs (%d base, %d target)", len(base), len(target))
	switch mode {
	case "none":
		n := NormalizeNone()
		n.Explain = "no normalization: " + sides + ", values as measured, so if the runs did different amounts of work, so do the sides"
		return n, nil
	case "total":
		if !(rb > 0) || !(rt > 0) {
			return Normalization{}, fmt.Errorf("profiles: normalize: totals must be positive")
		}
		return Normalization{Mode: "total", Scale: rt / rb, Explain: fmt.Sprintf(
			"every run scaled so that its total equals the target runs' mean total (%s); %s: values compare as shares of each run's total",
			formatAmount(rt), sides)}, nil
	case "work":
		if !(rb > 0) || !(rt > 0) {
			return Normalization{}, fmt.Errorf("profiles: normalize: work must be positive")
		}
		per := "unit of work"
		if unit != "" {
			per = singular(unit)
		}
		return Normalization{Mode: "work", Scale: rt / rb, Explain: fmt.Sprintf(
			"every run scaled to the target runs' mean work (%s); %s: values compare per %s",
			withUnit(formatAmount(rt), unit), sides, per)}, nil
	}
	return Normalization{}, fmt.Errorf("profiles: normalize: unknown mode %q", mode)
}

// SumWritePaths adds up the write-path reports of a side's runs: totals,
// values and sample counts summed, frames united, percentages of the
// summed total. Runs weigh by their own totals (the reports are of
// unscaled profiles). No report gives an empty one.
func SumWritePaths(reps ...WritePathReport) WritePathReport {
	if len(reps) == 1 {
		return reps[0]
	}
	var out WritePathReport
	type key struct{ dir, path string }
	index := map[key]int{}
	frames := map[key]map[string]bool{}
	for _, r := range reps {
		out.Total += r.Total
		if out.Unit == "" {
			out.Unit = r.Unit
		}
		for _, row := range r.Rows {
			k := key{row.Direction, row.Path}
			i, ok := index[k]
			if !ok {
				i = len(out.Rows)
				index[k] = i
				out.Rows = append(out.Rows, WritePathRow{Direction: row.Direction, Path: row.Path})
				frames[k] = map[string]bool{}
			}
			out.Rows[i].Value += row.Value
			out.Rows[i].Samples += row.Samples
			for _, f := range row.Frames {
				frames[k][f] = true
			}
		}
	}
	for i := range out.Rows {
		row := &out.Rows[i]
		row.Frames = slices.Sorted(maps.Keys(frames[key{row.Direction, row.Path}]))
		if out.Total != 0 {
			row.Percent = 100 * float64(row.Value) / float64(out.Total)
		}
	}
	return out
}
