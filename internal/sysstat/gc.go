package sysstat

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// runtime/metrics names used by this package. They were checked against
// metrics.All() of Go 1.26; TestMetricNamesExist fails if a future
// toolchain drops or changes one of them.
//
// Total GC pause time is deliberately NOT taken from runtime/metrics, which
// in Go 1.26 has no exact figure for it:
//   - /sched/pauses/total/gc:seconds (and its deprecated twin
//     /gc/pauses:seconds) is a histogram without a sum; its buckets are up
//     to 25% wide, so it only bounds the total;
//   - /cpu/classes/gc/pause:cpu-seconds is documented as GOMAXPROCS times
//     the pause time, but the runtime adds the stop-the-world "stopping"
//     phase to it at weight 1 (CPU actually spent stopping) instead of
//     GOMAXPROCS, so dividing it by GOMAXPROCS underestimates the pauses
//     (observed: 47µs against a histogram lower bound of 197µs).
//
// The total therefore comes from runtime/debug.ReadGCStats, whose
// PauseTotal is the runtime's exact running sum of stop-the-world wall time
// (from deciding to stop until restart, the same definition as the
// histogram). It takes the heap lock briefly and, unlike
// runtime.ReadMemStats, does not stop the world.
const (
	// Count of all completed GC cycles (automatic + forced). Cumulative.
	metricGCCycles = "/gc/cycles/total:gc-cycles"
	// Count of completed GC cycles forced by the application
	// (runtime.GC, debug.FreeOSMemory). Cumulative.
	metricGCForced = "/gc/cycles/forced:gc-cycles"
	// Histogram of individual GC-related stop-the-world pauses, from
	// deciding to stop the world until it is started again. Used for the
	// pause count and the longest-pause bound. Cumulative bucket counts.
	metricGCPauses = "/sched/pauses/total/gc:seconds"
	// Bytes of heap objects, live or dead-but-unswept; the equivalent of
	// runtime.MemStats.HeapAlloc.
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	// Bytes in in-use heap spans not holding objects; objects + unused is
	// the equivalent of runtime.MemStats.HeapInuse.
	metricHeapUnused = "/memory/classes/heap/unused:bytes"
	// Bytes of live heap objects as marked by the last completed GC.
	metricHeapLive = "/gc/heap/live:bytes"
)

// HeapPeakMetric is the runtime/metrics name [HeapPeakTracker] samples for
// [HeapPeak.AllocBytes]: the bytes of heap objects, live or dead but not
// yet swept, so it includes garbage the next GC cycle will free.
const HeapPeakMetric = metricHeapObjects

// GCSnapshot is a point-in-time reading of Go runtime GC and heap
// statistics. It never stops the world (see the note on the metric names
// above for where each figure comes from). Cumulative fields only make
// sense as differences: use [GCSnapshot.Sub].
type GCSnapshot struct {
	// Cycles is the number of completed GC cycles since process start
	// (automatic and forced). Unit: cycles.
	Cycles uint64
	// ForcedCycles is the part of Cycles forced by the application, e.g.
	// by runtime.GC. Unit: cycles.
	ForcedCycles uint64
	// Pauses is the number of GC-related stop-the-world pauses since
	// process start; a cycle normally has two, and the first pause of a
	// cycle still in progress is already included. Unit: pauses.
	Pauses uint64
	// PauseTotal is the total stop-the-world wall time of the completed
	// GC cycles since process start, exact to the nanosecond.
	// Unit: time.Duration.
	PauseTotal time.Duration
	// HeapAllocBytes is the size of heap objects, live or not yet swept
	// (the runtime.MemStats.HeapAlloc equivalent). Unit: bytes.
	HeapAllocBytes uint64
	// HeapInUseBytes is the size of in-use heap spans: HeapAllocBytes plus
	// span space not holding objects (the runtime.MemStats.HeapInuse
	// equivalent). Unit: bytes.
	HeapInUseBytes uint64
	// HeapLiveBytes is the size of the heap objects found live by the most
	// recently completed GC cycle. Unit: bytes.
	HeapLiveBytes uint64

	pauseCounts  []uint64  // per-bucket cumulative pause counts
	pauseBuckets []float64 // bucket boundaries in seconds (fixed for the process)
}

// gcStatsPool recycles the buffers of debug.ReadGCStats (about 10 KB) so
// that ReadGC barely disturbs the heap it measures.
var gcStatsPool = sync.Pool{New: func() any { return new(debug.GCStats) }}

// ReadGC takes a [GCSnapshot] of the current process. It takes no
// stop-the-world pause and allocates about 1.5 KB (the pause histogram);
// call it at the edges of a measured window rather than in a hot loop. The
// runtime/metrics and debug.ReadGCStats parts are two separate reads, so a
// GC cycle ending between them can make the snapshot very slightly
// inconsistent.
func ReadGC() GCSnapshot {
	s := []metrics.Sample{
		{Name: metricGCCycles},
		{Name: metricGCForced},
		{Name: metricGCPauses},
		{Name: metricHeapObjects},
		{Name: metricHeapUnused},
		{Name: metricHeapLive},
	}
	metrics.Read(s)
	st := gcStatsPool.Get().(*debug.GCStats)
	debug.ReadGCStats(st)
	var g GCSnapshot
	g.PauseTotal = st.PauseTotal
	gcStatsPool.Put(st)

	g.Cycles = sampleUint(s[0])
	g.ForcedCycles = sampleUint(s[1])
	if s[2].Value.Kind() == metrics.KindFloat64Histogram {
		h := s[2].Value.Float64Histogram()
		g.pauseCounts = h.Counts // freshly allocated by this Read
		g.pauseBuckets = h.Buckets
		for _, c := range h.Counts {
			g.Pauses += c
		}
	}
	objects, unused := sampleUint(s[3]), sampleUint(s[4])
	g.HeapAllocBytes = objects
	g.HeapInUseBytes = objects + unused
	g.HeapLiveBytes = sampleUint(s[5])
	return g
}

// GCDelta is the GC activity between two snapshots, see [GCSnapshot.Sub].
// Counts are signed so that swapped arguments show up as negative numbers
// rather than wrapping around.
type GCDelta struct {
	// Cycles is the number of GC cycles completed in the window.
	// Unit: cycles.
	Cycles int64
	// ForcedCycles is the part of Cycles forced by the application.
	// Unit: cycles.
	ForcedCycles int64
	// Pauses is the number of GC stop-the-world pauses in the window.
	// Unit: pauses.
	Pauses int64
	// PauseTotal is the total stop-the-world wall time of the GC cycles
	// completed in the window, exact. Unit: time.Duration.
	PauseTotal time.Duration
	// PauseMaxBound is an upper bound on the longest single GC pause in
	// the window: the upper edge of the runtime histogram bucket holding
	// it, at most 25% above the true value. Zero if there was no pause.
	// Unit: time.Duration.
	PauseMaxBound time.Duration
	// HeapAllocBytes is the change in GCSnapshot.HeapAllocBytes.
	// Unit: bytes (may be negative).
	HeapAllocBytes int64
	// HeapInUseBytes is the change in GCSnapshot.HeapInUseBytes.
	// Unit: bytes (may be negative).
	HeapInUseBytes int64
}

// Sub returns the GC activity between b (earlier) and a (later).
func (a GCSnapshot) Sub(b GCSnapshot) GCDelta {
	d := GCDelta{
		Cycles:         int64(a.Cycles - b.Cycles),
		ForcedCycles:   int64(a.ForcedCycles - b.ForcedCycles),
		Pauses:         int64(a.Pauses - b.Pauses),
		PauseTotal:     a.PauseTotal - b.PauseTotal,
		HeapAllocBytes: int64(a.HeapAllocBytes - b.HeapAllocBytes),
		HeapInUseBytes: int64(a.HeapInUseBytes - b.HeapInUseBytes),
	}
	_, _, d.PauseMaxBound = pauseBounds(a, b)
	return d
}

// pauseBounds derives from the pause histograms of a (later) and b
// (earlier) lower and upper bounds of the total pause time in between, and
// the upper bound of the longest pause. A zero-value b (not from ReadGC)
// counts as an empty histogram.
func pauseBounds(a, b GCSnapshot) (lo, hi, maxHi time.Duration) {
	var sumLo, sumHi float64
	for i, c := range a.pauseCounts {
		if i < len(b.pauseCounts) {
			c -= b.pauseCounts[i]
		}
		if c == 0 || i+1 >= len(a.pauseBuckets) {
			continue
		}
		l, h := a.pauseBuckets[i], a.pauseBuckets[i+1]
		if math.IsInf(l, -1) || l < 0 {
			l = 0
		}
		if math.IsInf(h, 1) {
			h = l // open-ended last bucket (> 39 hours): lower edge only
		}
		sumLo += float64(c) * l
		sumHi += float64(c) * h
		maxHi = secondsToDuration(h)
	}
	return secondsToDuration(sumLo), secondsToDuration(sumHi), maxHi
}

// HeapPeak is the largest heap size seen by a [HeapPeakTracker]. It is
// sampled, not exact: heap growth that comes and goes between two
// observations is missed, so these are lower bounds of the true peaks.
type HeapPeak struct {
	// AllocBytes is the maximum of GCSnapshot.HeapAllocBytes observed.
	// Unit: bytes.
	AllocBytes uint64
	// InUseBytes is the maximum of GCSnapshot.HeapInUseBytes observed.
	// Unit: bytes.
	InUseBytes uint64
	// Observations is the number of times the heap was read. Unit: count.
	Observations int
}

// HeapPeakTracker records the peak heap size over the observations made
// through [HeapPeakTracker.Observe]. The zero value is ready to use. It is
// safe for concurrent use. Observing costs one runtime/metrics read of two
// counters: no allocation, no stop-the-world pause.
type HeapPeakTracker struct {
	mu      sync.Mutex
	samples []metrics.Sample
	peak    HeapPeak
}

// Observe reads the current heap size, updates the peak and returns the
// current HeapAllocBytes. Unit: bytes.
func (t *HeapPeakTracker) Observe() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.samples == nil {
		t.samples = []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapUnused}}
	}
	metrics.Read(t.samples)
	alloc := sampleUint(t.samples[0])
	inUse := alloc + sampleUint(t.samples[1])
	t.peak.AllocBytes = max(t.peak.AllocBytes, alloc)
	t.peak.InUseBytes = max(t.peak.InUseBytes, inUse)
	t.peak.Observations++
	return alloc
}

// Peak returns the peaks observed so far.
func (t *HeapPeakTracker) Peak() HeapPeak {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.peak
}

// sampleUint returns the value of a KindUint64 sample, or 0 if the metric
// is not supported by the running toolchain (TestMetricNamesExist guards
// against that).
func sampleUint(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

// secondsToDuration converts float seconds to a Duration, rounding to the
// nearest nanosecond.
func secondsToDuration(sec float64) time.Duration {
	return time.Duration(math.Round(sec * float64(time.Second)))
}
