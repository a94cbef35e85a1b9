package profiles

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// A synthetic workload for the significance and ranking tests: a small
// call tree of a producer (send, encode, write, a receive loop, the
// garbage collector) whose leaves each cost a fixed share of a run's CPU
// per record, plus a tail of small leaves that stay below the family's
// 1 %. runtime.mallocgc is called from two places, so the tree is a DAG
// of functions, as real ones are.
//
// A run does W records (W uniform in 0.9–1.1 million) and holds about
// synthConfig.samples CPU samples per million records. Each leaf's
// expected count is samples · weight · W/10⁶, times a run-wide factor and
// a per-leaf factor, both log-normal (run-to-run noise: frequency, cache
// and scheduling luck), and the count is drawn from the Poisson
// distribution around it.
//
// The tests use synthDefault: 20,000 samples a run (a 100 s run at
// 100 Hz on two busy cores) and σ 2 % for both factors, normalized by
// the run's total (the diff's default).
var synthDefault = synthConfig{samples: 20_000, runNoise: 0.02, leafNoise: 0.02, byTotal: true}

// synthConfig sets a synthetic run's size and noise.
type synthConfig struct {
	samples             float64 // expected samples per million records
	runNoise, leafNoise float64 // σ of the log-normal run-wide and per-leaf factors
	byTotal             bool    // Ref is the run's total (normalize=total), else its records (work)
}

// synthLeaf is one leaf stack (root first) and its share of the CPU.
type synthLeaf struct {
	stack  string // frames joined by ";"
	weight float64
}

// synthLeaves is the workload's call tree. The named leaves' weights add
// up to 0.67; synthMid adds 19 leaves of 1.2 % (0.228) under five
// parents, and synthTail 40 leaves of 0.25 % (0.10) that stay out of the
// family. The family (≥ 1 % of the total) is then 43 functions, the low
// end of the 60–160 a real producer profile has.
var synthLeaves = slices.Concat([]synthLeaf{
	{"runtime.goexit;main.run;send.Loop;send.encode;encoding.Marshal", 0.06},
	{"runtime.goexit;main.run;send.Loop;send.encode;crc32.Update", 0.05},
	{"runtime.goexit;main.run;send.Loop;send.encode;runtime.mallocgc", 0.04},
	{"runtime.goexit;main.run;send.Loop;send.batch", 0.06},
	{"runtime.goexit;main.run;send.Loop;kafka.Write;syscall.write", 0.08},
	{"runtime.goexit;main.run;send.Loop;kafka.Write;kafka.compress", 0.06},
	{"runtime.goexit;main.run;send.Loop;kafka.Write", 0.03},
	{"runtime.goexit;main.run;recv.Loop;recv.decode", 0.07},
	{"runtime.goexit;main.run;recv.Loop;recv.decode;runtime.mallocgc", 0.03},
	{"runtime.goexit;main.run;recv.Loop;syscall.read", 0.06},
	{"runtime.goexit;runtime.gcBgMarkWorker;runtime.scanobject", 0.05},
	{"runtime.goexit;runtime.gcBgMarkWorker;runtime.markroot", 0.04},
	{"runtime.goexit;main.run;metrics.Record", 0.014},
	{"runtime.goexit;main.run;metrics.Flush", 0.026},
}, synthMid(), synthTail())

func synthMid() []synthLeaf {
	var out []synthLeaf
	for i := range 19 {
		out = append(out, synthLeaf{fmt.Sprintf("runtime.goexit;main.run;mid.P%d;mid.L%d", i/4, i), 0.012})
	}
	return out
}

func synthTail() []synthLeaf {
	var out []synthLeaf
	for i := range 40 {
		out = append(out, synthLeaf{fmt.Sprintf("runtime.goexit;main.run;small.F%d", i), 0.0025})
	}
	return out
}

// synthRun draws one run: its records and a CPU profile of them with
// about samples samples per million records. change multiplies the weight
// of the leaves whose stack ends in ";"+name (none when name is empty).
func synthRun(rng *rand.Rand, id uint, c synthConfig, name string, change float64) RunInput {
	records := 1e6 * (0.9 + 0.2*rng.Float64())
	run := math.Exp(c.runNoise * rng.NormFloat64())
	counts := make([]int64, len(synthLeaves))
	for i, l := range synthLeaves {
		w := l.weight
		if name != "" && strings.HasSuffix(l.stack, ";"+name) {
			w *= change
		}
		lambda := c.samples * w * records / 1e6 * run * math.Exp(c.leafNoise*rng.NormFloat64())
		counts[i] = poisson(rng, lambda)
	}
	in := RunInput{RunID: id, Prof: synthProfile(counts), SampleIndex: 1, Ref: records}
	if c.byTotal {
		in.Ref = 0
		for _, x := range in.Prof.Sample {
			in.Ref += float64(x.Value[1])
		}
	}
	return in
}

// synthRuns draws n runs with ids from first on.
func synthRuns(rng *rand.Rand, first uint, n int, c synthConfig, name string, change float64) []RunInput {
	out := make([]RunInput, n)
	for i := range out {
		out[i] = synthRun(rng, first+uint(i), c, name, change)
	}
	return out
}

// poisson draws from the Poisson distribution of mean lambda: by
// multiplying uniforms below 30, by the normal approximation (rounded,
// at least 0) above, where its error is far below the run noise.
func poisson(rng *rand.Rand, lambda float64) int64 {
	if lambda < 30 {
		l, k, p := math.Exp(-lambda), int64(0), rng.Float64()
		for p > l {
			k++
			p *= rng.Float64()
		}
		return k
	}
	return max(0, int64(math.Round(lambda+math.Sqrt(lambda)*rng.NormFloat64())))
}

// synthProfile builds a Go-style CPU profile (samples/count and
// cpu/nanoseconds, period 10 ms) with one sample per leaf of synthLeaves
// holding counts[i] samples; leaves with no sample are left out.
func synthProfile(counts []int64) *profile.Profile {
	const period = 10_000_000
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     period,
	}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 + 16*len(p.Location)), Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	for i, l := range synthLeaves {
		if counts[i] == 0 {
			continue
		}
		frames := strings.Split(l.stack, ";")
		s := &profile.Sample{Value: []int64{counts[i], counts[i] * period}}
		for j := len(frames) - 1; j >= 0; j-- { // leaf first
			s.Location = append(s.Location, loc(frames[j]))
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}
