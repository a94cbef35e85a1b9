package changepoint

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzDetect feeds Detect arbitrary series (8 bytes a value, any bit
// pattern: NaN, ±Inf, subnormals, huge values) and options, and checks that
// it does not panic and returns change points with indexes inside the series,
// strictly increasing, and that Extend accepts the result.
func FuzzDetect(f *testing.F) {
	enc := func(vs ...float64) []byte {
		b := make([]byte, 0, 8*len(vs))
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(enc(sequenceDivisive...), 0, 0.0, 0.0)
	f.Add(enc(series1...), 3, 0.5, 0.1)
	f.Add(enc(1, 1, 1, 5, 5, 5), 2, 1.0, 0.0)
	f.Add(enc(math.NaN(), math.Inf(1), 1e308, -1e308, 0, 5e-324), 4, 0.2, 0.0)
	f.Fuzz(func(t *testing.T, data []byte, window int, maxP, minMag float64) {
		if len(data) > 8*2000 {
			data = data[:8*2000]
		}
		values := make([]float64, len(data)/8)
		for i := range values {
			values[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		// Keep the window within the series' scale so that runs stay fast;
		// negative and tiny windows are still exercised.
		window %= 300
		opts := Options{Window: window, MaxPValue: maxP, MinMagnitude: minMag}
		check := func(cps []ChangePoint, n int) {
			prev := 0
			for _, c := range cps {
				if c.Index <= prev || c.Index >= n {
					t.Fatalf("change points %v out of (0, %d) or not increasing", indexes(cps), n)
				}
				prev = c.Index
			}
		}
		a := Analyze(values, opts)
		check(a.ChangePoints, len(values))
		if a.Len != len(values) {
			t.Fatalf("Len = %d, want %d", a.Len, len(values))
		}
		longer := append(values[:len(values):len(values)], 1, 2, 3)
		check(a.Extend(longer).ChangePoints, len(longer))
	})
}
