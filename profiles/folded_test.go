package profiles

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/testutil/golden"
)

func TestParseFolded(t *testing.T) {
	in := "a;b;c 3\n# comment\n\na;b 2\na;b;c 4\nx y;a 1\n"
	p, err := ParseFolded(strings.NewReader(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Sample); got != 3 {
		t.Fatalf("got %d samples, want 3 (duplicate stacks add up)", got)
	}
	// One Function and Location per distinct frame, in order of appearance.
	var fns []string
	for i, f := range p.Function {
		fns = append(fns, f.Name)
		if f.ID != uint64(i+1) || p.Location[i].ID != uint64(i+1) || p.Location[i].Line[0].Function != f {
			t.Errorf("function %d (%s): IDs or location out of step", i, f.Name)
		}
	}
	if got, want := strings.Join(fns, "|"), "a|b|c|x y"; got != want {
		t.Errorf("functions = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		leafFirst string
		count     int64
	}{{"c|b|a", 7}, {"b|a", 2}, {"a|x y", 1}} {
		var found bool
		for _, s := range p.Sample {
			var names []string
			for _, l := range s.Location {
				names = append(names, l.Line[0].Function.Name)
			}
			if strings.Join(names, "|") == tc.leafFirst {
				found = true
				if s.Value[0] != tc.count || s.Value[1] != tc.count*int64(10*time.Millisecond) {
					t.Errorf("%s: values %v, want [%d %d]", tc.leafFirst, s.Value, tc.count, tc.count*int64(10*time.Millisecond))
				}
			}
		}
		if !found {
			t.Errorf("no sample with locations (leaf first) %s", tc.leafFirst)
		}
	}
	if p.DefaultSampleType != "cpu" || p.Period != int64(10*time.Millisecond) ||
		p.PeriodType.Type != "cpu" || p.PeriodType.Unit != "nanoseconds" ||
		p.SampleType[0].Type != "samples" || p.SampleType[0].Unit != "count" ||
		p.SampleType[1].Type != "cpu" || p.SampleType[1].Unit != "nanoseconds" {
		t.Errorf("types: default %q period %d %v sample types %v %v", p.DefaultSampleType, p.Period, p.PeriodType, p.SampleType[0], p.SampleType[1])
	}
	if err := p.CheckValid(); err != nil {
		t.Errorf("CheckValid: %v", err)
	}
	if Kind(p) != "cpu" {
		t.Errorf("Kind = %q, want cpu", Kind(p))
	}

	// A 99 Hz period.
	p, err = ParseFolded(strings.NewReader("a 5\n"), time.Second/99)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Sample[0].Value[1], 5*int64(time.Second/99); got != want || p.Period != int64(time.Second/99) {
		t.Errorf("cpu = %d period %d, want %d, %d", got, p.Period, want, int64(time.Second/99))
	}
}

func TestParseFoldedErrors(t *testing.T) {
	long := strings.Repeat("x", MaxFoldedLineBytes+1)
	deep := strings.Repeat("f;", MaxFoldedFrames) + "leaf 1"
	for _, tc := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"no count", "a;b 1\na;b\n", 2, `"a;b" has no count`},
		{"bad count", "a;b x\n", 1, `count "x" is not a non-negative integer`},
		{"negative", "\n\na;b -3\n", 3, `count "-3" is not`},
		{"plus sign", "a +3\n", 1, `count "+3" is not`},
		{"fraction", "a 1.5\n", 1, `count "1.5" is not`},
		{"huge", "a 99999999999999999999\n", 1, "below 2^63"},
		{"overflow ns", "a 922337203686\n", 1, "counts add up to more than"},
		{"total overflow", "a 922337203684\nb 922337203684\n", 2, "counts add up to more than"},
		{"empty frame", "a;;b 1\n", 1, "frame 2 is empty"},
		{"trailing semicolon", "a;b; 1\n", 1, "frame 3 is empty"},
		{"no frames", "  7\n", 1, "no frames before the count"},
		{"only comments", "# nothing\n\n", 2, "no stacks"},
		{"empty", "", 0, "no stacks"},
		{"too long", "a 1\n" + long + " 1\n", 2, "line longer than 1048576 bytes"},
		{"too deep", deep + "\n", 1, "more than the limit of 10000"},
	} {
		_, err := ParseFolded(strings.NewReader(tc.in), 0)
		var fe *FoldedError
		if !errors.As(err, &fe) {
			t.Errorf("%s: got %v, want a *FoldedError", tc.name, err)
			continue
		}
		if fe.Line != tc.line || !strings.Contains(fe.Error(), tc.want) {
			t.Errorf("%s: got %q (line %d), want line %d and %q", tc.name, fe.Error(), fe.Line, tc.line, tc.want)
		}
		if !errors.Is(err, ErrNotProfile) {
			t.Errorf("%s: errors.Is(err, ErrNotProfile) = false", tc.name)
		}
	}
	if _, err := ParseFolded(strings.NewReader("a 1"), -time.Second); err == nil {
		t.Error("negative period accepted")
	}
}

func TestParseFoldedLineLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10M lines")
	}
	// Blank lines count: 10,000,001 of them exceed the limit.
	r := strings.NewReader("a 1\n" + strings.Repeat("\n", MaxFoldedLines))
	_, err := ParseFolded(r, 0)
	var fe *FoldedError
	if !errors.As(err, &fe) || fe.Line != MaxFoldedLines+1 {
		t.Errorf("got %v, want a line-limit error at line %d", err, MaxFoldedLines+1)
	}
}

func TestFoldedRoundTrip(t *testing.T) {
	want, err := os.ReadFile("testdata/roundtrip.folded")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"testdata/roundtrip.folded", "testdata/messy.folded"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseFolded(bytes.NewReader(data), 0)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var buf bytes.Buffer
		if err := WriteFolded(&buf, p, 0); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != string(want) {
			t.Errorf("%s: WriteFolded(ParseFolded) =\n%s\nwant\n%s", file, got, want)
		}
	}
}

func TestWriteFoldedFromPprof(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFolded(&buf, fixtureGoCPU(false), 0); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "go-cpu-base.folded", buf.String())
	// Folding the stacks back gives the same flame graph.
	p, err := ParseFolded(bytes.NewReader(buf.Bytes()), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, BuildTree(p, 1)), mustJSON(t, BuildTree(fixtureGoCPU(false), 1)); !bytes.Equal(g, w) {
		t.Errorf("tree of the folded stacks differs:\n got %s\nwant %s", g, w)
	}

	// Names that would break the format, negative values, bad indexes.
	fn := &profile.Function{ID: 1, Name: "odd;name\nhere"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	odd := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function:   []*profile.Function{fn},
		Location:   []*profile.Location{loc},
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{2}}, {Value: []int64{1}}},
	}
	buf.Reset()
	if err := WriteFolded(&buf, odd, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "[unknown] 1\nodd_name_here 2\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	odd.Sample[0].Value[0] = -2
	if err := WriteFolded(&buf, odd, 0); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative value: got %v", err)
	}
	if err := WriteFolded(&buf, odd, 1); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("bad index: got %v", err)
	}
}

func FuzzParseFolded(f *testing.F) {
	for _, file := range []string{"testdata/roundtrip.folded", "testdata/messy.folded", "testdata/java-io.folded"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a;b 1\n"))
	f.Add([]byte("a b c;d e 12\r\n# x\n\n"))
	f.Add([]byte("a;;b 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseFolded(bytes.NewReader(data), 0)
		if err != nil {
			var fe *FoldedError
			if !errors.As(err, &fe) || !errors.Is(err, ErrNotProfile) {
				t.Fatalf("error %v is not a *FoldedError", err)
			}
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		tc, _ := total(p, 0)
		tn, _ := total(p, 1)
		if tn != tc*p.Period {
			t.Fatalf("cpu total %d, want %d × %d", tn, tc, p.Period)
		}
		var buf bytes.Buffer
		if err := WriteFolded(&buf, p, 0); err != nil {
			t.Fatal(err)
		}
		if tc == 0 {
			if buf.Len() != 0 {
				t.Fatalf("all counts 0 but wrote %q", buf.String())
			}
			return
		}
		q, err := ParseFolded(bytes.NewReader(buf.Bytes()), 0)
		if err != nil {
			t.Fatalf("WriteFolded output %q does not parse: %v", buf.String(), err)
		}
		if qc, _ := total(q, 0); qc != tc {
			t.Fatalf("round trip total %d, want %d", qc, tc)
		}
		if !equalTrees(BuildTree(q, 0), BuildTree(p, 0)) {
			t.Fatalf("round trip changed the tree of %q", data)
		}
		var again bytes.Buffer
		if err := WriteFolded(&again, q, 0); err != nil || again.String() != buf.String() {
			t.Fatalf("WriteFolded not stable: %q then %q (%v)", buf.String(), again.String(), err)
		}
	})
}

// equalTrees compares two trees without recursion (fuzzed stacks are up to
// 10,000 frames deep, too deep to compare as indented JSON).
func equalTrees(a, b *Node) bool {
	type pair struct{ a, b *Node }
	stack := []pair{{a, b}}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.a.Name != x.b.Name || x.a.Value != x.b.Value || x.a.Self != x.b.Self || len(x.a.Children) != len(x.b.Children) {
			return false
		}
		for i := range x.a.Children {
			stack = append(stack, pair{x.a.Children[i], x.b.Children[i]})
		}
	}
	return true
}
