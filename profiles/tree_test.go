package profiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// fixtureGoCPU builds a small Go CPU profile with known stacks: inlined
// frames (three functions in one Location), a function reached through two
// Locations, recursion, a second root (GC), labels that keep equal stacks
// apart, and write (single and vectored) and read paths. target selects the
// second version, where writes moved from write to writev, main.walk
// vanished and main.compress appeared.
func fixtureGoCPU(target bool) *profile.Profile {
	const period = 10_000_000 // 10 ms
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x800000, File: "/usr/local/bin/kbench-fixture", HasFunctions: true}
	names := []string{
		1: "runtime.main", 2: "main.main", 3: "main.produce", 4: "main.encodeBatch",
		5: "main.encodeRecord", 6: "runtime.memmove", 7: "net.(*conn).Write", 8: "net.(*netFD).Write",
		9: "internal/poll.(*FD).Write", 10: "internal/poll.ignoringEINTRIO", 11: "syscall.Write",
		12: "syscall.write", 13: "syscall.Syscall", 14: "net.Buffers.WriteTo", 15: "net.(*netFD).writeBuffers",
		16: "internal/poll.(*FD).Writev", 17: "internal/poll.writev", 18: "main.consume",
		19: "net.(*conn).Read", 20: "internal/poll.(*FD).Read", 21: "syscall.Read", 22: "syscall.read",
		23: "main.walk", 24: "runtime.gcBgMarkWorker", 25: "runtime.gcDrain", 26: "main.compress",
		27: "runtime.mallocgc",
	}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        period,
		TimeNanos:     1_700_000_000_000_000_000,
		DurationNanos: 10_000_000_000,
		Mapping:       []*profile.Mapping{m},
	}
	fn := make([]*profile.Function, len(names))
	for id := 1; id < len(names); id++ {
		fn[id] = &profile.Function{ID: uint64(id), Name: names[id], SystemName: names[id], Filename: "fixture.go", StartLine: int64(10 * id)}
		p.Function = append(p.Function, fn[id])
	}
	// Each location: function IDs innermost first (Line[0] innermost).
	locFuncs := [][]int{
		1: {1}, 2: {2}, 3: {2}, 4: {2}, 5: {5, 4, 3}, 6: {6}, 7: {3}, 8: {7}, 9: {8}, 10: {10, 9},
		11: {11}, 12: {12}, 13: {13}, 14: {3}, 15: {14}, 16: {15}, 17: {16}, 18: {17}, 19: {18},
		20: {19}, 21: {10, 20}, 22: {21}, 23: {22}, 24: {23}, 25: {23}, 26: {24}, 27: {25}, 28: {3},
		29: {26}, 30: {27}, 31: {3},
	}
	loc := make([]*profile.Location, len(locFuncs))
	for id := 1; id < len(locFuncs); id++ {
		l := &profile.Location{ID: uint64(id), Mapping: m, Address: 0x401000 + uint64(id)*0x10}
		for i, f := range locFuncs[id] {
			l.Line = append(l.Line, profile.Line{Function: fn[f], Line: int64(10*f + id + i)})
		}
		loc[id] = l
		p.Location = append(p.Location, l)
	}
	add := func(count int64, label string, ids ...int) {
		if count == 0 {
			return
		}
		s := &profile.Sample{Value: []int64{count, count * period}}
		for _, id := range ids {
			s.Location = append(s.Location, loc[id])
		}
		if label != "" {
			s.Label = map[string][]string{"conn": {label}}
		}
		p.Sample = append(p.Sample, s)
	}
	pick := func(base, tgt int64) int64 {
		if target {
			return tgt
		}
		return base
	}
	add(pick(30, 25), "", 6, 5, 2, 1)                     // memmove under inlined encode
	add(pick(8, 8), "", 6, 28, 2, 1)                      // memmove, produce through another location
	add(pick(50, 10), "a", 13, 12, 11, 10, 9, 8, 7, 2, 1) // write(2)
	add(pick(1, 1), "b", 13, 12, 11, 10, 9, 8, 7, 2, 1)   // same stack, other label
	add(pick(4, 1), "", 10, 9, 8, 7, 2, 1)                // self in (*FD).Write's inlined callee
	add(pick(20, 60), "", 13, 18, 17, 16, 15, 14, 2, 1)   // writev(2)
	add(pick(12, 12), "", 13, 23, 22, 21, 20, 19, 3, 1)   // read(2)
	add(pick(7, 0), "", 25, 24, 25, 24, 4, 1)             // recursion
	add(pick(5, 6), "", 27, 26)                           // GC, a second root
	add(pick(3, 3), "c", 6, 5, 2, 1)                      // same stack as the first, other label
	add(pick(6, 5), "", 5, 2, 1)                          // self in an inlined frame
	add(pick(2, 2), "", 30, 5, 2, 1)                      // mallocgc under inlined encode
	add(pick(0, 15), "", 29, 31, 2, 1)                    // new in target
	add(pick(0, 4), "", 30, 29, 31, 2, 1)                 // new in target
	return p
}

// The fixtures live in testdata so that go tool pprof can read them; -update
// rewrites them from fixtureGoCPU (and every golden file from the code).
const (
	fixtureBase   = "testdata/go-cpu-base.pb.gz"
	fixtureTarget = "testdata/go-cpu-target.pb.gz"
)

func TestFixturesMatchCode(t *testing.T) {
	for _, tc := range []struct {
		file   string
		target bool
	}{{fixtureBase, false}, {fixtureTarget, true}} {
		p := fixtureGoCPU(tc.target)
		if err := p.CheckValid(); err != nil {
			t.Fatalf("%s: built profile invalid: %v", tc.file, err)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if golden.Updating() {
			if err := os.WriteFile(tc.file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := profile.ParseData(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got := loadFixture(t, tc.file)
		if got.String() != want.String() {
			t.Errorf("%s differs from fixtureGoCPU(%v); run go test -run TestFixturesMatchCode -update", tc.file, tc.target)
		}
	}
}

func loadFixture(t testing.TB, file string) *profile.Profile {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// runPprof runs go tool pprof and returns its standard output. It skips the
// test when the go command is unavailable.
func runPprof(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command unavailable: %v", err)
	}
	cmd := exec.Command(goBin, append([]string{"tool", "pprof", "-symbolize=none"}, args...)...)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

type flatCumRow struct {
	name      string
	flat, cum int64
}

// parseTop reads the rows of pprof's -top report. Values must be plain
// integers, optionally with a unit suffix such as "ns".
func parseTop(t *testing.T, out string) []flatCumRow {
	t.Helper()
	var rows []flatCumRow
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if !inTable {
			inTable = len(f) >= 5 && f[0] == "flat" && f[1] == "flat%"
			continue
		}
		if len(f) < 6 {
			continue
		}
		name := strings.Join(f[5:], " ")
		name = strings.TrimSuffix(strings.TrimSuffix(name, " (inline)"), " (partial-inline)")
		rows = append(rows, flatCumRow{name, parsePprofInt(t, f[0]), parsePprofInt(t, f[3])})
	}
	if !inTable {
		t.Fatalf("no -top table in pprof output:\n%s", out)
	}
	return rows
}

func parsePprofInt(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(strings.TrimRight(s, "abcdefghijklmnopqrstuvwxyzµ"), 10, 64)
	if err != nil {
		t.Fatalf("pprof value %q is not an exact integer: %v", s, err)
	}
	return v
}

// treeFunctions derives pprof's per-function flat and cum from a tree: flat
// adds up Self of every node of the function, cum adds up Value of the
// outermost node of the function on each path (so recursion counts once).
func treeFunctions(root *Node) map[string]flatCum {
	out := map[string]flatCum{}
	open := map[string]int{}
	var walk func(n *Node)
	walk = func(n *Node) {
		fc := out[n.Name]
		fc.flat += float64(n.Self)
		if open[n.Name] == 0 {
			fc.cum += float64(n.Value)
		}
		out[n.Name] = fc
		open[n.Name]++
		for _, c := range n.Children {
			walk(c)
		}
		open[n.Name]--
	}
	for _, c := range root.Children {
		walk(c)
	}
	return out
}

func TestBuildTreeMatchesPprofTop(t *testing.T) {
	for _, file := range []string{fixtureBase, fixtureTarget} {
		p := loadFixture(t, file)
		for _, st := range []struct{ index, unitArg string }{{"samples", ""}, {"cpu", "-unit=ns"}} {
			t.Run(file+"/"+st.index, func(t *testing.T) {
				idx, err := PickSample(p, st.index)
				if err != nil {
					t.Fatal(err)
				}
				got := treeFunctions(BuildTree(p, idx))
				args := []string{"-top", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0", "-sample_index=" + st.index}
				if st.unitArg != "" {
					args = append(args, st.unitArg)
				}
				rows := parseTop(t, runPprof(t, append(args, file)...))
				if len(rows) == 0 {
					t.Fatal("pprof listed no functions")
				}
				seen := map[string]bool{}
				for _, r := range rows {
					seen[r.name] = true
					if g := got[r.name]; g.flat != float64(r.flat) || g.cum != float64(r.cum) {
						t.Errorf("%s: got flat %v cum %v, want (pprof) flat %d cum %d", r.name, g.flat, g.cum, r.flat, r.cum)
					}
				}
				for name, g := range got {
					if !seen[name] && (g.flat != 0 || g.cum != 0) {
						t.Errorf("%s: got flat %v cum %v, pprof does not list it", name, g.flat, g.cum)
					}
				}
			})
		}
	}
}

// parseTraces reads pprof's -traces report: one stack per trace, leaf first,
// with the trace's value on its first line.
func parseTraces(t *testing.T, out string) (stacks [][]string, values []int64) {
	t.Helper()
	var cur []string
	var val int64
	flush := func() {
		if cur != nil {
			stacks = append(stacks, cur)
			values = append(values, val)
		}
		cur = nil
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		if len(line) < 13 || line[10:13] != "   " {
			continue // header and label lines
		}
		if v := strings.TrimSpace(line[:10]); v != "" {
			val = parsePprofInt(t, v)
		}
		name := strings.TrimSuffix(line[13:], " (inline)")
		cur = append(cur, name)
	}
	flush()
	return stacks, values
}

func TestBuildTreeMatchesPprofTraces(t *testing.T) {
	p := loadFixture(t, fixtureBase)
	stacks, values := parseTraces(t, runPprof(t, "-traces", "-sample_index=samples", fixtureBase))
	if len(stacks) != len(p.Sample) {
		t.Fatalf("pprof printed %d traces, want one per sample (%d)", len(stacks), len(p.Sample))
	}
	// Build the expected tree from pprof's own expansion of the stacks.
	want := &Node{Name: "root"}
	for i, st := range stacks {
		n := want
		n.Value += values[i]
		for j := len(st) - 1; j >= 0; j-- {
			var next *Node
			for _, c := range n.Children {
				if c.Name == st[j] {
					next = c
				}
			}
			if next == nil {
				next = &Node{Name: st[j]}
				n.Children = append(n.Children, next)
				slices.SortFunc(n.Children, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
			}
			next.Value += values[i]
			n = next
		}
		n.Self += values[i]
	}
	got := BuildTree(p, 0)
	if g, w := mustJSON(t, got), mustJSON(t, want); !bytes.Equal(g, w) {
		t.Errorf("BuildTree differs from the tree of pprof -traces:\n got %s\nwant %s", g, w)
	}
}

func TestBuildTreeGolden(t *testing.T) {
	p := loadFixture(t, fixtureBase)
	idx, err := PickSample(p, "")
	if err != nil {
		t.Fatal(err)
	}
	root := BuildTree(p, idx)
	golden.Check(t, "go-cpu-base.tree.json", string(mustJSON(t, root)))
	golden.Check(t, "go-cpu-base.compact.json", string(mustJSON(t, root.Compact())))
}

// checkInvariants checks Value = Self + Σ children's Value and name order.
func checkInvariants(t *testing.T, n *Node, path string) {
	t.Helper()
	sum := n.Self
	for i, c := range n.Children {
		sum += c.Value
		if i > 0 && n.Children[i-1].Name >= c.Name {
			t.Errorf("%s: children %q and %q out of order or duplicated", path, n.Children[i-1].Name, c.Name)
		}
		checkInvariants(t, c, path+";"+c.Name)
	}
	if sum != n.Value {
		t.Errorf("%s: value %d, want self + children = %d", path, n.Value, sum)
	}
}

func TestBuildTree(t *testing.T) {
	p := fixtureGoCPU(false)
	root := BuildTree(p, 1)
	checkInvariants(t, root, "root")
	if got, want := root.Value, int64(148*10_000_000); got != want {
		t.Errorf("root value = %d, want the total %d", got, want)
	}
	find := func(path ...string) *Node {
		n := root
		for _, name := range path {
			var next *Node
			for _, c := range n.Children {
				if c.Name == name {
					next = c
				}
			}
			if next == nil {
				t.Fatalf("no node %v", path)
			}
			n = next
		}
		return n
	}
	for _, tc := range []struct {
		path        []string
		value, self int64
	}{
		// Inlined frames expand outermost first; the two locations of
		// main.produce merge into one node.
		{[]string{"runtime.main", "main.main", "main.produce"}, 124, 0},
		{[]string{"runtime.main", "main.main", "main.produce", "main.encodeBatch", "main.encodeRecord"}, 41, 6},
		{[]string{"runtime.main", "main.main", "main.produce", "main.encodeBatch", "main.encodeRecord", "runtime.memmove"}, 33, 33},
		{[]string{"runtime.main", "main.main", "main.produce", "runtime.memmove"}, 8, 8},
		// Samples with different labels but the same stack add up.
		{[]string{"runtime.main", "main.main", "main.produce", "net.(*conn).Write", "net.(*netFD).Write", "internal/poll.(*FD).Write", "internal/poll.ignoringEINTRIO"}, 55, 4},
		// The same function under different parents stays apart.
		{[]string{"runtime.main", "main.main", "main.consume", "net.(*conn).Read", "internal/poll.(*FD).Read", "internal/poll.ignoringEINTRIO"}, 12, 0},
		// Recursion nests.
		{[]string{"runtime.main", "main.main", "main.walk", "main.walk", "main.walk", "main.walk"}, 7, 7},
		{[]string{"runtime.gcBgMarkWorker", "runtime.gcDrain"}, 5, 5},
	} {
		n := find(tc.path...)
		if n.Value != tc.value*10_000_000 || n.Self != tc.self*10_000_000 {
			t.Errorf("%v: got value %d self %d, want %d, %d", tc.path, n.Value, n.Self, tc.value*10_000_000, tc.self*10_000_000)
		}
	}
}

func TestBuildTreeEdgeCases(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.f"}
	noName := &profile.Function{ID: 2, SystemName: "_ZN3fooEv"}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}},
		Function:   []*profile.Function{fn, noName},
	}
	lf := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	lAddr := &profile.Location{ID: 7, Address: 0x4a1b2c}
	lSys := &profile.Location{ID: 3, Line: []profile.Line{{Function: noName}}}
	p.Location = []*profile.Location{lf, lAddr, lSys}
	p.Sample = []*profile.Sample{
		{Location: []*profile.Location{lAddr, lf}, Value: []int64{100}},
		{Location: []*profile.Location{lSys, lf}, Value: []int64{0}}, // freed: left out
		{Location: []*profile.Location{lSys}, Value: []int64{-5}},    // negative values add up too
		{Value: []int64{9}}, // no stack: self of the root
	}
	got := string(mustJSON(t, BuildTree(p, 0)))
	want := `{
  "name": "root",
  "value": 104,
  "self": 9,
  "children": [
    {
      "name": "_ZN3fooEv",
      "value": -5,
      "self": -5
    },
    {
      "name": "main.f",
      "value": 100,
      "self": 0,
      "children": [
        {
          "name": "0x4a1b2c",
          "value": 100,
          "self": 100
        }
      ]
    }
  ]
}
`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	for _, idx := range []int{-1, 1, 5} {
		if r := BuildTree(p, idx); r.Name != "root" || r.Value != 0 || len(r.Children) != 0 {
			t.Errorf("BuildTree(index %d) = %+v, want an empty root", idx, r)
		}
	}
}

func TestPickSample(t *testing.T) {
	cpu := fixtureGoCPU(false)
	heap := &profile.Profile{SampleType: []*profile.ValueType{
		{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
		{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
	}}
	allocs := &profile.Profile{SampleType: heap.SampleType, DefaultSampleType: "alloc_space"}
	for _, tc := range []struct {
		name    string
		p       *profile.Profile
		sample  string
		want    int
		wantErr string
	}{
		{"cpu default is the last", cpu, "", 1, ""},
		{"cpu samples", cpu, "samples", 0, ""},
		{"heap default is inuse_space", heap, "", 3, ""},
		{"allocs default from DefaultSampleType", allocs, "", 1, ""},
		{"named", allocs, "inuse_objects", 2, ""},
		{"unknown lists the available", cpu, "alloc_space", 0, `sample type "alloc_space" not in the profile; available: samples, cpu`},
		{"no sample types", &profile.Profile{}, "", 0, "no sample types"},
	} {
		got, err := PickSample(tc.p, tc.sample)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got != tc.want:
			t.Errorf("%s: got index %d, want %d", tc.name, got, tc.want)
		}
	}
	if got, want := SampleTypes(cpu), []SampleType{{"samples", "count", 0}, {"cpu", "nanoseconds", 1}}; !slices.Equal(got, want) {
		t.Errorf("SampleTypes = %v, want %v", got, want)
	}
}

// decodeCompact rebuilds a tree from the Compact encoding the way the
// browser does, to pin the documented format down.
func decodeCompact(t *testing.T, c Compact) *Node {
	t.Helper()
	if len(c.Nodes)%4 != 0 {
		t.Fatalf("len(nodes) = %d, not a multiple of 4", len(c.Nodes))
	}
	pos := 0
	var read func() *Node
	read = func() *Node {
		if pos+4 > len(c.Nodes) {
			t.Fatalf("truncated at %d", pos)
		}
		q := c.Nodes[pos : pos+4]
		pos += 4
		n := &Node{Name: c.Names[q[0]], Value: q[1], Self: q[2]}
		for i := int64(0); i < q[3]; i++ {
			n.Children = append(n.Children, read())
		}
		return n
	}
	root := read()
	if pos != len(c.Nodes) {
		t.Fatalf("%d trailing integers", len(c.Nodes)-pos)
	}
	return root
}

func TestCompactRoundTrip(t *testing.T) {
	root := BuildTree(fixtureGoCPU(true), 1)
	c := root.Compact()
	if c.Names[0] != "root" {
		t.Errorf("names[0] = %q, want root", c.Names[0])
	}
	seen := map[string]bool{}
	for _, n := range c.Names {
		if seen[n] {
			t.Errorf("name %q interned twice", n)
		}
		seen[n] = true
	}
	if g, w := mustJSON(t, decodeCompact(t, c)), mustJSON(t, root); !bytes.Equal(g, w) {
		t.Errorf("decoded compact tree differs:\n got %s\nwant %s", g, w)
	}
	if got := (*Node)(nil).Compact(); len(got.Names) != 0 || len(got.Nodes) != 0 || got.Names == nil {
		t.Errorf("nil.Compact() = %#v, want empty non-nil slices", got)
	}
}

// largeProfile loads the public 240 s CPU profile (../shared/public-data
// beside the repository), or skips.
func largeProfile(b *testing.B) *profile.Profile {
	b.Helper()
	data, err := os.ReadFile("../../shared/public-data/pprof-large-cpu.pb.gz")
	if err != nil {
		b.Skipf("large profile unavailable: %v", err)
	}
	p, err := Load(data)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func countNodes(n *Node) int {
	c := 1
	for _, x := range n.Children {
		c += countNodes(x)
	}
	return c
}

func BenchmarkBuildTreeLarge(b *testing.B) {
	p := largeProfile(b)
	idx, _ := PickSample(p, "")
	b.ReportAllocs()
	var root *Node
	for b.Loop() {
		root = BuildTree(p, idx)
	}
	b.ReportMetric(float64(countNodes(root)), "nodes")
}

func BenchmarkCompactLarge(b *testing.B) {
	p := largeProfile(b)
	idx, _ := PickSample(p, "")
	root := BuildTree(p, idx)
	b.ReportAllocs()
	var c Compact
	for b.Loop() {
		c = root.Compact()
	}
	b.ReportMetric(float64(len(c.Nodes)/4), "nodes")
	b.ReportMetric(float64(len(c.Names)), "names")
}

// naiveTree is the obvious, slow construction BuildTree must agree with.
func naiveTree(p *profile.Profile, idx int) *Node {
	root := &Node{Name: "root"}
	for _, s := range p.Sample {
		v := s.Value[idx]
		if v == 0 {
			continue
		}
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			if len(l.Line) == 0 {
				names = append(names, fmt.Sprintf("0x%x", l.Address))
			}
			for j := len(l.Line) - 1; j >= 0; j-- {
				names = append(names, l.Line[j].Function.Name)
			}
		}
		n := root
		n.Value += v
		for _, name := range names {
			i := slices.IndexFunc(n.Children, func(c *Node) bool { return c.Name == name })
			if i < 0 {
				n.Children = append(n.Children, &Node{Name: name})
				i = len(n.Children) - 1
			}
			n = n.Children[i]
			n.Value += v
		}
		n.Self += v
	}
	var sortAll func(*Node)
	sortAll = func(n *Node) {
		slices.SortFunc(n.Children, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
		for _, c := range n.Children {
			sortAll(c)
		}
	}
	sortAll(root)
	return root
}

// randomProfile builds a profile with wide fan-out (more children than the
// list walk handles), inlined frames, lineless locations and, when sparse,
// location IDs far apart (the stacker's map fallback).
func randomProfile(seed uint64, sparse bool) *profile.Profile {
	rng := rand.New(rand.NewPCG(seed, 42))
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	for i := 0; i < 40; i++ {
		p.Function = append(p.Function, &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("pkg.f%02d", i)})
	}
	for i := 0; i < 60; i++ {
		id := uint64(i + 1)
		if sparse {
			id = uint64(i+1) << 33
		}
		l := &profile.Location{ID: id, Address: 0x1000 + uint64(i)}
		if i%17 != 5 { // a few locations have no lines
			for range 1 + rng.IntN(3) {
				l.Line = append(l.Line, profile.Line{Function: p.Function[rng.IntN(len(p.Function))]})
			}
		}
		p.Location = append(p.Location, l)
	}
	for range 400 {
		s := &profile.Sample{Value: []int64{int64(rng.IntN(5))}}
		for range 1 + rng.IntN(6) {
			s.Location = append(s.Location, p.Location[rng.IntN(len(p.Location))])
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func TestBuildTreeMatchesNaive(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, sparse := range []bool{false, true} {
			p := randomProfile(seed, sparse)
			got, want := BuildTree(p, 0), naiveTree(p, 0)
			if !equalTrees(got, want) {
				t.Fatalf("seed %d sparse %v: BuildTree differs from the naive tree", seed, sparse)
			}
			checkInvariants(t, got, "root")
			if len(got.Children) <= wideFanout {
				t.Fatalf("seed %d: root has %d children, the test needs more than %d", seed, len(got.Children), wideFanout)
			}
			// A diff of a profile with itself carries the same tree twice.
			d, err := Diff(p, p, 0, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			for path, n := range diffPaths(d, "root", nil) {
				if n.Value != n.Base || n.Self != n.BaseSelf {
					t.Fatalf("seed %d: %s: value %v self %v, base %v %v", seed, path, n.Value, n.Self, n.Base, n.BaseSelf)
				}
			}
		}
	}
}

func TestScaleInt(t *testing.T) {
	for _, tc := range []struct {
		v     int64
		scale float64
		want  int64
	}{
		{10, 0.9, 9}, {7, 0.9, 6}, {5, 0.5, 3}, {-5, 0.5, -3}, {1, 0.4, 0},
		{math.MaxInt64, 2, math.MaxInt64}, {math.MinInt64, 2, math.MinInt64},
	} {
		if got := scaleInt(tc.v, tc.scale); got != tc.want {
			t.Errorf("scaleInt(%d, %v) = %d, want %d", tc.v, tc.scale, got, tc.want)
		}
	}
}
