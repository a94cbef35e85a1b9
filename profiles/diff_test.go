package profiles

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// diffPaths flattens a diff tree into "a;b;c" → node.
func diffPaths(n *DiffNode, prefix string, out map[string]*DiffNode) map[string]*DiffNode {
	if out == nil {
		out = map[string]*DiffNode{}
	}
	out[prefix] = n
	for _, c := range n.Children {
		diffPaths(c, prefix+";"+c.Name, out)
	}
	return out
}

func treePaths(n *Node, prefix string, out map[string]*Node) map[string]*Node {
	if out == nil {
		out = map[string]*Node{}
	}
	out[prefix] = n
	for _, c := range n.Children {
		treePaths(c, prefix+";"+c.Name, out)
	}
	return out
}

func TestDiffTotalsAndUnion(t *testing.T) {
	base, target := loadFixture(t, fixtureBase), loadFixture(t, fixtureTarget)
	for _, tc := range []struct {
		index string
		scale float64
	}{{"samples", 1}, {"samples", 0.9}, {"samples", 1.37}, {"cpu", 0.9}} {
		t.Run(fmt.Sprintf("%s×%v", tc.index, tc.scale), func(t *testing.T) {
			sb, _ := PickSample(base, tc.index)
			st, _ := PickSample(target, tc.index)
			d, err := Diff(base, target, sb, st, tc.scale)
			if err != nil {
				t.Fatal(err)
			}
			// Base values are scaled exactly, not rounded per sample.
			bt, _ := total(base, sb)
			wantBase := float64(bt) * tc.scale
			wantTarget, _ := total(target, st)
			if d.Name != "root" || d.Value != float64(wantTarget) || !near(d.Base, wantBase) {
				t.Errorf("root = %s value %v base %v, want root, target total %d, base×scale total %v", d.Name, d.Value, d.Base, wantTarget, wantBase)
			}
			// Each side of the diff tree is exactly that side's own tree
			// (the base's times scale).
			paths := diffPaths(d, "root", nil)
			tp := treePaths(BuildTree(target, st), "root", nil)
			bp := treePaths(BuildTree(base, sb), "root", nil)
			for path, n := range paths {
				var tv, ts, bv, bs float64
				if x := tp[path]; x != nil {
					tv, ts = float64(x.Value), float64(x.Self)
				}
				if x := bp[path]; x != nil {
					bv, bs = float64(x.Value)*tc.scale, float64(x.Self)*tc.scale
				}
				if n.Value != tv || n.Self != ts || !near(n.Base, bv) || !near(n.BaseSelf, bs) {
					t.Errorf("%s: got value %v self %v base %v base_self %v, want %v %v %v %v", path, n.Value, n.Self, n.Base, n.BaseSelf, tv, ts, bv, bs)
				}
			}
			for path := range tp {
				if paths[path] == nil {
					t.Errorf("target path %s missing from the diff", path)
				}
			}
			for path := range bp {
				if paths[path] == nil {
					t.Errorf("base path %s missing from the diff", path)
				}
			}
			// Vanished and new frames.
			walk := "root;runtime.main;main.main;main.walk"
			if n := paths[walk]; n == nil || n.Value != 0 || n.Base <= 0 {
				t.Errorf("%s = %+v, want value 0 and base > 0", walk, n)
			}
			compress := "root;runtime.main;main.main;main.produce;main.compress"
			if n := paths[compress]; n == nil || n.Base != 0 || n.Value <= 0 {
				t.Errorf("%s = %+v, want base 0 and value > 0", compress, n)
			}
		})
	}
}

func TestDiffMatchesDiffProfile(t *testing.T) {
	// BuildTree of the merged pprof diff is target − base, node by node.
	// (With a scale other than 1 DiffProfile rounds per sample, as
	// profile.Scale does, and Diff does not: they then differ by the
	// rounding.)
	base, target := loadFixture(t, fixtureBase), loadFixture(t, fixtureTarget)
	const scale = 1
	d, err := Diff(base, target, 0, 0, scale)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := DiffProfile(base, target, scale)
	if err != nil {
		t.Fatal(err)
	}
	merged := treePaths(BuildTree(dp, 0), "root", nil)
	for path, n := range diffPaths(d, "root", nil) {
		m := merged[path]
		if m == nil {
			if n.Value != n.Base || n.Self != n.BaseSelf {
				t.Errorf("%s: missing from the merged diff but %v − %v ≠ 0", path, n.Value, n.Base)
			}
			continue
		}
		if float64(m.Value) != n.Value-n.Base || float64(m.Self) != n.Self-n.BaseSelf {
			t.Errorf("%s: merged value %d self %d, want %v, %v", path, m.Value, m.Self, n.Value-n.Base, n.Self-n.BaseSelf)
		}
	}
	// The base samples are labelled, negated and scaled.
	var neg int64
	for _, s := range dp.Sample {
		if len(s.Label["pprof::base"]) == 1 && s.Label["pprof::base"][0] == "true" {
			if s.Value[0] > 0 {
				t.Errorf("base sample with positive value %d", s.Value[0])
			}
			neg -= s.Value[0]
		}
	}
	if float64(neg) != d.Base {
		t.Errorf("labelled base samples add up to %d, want the diff's base total %v", neg, d.Base)
	}
	// The inputs are untouched.
	if b, _ := total(base, 0); b != 148 {
		t.Errorf("base total changed to %d", b)
	}
}

func TestDiffProfileMatchesPprofDiffBase(t *testing.T) {
	want := runPprof(t, "-top", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0", "-sample_index=samples", "-diff_base", fixtureBase, fixtureTarget)
	golden.Check(t, "go-cpu.diff_base.top.golden", topTable(want))

	dp, err := DiffProfile(loadFixture(t, fixtureBase), loadFixture(t, fixtureTarget), 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := dp.Write(&buf); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "diff.pb.gz")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runPprof(t, "-top", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0", "-sample_index=samples", file)
	if g, w := topTable(got), topTable(want); g != w {
		t.Errorf("pprof -top of DiffProfile:\n%s\nwant (pprof -diff_base):\n%s", g, w)
	}
	// Per function, the pprof table equals TopChanges' deltas.
	changes := map[string]Change{}
	for _, c := range TopChanges(loadFixture(t, fixtureBase), loadFixture(t, fixtureTarget), 0, 0, 1, 0) {
		changes[c.Name] = c
	}
	for _, r := range parseTop(t, want) {
		c := changes[r.name]
		if c.DeltaFlat != float64(r.flat) || c.DeltaCum != float64(r.cum) {
			t.Errorf("%s: TopChanges delta flat %v cum %v, want (pprof -diff_base) %d, %d", r.name, c.DeltaFlat, c.DeltaCum, r.flat, r.cum)
		}
	}
}

// topTable keeps the table of a -top report, dropping the header (file
// name, time) that differs between inputs.
func topTable(out string) string {
	i := strings.Index(out, "      flat  flat%")
	if i < 0 {
		return out
	}
	return out[i:]
}

func TestDiffErrors(t *testing.T) {
	cpu := fixtureGoCPU(false)
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}}
	for _, tc := range []struct {
		name         string
		base, target *profile.Profile
		sb, st       int
		scale        float64
		want         string
	}{
		{"units differ", cpu, heap, 1, 0, 1, "units differ"},
		{"base index", cpu, cpu, 2, 1, 1, "base sample index 2 out of range"},
		{"target index", cpu, cpu, 1, -1, 1, "target sample index -1 out of range"},
		{"zero scale", cpu, cpu, 1, 1, 0, "must be positive and finite"},
		{"NaN scale", cpu, cpu, 1, 1, math.NaN(), "must be positive and finite"},
		{"Inf scale", cpu, cpu, 1, 1, math.Inf(1), "must be positive and finite"},
	} {
		if _, err := Diff(tc.base, tc.target, tc.sb, tc.st, tc.scale); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := DiffProfile(cpu, heap, 1); err == nil || !strings.Contains(err.Error(), "incompatible") {
		t.Errorf("DiffProfile(cpu, heap) error = %v, want incompatible", err)
	}
	if _, err := DiffProfile(cpu, cpu, -1); err == nil {
		t.Errorf("DiffProfile with scale -1 accepted")
	}
}

func TestDiffGolden(t *testing.T) {
	base, target := loadFixture(t, fixtureBase), loadFixture(t, fixtureTarget)
	d, err := Diff(base, target, 0, 0, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "go-cpu.diff.json", string(mustJSON(t, d)))

	var b strings.Builder
	fmt.Fprintf(&b, "%-32s %6s %6s %6s %6s %6s %6s %9s %9s\n", "name", "bflat", "tflat", "bcum", "tcum", "dflat", "dcum", "dflat%", "dcum%")
	for _, c := range TopChanges(base, target, 0, 0, 0.9, 0) {
		fmt.Fprintf(&b, "%-32s %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f %9.2f %9.2f\n", c.Name, c.BaseFlat, c.TargetFlat, c.BaseCum, c.TargetCum, c.DeltaFlat, c.DeltaCum, c.DeltaFlatPct, c.DeltaCumPct)
	}
	golden.Check(t, "go-cpu.topchanges.golden", b.String())
}

func TestTopChanges(t *testing.T) {
	base, target := fixtureGoCPU(false), fixtureGoCPU(true)
	all := TopChanges(base, target, 0, 0, 1, 0)
	byName := map[string]Change{}
	for i, c := range all {
		byName[c.Name] = c
		if i > 0 {
			p := all[i-1]
			ok := math.Abs(p.DeltaCum) > math.Abs(c.DeltaCum) ||
				math.Abs(p.DeltaCum) == math.Abs(c.DeltaCum) && (math.Abs(p.DeltaFlat) > math.Abs(c.DeltaFlat) ||
					math.Abs(p.DeltaFlat) == math.Abs(c.DeltaFlat) && p.Name < c.Name)
			if !ok {
				t.Errorf("order: %+v before %+v", p, c)
			}
		}
		if math.IsNaN(c.DeltaCumPct) || math.IsInf(c.DeltaCumPct, 0) || math.IsNaN(c.DeltaFlatPct) || math.IsInf(c.DeltaFlatPct, 0) {
			t.Errorf("%s: percentages %v %v", c.Name, c.DeltaFlatPct, c.DeltaCumPct)
		}
	}
	for _, tc := range []Change{
		// Recursion counts once per sample in cum.
		{Name: "main.walk", BaseFlat: 7, TargetFlat: 0, BaseCum: 7, TargetCum: 0, DeltaFlat: -7, DeltaCum: -7, DeltaFlatPct: -100, DeltaCumPct: -100},
		// New in target: +100% by convention.
		{Name: "main.compress", BaseFlat: 0, TargetFlat: 15, BaseCum: 0, TargetCum: 19, DeltaFlat: 15, DeltaCum: 19, DeltaFlatPct: 100, DeltaCumPct: 100},
		{Name: "internal/poll.(*FD).Writev", BaseCum: 20, TargetCum: 60, DeltaCum: 40, DeltaCumPct: 200},
		{Name: "runtime.mallocgc", BaseFlat: 2, TargetFlat: 6, BaseCum: 2, TargetCum: 6, DeltaFlat: 4, DeltaCum: 4, DeltaFlatPct: 200, DeltaCumPct: 200},
	} {
		if got := byName[tc.Name]; got != tc {
			t.Errorf("got %+v\nwant %+v", got, tc)
		}
	}
	// Unchanged functions are left out.
	if _, ok := byName["main.consume"]; ok {
		t.Errorf("main.consume did not change but is listed")
	}
	if got := TopChanges(base, target, 0, 0, 1, 3); len(got) != 3 || got[0] != all[0] {
		t.Errorf("top 3 = %+v, want the first three of %+v", got, all[:3])
	}
	if got := TopChanges(base, base, 1, 1, 1, 0); len(got) != 0 {
		t.Errorf("a profile against itself changed: %+v", got)
	}
	if got := TopChanges(base, target, 5, 0, 1, 0); got != nil {
		t.Errorf("bad index gave %+v, want nil", got)
	}
}

func TestNormalize(t *testing.T) {
	base, target := fixtureGoCPU(false), fixtureGoCPU(true)
	n := NormalizeTotal(base, target, 1, 1)
	if want := 152.0 / 148; n.Mode != "total" || math.Abs(n.Scale-want) > 1e-12 {
		t.Errorf("NormalizeTotal = %+v, want mode total scale %v", n, want)
	}
	if want := "base scaled by 1.03 (target total 1.52 s / base total 1.48 s): both totals are equal, values compare as shares of each profile's total"; n.Explain != want {
		t.Errorf("explain = %q\nwant %q", n.Explain, want)
	}
	if n := NormalizeTotal(base, target, 0, 0); !strings.Contains(n.Explain, "152 samples / base total 148 samples") {
		t.Errorf("count explain = %q", n.Explain)
	}
	empty := &profile.Profile{SampleType: base.SampleType}
	if n := NormalizeTotal(empty, target, 1, 1); n.Scale != 1 || !strings.Contains(n.Explain, "cannot normalize") {
		t.Errorf("NormalizeTotal(empty base) = %+v, want scale 1 and an explanation", n)
	}
	if n := NormalizeTotal(base, target, 7, 1); n.Scale != 1 {
		t.Errorf("NormalizeTotal(bad index) = %+v, want scale 1", n)
	}

	for _, tc := range []struct {
		base, target float64
		unit         string
		scale        float64
		explain      string
	}{
		{120_000, 100_000, "records", 100_000.0 / 120_000, "base scaled by 100,000 records / 120,000 records: values compare per record"},
		{1 << 30, 1 << 29, "bytes", 0.5, "base scaled by 536,870,912 bytes / 1,073,741,824 bytes: values compare per byte"},
		{2.5, 5, "MB", 2, "base scaled by 5 MB / 2.50 MB: values compare per MB"},
		{10, 10, "", 1, "base scaled by 10 / 10: values compare per unit of work"},
	} {
		n, err := NormalizeWork(tc.base, tc.target, tc.unit)
		if err != nil {
			t.Fatal(err)
		}
		if n.Mode != "work" || n.Scale != tc.scale || n.Explain != tc.explain {
			t.Errorf("NormalizeWork(%v, %v, %q) = %+v\nwant scale %v explain %q", tc.base, tc.target, tc.unit, n, tc.scale, tc.explain)
		}
	}
	for _, bad := range [][2]float64{{0, 1}, {1, -1}, {math.NaN(), 1}, {1, math.Inf(1)}} {
		if _, err := NormalizeWork(bad[0], bad[1], "records"); err == nil {
			t.Errorf("NormalizeWork(%v, %v) accepted", bad[0], bad[1])
		}
	}
	if n := NormalizeNone(); n.Mode != "none" || n.Scale != 1 || n.Explain == "" {
		t.Errorf("NormalizeNone() = %+v", n)
	}
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		st   profile.ValueType
		want string
	}{
		{1_480_000_000, profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, "1.48 s"},
		{10_000_000, profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, "10 ms"},
		{1500, profile.ValueType{Type: "delay", Unit: "nanoseconds"}, "1.50 µs"},
		{12, profile.ValueType{Type: "delay", Unit: "nanoseconds"}, "12 ns"},
		{3 << 20, profile.ValueType{Type: "inuse_space", Unit: "bytes"}, "3.0 MiB"},
		{1234567, profile.ValueType{Type: "samples", Unit: "count"}, "1,234,567 samples"},
		{-1234, profile.ValueType{Type: "contentions", Unit: "count"}, "-1,234 contentions"},
		{42, profile.ValueType{Type: "x", Unit: "widgets"}, "42 widgets"},
	} {
		if got := formatValue(tc.v, &tc.st); got != tc.want {
			t.Errorf("formatValue(%d, %v) = %q, want %q", tc.v, tc.st, got, tc.want)
		}
	}
}

func BenchmarkDiffLarge(b *testing.B) {
	p := largeProfile(b)
	idx, _ := PickSample(p, "")
	b.ReportAllocs()
	var d *DiffNode
	for b.Loop() {
		var err error
		if d, err = Diff(p, p, idx, idx, 0.9); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	var count func(*DiffNode)
	count = func(x *DiffNode) {
		n++
		for _, c := range x.Children {
			count(c)
		}
	}
	count(d)
	b.ReportMetric(float64(n), "nodes")
}

func TestDiffProfileWithoutPeriodType(t *testing.T) {
	a, b := randomProfile(3, false), randomProfile(4, false)
	dp, err := DiffProfile(a, b, 2)
	if err != nil {
		t.Fatal(err)
	}
	ta, _ := total(a, 0)
	tb, _ := total(b, 0)
	scaled := a.Copy()
	scaled.Scale(2)
	ts, _ := total(scaled, 0)
	if got, _ := total(dp, 0); got != tb-ts {
		t.Errorf("diff total = %d, want %d − 2×%d (rounded per sample: %d)", got, tb, ta, tb-ts)
	}
	if a.PeriodType != nil || b.PeriodType != nil {
		t.Errorf("inputs modified: period types %v %v", a.PeriodType, b.PeriodType)
	}
	withPeriod := randomProfile(5, false)
	withPeriod.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	if _, err := DiffProfile(a, withPeriod, 1); err == nil || !strings.Contains(err.Error(), "incompatible period types") {
		t.Errorf("mismatched period types: got %v", err)
	}
	broken := randomProfile(6, false)
	broken.Sample[0].Value = nil
	if _, err := DiffProfile(broken, b, 1); err == nil || !strings.Contains(err.Error(), "base") {
		t.Errorf("invalid base: got %v", err)
	}
}

func TestDiffCompact(t *testing.T) {
	d, err := Diff(fixtureGoCPU(false), fixtureGoCPU(true), 1, 1, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Compact()
	if c.Stride != 6 || len(c.Nodes)%6 != 0 || c.Names[0] != "root" {
		t.Fatalf("stride %d, %d integers, names[0] %q", c.Stride, len(c.Nodes), c.Names[0])
	}
	// Decode without recursion, as the browser does.
	type open struct {
		n    *DiffNode
		left int64
	}
	var stack []open
	var root *DiffNode
	for i := 0; i < len(c.Nodes); i += 6 {
		q := c.Nodes[i : i+6]
		n := &DiffNode{Name: c.Names[int(q[0])], Value: q[1], Self: q[2], Base: q[3], BaseSelf: q[4]}
		if len(stack) == 0 {
			root = n
		} else {
			top := &stack[len(stack)-1]
			top.n.Children = append(top.n.Children, n)
			top.left--
		}
		stack = append(stack, open{n, int64(q[5])})
		for len(stack) > 0 && stack[len(stack)-1].left == 0 {
			stack = stack[:len(stack)-1]
		}
	}
	if g, w := mustJSON(t, root), mustJSON(t, d); !bytes.Equal(g, w) {
		t.Errorf("decoded diff differs:\n got %s\nwant %s", g, w)
	}
	if got := (*DiffNode)(nil).Compact(); got.Stride != 6 || len(got.Nodes) != 0 {
		t.Errorf("nil.Compact() = %+v", got)
	}
}

// TestTopChangesExtremes: each profile's sums stay within int64 (uploads
// are checked), but the change between a diff profile's most negative
// values and another's most positive ones would not: as a float it keeps
// its sign rather than wrapping into a change of the wrong sign.
func TestTopChangesExtremes(t *testing.T) {
	mk := func(v int64) *profile.Profile {
		fn := &profile.Function{ID: 1, Name: "main.f"}
		loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
		return &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
			Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
			Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{v}}}}
	}
	for _, tc := range []struct {
		base, target int64
		want         float64
	}{
		{math.MinInt64 + 1, math.MaxInt64, 0x1p64},
		{math.MaxInt64, math.MinInt64 + 1, -0x1p64},
		{-5, 7, 12},
	} {
		ch := TopChanges(mk(tc.base), mk(tc.target), 0, 0, 1, 0)
		if len(ch) != 1 || ch[0].DeltaFlat != tc.want || ch[0].DeltaCum != tc.want {
			t.Errorf("%d → %d: %+v, want a change of %v", tc.base, tc.target, ch, tc.want)
		}
	}
}

// near: equal up to float rounding of sums in another order.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
