package check

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

// noisy returns n points around level with uniform noise of ±frac,
// numbered from firstID; the same seed gives the same points.
func noisy(seed uint64, firstID uint, n int, level, frac float64) []Point {
	rng := rand.New(rand.NewPCG(seed, 13))
	ps := make([]Point, n)
	for i := range ps {
		ps[i] = Point{RunID: firstID + uint(i), Value: level * (1 + frac*(2*rng.Float64()-1))}
	}
	return ps
}

func join(parts ...[]Point) []Point {
	var out []Point
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

const rate = "record-send-rate"

func TestDecide(t *testing.T) {
	history := noisy(1, 1, 20, 115000, 0.02) // KAFKA-14020: ~115k before the commit
	// raw decides on every change point Otava reports (min_segment 1), as
	// check did before min_segment; the default leaves a change point with
	// fewer than 4 candidates after it undecided.
	raw := Options{ChangePoint: changepoint.Options{MinSegment: 1}}
	in := func(metric string, better rundoc.Better, base, cand []Point) Input {
		return Input{Metric: metric, Unit: "records/s", Better: better, Baseline: base, Candidates: cand}
	}
	cases := []struct {
		name    string
		in      Input
		opts    Options
		verdict string
		method  string
		// wantPct: the change expected within ±1 point (NaN: no figure).
		wantPct float64
		// wantP: the p-value is below this (0: no p-value expected).
		wantP float64
		baseN int
	}{
		{"single run at 105k after 20 at 115k: a regression", in(rate, rundoc.HigherIsBetter, history, []Point{{100, 105000}}),
			raw, VerdictRegression, MethodChangePoint, -8.7, 0.001, 20},
		{"single run at 115k: no change", in(rate, rundoc.HigherIsBetter, history, []Point{{100, 115000}}),
			raw, VerdictNoChange, MethodChangePoint, 0, 0, 20},
		{"single run at 126k: an improvement", in(rate, rundoc.HigherIsBetter, history, []Point{{100, 126000}}),
			raw, VerdictImprovement, MethodChangePoint, 9.6, 0.001, 20},
		{"−8.7% under a 10% threshold: within threshold", in(rate, rundoc.HigherIsBetter, history, []Point{{100, 105000}}),
			Options{Threshold: 10, ChangePoint: changepoint.Options{MinSegment: 1}}, VerdictWithinThreshold, MethodChangePoint, -8.7, 0.001, 20},
		{"lower is better: a latency up 10% regresses",
			Input{Metric: "record-latency-p99", Unit: "ms", Better: rundoc.LowerIsBetter, Baseline: noisy(2, 1, 20, 40, 0.02), Candidates: []Point{{100, 44}}},
			raw, VerdictRegression, MethodChangePoint, 10, 0.001, 20},
		{"the baseline's own change point starts the baseline",
			in(rate, rundoc.HigherIsBetter, join(noisy(3, 1, 20, 100000, 0.02), noisy(4, 21, 20, 115000, 0.02)), []Point{{100, 105000}}),
			raw, VerdictRegression, MethodChangePoint, -8.7, 0.001, 20},
		{"single run at 105k, default min_segment: a tentative change, undecided", in(rate, rundoc.HigherIsBetter, history, []Point{{100, 105000}}),
			Options{}, VerdictUndecided, MethodChangePoint, -8.7, 0, 20},
		{"3 candidates at 105k with min_segment 3: a regression", in(rate, rundoc.HigherIsBetter, history, noisy(7, 100, 3, 105000, 0.01)),
			Options{ChangePoint: changepoint.Options{MinSegment: 3}}, VerdictRegression, MethodChangePoint, -8.7, 0.001, 20},
		{"3 candidates at 105k, default min_segment: undecided", in(rate, rundoc.HigherIsBetter, history, noisy(7, 100, 3, 105000, 0.01)),
			Options{}, VerdictUndecided, MethodChangePoint, -8.7, 0, 20},
		{"5 repetitions at 105k: Mann-Whitney finds the regression", in(rate, rundoc.HigherIsBetter, history, noisy(5, 100, 5, 105000, 0.02)),
			Options{}, VerdictRegression, MethodMannWhitney, -8.7, 0.05, 20},
		{"5 repetitions at 115k: Mann-Whitney, no change", in(rate, rundoc.HigherIsBetter, history, noisy(6, 100, 5, 115000, 0.02)),
			Options{}, VerdictNoChange, MethodMannWhitney, 0, 0, 20},
		{"3 candidates: too few for Mann-Whitney, the change-point test decides", in(rate, rundoc.HigherIsBetter, history, noisy(7, 100, 3, 105000, 0.01)),
			raw, VerdictRegression, MethodChangePoint, -8.7, 0.001, 20},
		{"3 baseline runs: undecided", in(rate, rundoc.HigherIsBetter, history[:3], []Point{{100, 105000}}),
			Options{}, VerdictUndecided, "", -8.7, 0, 3},
		{"no baseline: undecided", in(rate, rundoc.HigherIsBetter, nil, []Point{{100, 105000}}),
			Options{}, VerdictUndecided, "", math.NaN(), 0, 0},
		{"no candidate value: undecided", in(rate, rundoc.HigherIsBetter, history, nil),
			Options{}, VerdictUndecided, "", math.NaN(), 0, 20},
		{"no direction: never a regression", in("bytes", "", history, []Point{{100, 105000}}),
			raw, VerdictNoChange, MethodChangePoint, -8.7, 0.001, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Decide([]Input{tc.in}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			t.Logf("%s: baseline %v, candidate %v, change %v, p %v, %s", r.Verdict, r.Baseline, r.Candidate, deref(r.ChangePct), deref(r.PValue), r.Reason)
			if r.Verdict != tc.verdict || r.Method != tc.method {
				t.Errorf("verdict %q by %q, want %q by %q (%s)", r.Verdict, r.Method, tc.verdict, tc.method, r.Reason)
			}
			if r.Baseline.N != tc.baseN {
				t.Errorf("baseline n = %d, want %d", r.Baseline.N, tc.baseN)
			}
			switch {
			case math.IsNaN(tc.wantPct) && r.ChangePct != nil:
				t.Errorf("change %v%%, want none", *r.ChangePct)
			case !math.IsNaN(tc.wantPct) && (r.ChangePct == nil || math.Abs(*r.ChangePct-tc.wantPct) > 1):
				t.Errorf("change %v%%, want %v ± 1", deref(r.ChangePct), tc.wantPct)
			}
			switch {
			case tc.wantP == 0 && tc.verdict != VerdictNoChange && r.PValue != nil:
				t.Errorf("p-value %v, want none", *r.PValue)
			case tc.wantP > 0 && (r.PValue == nil || *r.PValue >= tc.wantP):
				t.Errorf("p-value %v, want below %v", deref(r.PValue), tc.wantP)
			}
			if r.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestDecideOtavaSingleRun: the figure: Otava flags a single run
// at −8.7% after 20 runs at 115k ± 2% with p ≈ 0.0001.
func TestDecideOtavaSingleRun(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		cand := []Point{{100, 115000 * (1 - 0.087)}}
		rs, err := Decide([]Input{{Metric: rate, Better: rundoc.HigherIsBetter, Baseline: noisy(seed, 1, 20, 115000, 0.02), Candidates: cand}},
			Options{ChangePoint: changepoint.Options{MinSegment: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if r := rs[0]; r.Verdict != VerdictRegression || r.PValue == nil || *r.PValue > 0.001 {
			t.Errorf("seed %d: %s, p %v: want a regression with p ≤ 0.001", seed, r.Verdict, deref(r.PValue))
		} else {
			t.Logf("seed %d: p = %.2g", seed, *r.PValue)
		}
	}
}

// TestDecideMannWhitneyAdjustsTogether: metrics tested by Mann-Whitney
// share one Benjamini-Hochberg adjustment, as on a comparison page: the
// adjusted p-value of a metric is at least its raw one, and the reason
// names how many metrics were adjusted together.
func TestDecideMannWhitneyAdjustsTogether(t *testing.T) {
	base := noisy(8, 1, 10, 115000, 0.02)
	lat := noisy(9, 1, 10, 40, 0.02)
	ins := []Input{
		{Metric: rate, Unit: "records/s", Better: rundoc.HigherIsBetter, Baseline: base, Candidates: noisy(10, 100, 6, 105000, 0.02)},
		{Metric: "record-latency-p99", Unit: "ms", Better: rundoc.LowerIsBetter, Baseline: lat, Candidates: renumber(lat[2:8], 100)},
	}
	rs, err := Decide(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Verdict != VerdictRegression || rs[1].Verdict != VerdictNoChange {
		t.Fatalf("verdicts %q, %q: want regression, no change", rs[0].Verdict, rs[1].Verdict)
	}
	for _, r := range rs {
		if r.Method != MethodMannWhitney || !strings.Contains(r.Reason, "across 2 metrics") {
			t.Errorf("%s: method %q, reason %q: want Mann-Whitney adjusted across 2 metrics", r.Metric, r.Method, r.Reason)
		}
		if r.Baseline.Stat != "median" || r.Baseline.N != 10 || r.Candidate.N != 6 {
			t.Errorf("%s: sides %+v / %+v", r.Metric, r.Baseline, r.Candidate)
		}
	}
}

// TestMinRepetitionsIsCompareTestMinN keeps MinRepetitions equal to the
// fewest runs per side the comparison tables test with.
func TestMinRepetitionsIsCompareTestMinN(t *testing.T) {
	run := func(id uint) rundoc.Run {
		return rundoc.Run{ID: id, Metrics: []rundoc.Metric{{Name: rate, Value: float64(id), Better: rundoc.HigherIsBetter}}}
	}
	tab, err := compare.Build([]compare.Column{{Name: "a", Runs: []rundoc.Run{run(1)}}, {Name: "b", Runs: []rundoc.Run{run(2)}}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tab.TestMinN != MinRepetitions {
		t.Errorf("compare tests with ≥ %d runs a side; MinRepetitions is %d", tab.TestMinN, MinRepetitions)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{Threshold: -1}, {Threshold: 100}, {Threshold: math.NaN()}, {ChangePoint: changepoint.Options{Window: 1}}, {ChangePoint: changepoint.Options{MaxPValue: 2}}} {
		if _, err := Decide(nil, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// renumber gives ps's values new run IDs from firstID.
func renumber(ps []Point, firstID uint) []Point {
	out := make([]Point, len(ps))
	for i, p := range ps {
		out[i] = Point{firstID + uint(i), p.Value}
	}
	return out
}
