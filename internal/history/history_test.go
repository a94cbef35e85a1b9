package history

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/rundoc"
)

var t0 = time.Date(2022, 6, 1, 10, 0, 0, 0, time.UTC)

// series makes succeeded runs with ids from 101, one an hour, the given
// values of metric "rate" (direction better), commits c0, c1, … .
func series(values []float64, better rundoc.Better) []rundoc.Run {
	runs := make([]rundoc.Run, len(values))
	for i, v := range values {
		runs[i] = rundoc.Run{ID: uint(101 + i), Status: rundoc.StatusSucceeded, Time: t0.Add(time.Duration(i) * time.Hour),
			Meta:    map[string]string{"commit": "c" + strconv.Itoa(i)},
			Metrics: []rundoc.Metric{{Name: "rate", Value: v, Unit: "records/s", Better: better}}}
	}
	return runs
}

// step is n1 values around a then n2 around b, with ±noise relative noise
// from a fixed seed.
func step(n1 int, a float64, n2 int, b, noise float64) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []float64
	for i := 0; i < n1+n2; i++ {
		base := a
		if i >= n1 {
			base = b
		}
		out = append(out, base*(1+noise*(2*rng.Float64()-1)))
	}
	return out
}

func TestBuildChangePoints(t *testing.T) {
	kafka14020 := step(20, 115000, 40, 105000, 0.02)
	tests := []struct {
		name   string
		values []float64
		better rundoc.Better
		opts   changepoint.Options
		// want: index, direction, commit range of each change point
		want []string
	}{
		{"KAFKA-14020 throughput", kafka14020, rundoc.HigherIsBetter, changepoint.Options{}, []string{"20 worse c19..c20"}},
		{"lower is better", kafka14020, rundoc.LowerIsBetter, changepoint.Options{}, []string{"20 better c19..c20"}},
		{"no direction", kafka14020, rundoc.Neither, changepoint.Options{}, []string{"20  c19..c20"}},
		{"min magnitude above the step", kafka14020, rundoc.HigherIsBetter, changepoint.Options{MinMagnitude: 0.2}, nil},
		{"flat", step(100, 115000, 0, 0, 0.02), rundoc.HigherIsBetter, changepoint.Options{}, nil},
		{"two steps", append(step(30, 100, 30, 130, 0.01), step(0, 0, 30, 90, 0.01)...), rundoc.HigherIsBetter, changepoint.Options{},
			[]string{"30 better c29..c30", "60 worse c59..c60"}},
		{"too few points", []float64{1, 2}, rundoc.HigherIsBetter, changepoint.Options{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Build(series(tt.values, tt.better), "rate", tt.opts)
			if len(h.Points) != len(tt.values) {
				t.Fatalf("%d points, want %d", len(h.Points), len(tt.values))
			}
			var got []string
			for _, c := range h.ChangePoints {
				got = append(got, strconv.Itoa(c.Index)+" "+c.Direction+" "+c.CommitRange())
				if c.RunID != h.Points[c.Index].RunID {
					t.Errorf("change point at %d names run %d, want %d", c.Index, c.RunID, h.Points[c.Index].RunID)
				}
				if want := (c.After/c.Before - 1) * 100; math.Abs(c.ChangePct-want) > 1e-9 {
					t.Errorf("change %v%%, want %v%%", c.ChangePct, want)
				}
				if !(c.PValue >= 0 && c.PValue < h.Options.MaxPValue) {
					t.Errorf("p-value %v not below %v", c.PValue, h.Options.MaxPValue)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("change points %q, want %q", got, tt.want)
			}
			// Segments tile the points, one more than change points.
			if len(h.Segments) != len(h.ChangePoints)+1 || h.Segments[0].Start != 0 || h.Segments[len(h.Segments)-1].End != len(h.Points) {
				t.Fatalf("segments %+v", h.Segments)
			}
			for i, s := range h.Segments {
				if i > 0 && s.Start != h.Segments[i-1].End {
					t.Errorf("segment %d starts at %d, the previous ends at %d", i, s.Start, h.Segments[i-1].End)
				}
				vals := slices.Clone(tt.values[s.Start:s.End])
				slices.Sort(vals)
				if lo, hi := vals[(len(vals)-1)/2], vals[len(vals)/2]; s.Median < lo || s.Median > hi {
					t.Errorf("segment %d median %v outside [%v, %v]", i, s.Median, lo, hi)
				}
			}
		})
	}
}

// TestKAFKA14020Magnitude: the step of the issue is found with its size.
func TestKAFKA14020Magnitude(t *testing.T) {
	h := Build(series(step(20, 115000, 40, 105000, 0.02), rundoc.HigherIsBetter), "rate", changepoint.Options{})
	if len(h.ChangePoints) != 1 {
		t.Fatalf("change points %+v", h.ChangePoints)
	}
	if c := h.ChangePoints[0]; math.Abs(c.ChangePct-(105000.0/115000-1)*100) > 1 || c.RunID != 121 {
		t.Errorf("change %+v, want -8.7%% ± 1 at run 121", c)
	}
	if h.Unit != "records/s" || h.Better != rundoc.HigherIsBetter || h.Metric != "rate" {
		t.Errorf("metric %q unit %q better %q", h.Metric, h.Unit, h.Better)
	}
	if h.Options != (changepoint.Options{Window: 50, MaxPValue: 0.001, MinSegment: 4}) {
		t.Errorf("options %+v, want Otava's defaults and min_segment 4", h.Options)
	}
	if c := h.ChangePoints[0]; c.Tentative || c.RunsBefore != 20 || c.RunsAfter != 40 {
		t.Errorf("change %+v, want a trusted one with 20 runs before and 40 after", c)
	}
}

// TestTentative: the write-path preset's 4 repetitions of
// request-latency-p99, split 1/2/1 by Otava with p = 0, are two tentative
// change points with the default min_segment, and two trusted ones (Otava's
// raw answer) with min_segment 1.
func TestTentative(t *testing.T) {
	runs := series([]float64{10.5, 185.5, 185.5, 186}, rundoc.LowerIsBetter)
	h := Build(runs, "rate", changepoint.Options{})
	if len(h.ChangePoints) != 2 {
		t.Fatalf("change points %+v, want Otava's two", h.ChangePoints)
	}
	for _, c := range h.ChangePoints {
		if !c.Tentative {
			t.Errorf("change point at %d (%d before, %d after) is not tentative", c.Index, c.RunsBefore, c.RunsAfter)
		}
	}
	if got, want := h.ChangePoints[0].TentativeReason(h.Options.MinSegment), "1 run before it and 2 after; a change point is trusted with at least 4 on each side (min_segment)"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	raw := Build(runs, "rate", changepoint.Options{MinSegment: 1})
	if len(raw.ChangePoints) != 2 || raw.ChangePoints[0].Tentative || raw.ChangePoints[1].Tentative {
		t.Errorf("min_segment 1: %+v, want Otava's two change points, none tentative", raw.ChangePoints)
	}
}

func TestBuildPoints(t *testing.T) {
	runs := series([]float64{1, 2, 3, 4, 5, math.NaN(), math.Inf(1)}, rundoc.HigherIsBetter)
	runs[1].Status = rundoc.StatusFailed
	runs[2].Warmup = true
	runs[3].Metrics[0].Name = "other"
	runs[4].Meta = nil
	runs = append(runs, rundoc.Run{ID: 200, Status: rundoc.StatusRunning, Metrics: []rundoc.Metric{{Name: "rate", Value: 9}}})
	h := Build(runs, "rate", changepoint.Options{})
	want := []Point{{RunID: 101, Time: t0, Value: 1, Meta: map[string]string{"commit": "c0"}}, {RunID: 105, Time: t0.Add(4 * time.Hour), Value: 5}}
	if !reflect.DeepEqual(h.Points, want) {
		t.Errorf("points %+v, want %+v", h.Points, want)
	}
	if len(h.Segments) != 1 || h.Segments[0].Median != 3 {
		t.Errorf("segments %+v", h.Segments)
	}
	if h := Build(nil, "rate", changepoint.Options{}); h.Points != nil || h.Segments != nil || h.ChangePoints != nil {
		t.Errorf("empty history %+v", h)
	}
}

func TestUnknownCommit(t *testing.T) {
	runs := series(step(20, 115000, 40, 105000, 0.02), rundoc.HigherIsBetter)
	runs[19].Meta = nil
	runs[20].Meta = map[string]string{"branch": "trunk"}
	h := Build(runs, "rate", changepoint.Options{})
	if len(h.ChangePoints) != 1 || h.ChangePoints[0].CommitRange() != "unknown..unknown" {
		t.Errorf("change points %+v", h.ChangePoints)
	}
}

func TestMarks(t *testing.T) {
	env := func(mod func(e *rundoc.Environment)) *rundoc.Environment {
		e := &rundoc.Environment{KbenchVersion: "v1.2.0", KbenchBuild: "0123456789ab", GoVersion: "go1.25.1", KafkaGoVersion: "v0.4.47",
			CPUModel: "AMD EPYC", Cores: 8, Kernel: "6.1.0", Host: "bench1", Broker: "embedded (kfake)",
			Config: &rundoc.Config{Mode: "raw", Settings: []rundoc.Setting{{Name: "acks", Value: "all"}, {Name: "linger.ms", Value: "0"}}}}
		if mod != nil {
			mod(e)
		}
		return e
	}
	tests := []struct {
		name string
		a, b *rundoc.Environment
		want []string
	}{
		{"same", env(nil), env(nil), nil},
		{"no environment", nil, env(nil), nil},
		{"kafka-go", env(nil), env(func(e *rundoc.Environment) { e.KafkaGoVersion = "v0.4.48" }), []string{"kafka-go v0.4.47 → v0.4.48"}},
		{"kbench build", env(nil), env(func(e *rundoc.Environment) { e.KbenchBuild = "ba9876543210" }),
			[]string{"kbench v1.2.0 (build 0123456789ab) → v1.2.0 (build ba9876543210)"}},
		{"go and kernel", env(nil), env(func(e *rundoc.Environment) { e.GoVersion, e.Kernel = "go1.26.0", "6.8.0" }),
			[]string{"Go go1.25.1 → go1.26.0", "kernel 6.1.0 → 6.8.0"}},
		{"config", env(nil), env(func(e *rundoc.Environment) {
			e.Config = &rundoc.Config{Mode: "client", Settings: []rundoc.Setting{{Name: "acks", Value: "1"}, {Name: "batch.size", Value: "16384"}}}
		}), []string{"config mode raw → client, acks all → 1, batch.size (none) → 16384, linger.ms 0 → (none)"}},
		{"machine", env(nil), env(func(e *rundoc.Environment) { e.CPUModel, e.Cores, e.Host = "Intel Xeon", 16, "bench2" }),
			[]string{"CPU AMD EPYC → Intel Xeon", "cores 8 → 16", "host bench1 → bench2"}},
		{"target", env(nil), env(func(e *rundoc.Environment) {
			e.Broker, e.Target = "kafka1:9092", &rundoc.Target{Kind: rundoc.TargetCluster, ReleaseGuess: "3.7"}
		}), []string{"target embedded (kfake) → cluster (kafka1:9092) (3.7)"}},
		// What the target is, never the port an embedded broker or the
		// sink picked, nor the order of a cluster's servers.
		{"embedded broker on another port", env(func(e *rundoc.Environment) {
			e.Broker = "embedded kfake (own process, log.segment.bytes=1048576) at 127.0.0.1:46855"
		}), env(func(e *rundoc.Environment) {
			e.Broker = "embedded kfake (own process, log.segment.bytes=1048576) at 127.0.0.1:36135"
		}), nil},
		{"sink on another port", env(func(e *rundoc.Environment) {
			e.Broker = "kbench write-path sink (own process; answers Produce requests without storing them) at 127.0.0.1:40001"
		}), env(func(e *rundoc.Environment) {
			e.Broker = "kbench write-path sink (own process; answers Produce requests without storing them) at 127.0.0.1:40002"
		}), nil},
		{"cluster servers reordered", env(func(e *rundoc.Environment) { e.Broker = "kafka2:9092,kafka1:9092" }),
			env(func(e *rundoc.Environment) { e.Broker = "kafka1:9092,kafka2:9092" }), nil},
		{"another cluster", env(func(e *rundoc.Environment) { e.Broker = "kafka2:9092,kafka1:9092" }),
			env(func(e *rundoc.Environment) { e.Broker = "kafka3:9092" }), []string{"target cluster (kafka1:9092,kafka2:9092) → cluster (kafka3:9092)"}},
		{"field not recorded", env(nil), env(func(e *rundoc.Environment) { e.GoVersion, e.Config = "", nil }), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EnvironmentChanges(tt.a, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("changes %q, want %q", got, tt.want)
			}
		})
	}

	runs := series([]float64{1, 1, 1, 1}, rundoc.HigherIsBetter)
	runs[0].Environment = env(nil)
	runs[1].Environment = env(nil)
	runs[1].Status = rundoc.StatusFailed // not a point: its change counts at the next point
	runs[1].Environment.KafkaGoVersion = "v0.4.48"
	runs[2].Environment = env(func(e *rundoc.Environment) { e.KafkaGoVersion = "v0.4.48" })
	runs[3].Environment = env(func(e *rundoc.Environment) { e.KafkaGoVersion = "v0.4.48" })
	h := Build(runs, "rate", changepoint.Options{})
	want := []Mark{{Index: 1, RunID: 103, Changes: []string{"kafka-go v0.4.47 → v0.4.48"}}}
	if !reflect.DeepEqual(h.Marks, want) {
		t.Errorf("marks %+v, want %+v", h.Marks, want)
	}
}

func TestBeforeAfter(t *testing.T) {
	values := append(step(30, 100, 30, 130, 0.01), step(0, 0, 30, 90, 0.01)...)
	h := Build(series(values, rundoc.HigherIsBetter), "rate", changepoint.Options{})
	if len(h.ChangePoints) != 2 {
		t.Fatalf("change points %+v", h.ChangePoints)
	}
	ids := func(from, to int) []uint {
		var out []uint
		for i := from; i < to; i++ {
			out = append(out, uint(101+i))
		}
		return out
	}
	tests := []struct {
		k, perSide    int
		before, after []uint
	}{
		{0, 25, ids(5, 30), ids(30, 55)},
		{0, 50, ids(0, 30), ids(30, 60)}, // the segments bound the sides
		{1, 25, ids(35, 60), ids(60, 85)},
		{1, 3, ids(57, 60), ids(60, 63)},
		{2, 25, nil, nil},
		{0, 0, nil, nil},
	}
	for _, tt := range tests {
		b, a := h.BeforeAfter(tt.k, tt.perSide)
		if !slices.Equal(b, tt.before) || !slices.Equal(a, tt.after) {
			t.Errorf("BeforeAfter(%d, %d) = %v, %v; want %v, %v", tt.k, tt.perSide, b, a, tt.before, tt.after)
		}
	}
}
