package runner

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestLatencyPercentilesMatchSort checks the histogram against the exact
// percentiles of the same latencies, within its 3 significant digits.
func TestLatencyPercentilesMatchSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := newLatencyHist()
	var all []int64 // microseconds
	for i := 0; i < 200000; i++ {
		// Log-normal-ish: most around 2 ms, a long tail to seconds.
		us := int64(math.Exp(rng.NormFloat64()*1.2+7.5)) + 1
		all = append(all, us)
		h.record(time.Duration(us) * time.Microsecond)
	}
	slices.Sort(all)
	for _, q := range []float64{50, 95, 99, 99.9} {
		// HdrHistogram's rank for quantile q: round(q% of the count), at
		// least 1; the value is that rank's, to the histogram's precision.
		idx := max(int(q/100*float64(len(all))+0.5), 1) - 1
		exact := float64(all[idx]) / 1000
		got := h.quantileMs(q)
		if rel := math.Abs(got-exact) / exact; rel > 0.001 {
			t.Errorf("p%v = %.4f ms, exact %.4f ms: off by %.3f%%, more than the histogram's 0.1%%", q, got, exact, rel*100)
		}
	}
	if exact, got := float64(all[len(all)-1])/1000, h.maxMs(); math.Abs(got-exact)/exact > 0.001 {
		t.Errorf("max = %.4f ms, exact %.4f", got, exact)
	}
	var sum float64
	for _, v := range all {
		sum += float64(v)
	}
	if exact, got := sum/float64(len(all))/1000, h.meanMs(); math.Abs(got-exact)/exact > 0.001 {
		t.Errorf("mean = %.4f ms, exact %.4f", got, exact)
	}
	if h.count() != int64(len(all)) {
		t.Errorf("count = %d, want %d", h.count(), len(all))
	}
}

// TestLatencyMetrics: a histogram reports as named metrics in ms, in the
// order result pages show them, the percentiles asked for only, and its
// window histogram decodes to the same percentiles.
func TestLatencyMetrics(t *testing.T) {
	h := newLatencyHist()
	for ms := 1; ms <= 1000; ms++ {
		h.record(time.Duration(ms) * time.Millisecond)
	}
	var names []string
	for _, m := range h.metricsAt("x-latency", "why", latencyQuantiles) {
		names = append(names, m.Name)
		if m.Unit != "ms" || m.Better != rundoc.LowerIsBetter || m.Help != "why" {
			t.Errorf("%s: %+v", m.Name, m)
		}
	}
	if want := "x-latency-avg x-latency-p50 x-latency-p95 x-latency-p99 x-latency-p999 x-latency-max"; strings.Join(names, " ") != want {
		t.Errorf("names %q, want %q", names, want)
	}
	ms := h.metricsAt("y", "", []latencyQuantile{{"p50", 50}, {"p99", 99}, {"p999", 99.9}})
	if len(ms) != 5 || ms[2].Name != "y-p99" {
		t.Errorf("p50, p99 and p999 give %+v", ms)
	}
	if p50, max := ms[1].Value, ms[4].Value; math.Abs(p50-500) > 0.5 || math.Abs(max-1000) > 1 {
		t.Errorf("p50 %.3f ms, max %.3f ms; want 500 and 1000", p50, max)
	}
	w := h.windowHistogram("y", 12.5)
	if w.Kind != "y" || w.Scope != rundoc.HistogramWindow || w.StartS != 0 || w.EndS != 12.5 || w.Count != 1000 {
		t.Fatalf("window histogram %+v", w)
	}
	back, err := hdr.Decode(w.Data)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []float64{50, 99, 99.9, 100} {
		if got, want := float64(back.ValueAtQuantile(q))/1000, h.quantileMs(q); got != want {
			t.Errorf("decoded p%v = %v ms, recorded %v ms", q, got, want)
		}
	}
}

// TestLogIntervalsStopsWhenFull: a log with no room for another interval
// ends at the last whole one, says so in a note, and the window's
// histogram still holds every value.
func TestLogIntervalsStopsWhenFull(t *testing.T) {
	step, entries := logStep, logEntries
	logStep, logEntries = 20*time.Millisecond, 6 // three intervals of two kinds
	t.Cleanup(func() { logStep, logEntries = step, entries })
	r := &run{rep: &reporter{}, res: &rundoc.Result{}, win: &window{start: time.Now()}}
	var mu sync.Mutex
	a, b := newLatencyHist(), newLatencyHist()
	stop := r.logIntervals(loggedHist{rundoc.HistRecordLatency, &mu, a}, loggedHist{rundoc.HistPublishDelay, &mu, b})
	// Ten steps of values: the log fills after three.
	recorded := int64(0)
	for start := time.Now(); time.Since(start) < 10*logStep; recorded++ {
		mu.Lock()
		a.record(time.Millisecond)
		b.record(time.Microsecond)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
	end := time.Now()
	r.win.end = end
	r.win.endAt.Store(&end)
	stop()
	if n := len(r.intervals); n != 6 || r.intervals[4].Kind != rundoc.HistRecordLatency || r.intervals[5].Kind != rundoc.HistPublishDelay {
		t.Fatalf("%d intervals logged, want 6, whole intervals of both kinds", n)
	}
	if a.count() != recorded || b.count() != recorded {
		t.Errorf("window histograms hold %d and %d values, want %d each", a.count(), b.count(), recorded)
	}
	if notes := strings.Join(r.res.Measurement.Notes, "\n"); !strings.Contains(notes, "the interval histograms stop at") {
		t.Errorf("no note says the log stopped: %q", notes)
	}
}
