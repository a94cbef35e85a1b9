package fleetmerge

import (
	"bytes"
	"math"
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
			[]rundoc.SeriesPoint{{T: 1, Records: 40, Bytes: 4000, RecordsPerSec: 40, MBPerSec: 4000.0 / (1 << 20), LatencyAvgMs: 3.5, LatencyMaxMs: 0,
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
