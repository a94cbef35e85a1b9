package changepoint

import (
	"math/rand/v2"
	"testing"
)

// realistic returns n points with a level shift of 3% to 12% every 50 to 300
// points and 2% normal noise: benchmark history as it looks.
func realistic(n int) []float64 {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]float64, 0, n)
	level := 100000.0
	for len(out) < n {
		run := 50 + rng.IntN(250)
		for i := 0; i < run && len(out) < n; i++ {
			out = append(out, level*(1+0.02*rng.NormFloat64()))
		}
		shift := 0.03 + 0.09*rng.Float64()
		if rng.IntN(2) == 0 {
			shift = -shift
		}
		level *= 1 + shift
	}
	return out
}

func benchmarkDetect(b *testing.B, n int) {
	s := realistic(n)
	b.ReportAllocs()
	var found int
	for b.Loop() {
		found = len(Detect(s, Options{}))
	}
	b.ReportMetric(float64(found), "changepoints")
}

// The targets: 1,000 points under 20 ms, 10,000 under 1 s, one core.
func BenchmarkDetect1000(b *testing.B)  { benchmarkDetect(b, 1000) }
func BenchmarkDetect10000(b *testing.B) { benchmarkDetect(b, 10000) }

// BenchmarkExtend10000 is appending one point to an analysed 10,000-point
// series, as a new run arriving in a long history.
func BenchmarkExtend10000(b *testing.B) {
	s := realistic(10001)
	a := Analyze(s[:10000], Options{})
	b.ReportAllocs()
	for b.Loop() {
		a.Extend(s)
	}
}
