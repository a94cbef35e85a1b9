package changepoint

import (
	"slices"
	"testing"
)

// writePath121 is the shape of the write-path preset's request-latency-p99
// with 4 repetitions: one run at 10.5 ms, then 185.5, 185.5, 186. Otava
// (and Detect) split it 1/2/1 with p = 0: the one-run segments and the
// two equal runs have no variance.
var writePath121 = []float64{10.5, 185.5, 185.5, 186}

// TestMinSegmentTentative: Detect keeps Otava's answer on the 1/2/1
// series; with the default min_segment both change points are tentative,
// with 1 (Otava's raw answer) neither is.
func TestMinSegmentTentative(t *testing.T) {
	cps := Detect(writePath121, Options{})
	if got := indexes(cps); !slices.Equal(got, []int{1, 3}) || cps[0].PValue != 0 {
		t.Fatalf("change points %+v, want Otava's 1 and 3 with p = 0", cps)
	}
	for i := range cps {
		if !(Options{}).Tentative(cps, len(writePath121), i) {
			t.Errorf("change point %d is not tentative with the default min_segment", cps[i].Index)
		}
		if (Options{MinSegment: 1}).Tentative(cps, len(writePath121), i) {
			t.Errorf("change point %d is tentative with min_segment 1", cps[i].Index)
		}
	}
	if b, a := Sides(cps, 4, 0); b != 1 || a != 2 {
		t.Errorf("sides of the first: %d and %d, want 1 and 2", b, a)
	}
	if b, a := Sides(cps, 4, 1); b != 2 || a != 1 {
		t.Errorf("sides of the second: %d and %d, want 2 and 1", b, a)
	}
	// KAFKA-14020's step, 10 and 10 runs, is trusted with the default.
	single := Detect(singleSeries, Options{Window: 10, MaxPValue: 0.0001})
	if len(single) != 1 || (Options{}).Tentative(single, len(singleSeries), 0) {
		t.Errorf("the 10/10 step %+v is tentative", single)
	}
}

func TestMinSegmentValidate(t *testing.T) {
	if err := (Options{MinSegment: -1}).Validate(); err == nil {
		t.Error("min_segment -1 accepted")
	}
	for _, n := range []int{0, 1, 2, 4, 100} {
		if err := (Options{MinSegment: n}).Validate(); err != nil {
			t.Errorf("min_segment %d: %v", n, err)
		}
	}
	if o := (Options{}).WithDefaults(); o.MinSegment != DefaultMinSegment || o.WithoutDefaults().MinSegment != 0 {
		t.Errorf("defaults: %+v", o)
	}
}
