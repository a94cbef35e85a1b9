package profiles

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

func foldedProfile(t testing.TB, folded string) (*profile.Profile, int) {
	t.Helper()
	p, err := ParseFolded(strings.NewReader(folded), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := PickSample(p, "samples")
	if err != nil {
		t.Fatal(err)
	}
	return p, idx
}

// prunedFolded: one wide path and 100 one-sample siblings under
// main.main, each with a deep stack of its own, and main.zz (after
// main.wide).
func prunedFolded() string {
	var b strings.Builder
	b.WriteString("main.main;main.wide;main.work 10000\n")
	for i := range 100 {
		fmt.Fprintf(&b, "main.main;main.n%03d;main.deep;main.hidden%03d 1\n", i, i)
	}
	b.WriteString("main.main;main.zz;main.hidden007 1\n")
	return b.String()
}

func prunedTree(t testing.TB, order Order) *Flat {
	t.Helper()
	p, idx := foldedProfile(t, prunedFolded())
	return NewFlat(BuildTree(p, idx), order)
}

// rowFrame is one frame of Rows decoded: its absolute left edge.
type rowFrame struct {
	name        string // "" for a folded run
	x, w, v, s  float64
	base, bself float64
}

func (r rowFrame) String() string {
	n := r.name
	if n == "" {
		n = "other"
	}
	if r.base != 0 || r.bself != 0 {
		return fmt.Sprintf("%s@%g+%g(%g/%g base %g/%g)", n, r.x, r.w, r.v, r.s, r.base, r.bself)
	}
	return fmt.Sprintf("%s@%g+%g(%g/%g)", n, r.x, r.w, r.v, r.s)
}

// decodeRows reads Rows as a page does: offsets to absolute edges.
func decodeRows(t testing.TB, r Rows) [][]rowFrame {
	t.Helper()
	var out [][]rowFrame
	for d, lv := range r.Levels {
		if len(lv)%r.Stride != 0 {
			t.Fatalf("row %d: %d numbers, stride %d", d, len(lv), r.Stride)
		}
		var row []rowFrame
		end := 0.0
		for i := 0; i < len(lv); i += r.Stride {
			if lv[i] < 0 {
				t.Fatalf("row %d: negative offset %v", d, lv[i])
			}
			f := rowFrame{x: end + lv[i], w: lv[i+1], v: lv[i+2], s: lv[i+3]}
			if r.Stride == DiffRowsStride {
				f.base, f.bself = lv[i+4], lv[i+5]
			}
			ni := int(lv[i+r.Stride-1])
			switch {
			case ni == OtherRun:
			case ni >= 0 && ni < len(r.Names):
				f.name = r.Names[ni]
			default:
				t.Fatalf("row %d: name index %d of %d", d, ni, len(r.Names))
			}
			end = f.x + f.w
			row = append(row, f)
		}
		out = append(out, row)
	}
	return out
}

func show(rows [][]rowFrame) string {
	var b strings.Builder
	for d, row := range rows {
		fmt.Fprintf(&b, "%d:", d)
		for _, f := range row {
			b.WriteString(" " + f.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestRowsKeepWhatIsWideEnough(t *testing.T) {
	f := prunedTree(t, OrderName)
	if f.Frames() != 1+1+2+100*3+2 {
		t.Fatalf("frames = %d", f.Frames())
	}
	cases := []struct {
		name  string
		zoom  string
		width int
		order Order
		want  string
		sent  int
	}{
		// At 1000 px the 1-sample frames are 0.1 px: the 100 siblings
		// before main.wide fold into one run, main.zz into another
		// after it; runs carry their total and how many frames they fold.
		{"root", "", 1000, OrderName, "0: root@0+10101(10101/0)\n1: main.main@0+10101(10101/0)\n" +
			"2: other@0+100(100/100) main.wide@100+10000(10000/0) other@10100+1(1/1)\n3: main.work@100+10000(10000/10000)\n", 4},
		// Wide enough for everything: no run.
		{"all", "", 20202, OrderName, "", f.Frames()},
		// Zoomed into main.n007 the chain keeps only the way down, the
		// siblings on either side are runs, and the subtree is whole.
		{"zoom", "main.main;main.n007", 1000, OrderName, "0: root@0+10101(10101/0)\n1: main.main@0+10101(10101/0)\n" +
			"2: other@0+7(7/7) main.n007@7+1(1/0) other@8+10093(10093/94)\n3: main.deep@7+1(1/0)\n4: main.hidden007@7+1(1/1)\n", 5},
		// Left-heavy: main.wide first, every narrow sibling after it.
		{"left-heavy", "", 1000, OrderLeftHeavy, "0: root@0+10101(10101/0)\n1: main.main@0+10101(10101/0)\n" +
			"2: main.wide@0+10000(10000/0) other@10000+101(101/101)\n3: main.work@0+10000(10000/10000)\n", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := f
			if c.order != OrderName {
				f = prunedTree(t, c.order)
			}
			r := f.Rows(SplitZoom(c.zoom), c.width, nil)
			if r.Sent != c.sent || r.Frames != f.Frames() || r.Zoom != c.zoom || r.ZoomMissing || r.Width != c.width ||
				r.Stride != RowsStride || r.Order != c.order || r.Match != nil {
				t.Errorf("sent %d of %d, zoom %q (missing %v), width %d, stride %d, order %q; want %d sent, zoom %q, order %q",
					r.Sent, r.Frames, r.Zoom, r.ZoomMissing, r.Width, r.Stride, r.Order, c.sent, c.zoom, c.order)
			}
			got := show(decodeRows(t, r))
			if c.want == "" {
				if strings.Contains(got, "other@") {
					t.Fatalf("a run at a width where every frame is wide:\n%s", got)
				}
				return
			}
			if got != c.want {
				t.Errorf("rows\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestRowsZoomPaths(t *testing.T) {
	f := prunedTree(t, OrderName)
	r := f.Rows(SplitZoom("main.main;main.nope;x"), 500, nil)
	if r.Zoom != "main.main" || !r.ZoomMissing {
		t.Errorf("missing frames: zoom %q, missing %v; want main.main, true", r.Zoom, r.ZoomMissing)
	}
	if got := SplitZoom("a%3Bb;c%25d"); len(got) != 2 || got[0] != "a;b" || got[1] != "c%d" {
		t.Errorf("SplitZoom = %q", got)
	}
	if got := JoinZoom([]string{"a;b", "c%d"}); got != "a%3Bb;c%25d" {
		t.Errorf("JoinZoom = %q", got)
	}
	if r := f.Rows(nil, 0, nil); r.Width != 1 {
		t.Errorf("width 0 is cut at %d px, want 1", r.Width)
	}
	for path, want := range map[string]bool{"main.main;main.n007": true, "main.main;main.nope": false, "": false, "main.n007": false} {
		if got := f.Resolves(SplitZoom(path)); got != want {
			t.Errorf("Resolves(%q) = %v, want %v", path, got, want)
		}
	}
}

// A search counts every frame of the untruncated tree, also those the
// rows leave out, and a match inside a match once; Names lists only the
// names the rows hold.
func TestRowsMatchSearchesEveryFrame(t *testing.T) {
	f := prunedTree(t, OrderName)
	cases := []struct {
		re, zoom string
		total    float64
		zoomed   float64
		count    int
		names    string
	}{
		{"hidden007", "", 2, 2, 2, ""},
		{"hidden", "main.main;main.n007", 101, 1, 101, "main.hidden007"},
		{"main\\.(deep|hidden)", "", 101, 101, 101, ""},
		{"n007", "main.main;main.n007;main.deep", 2, 1, 2, "main.n007,main.hidden007"},
		{"wide|work", "", 10000, 10000, 1, "main.wide,main.work"},
		{"nothing", "", 0, 0, 0, ""},
	}
	for _, c := range cases {
		r := f.Rows(SplitZoom(c.zoom), 1000, regexp.MustCompile(c.re))
		m := r.Match
		var names []string
		for _, i := range m.Names {
			names = append(names, r.Names[i])
		}
		if m.Total != c.total || m.Zoom != c.zoomed || m.Count != c.count || strings.Join(names, ",") != c.names || m.BaseTotal != 0 {
			t.Errorf("search %q at %q = %+v (names %q), want total %v zoom %v count %d names %q", c.re, c.zoom, *m, names, c.total, c.zoomed, c.count, c.names)
		}
	}
}

// A diff's rows carry the base columns, as floats: a frame only in the
// base keeps its base width (so its parents are wider than their value),
// and the search sums both sides.
func TestDiffRows(t *testing.T) {
	base, bi := foldedProfile(t, "main;a 30\nmain;gone 10\n")
	target, ti := foldedProfile(t, "main;a 45\nmain;new 5\n")
	tree, err := Diff(base, target, bi, ti, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	f := NewDiffFlat(tree, OrderName)
	r := f.Rows(nil, 1000, regexp.MustCompile("^(a|gone)$"))
	if r.Stride != DiffRowsStride {
		t.Fatalf("stride %d", r.Stride)
	}
	want := "0: root@0+55(50/0 base 20/0)\n1: main@0+55(50/0 base 20/0)\n" +
		"2: a@0+45(45/45 base 15/15) gone@45+5(0/0 base 5/5) new@50+5(5/5)\n"
	if got := show(decodeRows(t, r)); got != want {
		t.Errorf("diff rows\n got %s\nwant %s", got, want)
	}
	if m := r.Match; m.Total != 45 || m.BaseTotal != 20 || m.Zoom != 45 || m.BaseZoom != 20 || m.Count != 2 {
		t.Errorf("diff match %+v", *m)
	}
	if f.Total() != 50 || f.BaseTotal() != 20 {
		t.Errorf("totals %v, %v", f.Total(), f.BaseTotal())
	}
}

func TestParseOrder(t *testing.T) {
	for in, want := range map[string]Order{"": OrderName, "name": OrderName, "left-heavy": OrderLeftHeavy} {
		if got, err := ParseOrder(in); err != nil || got != want {
			t.Errorf("ParseOrder(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseOrder("heavy"); err == nil {
		t.Error("ParseOrder(heavy) accepted")
	}
}

// FuzzRows: any zoom path (outside input: the page's URL) and width give
// well-formed rows: the root alone on top, every frame inside a frame of
// the row above (not a run), runs without children, and as many frames
// as Sent says.
func FuzzRows(f *testing.F) {
	f.Add("main.main;main.n007", 1000)
	f.Add("", 1)
	f.Add("a%3Bb;%25;;", 70000)
	f.Add("main.main;main.wide;main.work;x", -5)
	tree := prunedTree(f, OrderName)
	f.Fuzz(func(t *testing.T, zoom string, width int) {
		r := tree.Rows(SplitZoom(zoom), width, nil)
		if r.Width < 1 || r.Width > MaxPruneWidth {
			t.Fatalf("width %d", r.Width)
		}
		rows := decodeRows(t, r)
		if len(rows) == 0 || len(rows[0]) != 1 || rows[0][0].name != "root" {
			t.Fatalf("top row %v", rows)
		}
		sent := 1
		for d := 1; d < len(rows); d++ {
			for _, fr := range rows[d] {
				if fr.name != "" {
					sent++
				}
				inside := false
				for _, p := range rows[d-1] {
					if p.name != "" && fr.x >= p.x && fr.x+fr.w <= p.x+p.w+1e-9 {
						inside = true
					}
				}
				if !inside {
					t.Fatalf("row %d: %v under no frame of %v", d, fr, rows[d-1])
				}
			}
		}
		if sent != r.Sent {
			t.Fatalf("sent %d, counted %d", r.Sent, sent)
		}
		if got := SplitZoom(r.Zoom); r.Zoom != "" && JoinZoom(got) != r.Zoom {
			t.Fatalf("zoom %q does not round-trip", r.Zoom)
		}
	})
}
