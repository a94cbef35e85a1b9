package fleetmerge

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
)

// shard builds a shard of points one-second points, each of records
// records of 100 B, whose record-latency values are all latencyUs, with
// its window opened at open by a clock offsetMs ahead of the database's.
func shard(t *testing.T, index, points int, records int64, latencyUs int64, open time.Time, offsetMs float64) Shard {
	t.Helper()
	s := Shard{Index: index, Start: &rundoc.ShardStart{Window: open}, ClockOffsetMs: offsetMs,
		Metrics: []rundoc.Metric{{Name: "record-latency-avg"}, {Name: "record-latency-p50"}, {Name: "record-latency-p99"},
			{Name: "record-latency-p999"}, {Name: "record-latency-max"}, {Name: "record-send-rate"}}}
	for k := range points {
		s.Series = append(s.Series, rundoc.SeriesPoint{T: float64(k + 1), Records: records, Bytes: records * 100,
			RecordsPerSec: float64(records), LatencyAvgMs: float64(latencyUs) / 1000})
		h := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
		for range records {
			if err := h.RecordValue(latencyUs); err != nil {
				t.Fatal(err)
			}
		}
		s.Intervals = append(s.Intervals, rundoc.Histogram{Kind: rundoc.HistRecordLatency, Scope: rundoc.HistogramInterval,
			StartS: float64(k), EndS: float64(k + 1), Count: h.TotalCount(), Data: h.Encode()})
	}
	return s
}

func metricOf(m *Merged, name string) float64 {
	for _, x := range m.Metrics {
		if x.Name == name {
			return x.Value
		}
	}
	return math.NaN()
}

// TestMerge: three shards, the last running one second longer. Counts
// add over the five seconds all of them have; percentiles come from the
// merged histogram (p99 is the slowest shard's latency, not the mean of
// the shards' p99s); the sixth second is in no figure.
func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	shards := []Shard{
		shard(t, 0, 5, 100, 1000, t0.Add(3*time.Millisecond), 3),    // opened 0 ms after T0 on the database's clock
		shard(t, 1, 5, 100, 2000, t0.Add(-8*time.Millisecond), -10), // 2 ms after
		shard(t, 2, 6, 100, 3000, t0.Add(1500*time.Microsecond), 0), // 1.5 ms after
	}
	m, err := Merge(rundoc.Producer, shards)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 5 || m.WindowS != 5 {
		t.Fatalf("%d points over %v s, want 5 over 5 s", len(m.Series), m.WindowS)
	}
	if got := metricOf(m, "records-sent"); got != 1500 {
		t.Errorf("records-sent %v, want 3 × 5 × 100", got)
	}
	if got := metricOf(m, "record-send-rate"); got != 300 {
		t.Errorf("record-send-rate %v, want 300", got)
	}
	if p := m.Series[2]; p.Records != 300 || p.RecordsPerSec != 300 || math.Abs(p.LatencyAvgMs-2) > 1e-9 {
		t.Errorf("point 3: %+v, want 300 records at 300/s, 2 ms on average", p)
	}
	// The merge equals decoding every interval of the window and merging.
	want := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	for _, s := range shards {
		for _, h := range s.Intervals[:5] {
			d, err := hdr.Decode(h.Data)
			if err != nil {
				t.Fatal(err)
			}
			if err := want.Merge(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, q := range map[string]float64{"record-latency-p50": 50, "record-latency-p99": 99, "record-latency-p999": 99.9} {
		if got, w := metricOf(m, name), float64(want.ValueAtQuantile(q))/1000; got != w {
			t.Errorf("%s = %v, want %v", name, got, w)
		}
	}
	if p99 := metricOf(m, "record-latency-p99"); p99 < 2.99 {
		t.Errorf("p99 %v ms: the slowest shard's 3 ms holds a third of the values, so p99 is about 3 ms", p99)
	}
	if got := metricOf(m, "record-latency-avg"); math.Abs(got-want.Mean()/1000) > 1e-9 {
		t.Errorf("avg %v, want %v", got, want.Mean()/1000)
	}
	if len(m.Histograms) != 1 || m.Histograms[0].Count != 1500 || m.Histograms[0].EndS != 5 {
		t.Errorf("window histograms %+v, want one of 1500 values over 5 s", m.Histograms)
	}
	if len(m.Intervals) != 5 || m.Intervals[4].Count != 300 {
		t.Errorf("%d merged intervals (last %+v), want 5 of 300", len(m.Intervals), m.Intervals[len(m.Intervals)-1])
	}
	if math.Abs(m.SkewMs-2) > 1e-9 {
		t.Errorf("skew %v ms, want 2", m.SkewMs)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "within 2.0 ms") {
		t.Errorf("notes %q do not state the skew", m.Notes)
	}
}

// TestMergeRefuses: a kind one shard lacks is left out with a note;
// shards with no point in common and a consumer run are errors.
func TestMergeRefuses(t *testing.T) {
	t0 := time.Now()
	a, b := shard(t, 0, 3, 10, 500, t0, 0), shard(t, 1, 3, 10, 500, t0, 0)
	b.Intervals = nil
	m, err := Merge(rundoc.Producer, []Shard{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(metricOf(m, "record-latency-p99")) || len(m.Histograms) != 0 || !strings.Contains(strings.Join(m.Notes, "\n"), "shard(s) 2 have no interval histogram") {
		t.Errorf("a kind shard 2 lacks: metrics %+v, notes %q", m.Metrics, m.Notes)
	}
	c := shard(t, 1, 3, 10, 500, t0, 0)
	for i := range c.Series {
		c.Series[i].T += 0.5
	}
	if _, err := Merge(rundoc.Producer, []Shard{a, c}); err == nil {
		t.Error("shards on different grids merged")
	}
	if _, err := Merge(rundoc.Consumer, []Shard{a, a}); err == nil {
		t.Error("a consumer fleet merged")
	}
}

func TestQuantileOf(t *testing.T) {
	for suffix, want := range map[string]float64{"p50": 50, "p95": 95, "p99": 99, "p999": 99.9, "p9999": 99.99} {
		if got, ok := quantileOf(suffix); !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("quantileOf(%q) = %v, %v; want %v", suffix, got, ok, want)
		}
	}
	for _, bad := range []string{"avg", "p", "p5", "px9"} {
		if _, ok := quantileOf(bad); ok {
			t.Errorf("quantileOf(%q) ok", bad)
		}
	}
}

// TestMergeWindowTail: a shard's last interval histogram that starts at
// the common window's end (its own window ran a fraction of a
// millisecond longer) is in no figure, and every merged interval has a
// length of zero or more, as the histogram log wants.
func TestMergeWindowTail(t *testing.T) {
	t0 := time.Now()
	a, b := shard(t, 0, 3, 10, 500, t0, 0), shard(t, 1, 3, 10, 700, t0, 0)
	a.Series[2].T = 2.9998 // its window ended 0.2 ms early
	tail := b.Intervals[2]
	tail.StartS, tail.EndS = 3, 3.0003
	b.Intervals = append(b.Intervals, tail)
	m, err := Merge(rundoc.Producer, []Shard{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.WindowS != 2.9998 || m.Histograms[0].Count != 60 {
		t.Errorf("window %v s with %d values, want 2.9998 s and 60", m.WindowS, m.Histograms[0].Count)
	}
	for _, h := range m.Intervals {
		if h.EndS < h.StartS || h.StartS >= m.WindowS {
			t.Errorf("interval %v to %v s in a window of %v s", h.StartS, h.EndS, m.WindowS)
		}
	}
	var log bytes.Buffer
	if err := runhist.WriteLog(&log, t0, m.Intervals); err != nil {
		t.Errorf("the merged intervals do not make a log: %v", err)
	}
}

// TestLiveSeries: the live merge has the points every shard has so far,
// summed, with the largest shard's percentiles marked approximate; a
// shard with no point yet holds the merge back, and so does a point off
// the others' grid.
func TestLiveSeries(t *testing.T) {
	pt := func(t float64, records int64, p99 float64) rundoc.SeriesPoint {
		return rundoc.SeriesPoint{T: t, Records: records, Bytes: records * 100, LatencyAvgMs: p99 / 2, LatencyP99Ms: p99}
	}
	tests := []struct {
		name   string
		series [][]rundoc.SeriesPoint
		want   []rundoc.SeriesPoint
	}{
		{"no shards", nil, nil},
		{"one shard has no point yet", [][]rundoc.SeriesPoint{{pt(1, 10, 4)}, nil}, nil},
		{"two points of one, one of the other", [][]rundoc.SeriesPoint{{pt(1, 10, 4), pt(2, 10, 4)}, {pt(1.02, 30, 8)}},
			// Each shard's rate over its own interval: 10 in 1 s, 30 in 1.02 s.
			[]rundoc.SeriesPoint{{T: 1, Records: 40, Bytes: 4000, RecordsPerSec: sum(10, 30/1.02), MBPerSec: sum(1000/float64(1<<20), 3000/1.02/(1<<20)), LatencyAvgMs: 3.5, LatencyMaxMs: 0,
				LatencyP50Ms: 0, LatencyP99Ms: 8, PercentilesApprox: true}}},
		{"off the grid", [][]rundoc.SeriesPoint{{pt(1, 10, 4)}, {pt(1.5, 30, 8)}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LiveSeries(tt.series)
			if len(got) != len(tt.want) {
				t.Fatalf("%d points %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("point %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// sum adds xs in order, as the merge adds each shard's rate.
func sum(xs ...float64) (s float64) {
	for _, x := range xs {
		s += x
	}
	return s
}

// jittered is a shard's series of n points on the grid of step seconds,
// each of records records of 100 B, its last ending at end. Its ticks
// fire late (never early, as Go's timers do): most by up to 20 ms, every
// seventh (from a seeded offset) by 100 to 240 ms. As the runner's, its
// last point lasts at least half a step: a shorter tail joins the point
// before it.
func jittered(rng *rand.Rand, n int, step float64, records int64, end float64) []rundoc.SeriesPoint {
	s := make([]rundoc.SeriesPoint, n)
	off := rng.IntN(7)
	for j := range s {
		late := rng.Float64() * 0.02
		if j%7 == off {
			late = 0.1 + rng.Float64()*0.14
		}
		s[j] = rundoc.SeriesPoint{T: float64(j+1)*step + late, Records: records, Bytes: records * 100}
	}
	s[n-1].T = end
	if end-s[n-2].T < step/2 {
		// The test wants n points: the tick before ran on time.
		s[n-2].T = float64(n-1) * step
	}
	return s
}

// TestCommonGrid: points pair by their place on the grid, not by their
// index or an exact end, so ticks that fired late on a loaded machine
// (by more than the 50 ms a fixed tolerance allowed, which failed fleets
// under CI's load), a dropped tick and shards coarsened at different
// times still merge every record: a late tick costs the merged series a
// point (two slots become one), never a record. Only a shard's points
// past the earliest shard's end by half a step or more are left out:
// last points that end closer than that all count.
func TestCommonGrid(t *testing.T) {
	const step = 0.25
	rng := rand.New(rand.NewPCG(27, 5))
	late := [][]rundoc.SeriesPoint{
		jittered(rng, 40, step, 10, 10.001), jittered(rng, 40, step, 20, 10.000),
		jittered(rng, 40, step, 30, 10.003), jittered(rng, 40, step, 40, 10.002),
	}
	dropped := jittered(rng, 40, step, 10, 10)
	dropped = append(dropped[:9], dropped[10:]...) // tick 10 came after tick 11 was due: one point of two steps
	dropped[8].Records = 20
	coarse := rundoc.CoarsenSeries(jittered(rng, 40, step, 10, 10))
	longer := jittered(rng, 41, step, 10, 10.25) // its window ended a step later
	// Its window closed 126 ms after its tick at 10 s (a point of its
	// own), the other's 20 ms after it (that tail joined the tick's
	// point): the last points end 106 ms apart, and both are in.
	lateStop := append(jittered(rng, 40, step, 10, 10), rundoc.SeriesPoint{T: 10.126, Records: 10})
	earlyStop := jittered(rng, 40, step, 10, 10.02)
	tests := []struct {
		name      string
		series    [][]rundoc.SeriesPoint
		minPoints int // the slots less those a late tick merged
		records   int64
		windowS   float64
		shardEnd  []float64
	}{
		{"late ticks", late, 40 - 4*6, 4000, 10, []float64{10.001, 10, 10.003, 10.002}},
		{"a dropped tick", [][]rundoc.SeriesPoint{late[0], dropped}, 39 - 2*6, 800, 10, []float64{10.001, 10}},
		{"one shard coarsened", [][]rundoc.SeriesPoint{late[1], coarse}, 20 - 2*6, 1200, 10, []float64{10, 10}},
		{"one window ended later", [][]rundoc.SeriesPoint{longer, late[0]}, 40 - 2*6, 800, 10.001, []float64{longer[39].T, 10.001}},
		{"one window closed late after a tick", [][]rundoc.SeriesPoint{lateStop, earlyStop}, 40 - 2*6, 810, 10.02, []float64{10.126, 10.02}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := commonGrid(tt.series, false)
			if len(g.points) < tt.minPoints {
				t.Fatalf("%d merged points, want at least %d", len(g.points), tt.minPoints)
			}
			var records int64
			prev := 0.0
			for _, p := range g.points {
				records += p.Records
				if p.T <= prev {
					t.Errorf("a point ends at %v s, after one at %v s", p.T, prev)
				}
				prev = p.T
			}
			if records != tt.records || prev != tt.windowS {
				t.Errorf("%d records over %v s, want %d over %v s", records, prev, tt.records, tt.windowS)
			}
			for i, want := range tt.shardEnd {
				if g.ends[i] != want {
					t.Errorf("shard %d's part ends at %v s, want %v", i+1, g.ends[i], want)
				}
				// A shard's part ends less than half a step after the
				// merged window's end.
				if g.ends[i]-prev >= step/2 {
					t.Errorf("shard %d's part ends at %v s, the window at %v s", i+1, g.ends[i], prev)
				}
			}
		})
	}
}

// TestMergeJittered: a fleet whose shards' ticks fired late merges every
// record; its rate is each shard's records over its own window, summed;
// the interval histograms of one slot of the log's grid merge into one
// however far apart within it they started.
func TestMergeJittered(t *testing.T) {
	t0 := time.Now()
	a, b := shard(t, 0, 4, 100, 1000, t0, 0), shard(t, 1, 4, 100, 2000, t0, 0)
	for j := range 3 {
		b.Series[j].T += 0.3       // its ticks 300 ms late
		b.Intervals[j].EndS += 0.3 // and its histogram log's
		b.Intervals[j+1].StartS += 0.3
	}
	b.Series[3].T = 4.02 // its window closed 20 ms after a's
	b.Intervals[3].EndS = 4.02
	m, err := Merge(rundoc.Producer, []Shard{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 4 || m.WindowS != 4 || metricOf(m, "records-sent") != 800 {
		t.Fatalf("%d points over %v s holding %v records, want 4 over 4 s holding 800", len(m.Series), m.WindowS, metricOf(m, "records-sent"))
	}
	if got, want := metricOf(m, "record-send-rate"), 400/4.0+400/4.02; math.Abs(got-want) > 1e-9 {
		t.Errorf("record-send-rate %v, want %v", got, want)
	}
	if len(m.Intervals) != 4 || m.Histograms[0].Count != 800 {
		t.Fatalf("%d merged intervals of %d values, want 4 of 800 in all", len(m.Intervals), m.Histograms[0].Count)
	}
	for k, h := range m.Intervals {
		if h.Count != 200 || h.StartS != float64(k) {
			t.Errorf("interval %d: %v values from %v s, want 200 from %d s", k, h.Count, h.StartS, k)
		}
	}
}

// BenchmarkLiveSeries: the live merge of a 10-shard fleet at the end of
// a 30-minute run (7,200 points a shard), which the server recomputes on
// every shard's interval for each open page.
func BenchmarkLiveSeries(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	series := make([][]rundoc.SeriesPoint, 10)
	for i := range series {
		series[i] = jittered(rng, rundoc.MaxSeriesPoints, rundoc.SeriesStep.Seconds(), 100, float64(rundoc.MaxSeriesPoints)*rundoc.SeriesStep.Seconds())
	}
	b.ResetTimer()
	for b.Loop() {
		if len(LiveSeries(series)) == 0 {
			b.Fatal("no point merged")
		}
	}
}

// TestHalfStep: a series' step is read from its points' mean length,
// rounded to SeriesStep doubled as many times as it was coarsened; late
// ticks, a dropped tick and a short last point do not move it.
func TestHalfStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const step = 0.25
	dropped := jittered(rng, 40, step, 1, 10)
	dropped = append(dropped[:9], dropped[10:]...)
	tests := []struct {
		name   string
		series [][]rundoc.SeriesPoint
		want   float64
	}{
		{"late ticks", [][]rundoc.SeriesPoint{jittered(rng, 40, step, 1, 10)}, step / 2},
		{"a dropped tick", [][]rundoc.SeriesPoint{dropped}, step / 2},
		{"coarsened twice, beside one not", [][]rundoc.SeriesPoint{
			rundoc.CoarsenSeries(rundoc.CoarsenSeries(jittered(rng, 80, step, 1, 20))), jittered(rng, 80, step, 1, 20)}, step / 2},
		{"coarsened twice", [][]rundoc.SeriesPoint{rundoc.CoarsenSeries(rundoc.CoarsenSeries(jittered(rng, 80, step, 1, 20)))}, 2 * step},
		{"one short point", [][]rundoc.SeriesPoint{{{T: 0.1, Records: 1}}}, step / 2},
		{"a shard with no point", [][]rundoc.SeriesPoint{jittered(rng, 40, step, 1, 10), nil}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := halfStep(tt.series); got != tt.want {
				t.Errorf("halfStep = %v, want %v", got, tt.want)
			}
		})
	}
}
