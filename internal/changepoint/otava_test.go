package changepoint

import (
	"math"
	"slices"
	"testing"
)

// The cases in this file are the published tests of Apache Otava
// (github.com/apache/otava, read at commit 1ceb1537a49d516cf6cef9a79bea6926002082f8).
// Each case names the Otava test file and test function it comes from; the
// series, parameters and expected change-point indexes are Otava's.

// sequenceDivisive is SEQUENCE of tests/change_point_divisive_test.py.
var sequenceDivisive = []float64{
	0.3, 2.4, 1.5, -0.9, -0.5,
	99.7, 98.3, 99.1,
	149.0, 149.7, 149.5, 149.1, 148.8, 150.0,
}

// singleSeries is the series of test_single_series in tests/analysis_test.py.
var singleSeries = []float64{
	1.02, 0.95, 0.99, 1.00, 1.12, 1.00, 1.01, 0.98, 1.01, 0.96,
	0.50, 0.51, 0.48, 0.48, 0.55, 0.50, 0.49, 0.51, 0.50, 0.49,
}

// series1 and series2 are the two metrics of tests/series_test.py and
// tests/report_test.py.
var (
	series1 = []float64{1.02, 0.95, 0.99, 1.00, 1.12, 0.90, 0.50, 0.51, 0.48, 0.48, 0.55}
	series2 = []float64{2.02, 2.03, 2.01, 2.04, 1.82, 1.85, 1.79, 1.81, 1.80, 1.76, 1.78}
)

// tigerbeetle is the Tigerbeetle benchmark series of tests/tigerbeetle_test.py.
var tigerbeetle = []float64{
	26705, 26475, 26641, 26806, 26835, 26911, 26564, 26812, 26874, 26682, 15672, 26745, 26460, 26977, 26851,
	23412, 23547, 23674, 23519, 23670, 23662, 23462, 23750, 23717, 23524, 23588, 23687, 23793, 23937, 23715,
	23570, 23730, 23690, 23699, 23670, 23860, 23988, 23652, 23681, 23798, 23728, 23604, 23523, 23412, 23685,
	23773, 23771, 23718, 23409, 23739, 23674, 23597, 23682, 23680, 23711, 23660, 23990, 23938, 23742, 23703,
	23536, 24363, 24414, 24483, 24509, 24944, 24235, 24560, 24236, 24667, 24730, 28346, 28437, 28436, 28057,
	28217, 28456, 28427, 28398, 28250, 28331, 28222, 28726, 28578, 28345, 28274, 28514, 28590, 28449, 28305,
	28411, 28788, 28404, 28821, 28580, 27483, 26805, 27487, 27124, 26898, 27295, 26951, 27312, 27660, 27154,
	27050, 26989, 27193, 27503, 27326, 27375, 27513, 27057, 27421, 27574, 27609, 27123, 27824, 27644, 27394,
	27836, 27949, 27702, 27457, 27272, 28207, 27802, 27516, 27586, 28005, 27768, 28543, 28237, 27915, 28437,
	28342, 27733, 28296, 28524, 28687, 28258, 28611, 29360, 28590, 29641, 28965, 29474, 29256, 28611, 28205,
	28539, 27962, 28398, 28509, 28240, 28592, 28102, 28461, 28578, 28669, 28507, 28535, 28226, 28536, 28561,
	28087, 27953, 28398, 28007, 28518, 28337, 28242, 28607, 28545, 28514, 28377, 28010, 28412, 28633, 28576,
	28195, 28637, 28724, 28466, 28287, 28719, 28425, 28860, 28842, 28604, 28327, 28216, 28946, 28918, 29287,
	28725, 29148, 29541, 29137, 29628, 29087, 28612, 29154, 29108, 28884, 29234, 28695, 28969, 28809, 28695,
	28634, 28916, 29852, 29389, 29757, 29531, 29363, 29251, 29552, 29561, 29046, 29795, 29022, 29395, 28921,
	29739, 29257, 29455, 29376, 29528, 28909, 29492, 28984, 29621, 29026, 29457, 29102, 29114, 28924, 29162,
	29259, 29554, 29616, 29211, 29367, 29460, 28836, 29645, 29586, 28848, 29324, 28969, 29150, 29243, 29081,
	29312, 28923, 29272, 29117, 29072, 29529, 29737, 29652, 29612, 29856, 29012, 30402, 29969, 29309, 29439,
	29285, 29421, 29023, 28772, 29692, 29416, 29267, 29542, 29904, 30045, 29739, 29945, 29141, 29163, 29765,
	29197, 29441, 28910, 29504, 29614, 29643, 29506, 29420, 29672, 29432, 29784, 29888, 29309, 29247, 29816,
	29254, 29813, 29451, 29382, 29618, 28558, 29845, 29499, 29283, 29184, 29246, 28790, 29952, 29145, 29415,
	30437, 29227, 29605, 29859, 29156, 29807, 29406, 29734, 29861, 29140, 29983, 29832, 29919, 29896, 29991,
	29266, 29001, 29459, 29548, 29310, 29042, 29303, 29894, 29091, 29018, 29537, 29614, 29180, 29736, 29500,
	29218, 29581, 28906, 28542, 29306, 28987, 29878, 28865, 30272, 29707, 29662, 29815, 30492, 29347, 30096,
	29054, 30238, 28813, 31895, 28915}

func indexes(cps []ChangePoint) []int {
	out := make([]int, len(cps))
	for i, c := range cps {
		out[i] = c.Index
	}
	return out
}

// TestOtavaPublishedCases runs compute_change_points' cases from Otava's tests
// and expects exactly the change-point indexes Otava's tests assert.
func TestOtavaPublishedCases(t *testing.T) {
	cases := []struct {
		name   string // Otava test file and function
		series []float64
		opts   Options
		want   []int
	}{
		{"tests/analysis_test.py test_single_series", singleSeries, Options{Window: 10, MaxPValue: 0.0001}, []int{10}},
		{"tests/series_test.py test_change_point_detection series1", series1, Options{}, []int{6}},
		{"tests/series_test.py test_change_point_detection series2", series2, Options{}, []int{4}},
		{"tests/series_test.py test_change_point_min_magnitude series1", series1, Options{MinMagnitude: 0.2}, []int{6}},
		{"tests/series_test.py test_change_point_min_magnitude series2", series2, Options{MinMagnitude: 0.2}, nil},
		{"tests/tigerbeetle_test.py test_tb_old_defaults", tigerbeetle, Options{Window: 30, MaxPValue: 0.01, MinMagnitude: 0.05}, []int{15, 71}},
		{"tests/tigerbeetle_test.py test_tb_old_defaults_p05", tigerbeetle, Options{Window: 30, MaxPValue: 0.05, MinMagnitude: 0.05}, []int{15, 71}},
		{"tests/tigerbeetle_test.py test_tb_old_defaults_p1", tigerbeetle, Options{Window: 30, MaxPValue: 0.1, MinMagnitude: 0.05}, []int{10, 11, 15, 71, 363}},
		{"tests/tigerbeetle_test.py test_tb_old_defaults_p2", tigerbeetle, Options{Window: 30, MaxPValue: 0.2, MinMagnitude: 0.05}, []int{10, 11, 15, 71}},
		{"tests/tigerbeetle_test.py test_tb_magnitude0_p2", tigerbeetle, Options{Window: 30, MaxPValue: 0.2}, []int{3, 6, 7, 10, 11, 13, 15, 16, 28, 29, 35, 37, 39, 41, 44, 48, 49, 56, 58, 61, 65, 66, 69, 71, 74, 76, 82, 95, 108, 117, 125, 126, 129, 131, 136, 137, 142, 148, 165, 169, 187, 190, 192, 197, 200, 212, 220, 241, 243, 246, 247, 249, 250, 260, 265, 266, 268, 278, 282, 288, 305, 306, 325, 330, 337, 338, 340, 347, 349, 363}},
		{"tests/tigerbeetle_test.py test_tb_magnitude0_p1", tigerbeetle, Options{Window: 30, MaxPValue: 0.1}, []int{3, 6, 10, 11, 15, 16, 28, 29, 35, 37, 39, 41, 44, 48, 49, 61, 71, 95, 117, 131, 142, 148, 165, 169, 192, 206, 212, 260, 265, 268, 278, 282, 288, 305, 363}},
		{"tests/tigerbeetle_test.py test_tb_magnitude0_p01", tigerbeetle, Options{Window: 30, MaxPValue: 0.01}, []int{15, 26, 61, 71, 95, 117, 131, 142, 148, 165, 169, 192, 212, 260}},
		{"tests/tigerbeetle_test.py test_tb_magnitude0_p001", tigerbeetle, Options{Window: 30, MaxPValue: 0.001}, []int{15, 61, 71, 95, 117, 131, 142, 148, 192, 212, 260}},
		{"tests/tigerbeetle_test.py test_tb_magnitude0_p0001", tigerbeetle, Options{Window: 30, MaxPValue: 0.0001}, []int{71, 95, 117, 131, 142, 148, 192, 212}},
		{"tests/tigerbeetle_test.py test_tb_magnitude0_p00001", tigerbeetle, Options{Window: 30, MaxPValue: 0.00001}, []int{71, 95, 131, 192, 212}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := indexes(Detect(tc.series, tc.opts))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Detect(window=%d, max_pvalue=%g, min_magnitude=%g) = %v, Otava expects %v",
					tc.opts.Window, tc.opts.MaxPValue, tc.opts.MinMagnitude, got, tc.want)
			}
		})
	}
}

// TestOtavaDivByZero is test_div_by_zero of tests/series_test.py: a series
// starting with zeros (a mean of 0 on one side) gives two change points, the
// first at index 3, and finite figures.
func TestOtavaDivByZero(t *testing.T) {
	cps := Detect([]float64{0.0, 0.0, 0.0, 1.00, 1.12, 0.90, 0.50, 0.51, 0.48, 0.48, 0.55}, Options{})
	if len(cps) != 2 || cps[0].Index != 3 {
		t.Fatalf("Detect = %v, Otava expects two change points, the first at 3", indexes(cps))
	}
	for _, c := range cps {
		for _, v := range []float64{c.Before, c.After, c.PValue, c.Magnitude, c.ChangePercent()} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("change point %+v has a non-finite figure", c)
			}
		}
	}
}

// TestOtavaReportFigures checks the figures of tests/report_test.py
// test_json_report, which Otava prints with 6 decimals: the tolerance is
// half a unit of the last printed digit.
func TestOtavaReportFigures(t *testing.T) {
	const tol = 5e-7
	cases := []struct {
		name                    string
		series                  []float64
		index                   int
		before, after           float64
		stdBefore, stdAfter     float64
		magnitude, percentRound float64
	}{
		{"series2", series2, 4, 2.025000, 1.801429, 0.011180, 0.026954, 0.124108, -11},
		{"series1", series1, 6, 0.996667, 0.504000, 0.067495, 0.025768, 0.977513, -49},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cps := Detect(tc.series, Options{})
			if len(cps) != 1 || cps[0].Index != tc.index {
				t.Fatalf("Detect = %v, want [%d]", indexes(cps), tc.index)
			}
			c := cps[0]
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"mean_before", c.Before, tc.before},
				{"mean_after", c.After, tc.after},
				{"stddev_before", c.StdDevBefore, tc.stdBefore},
				{"stddev_after", c.StdDevAfter, tc.stdAfter},
				{"magnitude", c.Magnitude, tc.magnitude},
			} {
				if math.Abs(f.got-f.want) > tol {
					t.Errorf("%s = %.7f, Otava prints %.6f", f.name, f.got, f.want)
				}
			}
			if got := math.Round(c.ChangePercent()); got != tc.percentRound {
				t.Errorf("forward change %% = %.3f, Otava prints %.0f", c.ChangePercent(), tc.percentRound)
			}
			// Otava prints the p-value as 0.000000.
			if c.PValue >= 5e-7 {
				t.Errorf("p-value = %g, Otava prints 0.000000", c.PValue)
			}
		})
	}
}

// TestOtavaCSVExample is test_analyze_csv of tests/csv_e2e_test.py: with the
// default options metric1 has no change point and metric2 one at index 6,
// printed as -12.9%.
func TestOtavaCSVExample(t *testing.T) {
	metric1 := []float64{154023, 138455, 143112, 149190, 132098, 151344, 155145, 148889, 149466, 148209}
	metric2 := []float64{10.43, 10.23, 10.29, 10.91, 10.34, 10.69, 9.23, 9.11, 9.13, 9.03}
	if cps := Detect(metric1, Options{}); len(cps) != 0 {
		t.Errorf("metric1: Detect = %v, Otava shows none", indexes(cps))
	}
	cps := Detect(metric2, Options{})
	if len(cps) != 1 || cps[0].Index != 6 {
		t.Fatalf("metric2: Detect = %v, Otava shows [6]", indexes(cps))
	}
	if got := math.Round(cps[0].ChangePercent()*10) / 10; got != -12.9 {
		t.Errorf("metric2: change = %.3f%%, Otava prints -12.9%%", cps[0].ChangePercent())
	}
}

// TestOtavaDetectorTTest is test_ttest of tests/change_point_divisive_test.py:
// the divisive detector alone (one window over the whole series) with the
// t-test at 0.01 splits SEQUENCE at 5 and 8.
func TestOtavaDetectorTTest(t *testing.T) {
	got := detectWindow(sequenceDivisive, 0.01, new(scratch))
	if want := []int{5, 8}; !slices.Equal(got, want) {
		t.Errorf("detectWindow = %v, Otava expects %v", got, want)
	}
}

// TestOtavaCandidate is test_calculator_candidate of
// tests/change_point_divisive_test.py: the candidate (the split maximising
// the divergence Q over every (tau, kappa)) matches a brute-force evaluation
// of Q's definition.
func TestOtavaCandidate(t *testing.T) {
	z := sequenceDivisive
	bestQ, bestTau := 0.0, -1
	for tau := 1; tau < len(z); tau++ {
		for kappa := tau + 1; kappa <= len(z); kappa++ {
			q := bruteQ(z[:tau], z[tau:kappa])
			if q > bestQ {
				bestQ, bestTau = q, tau
			}
		}
	}
	tau, q := candidate(z, 0, len(z), new(scratch))
	if tau != bestTau || math.Abs(q-bestQ) > 1e-9*bestQ {
		t.Errorf("candidate = (%d, %g), brute force (%d, %g)", tau, q, bestTau, bestQ)
	}
}

// bruteQ evaluates the E-divisive divergence of X and Y from its definition.
func bruteQ(x, y []float64) float64 {
	n, m := float64(len(x)), float64(len(y))
	var between, withinX, withinY float64
	for _, a := range x {
		for _, b := range y {
			between += math.Abs(a - b)
		}
	}
	for i := range x {
		for k := i + 1; k < len(x); k++ {
			withinX += math.Abs(x[i] - x[k])
		}
	}
	for i := range y {
		for k := i + 1; k < len(y); k++ {
			withinY += math.Abs(y[i] - y[k])
		}
	}
	q := 2 / (n + m) * between
	if n > 1 {
		q -= 2 * m / (n + m) / (n - 1) * withinX
	}
	if m > 1 {
		q -= 2 * n / (n + m) / (m - 1) * withinY
	}
	return q
}

// TestOtavaSignificance is test_significance_tester of tests/analysis_test.py:
// the t-test of two halves that are the same gives p ≈ 1; of halves 20% apart
// a p-value in (0, 0.001).
func TestOtavaSignificance(t *testing.T) {
	same := []float64{1.00, 1.02, 1.05, 0.95, 0.98, 1.00, 1.02, 1.05, 0.95, 0.98}
	if p := compare(same[:5], same[5:]).p; !(p > 0.99 && p < 1.01) {
		t.Errorf("equal halves: p = %g, Otava expects 0.99 < p < 1.01", p)
	}
	apart := []float64{1.00, 1.02, 1.05, 0.95, 0.98, 0.80, 0.82, 0.85, 0.79, 0.77}
	if p := compare(apart[:5], apart[5:]).p; !(p > 0 && p < 0.001) {
		t.Errorf("shifted halves: p = %g, Otava expects 0 < p < 0.001", p)
	}
}

// TestOtavaIncremental is test_incremental_otava of tests/series_test.py:
// appending points and re-analysing only the tail keeps the old change points
// and finds the new one at 12.
func TestOtavaIncremental(t *testing.T) {
	a1 := Analyze(series1, Options{})
	a2 := Analyze(series2, Options{})
	s1 := append(slices.Clone(series1), 0.5)
	s2 := append(slices.Clone(series2), 1.97)
	a1, a2 = a1.Extend(s1), a2.Extend(s2)
	if got := indexes(a1.ChangePoints); !slices.Equal(got, []int{6}) {
		t.Errorf("series1 after one append: %v, Otava expects [6]", got)
	}
	if got := indexes(a2.ChangePoints); !slices.Equal(got, []int{4}) {
		t.Errorf("series2 after one append: %v, Otava expects [4]", got)
	}
	s1 = append(s1, 0.51)
	a1 = a1.Extend(s1)
	if got := indexes(a1.ChangePoints); !slices.Equal(got, []int{6}) {
		t.Errorf("series1 after two appends: %v, Otava expects [6]", got)
	}
	s2 = append(s2, 33.33, 46.46)
	a2 = a2.Extend(s2)
	if got := indexes(a2.ChangePoints); !slices.Equal(got, []int{4, 12}) {
		t.Errorf("series2 after appending two: %v, Otava expects [4 12]", got)
	}
}
