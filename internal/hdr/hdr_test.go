package hdr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// histogram is what the cases read, so the same cases describe this
// package's histogram and (when the reference file was written) the
// hdrhistogram-go module's.
type histogram interface {
	RecordValue(v int64) error
	TotalCount() int64
	Mean() float64
	Max() int64
	ValueAtQuantile(q float64) int64
}

// config is a histogram's New arguments.
type config struct {
	lowest, highest int64
	digits          int
}

// configs are the ranges kbench uses (runner: 1 µs to an hour; the serve
// benchmark's load generator: 1 µs to 5 minutes) and a few others that
// exercise a lowest value above 1 and other precisions.
var configs = []config{
	{1, 3_600_000_000, 3},
	{1, 300_000_000, 3},
	{1, 1_000_000, 2},
	{1, 100_000_000, 4},
	{1000, 10_000_000_000, 3},
}

// dataset is a named list of values to record.
type dataset struct {
	name   string
	values func(c config) []int64
}

func seeded(seed uint64, n int, f func(r *rand.Rand, c config) int64) func(config) []int64 {
	return func(c config) []int64 {
		r := rand.New(rand.NewPCG(seed, 99))
		out := make([]int64, n)
		for i := range out {
			out[i] = min(max(f(r, c), 0), c.highest)
		}
		return out
	}
}

var datasets = []dataset{
	{"empty", func(config) []int64 { return nil }},
	{"one value", func(config) []int64 { return []int64{1234} }},
	{"zero", func(config) []int64 { return []int64{0, 0, 0} }},
	{"latency log-normal", seeded(1, 50000, func(r *rand.Rand, _ config) int64 {
		return int64(math.Exp(r.NormFloat64()*1.2+7.5)) + 1
	})},
	{"uniform over the range", seeded(2, 20000, func(r *rand.Rand, c config) int64 { return r.Int64N(c.highest + 1) })},
	{"small integers", seeded(3, 20000, func(r *rand.Rand, _ config) int64 { return r.Int64N(5000) })},
	{"log-uniform", seeded(4, 20000, func(r *rand.Rand, c config) int64 {
		return int64(math.Exp(r.Float64() * math.Log(float64(c.highest))))
	})},
	{"bucket edges", func(c config) []int64 {
		var out []int64
		for p := int64(1); p > 0 && p <= c.highest; p <<= 1 {
			for _, v := range []int64{p - 1, p, p + 1, p*3/2 - 1, p * 3 / 2} {
				if v >= 0 && v <= c.highest {
					out = append(out, v)
				}
			}
		}
		return append(out, c.highest, c.highest-1, c.lowest)
	}},
}

var quantiles = []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100}

// describe records every dataset in a histogram of every config (and, for
// Merge, each dataset's two halves in two histograms merged) and prints
// what kbench reads back.
func describe(newHist func(c config) histogram, merge func(into, from histogram)) string {
	var b strings.Builder
	for _, c := range configs {
		for _, d := range datasets {
			vs := d.values(c)
			whole := newHist(c)
			a, z := newHist(c), newHist(c)
			for i, v := range vs {
				if err := whole.RecordValue(v); err != nil {
					fmt.Fprintf(&b, "record %d: %v\n", v, err)
				}
				if i%2 == 0 {
					_ = a.RecordValue(v)
				} else {
					_ = z.RecordValue(v)
				}
			}
			merge(a, z)
			for _, h := range []struct {
				how string
				h   histogram
			}{{"recorded", whole}, {"merged", a}} {
				fmt.Fprintf(&b, "%d..%d/%d %s %s: count %d mean %.6f max %d", c.lowest, c.highest, c.digits, d.name, h.how,
					h.h.TotalCount(), h.h.Mean(), h.h.Max())
				for _, q := range quantiles {
					fmt.Fprintf(&b, " p%v=%d", q, h.h.ValueAtQuantile(q))
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// referenceFile holds describe's output for the hdrhistogram-go module
// (v1.4.0), which kbench used before this package; it was written by a
// test that imported the module, before the module was dropped.
const referenceFile = "hdrhistogram-go-v1.4.0.txt"

// TestMatchesHdrHistogramGo: for every case, this histogram answers
// exactly what hdrhistogram-go answered (count, mean, max, quantiles, and
// the same after a merge), so latency figures stay comparable with runs
// stored before the switch.
func TestMatchesHdrHistogramGo(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", referenceFile))
	if err != nil {
		t.Fatal(err)
	}
	got := describe(func(c config) histogram { return New(c.lowest, c.highest, c.digits) },
		func(into, from histogram) {
			if err := into.(*Histogram).Merge(from.(*Histogram)); err != nil {
				t.Fatal(err)
			}
		})
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	if len(gl) != len(wl) {
		t.Errorf("%d lines, the reference has %d", len(gl), len(wl))
	}
	bad := 0
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] && bad < 5 {
			bad++
			t.Errorf("line %d:\ngot  %s\nwant %s", i+1, gl[i], wl[i])
		}
	}
}

// TestPrecision: every quantile is within the configured significant
// digits of the exact value of the same data (sorted), never below it.
func TestPrecision(t *testing.T) {
	for _, c := range configs {
		for _, d := range datasets {
			vs := slices.Clone(d.values(c))
			if len(vs) == 0 {
				continue
			}
			h := New(c.lowest, c.highest, c.digits)
			for _, v := range vs {
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(vs)
			tol := math.Pow10(-c.digits)
			for _, q := range quantiles {
				rank := max(int(q/100*float64(len(vs))+0.5), 1)
				exact := vs[rank-1]
				got := h.ValueAtQuantile(q)
				// The resolution is never finer than the lowest discernible
				// value; at p0 the answer is the bucket's lowest value.
				slack := max(tol*float64(exact), float64(c.lowest))
				if q == 0 {
					if got > exact || float64(exact-got) > slack {
						t.Errorf("%v %s: p0 = %d, exact %d", c, d.name, got, exact)
					}
					continue
				}
				if got < exact || float64(got-exact) > slack {
					t.Errorf("%v %s: p%v = %d, exact %d", c, d.name, q, got, exact)
				}
			}
		}
	}
}

func TestRecordOutOfRange(t *testing.T) {
	h := New(1, 1000, 3)
	for _, v := range []int64{-1, 1001, math.MaxInt64} {
		if err := h.RecordValue(v); err == nil {
			t.Errorf("RecordValue(%d): no error", v)
		}
	}
	if h.TotalCount() != 0 {
		t.Errorf("count %d after rejected values", h.TotalCount())
	}
	if err := New(1, 1000, 3).Merge(New(1, 2000, 3)); err == nil {
		t.Error("merging different ranges: no error")
	}
}

// TestSpectrum checks the spectrum's quantiles (halvings, ticks, the max
// last at 1 − 1/total) and that each value is ValueAtQuantile's.
func TestSpectrum(t *testing.T) {
	h := New(1, 3_600_000_000, 3)
	if got := h.Spectrum(5); got != nil {
		t.Fatalf("empty histogram: spectrum %v, want none", got)
	}
	for v := int64(1); v <= 100_000; v++ {
		_ = h.RecordValue(v * 7)
	}
	sp := h.Spectrum(4)
	if sp[0].Q != 0 || sp[1].Q != 12.5 || sp[4].Q != 50 || sp[8].Q != 75 {
		t.Errorf("quantiles start %v, want 0, 12.5, 25, 37.5, 50, … 75 at the 9th", sp[:9])
	}
	lastQ := 100 * (1 - 1/float64(h.TotalCount()))
	if end := sp[len(sp)-1]; end.Q != lastQ || end.Value != h.Max() {
		t.Errorf("last point %+v, want the max %d at q %v", end, h.Max(), lastQ)
	}
	for i, p := range sp[:len(sp)-1] {
		if want := h.ValueAtQuantile(p.Q); p.Value != want {
			t.Errorf("point %d: value %d at q %v, ValueAtQuantile says %d", i, p.Value, p.Q, want)
		}
		if i > 0 && (p.Q <= sp[i-1].Q || p.Value < sp[i-1].Value) {
			t.Errorf("point %d (%+v) does not follow %+v", i, p, sp[i-1])
		}
	}
	one := New(1, 1000, 3)
	_ = one.RecordValue(42)
	if got := one.Spectrum(5); len(got) != 1 || got[0].Value != 42 || got[0].Q != 0 {
		t.Errorf("one value: spectrum %+v, want only the max, 42 at q 0", got)
	}
}

func TestReset(t *testing.T) {
	h := New(1, 1000, 3)
	_ = h.RecordValue(500)
	h.Reset()
	if h.TotalCount() != 0 || h.Max() != 0 || h.ValueAtQuantile(50) != 0 {
		t.Errorf("after Reset: count %d max %d p50 %d, want all 0", h.TotalCount(), h.Max(), h.ValueAtQuantile(50))
	}
	_ = h.RecordValue(7)
	if h.ValueAtQuantile(100) != 7 {
		t.Errorf("after Reset and one value 7: p100 %d", h.ValueAtQuantile(100))
	}
}
