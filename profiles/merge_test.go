package profiles

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// refTotal is a RunInput whose reference is its profile's total
// (normalize=total).
func refTotal(id uint, p *profile.Profile, idx int) RunInput {
	t, _ := SampleTotal(p, idx)
	return RunInput{RunID: id, Prof: p, SampleIndex: idx, Ref: float64(t)}
}

func TestDiffRunsOneAgainstOneEqualsDiff(t *testing.T) {
	base, target := loadFixture(t, fixtureBase), loadFixture(t, fixtureTarget)
	for _, tc := range []struct {
		name   string
		b, tgt RunInput
	}{
		{"total", refTotal(1, base, 1), refTotal(2, target, 1)},
		{"work", RunInput{1, base, 1, 1000}, RunInput{2, target, 1, 1300}},
		{"none", RunInput{1, base, 0, 1}, RunInput{2, target, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scale := tc.tgt.Ref / tc.b.Ref
			want, err := Diff(base, target, tc.b.SampleIndex, tc.tgt.SampleIndex, scale)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DiffRuns([]RunInput{tc.b}, []RunInput{tc.tgt})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := mustJSON(t, got), mustJSON(t, want); !bytes.Equal(g, w) {
				t.Errorf("DiffRuns 1v1 differs from Diff with scale %v", scale)
			}
			gc := TopChangesRuns([]RunInput{tc.b}, []RunInput{tc.tgt}, 0)
			wc := TopChanges(base, target, tc.b.SampleIndex, tc.tgt.SampleIndex, scale, 0)
			if g, w := mustJSON(t, gc), mustJSON(t, wc); !bytes.Equal(g, w) {
				t.Errorf("TopChangesRuns 1v1 differs from TopChanges:\n%s\n%s", g, w)
			}
		})
	}
	// NormalizeTotal's scale is the one RunScales uses.
	b, tg := refTotal(1, base, 1), refTotal(2, target, 1)
	bs, ts, err := RunScales([]RunInput{b}, []RunInput{tg})
	if err != nil {
		t.Fatal(err)
	}
	if n := NormalizeTotal(base, target, 1, 1); !near(bs[0], n.Scale) || ts[0] != 1 {
		t.Errorf("RunScales = %v, %v; NormalizeTotal's scale %v", bs, ts, n.Scale)
	}
}

// TestDiffRunsMeans: a side is the mean of its runs, so five runs of a
// profile against three runs of the same profile show no change (a sum
// would read −40 %), whatever the normalisation.
func TestDiffRunsMeans(t *testing.T) {
	p := fixtureGoCPU(false)
	side := func(n int, ref float64) []RunInput {
		var rs []RunInput
		for i := range n {
			rs = append(rs, RunInput{RunID: uint(i + 1), Prof: p, SampleIndex: 1, Ref: ref})
		}
		return rs
	}
	total, _ := SampleTotal(p, 1)
	for _, ref := range []float64{1, float64(total), 4242} {
		d, err := DiffRuns(side(3, ref), side(5, ref))
		if err != nil {
			t.Fatal(err)
		}
		for path, n := range diffPaths(d, "root", nil) {
			if !near(n.Value, n.Base) || !near(n.Self, n.BaseSelf) {
				t.Errorf("ref %v: %s: value %v base %v, want equal", ref, path, n.Value, n.Base)
			}
		}
		if !near(d.Value, float64(total)) {
			t.Errorf("ref %v: root value %v, want one run's total %d", ref, d.Value, total)
		}
		for _, c := range TopChangesRuns(side(3, ref), side(5, ref), 0) {
			if math.Abs(c.DeltaCum) > 1e-6*float64(total) || math.Abs(c.DeltaCumPct) > 1e-9 {
				t.Errorf("ref %v: %s changed by %v (%v %%)", ref, c.Name, c.DeltaCum, c.DeltaCumPct)
			}
		}
	}
}

// TestDiffRunsScaling checks R_t / r_i by hand: base runs of 10 and 30
// samples of one function with references 1 and 2 (work), target runs of
// 20 and 40 with references 2 and 4. R_t = 3: base values 10·3/1 and
// 30·3/2, mean 37.5; target 20·3/2 and 40·3/4, mean 30.
func TestDiffRunsScaling(t *testing.T) {
	run := func(id uint, v int64, ref float64) RunInput {
		return RunInput{RunID: id, Prof: lambdaProfile("leaf", v), SampleIndex: 0, Ref: ref}
	}
	base := []RunInput{run(1, 10, 1), run(2, 30, 2)}
	target := []RunInput{run(3, 20, 2), run(4, 40, 4)}
	d, err := DiffRuns(base, target)
	if err != nil {
		t.Fatal(err)
	}
	if !near(d.Base, 37.5) || !near(d.Value, 30) {
		t.Errorf("root base %v value %v, want 37.5 and 30", d.Base, d.Value)
	}
	ch := TopChangesRuns(base, target, 1)
	if len(ch) != 1 || !near(ch[0].DeltaCum, -7.5) || !near(ch[0].DeltaCumPct, -20) {
		t.Errorf("top change %+v, want −7.5 (−20 %%)", ch)
	}
	n, err := NormalizeRuns("work", base, target, "records")
	if err != nil || !near(n.Scale, 2) || !strings.Contains(n.Explain, "per record") || !strings.Contains(n.Explain, "2 base, 2 target") {
		t.Errorf("NormalizeRuns = %+v, %v", n, err)
	}
}

func TestRunScalesErrors(t *testing.T) {
	p := fixtureGoCPU(false)
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}}
	ok := RunInput{RunID: 1, Prof: p, SampleIndex: 1, Ref: 1}
	for _, tc := range []struct {
		name         string
		base, target []RunInput
		want         string
	}{
		{"no base", nil, []RunInput{ok}, "no base runs"},
		{"no target", []RunInput{ok}, nil, "no target runs"},
		{"zero ref", []RunInput{{RunID: 7, Prof: p, SampleIndex: 1}}, []RunInput{ok}, "base run 7: reference 0"},
		{"NaN ref", []RunInput{ok}, []RunInput{{RunID: 8, Prof: p, SampleIndex: 1, Ref: math.NaN()}}, "target run 8"},
		{"no profile", []RunInput{{RunID: 9, Ref: 1}}, []RunInput{ok}, "base run 9 has no profile"},
		{"units", []RunInput{{RunID: 3, Prof: heap, Ref: 1}}, []RunInput{ok}, "units differ"},
	} {
		_, _, err := RunScales(tc.base, tc.target)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if _, err := DiffRuns(tc.base, tc.target); err == nil {
			t.Errorf("%s: DiffRuns accepted", tc.name)
		}
		if got := TopChangesRuns(tc.base, tc.target, 0); got != nil {
			t.Errorf("%s: TopChangesRuns = %+v, want nil", tc.name, got)
		}
	}
}

func TestMergeRuns(t *testing.T) {
	// Two JVMs' runs of one lambda: 10 and 30 samples, scales 1 and 0.5.
	// The merged side holds one function and the mean (10 + 15) / 2.
	a := lambdaProfile("W$$Lambda$7+0x00007fb8c4a1b2c8.1.run", 10)
	b := lambdaProfile("W$$Lambda$7+0x00007f38aaaa0000.2.run", 30)
	m, err := MergeRuns([]RunInput{{RunID: 1, Prof: a, Ref: 1}, {RunID: 2, Prof: b, Ref: 2}}, []float64{1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Load(buf.Bytes())
	if err != nil {
		t.Fatalf("the merged profile does not load: %v", err)
	}
	if tot, _ := SampleTotal(back, 0); tot != 13 { // 5 + 7.5 rounded per sample: 5 + 8
		t.Errorf("merged total %d, want 13 (5 + 8, profile.Scale rounds each sample)", tot)
	}
	var lambdas []string
	for _, f := range back.Function {
		if strings.Contains(f.Name, "Lambda") {
			lambdas = append(lambdas, f.Name)
		}
	}
	if fmt.Sprint(lambdas) != "[W$$Lambda$7.run]" {
		t.Errorf("merged lambdas %v, want one W$$Lambda$7.run", lambdas)
	}
	if _, err := MergeRuns(nil, nil); err == nil {
		t.Error("merge of no runs accepted")
	}
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}}
	if _, err := MergeRuns([]RunInput{{Prof: lambdaProfile("x", 1)}, {RunID: 4, Prof: heap}}, []float64{1, 1}); err == nil ||
		!strings.Contains(err.Error(), "run 4") {
		t.Errorf("merge of a CPU and a heap profile: %v", err)
	}
}

// BenchmarkDiffRunsLarge is the merged diff of 10 runs against 10 of the
// large public profile, to set against BenchmarkDiffLarge's one pairwise
// diff: the tree is one, the samples ten times as many.
func BenchmarkDiffRunsLarge(b *testing.B) {
	p := largeProfile(b)
	idx, _ := PickSample(p, "")
	tot, _ := SampleTotal(p, idx)
	var base, target []RunInput
	for i := range 10 {
		base = append(base, RunInput{RunID: uint(i + 1), Prof: p, SampleIndex: idx, Ref: float64(tot) * (1 + float64(i)/100)})
		target = append(target, RunInput{RunID: uint(i + 11), Prof: p, SampleIndex: idx, Ref: float64(tot)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DiffRuns(base, target); err != nil {
			b.Fatal(err)
		}
	}
}
