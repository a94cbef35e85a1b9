package profiles

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// prunedTree: one wide path and 100 one-sample siblings under main.main,
// each with a deep stack of its own, and main.zz (after main.wide).
func prunedTree(t testing.TB) *Flat {
	t.Helper()
	var b strings.Builder
	b.WriteString("main.main;main.wide;main.work 10000\n")
	for i := range 100 {
		fmt.Fprintf(&b, "main.main;main.n%03d;main.deep;main.hidden%03d 1\n", i, i)
	}
	b.WriteString("main.main;main.zz;main.hidden007 1\n")
	p, err := ParseFolded(strings.NewReader(b.String()), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := PickSample(p, "samples")
	if err != nil {
		t.Fatal(err)
	}
	return NewFlat(BuildTree(p, idx))
}

type prunedRow struct {
	name              string // "" for a run
	value, third, kid int64
}

func rows(p Pruned) []prunedRow {
	var out []prunedRow
	for i := 0; i < len(p.Nodes); i += 4 {
		r := prunedRow{value: p.Nodes[i+1], third: p.Nodes[i+2], kid: p.Nodes[i+3]}
		if p.Nodes[i] >= 0 {
			r.name = p.Names[p.Nodes[i]]
		}
		out = append(out, r)
	}
	return out
}

func TestPrunedKeepsWhatIsWideEnough(t *testing.T) {
	f := prunedTree(t)
	if f.Frames() != 1+1+2+100*3+2 {
		t.Fatalf("frames = %d", f.Frames())
	}
	cases := []struct {
		name  string
		focus string
		width int
		want  []prunedRow
		sent  int
	}{
		// At 1000 px the 1-sample frames are 0.1 px: the 100 siblings
		// before main.wide form one run, main.zz another after it.
		{"root", "", 1000, []prunedRow{
			{"root", 10101, 0, 1}, {"main.main", 10101, 0, 3},
			{"", 100, 100, 0}, {"main.wide", 10000, 0, 1}, {"main.work", 10000, 10000, 0}, {"", 1, 1, 0},
		}, 4},
		// Wide enough for everything: no run.
		{"all", "", 20202, nil, f.Frames()},
		// Zoomed into main.n007 the chain keeps only the way down, the
		// siblings on either side are runs, and the subtree is whole.
		{"zoom", "main.main;main.n007", 1000, []prunedRow{
			{"root", 10101, 0, 1}, {"main.main", 10101, 0, 3}, {"", 7, 7, 0},
			{"main.n007", 1, 0, 1}, {"main.deep", 1, 0, 1}, {"main.hidden007", 1, 1, 0},
			{"", 10093, 94, 0},
		}, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := f.Pruned(SplitFocus(c.focus), c.width)
			if p.Sent != c.sent || p.Frames != f.Frames() || p.Focus != c.focus || p.FocusMissing || p.Width != c.width {
				t.Errorf("sent %d of %d, focus %q (missing %v), width %d; want %d sent, focus %q", p.Sent, p.Frames, p.Focus, p.FocusMissing, p.Width, c.sent, c.focus)
			}
			if c.want == nil {
				for _, r := range rows(p) {
					if r.name == "" {
						t.Fatalf("a run at a width where every frame is wide: %+v", rows(p))
					}
				}
				return
			}
			if got := rows(p); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("rows\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestPrunedFocusPaths(t *testing.T) {
	f := prunedTree(t)
	p := f.Pruned(SplitFocus("main.main;main.nope;x"), 500)
	if p.Focus != "main.main" || !p.FocusMissing {
		t.Errorf("missing frames: focus %q, missing %v; want main.main, true", p.Focus, p.FocusMissing)
	}
	if got := SplitFocus("a%3Bb;c%25d"); len(got) != 2 || got[0] != "a;b" || got[1] != "c%d" {
		t.Errorf("SplitFocus = %q", got)
	}
	if got := joinFocus([]string{"a;b", "c%d"}); got != "a%3Bb;c%25d" {
		t.Errorf("joinFocus = %q", got)
	}
	if p := f.Pruned(nil, 0); p.Width != 1 {
		t.Errorf("width 0 is cut at %d px, want 1", p.Width)
	}
}

// Match counts every frame, also those Pruned leaves out, and a match
// inside a match once.
func TestMatchSearchesEveryFrame(t *testing.T) {
	f := prunedTree(t)
	cases := []struct {
		re, focus string
		want      MatchTotals
	}{
		{"hidden007", "", MatchTotals{Total: 2, Zoom: 2, Count: 2}},
		{"hidden", "main.main;main.n007", MatchTotals{Total: 101, Zoom: 1, Count: 101, Focus: "main.main;main.n007"}},
		{"main\\.(deep|hidden)", "", MatchTotals{Total: 101, Zoom: 101, Count: 101}},
		{"n007", "main.main;main.n007;main.deep", MatchTotals{Total: 2, Zoom: 1, Count: 2, Focus: "main.main;main.n007;main.deep"}},
		{"nothing", "", MatchTotals{}},
	}
	for _, c := range cases {
		if got := f.Match(regexp.MustCompile(c.re), SplitFocus(c.focus)); got != c.want {
			t.Errorf("Match(%q, %q) = %+v, want %+v", c.re, c.focus, got, c.want)
		}
	}
}

// FuzzPruned: any focus path (outside input: the page's URL) and width
// give a well-formed answer: one tree whose child counts add up, whose
// runs have no children, and whose frames' widths cover their children.
func FuzzPruned(f *testing.F) {
	f.Add("main.main;main.n007", 1000)
	f.Add("", 1)
	f.Add("a%3Bb;%25;;", 70000)
	f.Add("main.main;main.wide;main.work;x", -5)
	tree := prunedTree(f)
	f.Fuzz(func(t *testing.T, focus string, width int) {
		p := tree.Pruned(SplitFocus(focus), width)
		if len(p.Nodes)%4 != 0 || len(p.Nodes) == 0 || p.Width < 1 || p.Width > MaxPruneWidth {
			t.Fatalf("malformed: %d integers, width %d", len(p.Nodes), p.Width)
		}
		// Walk the pre-order child counts: exactly one tree.
		open := []int64{1} // children left to read, the root's parent expects 1
		sent := 0
		for i := 0; i < len(p.Nodes); i += 4 {
			if len(open) == 0 {
				t.Fatalf("more than one tree at node %d", i/4)
			}
			open[len(open)-1]--
			ni, kids := p.Nodes[i], p.Nodes[i+3]
			if ni == PrunedRun {
				if kids != 0 || p.Nodes[i+2] < 1 {
					t.Fatalf("run at node %d: %v", i/4, p.Nodes[i:i+4])
				}
			} else {
				if ni < 0 || ni >= int64(len(p.Names)) {
					t.Fatalf("name index %d of %d", ni, len(p.Names))
				}
				sent++
			}
			open = append(open, kids)
			for len(open) > 0 && open[len(open)-1] == 0 {
				open = open[:len(open)-1]
			}
		}
		if len(open) != 0 || sent != p.Sent {
			t.Fatalf("unclosed subtrees %v, sent %d, counted %d", open, p.Sent, sent)
		}
		if got := SplitFocus(p.Focus); p.Focus != "" && joinFocus(got) != p.Focus {
			t.Fatalf("focus %q does not round-trip", p.Focus)
		}
	})
}
