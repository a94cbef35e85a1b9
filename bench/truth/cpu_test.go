package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestInterpolate(t *testing.T) {
	ts := []time.Time{t0, t0.Add(100 * time.Millisecond), t0.Add(300 * time.Millisecond)}
	vs := []float64{0, 10, 50}
	tests := []struct {
		at   time.Duration
		want float64
		ok   bool
	}{
		{0, 0, true},
		{50 * time.Millisecond, 5, true},
		{100 * time.Millisecond, 10, true},
		{200 * time.Millisecond, 30, true},
		{300 * time.Millisecond, 50, true},
		{-time.Millisecond, 0, false},
		{301 * time.Millisecond, 0, false},
	}
	for _, tt := range tests {
		got, ok := interpolate(ts, vs, t0.Add(tt.at))
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("at %v: got %v, %v; want %v, %v", tt.at, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNearestRankP99(t *testing.T) {
	var xs []float64
	for i := 1; i <= 200; i++ {
		xs = append(xs, float64(i))
	}
	if got := nearestRankP99(xs); got != 198 {
		t.Errorf("p99 of 1..200 = %v, want 198", got)
	}
	if got := nearestRankP99([]float64{3, 9, 1}); got != 9 {
		t.Errorf("p99 of 3 samples = %v, want the maximum 9", got)
	}
	if got := nearestRankP99(nil); got != 0 {
		t.Errorf("p99 of none = %v", got)
	}
}

// cpuSamples are tick readings every 100 ms from t0 of a process whose
// two threads run at a and b cores (0.5 = 50%), with the stat ticks at
// 100 Hz, and, at exitAt (>0), thread 2 exiting.
func cpuSamples(n int, a, b float64, exitAt time.Duration) []sample {
	var out []sample
	for i := 0; i <= n; i++ {
		d := time.Duration(i) * 100 * time.Millisecond
		t1 := uint64(a * float64(d))
		t2 := uint64(b * float64(d))
		threads := map[int]uint64{1: t1, 2: t2}
		if exitAt > 0 && d >= exitAt {
			delete(threads, 2)
		}
		total := float64(t1+t2) / 1e9
		s := sample{T: t0.Add(d), RunOK: true, Threads: threadTimes{RunNs: threads}, StatOK: true,
			Stat: procStat{UtimeTicks: uint64(total * 100)}}
		for _, ns := range threads {
			s.RunNs += ns
		}
		out = append(out, s)
	}
	return out
}

func TestAnalyzeCPUSteady(t *testing.T) {
	// 70% + 30% of a core for 3 s; the window 0.55 s – 2.55 s falls
	// between readings.
	w, err := analyzeCPU(cpuSamples(30, 0.7, 0.3, 0), t0.Add(550*time.Millisecond), t0.Add(2550*time.Millisecond), 100, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.AvgPct-100) > 1e-6 || math.Abs(w.RunSecs-2) > 1e-6 || math.Abs(w.Wall-2) > 1e-9 {
		t.Errorf("avg %.3f%%, %.3f s over %.3f s; want 100%%, 2 s over 2 s", w.AvgPct, w.RunSecs, w.Wall)
	}
	if !w.StatOK || math.Abs(w.StatAvgPct-100) > 1 {
		t.Errorf("stat avg %.2f%% (ok %v), want ≈100%%", w.StatAvgPct, w.StatOK)
	}
	// From the window's start at 0.55 s to the readings at 0.6 … 2.5 s:
	// 20 intervals, the first 50 ms long (not shorter than half an
	// interval, so not folded).
	if len(w.Samples) != 20 {
		t.Errorf("%d interval samples, want 20", len(w.Samples))
	}
	if math.Abs(w.P99-100) > 1e-3 || math.Abs(w.Max-100) > 1e-3 {
		t.Errorf("p99 %.3f, max %.3f; want 100", w.P99, w.Max)
	}
	if w.Threads != 2 || len(w.Busiest) != 2 || w.Busiest[0].TID != 1 || math.Abs(w.Busiest[0].Pct-70) > 1e-6 {
		t.Errorf("threads %d, busiest %+v; want 2 with thread 1 at 70%%", w.Threads, w.Busiest)
	}
}

func TestAnalyzeCPUThreadExit(t *testing.T) {
	// Thread 2 (30%) exits at 1.5 s: the sum of the live threads' runtime
	// falls, but the window's CPU must not; it loses only what thread 2
	// ran after its last reading (none here: it stops between readings
	// at the moment it is last read).
	w, err := analyzeCPU(cpuSamples(30, 0.7, 0.3, 1500*time.Millisecond), t0.Add(500*time.Millisecond), t0.Add(2500*time.Millisecond), 100, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Thread 1: 0.7 × 2 s; thread 2: 0.3 × (1.4 − 0.5) s.
	want := 0.7*2 + 0.3*0.9
	if math.Abs(w.RunSecs-want) > 1e-6 {
		t.Errorf("CPU %.4f s, want %.4f s", w.RunSecs, want)
	}
	if len(w.Notes) != 1 || !strings.Contains(w.Notes[0], "1 threads exited") {
		t.Errorf("notes %q, want one about the exited thread", w.Notes)
	}
	for _, s := range w.Samples {
		if s < 0 {
			t.Errorf("negative interval sample %v", s)
		}
	}
}

func TestAnalyzeCPUEdgesAndErrors(t *testing.T) {
	ss := cpuSamples(10, 0.5, 0, 0)
	// An edge reading between ticks brackets the window but is no sample.
	edge := sample{T: t0.Add(450 * time.Millisecond), Edge: true, RunOK: true, Threads: threadTimes{RunNs: map[int]uint64{1: uint64(0.5 * float64(450*time.Millisecond)), 2: 0}}}
	ss = append(ss[:5], append([]sample{edge}, ss[5:]...)...)
	w, err := analyzeCPU(ss, t0.Add(100*time.Millisecond), t0.Add(900*time.Millisecond), 100, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// 0.1 s (the start) → 0.2, 0.3, 0.4, 0.45 (edge), 0.5, … 0.9: nine
	// intervals, none under half an interval.
	if len(w.Samples) != 9 || math.Abs(w.AvgPct-50) > 1e-6 {
		t.Errorf("%d samples, avg %.3f%%; want 9 and 50%%", len(w.Samples), w.AvgPct)
	}
	for _, v := range w.Samples {
		if math.Abs(v-50) > 1e-3 {
			t.Errorf("interval sample %.3f%%, want 50%%", v)
		}
	}
	// A reading 30 ms after the last is folded into the next interval.
	early := sample{T: t0.Add(230 * time.Millisecond), RunOK: true, Threads: threadTimes{RunNs: map[int]uint64{1: uint64(0.5 * float64(230*time.Millisecond)), 2: 0}}}
	folded := append(append(append([]sample{}, ss[:3]...), early), ss[3:]...)
	w2, err := analyzeCPU(folded, t0.Add(100*time.Millisecond), t0.Add(900*time.Millisecond), 100, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(w2.Samples) != 9 {
		t.Errorf("with a reading 30 ms after another: %d samples, want 9", len(w2.Samples))
	}
	if _, err := analyzeCPU(ss, t0.Add(-time.Second), t0.Add(500*time.Millisecond), 100, 100*time.Millisecond); err == nil {
		t.Error("a window starting before the first reading: no error")
	}
	if _, err := analyzeCPU(ss, t0.Add(time.Second), t0, 100, 100*time.Millisecond); err == nil {
		t.Error("an empty window: no error")
	}
}

func TestWindowStart(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	events := []event{
		{Type: "phase", Phase: "warmup", Time: at(0)},
		{Type: "phase", Phase: "measure", Time: at(1003 * time.Millisecond)},
		// Written 2 ms and 1 ms after their ticks at 0.25 s and 0.5 s.
		{Type: "interval", Elapsed: 0.25, Time: at(1252 * time.Millisecond)},
		{Type: "interval", Elapsed: 0.5, Time: at(1501 * time.Millisecond)},
		{Type: "progress", Phase: "measure", Elapsed: 0.2, Time: at(1200 * time.Millisecond)},
		{Type: "phase", Phase: "finishing", Time: at(1800 * time.Millisecond)},
	}
	got, ok := windowStart(events, 0.78)
	if !ok || !got.Equal(at(1001*time.Millisecond)) {
		t.Errorf("got %v, %v; want 1.001 s", got.Sub(t0), ok)
	}
	// A consumer whose measure phase starts after connecting: the
	// finishing event less the window bounds it better.
	got, ok = windowStart([]event{{Type: "phase", Phase: "measure", Time: at(time.Second)}, {Type: "phase", Phase: "finishing", Time: at(1200 * time.Millisecond)}}, 0.3)
	if !ok || !got.Equal(at(900*time.Millisecond)) {
		t.Errorf("got %v, %v; want 0.9 s", got.Sub(t0), ok)
	}
	if _, ok := windowStart([]event{{Type: "note"}}, 1); ok {
		t.Error("no dating event: ok")
	}
}
