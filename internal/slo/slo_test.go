package slo

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// fakeSystem is a deterministic system under test: its p99 latency grows
// slowly up to its knee and without bound towards its capacity, as a
// queue's does; noise multiplies each measurement by up to ±noise; it
// cannot send faster than capacity.
type fakeSystem struct {
	knee, capacity, baseMs, noise float64
	rng                           *rand.Rand
	measured                      int
}

func (f *fakeSystem) latencyMs(rate float64) float64 {
	if rate >= f.capacity {
		return 1e6
	}
	lat := f.baseMs * (1 + rate/f.knee)
	if rate > f.knee {
		lat += 20 * (rate - f.knee) / (f.capacity - rate) * f.baseMs
	}
	return lat
}

// run measures one repetition at rate (0: unthrottled).
func (f *fakeSystem) run(c Config, rate float64, records int64) Run {
	f.measured++
	jitter := 1 + f.noise*(2*f.rng.Float64()-1)
	if rate == 0 {
		return Run{ID: uint(f.measured), Achieved: f.capacity * jitter, LatencyMs: 1e4, Samples: records}
	}
	achieved := math.Min(rate, f.capacity*jitter)
	return Run{ID: uint(f.measured), Achieved: achieved, LatencyMs: f.latencyMs(rate) * jitter, Samples: records}
}

// search runs Decide to its end against f; stopAfter > 0 drops every
// state but the stored probes after that many runs, as a restart would,
// and goes on from them alone.
func search(t *testing.T, c Config, f *fakeSystem) (Decision, []Probe) {
	t.Helper()
	var probes []Probe
	for range 1000 {
		d := Decide(c, probes)
		if d.Done {
			return d, probes
		}
		next := *d.Next
		if d.MinRecords != c.MinSamples() {
			t.Fatalf("probe asks %d records a run, want %d", d.MinRecords, c.MinSamples())
		}
		next.Runs = append(next.Runs, f.run(c, next.Rate, d.MinRecords))
		if len(probes) > 0 && probes[len(probes)-1].Rate == next.Rate && probes[len(probes)-1].Max == next.Max && !c.Measured(probes[len(probes)-1]) {
			probes[len(probes)-1] = next
		} else {
			probes = append(probes, next)
		}
	}
	t.Fatal("the search did not end")
	return Decision{}, nil
}

// TestSearchFindsTheKnee: against systems with a knee, with and without
// noise, the answer [lo, hi] is within the precision, lo meets the
// target on the system and hi does not (or is its capacity).
func TestSearchFindsTheKnee(t *testing.T) {
	for _, tc := range []struct {
		name              string
		knee, cap, target float64
		noise             float64
		cfg               Config
	}{
		{"knee at 40k, max measured", 40_000, 50_000, 10, 0, Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 2, Repetitions: 1}},
		{"noise 3%, 3 repetitions", 40_000, 50_000, 10, 0.03, Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 2, Repetitions: 3}},
		{"max_rate given", 8_000, 10_000, 5, 0, Config{Percentile: 99.9, LatencyMs: 5, PrecisionPct: 5, Repetitions: 1, MaxRate: 100_000}},
		{"20% precision", 40_000, 50_000, 10, 0, Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 20, Repetitions: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSystem{knee: tc.knee, capacity: tc.cap, baseMs: 2, noise: tc.noise, rng: rand.New(rand.NewPCG(1, 2))}
			d, probes := search(t, tc.cfg, f)
			if d.Outcome != Found {
				t.Fatalf("outcome %s [%v, %v] after %d probes", d.Outcome, d.Lo, d.Hi, len(probes))
			}
			if d.Hi/d.Lo > 1+tc.cfg.PrecisionPct/100+1e-12 {
				t.Errorf("[%v, %v]: wider than %v%%", d.Lo, d.Hi, tc.cfg.PrecisionPct)
			}
			// The true limit: where the noiseless latency crosses the target.
			lo, hi := 1.0, tc.cap
			for range 100 {
				mid := (lo + hi) / 2
				if f.latencyMs(mid) < tc.target {
					lo = mid
				} else {
					hi = mid
				}
			}
			truth := lo
			slack := 1 + 2*tc.noise + 1e-9
			if d.Lo > truth*slack || d.Hi < truth/slack {
				t.Errorf("[%v, %v] does not hold the true limit %v (noise %v)", d.Lo, d.Hi, truth, tc.noise)
			}
			if len(probes) > 30 {
				t.Errorf("%d probes", len(probes))
			}
		})
	}
}

// TestSearchRestart: a search stopped after any run and taken up from its
// stored probes alone makes the same next decision at every step, and so
// ends with the same answer and probes as one never stopped.
func TestSearchRestart(t *testing.T) {
	cfg := Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 2, Repetitions: 2}
	whole, wholeProbes := search(t, cfg, &fakeSystem{knee: 40_000, capacity: 50_000, baseMs: 2, noise: 0.02, rng: rand.New(rand.NewPCG(7, 7))})
	// Replaying each prefix of the stored probes, with a fresh decision,
	// asks for exactly the probe that came next.
	for i := range wholeProbes {
		for k := 0; k < len(wholeProbes[i].Runs); k++ {
			stored := append(append([]Probe(nil), wholeProbes[:i]...), Probe{Rate: wholeProbes[i].Rate, Max: wholeProbes[i].Max, Runs: wholeProbes[i].Runs[:k]})
			if k == 0 {
				stored = stored[:i]
			}
			d := Decide(cfg, stored)
			if d.Done || d.Next.Rate != wholeProbes[i].Rate || d.Next.Max != wholeProbes[i].Max {
				t.Fatalf("restarted after probe %d run %d: %+v, want the probe at %v (max %v)", i, k, d, wholeProbes[i].Rate, wholeProbes[i].Max)
			}
			if len(d.Next.Runs) != k {
				t.Fatalf("restarted after probe %d run %d: the probe's %d runs so far are not kept", i, k, len(d.Next.Runs))
			}
		}
	}
	if again := Decide(cfg, wholeProbes); again != whole {
		t.Errorf("the stored probes decide %+v, the search ended with %+v", again, whole)
	}
}

// TestFirstFailureDecidesTheProbe: a probe's repetitions after its
// first failing run are not measured, and the search moves below it;
// the unthrottled probe measures all its runs whatever they show.
func TestFirstFailureDecidesTheProbe(t *testing.T) {
	cfg := Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 2, Repetitions: 3, MaxRate: 1000}
	good, bad := Run{Achieved: 1000, LatencyMs: 5, Samples: 1000}, Run{Achieved: 1000, LatencyMs: 50, Samples: 1000}
	d := Decide(cfg, []Probe{{Rate: 1000, Runs: []Run{good}}})
	if d.Done || d.Next.Rate != 1000 || len(d.Next.Runs) != 1 {
		t.Fatalf("after one passing run of three: %+v, want the probe measured on", d)
	}
	d = Decide(cfg, []Probe{{Rate: 1000, Runs: []Run{good, bad}}})
	if d.Done || d.Next.Rate != 500 || d.Hi != 1000 {
		t.Fatalf("after a failing second run: %+v, want a probe at 500 below the failed 1000", d)
	}
	if v := cfg.JudgeProbe(Probe{Rate: 1000, Runs: []Run{good, bad}}); v.Pass || !strings.Contains(v.Reason, "run 2 of 3") {
		t.Errorf("verdict %+v, want run 2's failure", v)
	}
	maxCfg := cfg
	maxCfg.MaxRate = 0
	failed := Run{Err: "broker gone"}
	if d := Decide(maxCfg, []Probe{{Max: true, Runs: []Run{failed}}}); d.Done || !d.Next.Max || len(d.Next.Runs) != 1 {
		t.Errorf("unthrottled probe after a failed run: %+v, want it measured on", d)
	}
}

// TestProbesThatFallShort: a run short of its rate, behind its schedule,
// with too few samples, or failed, fails its probe, and the search goes
// on below it.
func TestProbesThatFallShort(t *testing.T) {
	cfg := Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 2, Repetitions: 1, MaxRate: 1000}
	good := Run{Achieved: 1000, LatencyMs: 5, Samples: 100_000}
	for _, tc := range []struct {
		name string
		run  func(Run) Run
		want string
	}{
		{"short of the rate", func(r Run) Run { r.Achieved = 979; return r }, "short of 98%"},
		{"behind schedule", func(r Run) Run { r.HarnessLimited = true; return r }, "load generator limited it"},
		{"too few samples", func(r Run) Run { r.Samples = 999; return r }, "fewer than the 1000"},
		{"latency at the target", func(r Run) Run { r.LatencyMs = 10; return r }, "not under 10 ms"},
		{"failed", func(r Run) Run { r.Err = "broker gone"; return r }, "broker gone"},
	} {
		p := Probe{Rate: 1000, Runs: []Run{tc.run(good)}}
		v := cfg.JudgeProbe(p)
		if v.Pass || !strings.Contains(v.Reason, tc.want) {
			t.Errorf("%s: %+v, want a failure saying %q", tc.name, v, tc.want)
		}
		if d := Decide(cfg, []Probe{p}); d.Done || d.Next.Rate != 500 || d.Hi != 1000 {
			t.Errorf("%s: next %+v, want a probe at 500 below the failed 1000", tc.name, d)
		}
	}
	if v := cfg.JudgeProbe(Probe{Rate: 1000, Runs: []Run{good}}); !v.Pass {
		t.Errorf("a good run fails: %s", v.Reason)
	}
	// Achieving 98% of the rate is enough.
	if v := cfg.Judge(1000, Run{Achieved: 980, LatencyMs: 5, Samples: 1000}); !v.Pass {
		t.Errorf("98%% of the rate fails: %s", v.Reason)
	}
}

// TestSearchEnds: a target met at the maximum, or met nowhere above the
// minimum, ends the search with the outcome saying so.
func TestSearchEnds(t *testing.T) {
	f := func() *fakeSystem {
		return &fakeSystem{knee: 40_000, capacity: 50_000, baseMs: 2, rng: rand.New(rand.NewPCG(3, 3))}
	}
	d, _ := search(t, Config{Percentile: 99, LatencyMs: 1000, PrecisionPct: 2, Repetitions: 1, MaxRate: 10_000}, f())
	if d.Outcome != AtMaximum || d.Lo != 10_000 || d.Hi != 10_000 {
		t.Errorf("a target met at max_rate: %+v", d)
	}
	d, probes := search(t, Config{Percentile: 99, LatencyMs: 1, PrecisionPct: 2, Repetitions: 1, MinRate: 5_000, MaxRate: 100_000}, f())
	if d.Outcome != NoneAllowed || probes[len(probes)-1].Rate != 5_000 {
		t.Errorf("a target met nowhere: %+v after probes at %v", d, rates(probes))
	}
	d, probes = search(t, Config{Percentile: 99, LatencyMs: 1, PrecisionPct: 2, Repetitions: 1}, f())
	if d.Outcome != NoneAllowed || !probes[0].Max || probes[len(probes)-1].Rate >= 2*floorRate {
		t.Errorf("a target met nowhere, no min_rate: %+v after probes at %v", d, rates(probes))
	}
}

func rates(ps []Probe) []float64 {
	var out []float64
	for _, p := range ps {
		out = append(out, p.Rate)
	}
	return out
}

// TestValidate: every field out of its range is named.
func TestValidate(t *testing.T) {
	ok := Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 2, Repetitions: 3}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"percentile", func(c *Config) { c.Percentile = 100 }},
		{"percentile", func(c *Config) { c.Percentile = math.NaN() }},
		{"latency_ms", func(c *Config) { c.LatencyMs = 0 }},
		{"precision_pct", func(c *Config) { c.PrecisionPct = 0.01 }},
		{"repetitions", func(c *Config) { c.Repetitions = 0 }},
		{"min_rate", func(c *Config) { c.MinRate = -1 }},
		{"max_rate", func(c *Config) { c.MaxRate = math.Inf(1) }},
		{"min_rate", func(c *Config) { c.MinRate, c.MaxRate = 10, 5 }},
	} {
		c := ok
		tc.edit(&c)
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want an error naming %s", c, err, tc.field)
		}
	}
	if got := (Config{Percentile: 99.99}).MinSamples(); got != 100_000 {
		t.Errorf("p99.99 needs %d samples, want 100,000", got)
	}
	if got := (Config{Percentile: 99}).MinSamples(); got != 1_000 {
		t.Errorf("p99 needs %d samples, want 1,000", got)
	}
}
