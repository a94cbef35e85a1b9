package runner

import (
	"testing"
	"time"
)

// BenchmarkRecordThrottled measures what a throttled producer does per
// acknowledged record to keep its latencies, before histograms were kept
// (two window histograms: the latency and its intended-time twin) and
// now (three logged histograms, the publish delay added, and the series
// point's), both in one run:
//
//	go test -run - -bench RecordThrottled -count 6 ./runner
func BenchmarkRecordThrottled(b *testing.B) {
	lat := func(i int) time.Duration { return time.Duration(500+i%20_000) * time.Microsecond }
	b.Run("before", func(b *testing.B) {
		h, intended := newHist(), newHist()
		for i := 0; b.Loop(); i++ {
			v, _ := histValue(lat(i))
			_ = h.RecordValue(v)
			_ = intended.RecordValue(v + 100)
		}
	})
	b.Run("now", func(b *testing.B) {
		hs := []*latencyHist{newLatencyHist(), newLatencyHist(), newLatencyHist()}
		for _, h := range hs {
			h.logged = true
		}
		point := pointCounters()
		for i := 0; b.Loop(); i++ {
			d := lat(i)
			hs[0].record(d)
			hs[1].record(d + 100*time.Microsecond)
			hs[2].record(100 * time.Microsecond)
			point.add(1, 256, d)
		}
	})
}
