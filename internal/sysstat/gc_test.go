package sysstat

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestMetricNamesExist(t *testing.T) {
	want := map[string]metrics.ValueKind{
		metricGCCycles:    metrics.KindUint64,
		metricGCForced:    metrics.KindUint64,
		metricGCPauses:    metrics.KindFloat64Histogram,
		metricHeapObjects: metrics.KindUint64,
		metricHeapUnused:  metrics.KindUint64,
		metricHeapLive:    metrics.KindUint64,
	}
	for _, d := range metrics.All() {
		if k, ok := want[d.Name]; ok {
			if d.Kind != k {
				t.Errorf("metric %s has kind %v, want %v", d.Name, d.Kind, k)
			}
			delete(want, d.Name)
		}
	}
	for name := range want {
		t.Errorf("metric %s not provided by %s", name, runtime.Version())
	}
}

func TestReadGCForced(t *testing.T) {
	a := ReadGC()
	runtime.GC()
	runtime.GC()
	b := ReadGC()
	d := b.Sub(a)
	t.Logf("delta %+v", d)
	if d.Cycles < 2 || d.ForcedCycles < 2 {
		t.Errorf("two runtime.GC calls: cycles +%d, forced +%d, want >= 2 each", d.Cycles, d.ForcedCycles)
	}
	if d.Pauses < 2 {
		t.Errorf("pauses +%d, want >= 2", d.Pauses)
	}
	if d.PauseTotal <= 0 || d.PauseMaxBound <= 0 {
		t.Errorf("PauseTotal %v, PauseMaxBound %v: want > 0", d.PauseTotal, d.PauseMaxBound)
	}
	if b.HeapAllocBytes == 0 || b.HeapInUseBytes < b.HeapAllocBytes || b.HeapLiveBytes == 0 {
		t.Errorf("implausible heap figures: %+v", b)
	}
}

// TestPauseTotalMatchesHistogram cross-checks the exact pause total from
// debug.ReadGCStats against the bounds implied by the runtime/metrics
// histogram. Both count the same pauses only when no cycle is in progress
// at either snapshot, i.e. when there are exactly two pauses per completed
// cycle. With the collector off, only the test's own runtime.GC calls run
// cycles, and each returns with its cycle done, so no cycle can overlap a
// snapshot; the retries only guard against a runtime that runs one anyway.
func TestPauseTotalMatchesHistogram(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC() // finish a cycle that started before the collector was off
	for attempt := range 5 {
		a := ReadGC()
		runtime.GC()
		runtime.GC()
		runtime.GC()
		b := ReadGC()
		d := b.Sub(a)
		if d.Pauses != 2*d.Cycles {
			t.Logf("attempt %d: %d pauses for %d cycles, a cycle overlapped a snapshot; retrying", attempt, d.Pauses, d.Cycles)
			continue
		}
		lo, hi, maxHi := pauseBounds(b, a)
		t.Logf("pauses %d, exact total %v, histogram bounds [%v, %v], max <= %v", d.Pauses, d.PauseTotal, lo, hi, maxHi)
		if d.PauseTotal < lo || d.PauseTotal > hi {
			t.Errorf("exact pause total %v outside histogram bounds [%v, %v]", d.PauseTotal, lo, hi)
		}
		if maxHi > hi || maxHi != d.PauseMaxBound {
			t.Errorf("max bound %v (Sub: %v), total upper bound %v", maxHi, d.PauseMaxBound, hi)
		}
		return
	}
	t.Fatal("every attempt had a GC cycle overlapping a snapshot, with the collector off")
}

func TestGCSubZeroBase(t *testing.T) {
	b := ReadGC()
	d := b.Sub(GCSnapshot{})
	if d.Cycles != int64(b.Cycles) || d.Pauses != int64(b.Pauses) {
		t.Errorf("Sub(zero) = %+v, want totals of %+v", d, b)
	}
}

var sink []byte

func TestHeapPeakTracker(t *testing.T) {
	var tr HeapPeakTracker
	base := tr.Observe()
	const big = 64 << 20
	sink = make([]byte, big)
	for i := range sink {
		sink[i] = 1 // touch to make it real
	}
	tr.Observe()
	sink = nil
	runtime.GC()
	after := tr.Observe()
	p := tr.Peak()
	t.Logf("base %d, after %d, peak %+v", base, after, p)
	if p.Observations != 3 {
		t.Errorf("Observations = %d, want 3", p.Observations)
	}
	if p.AllocBytes < big || p.InUseBytes < p.AllocBytes {
		t.Errorf("peak %+v, want AllocBytes >= %d and InUseBytes >= AllocBytes", p, big)
	}
	if after >= p.AllocBytes {
		t.Errorf("heap after freeing (%d) not below peak (%d)", after, p.AllocBytes)
	}
}

func TestCPUSamplerTracksHeapPeak(t *testing.T) {
	s := StartCPUSampler(5 * time.Millisecond)
	const big = 32 << 20
	buf := make([]byte, big)
	// Keep the buffer alive until the sampler has ticked at least twice.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if s.heap.Peak().Observations >= 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(buf)
	sum := s.Stop()
	if sum.HeapPeak.AllocBytes < big {
		t.Errorf("HeapPeak %+v, want AllocBytes >= %d", sum.HeapPeak, big)
	}
}

// heapGarbage keeps the compiler from dropping the allocations of
// TestHeapPeakCountsUnsweptGarbage.
var heapGarbage []byte

// TestHeapPeakCountsUnsweptGarbage pins down what HeapPeak.AllocBytes
// means, since heap-peak's help says so: garbage no GC has swept yet
// counts, so it is not the live heap.
func TestHeapPeakCountsUnsweptGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no GC until this test runs one
	runtime.GC()
	var tr HeapPeakTracker
	before := tr.Observe()
	const chunk, chunks = 1 << 20, 32
	for range chunks {
		heapGarbage = make([]byte, chunk) // the previous chunk is garbage now
	}
	heapGarbage = nil
	peak := tr.Observe()
	if peak < before+(chunks-1)*chunk {
		t.Fatalf("heap objects %d B after %d MiB of garbage, %d B before: garbage not counted", peak, chunks, before)
	}
	runtime.GC()
	after := ReadGC()
	if after.HeapLiveBytes >= peak-(chunks/2)*chunk {
		t.Errorf("live heap %d B after a GC, objects peak %d B: the garbage should be gone", after.HeapLiveBytes, peak)
	}
	if tr.Peak().AllocBytes != peak {
		t.Errorf("peak %d, want the largest observation %d", tr.Peak().AllocBytes, peak)
	}
}
