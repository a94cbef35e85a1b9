package profiles

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/numfmt"
)

// DiffNode is one frame of a differential flame graph: the union of the
// base and target trees. Values are floats: a side is the mean of its
// runs, each scaled (DiffRuns), so a frame may hold a fraction of a
// sample.
type DiffNode struct {
	Name string `json:"name"`
	// Value and Self are the target's cumulative and flat values.
	Value float64 `json:"value"`
	Self  float64 `json:"self"`
	// Base and BaseSelf are the base's, after scaling.
	Base     float64 `json:"base"`
	BaseSelf float64 `json:"base_self"`
	// Children are sorted by name.
	Children []*DiffNode `json:"children,omitempty"`
}

// Diff builds the differential flame graph of target against base, for
// sample type sampleIndexBase of base and sampleIndexTarget of target (both
// must have the same unit): DiffRuns of one run a side, with base values
// multiplied by scale.
//
// Scaled values are not rounded: the root's Base is the scaled base total
// and its Value the target total. The tree is built exactly as BuildTree
// builds each side (frame names through NormalizeFrameName) and holds the
// union of both: a frame only in base has Value 0 and Base > 0, a frame
// only in target Base 0. Samples whose value is 0 are left out. scale must
// be positive and finite.
func Diff(base, target *profile.Profile, sampleIndexBase, sampleIndexTarget int, scale float64) (*DiffNode, error) {
	if err := checkScale(scale); err != nil {
		return nil, err
	}
	if err := checkComparable(base, target, sampleIndexBase, sampleIndexTarget); err != nil {
		return nil, err
	}
	return diffTree(input{p: base, index: sampleIndexBase, scale: scale, base: true},
		input{p: target, index: sampleIndexTarget, scale: 1}), nil
}

// DiffRuns builds the differential flame graph of the target runs against
// the base runs: each side is the mean over its runs of each run's values
// multiplied by RunScales' factor, so the target side is in the target's
// own units per run and the base side in the same units. One run against
// one gives Diff with the scale target.Ref / base.Ref. The sides must be
// non-empty, with references positive and finite and sample types of one
// unit (RunScales).
func DiffRuns(base, target []RunInput) (*DiffNode, error) {
	ins, err := runInputs(base, target)
	if err != nil {
		return nil, err
	}
	return diffTree(ins...), nil
}

// runInputs turns both sides into tree inputs, each run's scale its
// RunScales factor; the sums are divided by the sides' numbers of runs
// at the end (diffTree, topChanges), so that n copies of one profile
// average to exactly its values.
func runInputs(base, target []RunInput) ([]input, error) {
	bs, ts, err := RunScales(base, target)
	if err != nil {
		return nil, err
	}
	ins := make([]input, 0, len(base)+len(target))
	for i, r := range base {
		ins = append(ins, input{p: r.Prof, index: r.SampleIndex, scale: bs[i], base: true})
	}
	for i, r := range target {
		ins = append(ins, input{p: r.Prof, index: r.SampleIndex, scale: ts[i]})
	}
	return ins, nil
}

// RunScales returns the factor by which each run's values are multiplied
// before a side is averaged: R_t / r_i, where r_i is the run's Ref and R_t
// the mean Ref of the target side. So a target side is in its own units,
// one run against one scales base by r_t / r_b (as Diff's callers always
// did), and 5 runs against 3 compare per run, never as −40 %. An empty
// side, a missing profile, a Ref that is not positive and finite, a sample
// index out of range or units that differ are errors.
func RunScales(base, target []RunInput) (baseScales, targetScales []float64, err error) {
	if len(base) == 0 {
		return nil, nil, fmt.Errorf("profiles: no base runs")
	}
	if len(target) == 0 {
		return nil, nil, fmt.Errorf("profiles: no target runs")
	}
	first := target[0]
	if first.Prof == nil {
		return nil, nil, fmt.Errorf("profiles: target run %d has no profile", first.RunID)
	}
	var sum float64
	for _, side := range []struct {
		name string
		runs []RunInput
	}{{"base", base}, {"target", target}} {
		for _, r := range side.runs {
			if r.Prof == nil {
				return nil, nil, fmt.Errorf("profiles: %s run %d has no profile", side.name, r.RunID)
			}
			if !(r.Ref > 0) || math.IsInf(r.Ref, 0) {
				return nil, nil, fmt.Errorf("profiles: %s run %d: reference %v must be positive and finite", side.name, r.RunID, r.Ref)
			}
			if err := checkComparable(r.Prof, first.Prof, r.SampleIndex, first.SampleIndex); err != nil {
				return nil, nil, fmt.Errorf("%w (%s run %d against target run %d)", err, side.name, r.RunID, first.RunID)
			}
		}
	}
	for _, r := range target {
		sum += r.Ref
	}
	rt := sum / float64(len(target))
	scales := func(runs []RunInput) []float64 {
		out := make([]float64, len(runs))
		for i, r := range runs {
			out[i] = rt / r.Ref
		}
		return out
	}
	return scales(base), scales(target), nil
}

// sideRuns counts the base and target inputs: each side's sums are
// divided by its count.
func sideRuns(ins []input) (nb, nt float64) {
	for _, in := range ins {
		if in.base {
			nb++
		} else {
			nt++
		}
	}
	return max(nb, 1), max(nt, 1)
}

func diffTree(ins ...input) *DiffNode {
	b := newTreeBuilder(true)
	b.build(ins...)
	nb, nt := sideRuns(ins)

	nodes := make([]DiffNode, len(b.nodes))
	ptrs := make([]*DiffNode, len(b.nodes)-1)
	b.walkSorted(func(i int, kids []int32) {
		a, bv, tv := &b.nodes[i], b.base[i], b.tgt[i]
		nodes[i] = DiffNode{Name: b.names.list[a.name], Value: tv.value / nt, Self: tv.self / nt, Base: bv.value / nb, BaseSelf: bv.self / nb}
		if len(kids) > 0 {
			cs := ptrs[:len(kids):len(kids)]
			ptrs = ptrs[len(kids):]
			for j, c := range kids {
				cs[j] = &nodes[c]
			}
			nodes[i].Children = cs
		}
	})
	return &nodes[0]
}

// DiffCompact is a diff tree flattened for the browser like Compact, with
// six numbers per node instead of four (the values are floats, the other
// three integers):
//
//	Nodes[6*i+0]  index into Names of node i's name
//	Nodes[6*i+1]  target value (cumulative)
//	Nodes[6*i+2]  target self value
//	Nodes[6*i+3]  base value (cumulative, scaled)
//	Nodes[6*i+4]  base self value (scaled)
//	Nodes[6*i+5]  the number of node i's direct children
//
// in the same pre-order, with Names interned the same way. Stride is always
// 6, so a decoder can tell the two encodings apart.
type DiffCompact struct {
	Names  []string  `json:"names"`
	Nodes  []float64 `json:"nodes"`
	Stride int       `json:"stride"`
}

// Compact flattens the diff tree under n into the DiffCompact encoding.
func (n *DiffNode) Compact() DiffCompact {
	if n == nil {
		return DiffCompact{Names: []string{}, Nodes: []float64{}, Stride: 6}
	}
	names, nodes := flatten(n, 6, func(x *DiffNode) []*DiffNode { return x.Children }, func(x *DiffNode) string { return x.Name },
		func(dst []float64, x *DiffNode, id int64) []float64 {
			return append(dst, float64(id), x.Value, x.Self, x.Base, x.BaseSelf, float64(len(x.Children)))
		})
	return DiffCompact{Names: names, Nodes: nodes, Stride: 6}
}

func checkScale(scale float64) error {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("profiles: scale %v must be positive and finite", scale)
	}
	return nil
}

func checkComparable(base, target *profile.Profile, sb, st int) error {
	if sb < 0 || sb >= len(base.SampleType) || base.SampleType[sb] == nil {
		return fmt.Errorf("profiles: base sample index %d out of range (%d sample types)", sb, len(base.SampleType))
	}
	if st < 0 || st >= len(target.SampleType) || target.SampleType[st] == nil {
		return fmt.Errorf("profiles: target sample index %d out of range (%d sample types)", st, len(target.SampleType))
	}
	if bu, tu := base.SampleType[sb].Unit, target.SampleType[st].Unit; bu != tu {
		return fmt.Errorf("profiles: cannot compare base %s (%s) with target %s (%s): units differ",
			base.SampleType[sb].Type, bu, target.SampleType[st].Type, tu)
	}
	return nil
}

// DiffProfile returns the single pprof profile that `go tool pprof
// -diff_base` builds from base and target, with base scaled by scale first:
// a copy of base with every sample labelled pprof::base=true and every value
// multiplied by -scale (rounded per sample), merged with target. pprof's
// reports then show target − scale×base, and its UI recognises the label.
// Neither input is modified. The profiles must have the same sample and
// period types; scale must be positive and finite.
func DiffProfile(base, target *profile.Profile, scale float64) (*profile.Profile, error) {
	if err := checkScale(scale); err != nil {
		return nil, err
	}
	if err := base.CheckValid(); err != nil {
		return nil, fmt.Errorf("profiles: base: %w", err)
	}
	if err := target.CheckValid(); err != nil {
		return nil, fmt.Errorf("profiles: target: %w", err)
	}
	// profile.Merge dereferences the period and sample types without
	// checking for nil: compare them here so that a mismatch is an error,
	// not a panic.
	if err := sameTypes(base, target); err != nil {
		return nil, fmt.Errorf("profiles: diff: %w", err)
	}
	neg := base.Copy()
	neg.SetLabel("pprof::base", []string{"true"})
	neg.Scale(-scale)
	if target.PeriodType == nil {
		// Both lack one (sameTypes checked): give the copies an empty one.
		target = target.Copy()
		target.PeriodType = &profile.ValueType{}
		neg.PeriodType = &profile.ValueType{}
	}
	p, err := profile.Merge([]*profile.Profile{target, neg})
	if err != nil {
		return nil, fmt.Errorf("profiles: diff: %w", err)
	}
	return p, nil
}

func sameTypes(a, b *profile.Profile) error {
	vt := func(v *profile.ValueType) string {
		if v == nil {
			return "none"
		}
		return v.Type + "/" + v.Unit
	}
	if vt(a.PeriodType) != vt(b.PeriodType) {
		return fmt.Errorf("incompatible period types %s and %s", vt(a.PeriodType), vt(b.PeriodType))
	}
	list := func(p *profile.Profile) string {
		var s []string
		for _, st := range p.SampleType {
			s = append(s, vt(st))
		}
		return strings.Join(s, ", ")
	}
	if la, lb := list(a), list(b); la != lb {
		return fmt.Errorf("incompatible sample types [%s] and [%s]", la, lb)
	}
	return nil
}

// Normalization says how base values are scaled before they are compared
// with the target's, and why, in words for the page.
type Normalization struct {
	Mode    string  `json:"mode"`  // "none", "total" or "work"
	Scale   float64 `json:"scale"` // base values are multiplied by this
	Explain string  `json:"explain"`
}

// NormalizeNone compares values as measured (scale 1).
func NormalizeNone() Normalization {
	return Normalization{
		Mode:    "none",
		Scale:   1,
		Explain: "no normalization: values compare as measured, so if the runs did different amounts of work, so do their profiles",
	}
}

// NormalizeTotal scales base so that its total (sample type sb) equals the
// target's (sample type st): scale = target total / base total. Values then
// compare as shares of each profile's total, like pprof's -normalize. When
// either total is not positive (or an index is out of range) there is
// nothing sensible to scale by: the result has scale 1 and says why.
func NormalizeTotal(base, target *profile.Profile, sb, st int) Normalization {
	bt, bok := total(base, sb)
	tt, tok := total(target, st)
	if !bok || !tok {
		n := NormalizeNone()
		n.Mode = "total"
		n.Explain = "cannot normalize by total: the sample type is missing from a profile; values compare as measured"
		return n
	}
	bs := formatValue(bt, base.SampleType[sb])
	ts := formatValue(tt, target.SampleType[st])
	if bt <= 0 || tt <= 0 {
		return Normalization{
			Mode:    "total",
			Scale:   1,
			Explain: fmt.Sprintf("cannot normalize by total (base %s, target %s): values compare as measured", bs, ts),
		}
	}
	scale := float64(tt) / float64(bt)
	return Normalization{
		Mode:  "total",
		Scale: scale,
		Explain: fmt.Sprintf("base scaled by %s (target total %s / base total %s): both totals are equal, values compare as shares of each profile's total",
			formatAmount(scale), ts, bs),
	}
}

// NormalizeWork scales base by the work each run did, so that values
// compare per unit of work: scale = targetWork / baseWork. unit names the
// work in the plural ("records", "bytes", "requests"). Both amounts must be
// positive and finite.
func NormalizeWork(baseWork, targetWork float64, unit string) (Normalization, error) {
	for _, w := range []struct {
		name string
		v    float64
	}{{"base", baseWork}, {"target", targetWork}} {
		if !(w.v > 0) || math.IsInf(w.v, 0) {
			return Normalization{}, fmt.Errorf("profiles: %s work %v must be positive and finite", w.name, w.v)
		}
	}
	unit = strings.TrimSpace(unit)
	per := "unit of work"
	if unit != "" {
		per = singular(unit)
	}
	scale := targetWork / baseWork
	return Normalization{
		Mode:  "work",
		Scale: scale,
		Explain: fmt.Sprintf("base scaled by %s / %s: values compare per %s",
			withUnit(formatAmount(targetWork), unit), withUnit(formatAmount(baseWork), unit), per),
	}, nil
}

func withUnit(s, unit string) string {
	if unit == "" {
		return s
	}
	return s + " " + unit
}

// singular turns a plural unit into its singular for "per ...": "records" →
// "record", "bytes" → "byte"; other words ("MB", "ms", "kiss") stay.
func singular(unit string) string {
	if len(unit) > 2 && strings.HasSuffix(unit, "s") && !strings.HasSuffix(unit, "ss") &&
		strings.ToLower(unit) == unit {
		return unit[:len(unit)-1]
	}
	return unit
}

func total(p *profile.Profile, i int) (int64, bool) {
	if i < 0 || i >= len(p.SampleType) || p.SampleType[i] == nil {
		return 0, false
	}
	var t int64
	for _, x := range p.Sample {
		if x != nil && i < len(x.Value) {
			t += x.Value[i]
		}
	}
	return t, true
}

// Change is how one function's values moved between base and target. Base
// values are already scaled; like DiffNode's, values are floats.
type Change struct {
	Name       string  `json:"name"`
	BaseFlat   float64 `json:"base_flat"`
	TargetFlat float64 `json:"target_flat"`
	BaseCum    float64 `json:"base_cum"`
	TargetCum  float64 `json:"target_cum"`
	// DeltaFlat = TargetFlat − BaseFlat; DeltaCum = TargetCum − BaseCum.
	DeltaFlat float64 `json:"delta_flat"`
	DeltaCum  float64 `json:"delta_cum"`
	// Percentages of the base value: 100 × Delta / |Base|. When the base
	// value is 0 they are +100 if the delta is positive, −100 if negative,
	// and 0 if there is no change, never ±Inf or NaN.
	DeltaFlatPct float64 `json:"delta_flat_pct"`
	DeltaCumPct  float64 `json:"delta_cum_pct"`
}

// TopChanges compares base (sample type sb, values multiplied by scale)
// with target (sample type st) function by function: TopChangesRuns of one
// run a side. An index out of range or a scale that is not positive and
// finite gives nil.
func TopChanges(base, target *profile.Profile, sb, st int, scale float64, n int) []Change {
	if checkScale(scale) != nil || checkComparable(base, target, sb, st) != nil {
		return nil
	}
	return topChanges([]input{{p: base, index: sb, scale: scale, base: true}, {p: target, index: st, scale: 1}}, n)
}

// TopChangesRuns compares the base runs with the target runs function by
// function, each side the mean of its runs scaled as DiffRuns scales them
// (functions are matched by normalised name, inlined calls count as their
// own functions), and returns the n largest changes (all when n <= 0).
//
// Flat is the value of samples whose leaf is the function; cum the value of
// samples with the function anywhere on the stack, counted once per sample
// even when it recurses. These are pprof's -top flat and cum. Functions
// whose flat and cum are both unchanged are left out. Order: |DeltaCum|
// descending, then |DeltaFlat| descending, then name. Sides RunScales
// refuses give nil.
func TopChangesRuns(base, target []RunInput, n int) []Change {
	ins, err := runInputs(base, target)
	if err != nil {
		return nil
	}
	return topChanges(ins, n)
}

func topChanges(ins []input, n int) []Change {
	names := newNameTable()
	var bs, ts []flatCum
	for _, in := range ins {
		if in.base {
			bs = functionValues(in.p, in.index, in.scale, names, bs)
		} else {
			ts = functionValues(in.p, in.index, in.scale, names, ts)
		}
	}
	nb, nt := sideRuns(ins)
	var out []Change
	for id, name := range names.list {
		var c Change
		c.Name = name
		if id < len(bs) {
			c.BaseFlat, c.BaseCum = bs[id].flat/nb, bs[id].cum/nb
		}
		if id < len(ts) {
			c.TargetFlat, c.TargetCum = ts[id].flat/nt, ts[id].cum/nt
		}
		c.DeltaFlat = delta(c.TargetFlat, c.BaseFlat)
		c.DeltaCum = delta(c.TargetCum, c.BaseCum)
		if c.DeltaFlat == 0 && c.DeltaCum == 0 {
			continue
		}
		c.DeltaFlatPct = deltaPct(c.DeltaFlat, c.BaseFlat)
		c.DeltaCumPct = deltaPct(c.DeltaCum, c.BaseCum)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Change) int {
		if x, y := math.Abs(a.DeltaCum), math.Abs(b.DeltaCum); x != y {
			if x > y {
				return -1
			}
			return 1
		}
		if x, y := math.Abs(a.DeltaFlat), math.Abs(b.DeltaFlat); x != y {
			if x > y {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if n > 0 && len(out) > n {
		out = out[:n:n]
	}
	return out
}

// delta is target − base, with a difference within float rounding of the
// values (runs scaled by factors like 1/3 and summed) taken as none.
func delta(target, base float64) float64 {
	d := target - base
	if math.Abs(d) <= 1e-12*math.Max(math.Abs(target), math.Abs(base)) {
		return 0
	}
	return d
}

func deltaPct(delta, base float64) float64 {
	if base == 0 {
		switch {
		case delta > 0:
			return 100
		case delta < 0:
			return -100
		}
		return 0
	}
	return 100 * delta / math.Abs(base)
}

type flatCum struct{ flat, cum float64 }

// functionValues adds the flat and cum values of p's sample type i, each
// sample multiplied by scale, to vals (indexed by name ID of names) and
// returns it grown to the table's size.
func functionValues(p *profile.Profile, i int, scale float64, names *nameTable, vals []flatCum) []flatCum {
	st := newStacker(p, names)
	var seen []int // seen[id] = 1 + index of the last sample that counted id
	var buf []int32
	for si, x := range p.Sample {
		if x == nil {
			continue
		}
		raw, ok := sampleValue(x, i, 1)
		if !ok || raw == 0 {
			continue
		}
		v := float64(raw) * scale
		buf = st.stack(x, buf[:0])
		if len(buf) == 0 {
			continue
		}
		if n := len(names.list); n > len(vals) {
			vals = append(vals, make([]flatCum, n-len(vals))...)
		}
		if n := len(names.list); n > len(seen) {
			seen = append(seen, make([]int, n-len(seen))...)
		}
		vals[buf[len(buf)-1]].flat += v
		for _, id := range buf {
			if seen[id] != si+1 {
				seen[id] = si + 1
				vals[id].cum += v
			}
		}
	}
	return vals
}

// formatValue writes v in the sample type's unit for people, as the
// pages show profile values (numfmt.ProfileValue): durations in
// ns/µs/ms/s, sizes in B/KiB/MiB/GiB, and counts with thousands
// separators and the type's name ("1,234 samples").
func formatValue(v int64, st *profile.ValueType) string {
	switch st.Unit {
	case "count", "":
		return numfmt.Int(v) + " " + st.Type
	}
	return numfmt.ProfileValue(float64(v), st.Unit)
}

// formatAmount writes an amount of work or a scale factor as the pages
// write numbers (numfmt.Number).
func formatAmount(f float64) string { return numfmt.Number(f) }
