package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// noise draws the relative deviation of one point.
type noise func(rng *rand.Rand) float64

// uniform is "± pct": a uniform draw from [-pct, pct].
func uniform(pct float64) noise {
	return func(rng *rand.Rand) float64 { return pct * (2*rng.Float64() - 1) }
}

// normal is a normal draw with standard deviation pct.
func normal(pct float64) noise {
	return func(rng *rand.Rand) float64 { return pct * rng.NormFloat64() }
}

// steps returns a series of levels[i] repeated lens[i] times, each point
// multiplied by 1 plus a draw of dev. The generator is seeded, so a case is
// the same series on every run.
func steps(seed uint64, dev noise, levels []float64, lens []int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x6b62656e6368))
	var out []float64
	for i, level := range levels {
		for range lens[i] {
			out = append(out, level*(1+dev(rng)))
		}
	}
	return out
}

// TestSyntheticStep is KAFKA-14020's shape: 40 runs at 115k then 40 at
// 105k, with 1%, 2% and 3% noise, seeds 1 to 5. The change is found at index
// 40, the first run at 105k; Before and After are the means of the two
// segments, so with "± pct" noise the change is within 1 percentage point of
// -8.7%. With normal noise of standard deviation 2% and 3%, seed 2 draws
// run 40 high and the change point is at 41: Otava gives 41 on these series
// too (checked by running Otava's compute_change_points on them). With
// normal noise the sample means themselves can be more than a point off
// -8.7% (seed 4 at 3%: -7.4%), so only the index is checked there.
func TestSyntheticStep(t *testing.T) {
	const want = (105000.0/115000 - 1) * 100 // -8.696%
	for _, pct := range []float64{0.01, 0.02, 0.03} {
		for seed := uint64(1); seed <= 5; seed++ {
			for _, tc := range []struct {
				kind  string
				dev   noise
				index int
			}{
				{"uniform", uniform(pct), 40},
				{"normal", normal(pct), map[bool]int{true: 41, false: 40}[seed == 2 && pct >= 0.02]},
			} {
				s := steps(seed, tc.dev, []float64{115000, 105000}, []int{40, 40})
				cps := Detect(s, Options{})
				if len(cps) != 1 || cps[0].Index != tc.index {
					t.Errorf("%s %.0f%% seed %d: change points %v, want [%d]", tc.kind, pct*100, seed, indexes(cps), tc.index)
					continue
				}
				c := cps[0]
				if c.Before != mean(s[:c.Index]) || c.After != mean(s[c.Index:]) {
					t.Errorf("%s %.0f%% seed %d: before/after %g/%g are not the segment means", tc.kind, pct*100, seed, c.Before, c.After)
				}
				if c.PValue >= DefaultMaxPValue {
					t.Errorf("%s %.0f%% seed %d: p-value %g not below %g", tc.kind, pct*100, seed, c.PValue, DefaultMaxPValue)
				}
				if got := c.ChangePercent(); tc.kind == "uniform" && math.Abs(got-want) > 1 {
					t.Errorf("%s %.0f%% seed %d: change %.2f%%, want %.2f%% ± 1", tc.kind, pct*100, seed, got, want)
				}
			}
		}
	}
}

// TestSyntheticFlat: 200 points of noise around one level, seeds 1 to 5 of
// normal noise at 1%, 2% and 3%, have no change point.
//
// Not every flat series comes out clean, with Otava as here: over seeds 1 to
// 200 of this generator at 2%, 15 uniform and 30 normal series of 200 flat
// points had at least one change point at max_pvalue 0.001, at the same
// indexes as Otava finds (the t-test is run on the split that maximises the
// divergence, and its p-value does not account for that choice). The
// uniform cases below pin two of those down, so that a change that stops
// agreeing with Otava shows.
func TestSyntheticFlat(t *testing.T) {
	for _, pct := range []float64{0.01, 0.02, 0.03} {
		for seed := uint64(1); seed <= 5; seed++ {
			s := steps(seed, normal(pct), []float64{115000}, []int{200})
			if cps := Detect(s, Options{}); len(cps) != 0 {
				t.Errorf("normal %.0f%% seed %d: change points %v in flat noise", pct*100, seed, indexes(cps))
			}
		}
	}
	for _, tc := range []struct {
		seed uint64
		want []int // what Otava finds on the same series
	}{{1, []int{81, 107}}, {2, []int{168, 177}}, {3, nil}, {4, nil}, {5, nil}} {
		s := steps(tc.seed, uniform(0.02), []float64{115000}, []int{200})
		if got := indexes(Detect(s, Options{})); !slices.Equal(got, tc.want) {
			t.Errorf("uniform 2%% seed %d: change points %v, Otava finds %v", tc.seed, got, tc.want)
		}
	}
}

// TestSyntheticTwoSteps: a drop and then a recovery, or two drops, with 2%
// normal noise give two change points at the two boundaries.
func TestSyntheticTwoSteps(t *testing.T) {
	cases := []struct {
		levels []float64
		lens   []int
		want   []int
	}{
		{[]float64{115000, 105000, 115000}, []int{40, 40, 40}, []int{40, 80}},
		{[]float64{115000, 105000, 95000}, []int{60, 30, 50}, []int{60, 90}},
	}
	for _, tc := range cases {
		for seed := uint64(1); seed <= 5; seed++ {
			s := steps(seed, normal(0.02), tc.levels, tc.lens)
			want := tc.want
			if seed == 2 && tc.lens[0] == 40 {
				want = []int{41, 80} // as in TestSyntheticStep; Otava too
			}
			if got := indexes(Detect(s, Options{})); !slices.Equal(got, want) {
				t.Errorf("levels %v lens %v seed %d: change points %v, want %v", tc.levels, tc.lens, seed, got, want)
			}
		}
	}
}

// TestSingleRunAppended is the case of `kbench check` without repetitions:
// one run at 105k (-8.7%) appended to 20 runs at 115k ± 2% (uniform) is a
// change point at index 20 with the default options. The issue quotes
// p ≈ 0.0001 for Otava; the p-value is what the t-test of 20 points against
// 1 gives for the draw (seeds 1 to 5: from 2e-8 to 2.2e-5, the same as
// Otava's), logged rather than asserted beyond passing the threshold.
func TestSingleRunAppended(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		s := steps(seed, uniform(0.02), []float64{115000, 105000}, []int{20, 1})
		cps := Detect(s, Options{})
		if len(cps) != 1 || cps[0].Index != 20 {
			t.Errorf("seed %d: change points %v, want [20]", seed, indexes(cps))
			continue
		}
		t.Logf("seed %d: p = %.2g, change %.2f%%", seed, cps[0].PValue, cps[0].ChangePercent())
	}
}

// TestEdgeCases pins down what Detect does with degenerate input.
func TestEdgeCases(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name   string
		values []float64
		want   []int
	}{
		{"nil", nil, nil},
		{"one point", []float64{1}, nil},
		{"two points", []float64{1, 100}, nil},
		{"constant", slices.Repeat([]float64{7}, 100), nil},
		{"all NaN", []float64{nan, nan, nan}, nil},
		{"clean step", []float64{1, 1, 1, 1, 5, 5, 5, 5}, []int{4}},
		// Non-finite values are filled from the previous value (the first
		// from the next), as Otava fills missing ones: still one step at 4.
		{"step with gaps", []float64{nan, 1, inf, 1, 5, nan, 5, -inf}, []int{4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.values)
			cps := Detect(in, Options{})
			if got := indexes(cps); !slices.Equal(got, tc.want) {
				t.Errorf("Detect = %v, want %v", got, tc.want)
			}
			if !slices.EqualFunc(in, tc.values, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Errorf("Detect modified its input")
			}
			for _, c := range cps {
				if c.Before != 1 || c.After != 5 || c.PValue != 0 || c.ChangePercent() != 400 {
					t.Errorf("change point %+v, want 1 → 5 (+400%%) with p = 0", c)
				}
			}
		})
	}
}

// TestOptions covers the defaults and what Validate rejects.
func TestOptions(t *testing.T) {
	if got := (Options{}).normalized(); got != (Options{Window: 50, MaxPValue: 0.001, MinSegment: 4}) {
		t.Errorf("defaults = %+v", got)
	}
	for _, o := range []Options{{Window: 1}, {Window: -3}, {Window: MaxWindow + 1}, {MaxPValue: -0.1}, {MaxPValue: 1.5}, {MaxPValue: math.NaN()}, {MinMagnitude: -1}, {MinMagnitude: math.Inf(1)}, {MinSegment: -1}} {
		if o.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", o)
		}
		// Detect still runs, on repaired options.
		_ = Detect(sequenceDivisive, o)
	}
	for _, o := range []Options{{}, {Window: 2, MaxPValue: 1, MinMagnitude: 0.05}, {Window: MaxWindow}} {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", o, err)
		}
	}
}

// TestDefaults: WithDefaults fills Otava's defaults into zero fields only,
// WithoutDefaults zeroes the fields that equal them, and the two are
// inverse on what they produce.
func TestDefaults(t *testing.T) {
	for _, tc := range []struct{ in, with, without Options }{
		{Options{}, Options{Window: 50, MaxPValue: 0.001, MinSegment: 4}, Options{}},
		{Options{Window: 50, MaxPValue: 0.001}, Options{Window: 50, MaxPValue: 0.001, MinSegment: 4}, Options{}},
		{Options{Window: 30, MinMagnitude: 0.05}, Options{Window: 30, MaxPValue: 0.001, MinMagnitude: 0.05, MinSegment: 4}, Options{Window: 30, MinMagnitude: 0.05}},
		{Options{MaxPValue: 0.01, MinSegment: 1}, Options{Window: 50, MaxPValue: 0.01, MinSegment: 1}, Options{MaxPValue: 0.01, MinSegment: 1}},
	} {
		if got := tc.in.WithDefaults(); got != tc.with {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", tc.in, got, tc.with)
		}
		if got := tc.in.WithoutDefaults(); got != tc.without {
			t.Errorf("%+v.WithoutDefaults() = %+v, want %+v", tc.in, got, tc.without)
		}
		if got := tc.in.WithoutDefaults().WithDefaults(); got != tc.with {
			t.Errorf("%+v: round trip %+v, want %+v", tc.in, got, tc.with)
		}
	}
}
