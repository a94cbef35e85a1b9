package rundoc

import (
	"math"
	"testing"
)

// TestMergeSeries: merged points cover their groups' intervals: counts add
// up, rates are what the longer interval measured, latency averages weigh
// each point by its records and maxima keep the largest.
func TestMergeSeries(t *testing.T) {
	pts := []SeriesPoint{
		// 0 → 0.25 s: 250 records.
		{T: 0.25, Records: 250, Bytes: 25000, RecordsPerSec: 1000, MBPerSec: 25000 / 0.25 / (1 << 20), LatencyAvgMs: 2, LatencyMaxMs: 5},
		// 0.25 → 0.75 s: 1500 records.
		{T: 0.75, Records: 1500, Bytes: 150000, RecordsPerSec: 3000, MBPerSec: 150000 / 0.5 / (1 << 20), LatencyAvgMs: 4, LatencyMaxMs: 9},
		// 0.75 → 1 s: none.
		{T: 1, RecordsPerSec: 0, LatencyMaxMs: 0},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, tc := range []struct {
		name string
		k    int
		want []SeriesPoint
	}{
		{"k=1 copies", 1, pts},
		{"pairs, the odd last alone", 2, []SeriesPoint{
			{T: 0.75, Records: 1750, Bytes: 175000, RecordsPerSec: 1750 / 0.75, MBPerSec: 175000 / 0.75 / (1 << 20),
				LatencyAvgMs: (250*2 + 1500*4) / 1750.0, LatencyMaxMs: 9},
			pts[2],
		}},
		{"all in one", 5, []SeriesPoint{
			{T: 1, Records: 1750, Bytes: 175000, RecordsPerSec: 1750, MBPerSec: 175000.0 / (1 << 20),
				LatencyAvgMs: (250*2 + 1500*4) / 1750.0, LatencyMaxMs: 9},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MergeSeries(pts, tc.k)
			if len(got) != len(tc.want) {
				t.Fatalf("%d points, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, g := range got {
				w := tc.want[i]
				if g.T != w.T || g.Records != w.Records || g.Bytes != w.Bytes || !near(g.RecordsPerSec, w.RecordsPerSec) ||
					!near(g.MBPerSec, w.MBPerSec) || !near(g.LatencyAvgMs, w.LatencyAvgMs) || g.LatencyMaxMs != w.LatencyMaxMs {
					t.Errorf("point %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
	if got := CoarsenSeries(nil); len(got) != 0 {
		t.Errorf("CoarsenSeries(nil) = %v", got)
	}
	// A series coarsened again and again keeps its records and its end.
	var long []SeriesPoint
	for i := 1; i <= MaxSeriesPoints+1; i++ {
		long = append(long, SeriesPoint{T: float64(i) * SeriesStep.Seconds(), Records: int64(i % 7), RecordsPerSec: float64(i%7) / SeriesStep.Seconds()})
	}
	short := CoarsenSeries(CoarsenSeries(long))
	var a, b int64
	for _, p := range long {
		a += p.Records
	}
	for _, p := range short {
		b += p.Records
	}
	if len(short) != (MaxSeriesPoints+4)/4 || a != b || short[len(short)-1].T != long[len(long)-1].T {
		t.Errorf("coarsened twice: %d points (want %d), %d records (want %d), ends at %v (want %v)",
			len(short), (MaxSeriesPoints+4)/4, b, a, short[len(short)-1].T, long[len(long)-1].T)
	}
}

// TestMergePercentiles: a merged point keeps the largest of its parts'
// percentiles, an upper bound of its own, and says they are approximate;
// points without percentiles merge to none.
func TestMergePercentiles(t *testing.T) {
	got := MergePoints(0, []SeriesPoint{
		{T: 1, Records: 10, LatencyAvgMs: 1, LatencyP50Ms: 1, LatencyP99Ms: 4, LatencyP999Ms: 5, LatencyMaxMs: 6},
		{T: 2, Records: 10, LatencyAvgMs: 2, LatencyP50Ms: 2, LatencyP99Ms: 3, LatencyP999Ms: 9, LatencyMaxMs: 9},
	})
	if got.LatencyP50Ms != 2 || got.LatencyP99Ms != 4 || got.LatencyP999Ms != 9 || !got.PercentilesApprox {
		t.Errorf("merged %+v, want p50 2, p99 4, p99.9 9, approximate", got)
	}
	plain := MergePoints(0, []SeriesPoint{{T: 1, Records: 1, LatencyAvgMs: 1}, {T: 2, Records: 1, LatencyAvgMs: 2}})
	if plain.LatencyP99Ms != 0 || plain.PercentilesApprox {
		t.Errorf("merged points without percentiles: %+v, want none", plain)
	}
	if one := MergePoints(0, []SeriesPoint{{T: 1, LatencyP99Ms: 3}}); one.PercentilesApprox {
		t.Errorf("a point alone is not merged: %+v", one)
	}
}
