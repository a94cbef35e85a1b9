// Package synthprof builds synthetic CPU profiles for tests: a run of a
// small call tree whose leaves each cost a given CPU time per record,
// with seeded run-to-run noise, as pprof profiles (samples/count and
// cpu/nanoseconds, a 10 ms period) that parse and import like the Go
// runtime's.
package synthprof

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Period is the sampling period: 10 ms of CPU per sample, as Go's
// profiler's 100 Hz.
const Period = int64(10 * time.Millisecond)

// Leaf is one stack, frames root first joined by ";", and the CPU time
// its leaf costs per record, in nanoseconds.
type Leaf struct {
	Stack       string
	NanosPerRec float64
}

// Run is a CPU profile of a run that moved records records through
// leaves, each leaf's time multiplied by a log-normal factor of σ noise
// (drawn from rng), rounded to whole samples.
func Run(rng *rand.Rand, leaves []Leaf, records float64, noise float64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     Period,
		TimeNanos:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(),
	}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name, Filename: "synth.go"}
		funcs[name] = f
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(locs) + 1), Address: uint64(0x1000 + 16*len(locs)), Line: []profile.Line{{Function: f, Line: int64(len(locs) + 1)}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, lf := range leaves {
		frames := strings.Split(lf.Stack, ";")
		var stack []*profile.Location
		for i := len(frames) - 1; i >= 0; i-- { // leaf first, as pprof stores stacks
			stack = append(stack, loc(frames[i]))
		}
		nanos := lf.NanosPerRec * records * math.Exp(noise*rng.NormFloat64())
		n := int64(math.Round(nanos / float64(Period)))
		if n <= 0 {
			continue
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{n, n * Period}})
	}
	return p
}

// Encode is p as the gzipped protocol buffer a profile file holds.
func Encode(p *profile.Profile) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
