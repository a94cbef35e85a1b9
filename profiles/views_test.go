package profiles

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// viewsFolded has a function (main.enc) called from two sites, and a
// recursive one (main.rec) that calls itself.
const viewsFolded = `main.main;main.send;main.enc;runtime.memmove 30
main.main;main.send;main.enc 10
main.main;main.flush;main.enc;runtime.memmove 20
main.main;main.flush 5
main.main;main.rec;main.rec;main.enc 7
main.main;main.rec 3
runtime.gc 25
`

func viewsFlat(t *testing.T, folded string) *Flat {
	t.Helper()
	p, idx := foldedProfile(t, folded)
	return NewFlat(BuildTree(p, idx), OrderName)
}

// dump lists a Flat's frames in pre-order as "path value self" (and base
// and base self for a diff), the root as "".
func dump(f *Flat) []string {
	var out []string
	parent := f.parents()
	for i := int32(0); i < int32(len(f.name)); i++ {
		var path []string
		for a := i; a > 0; a = parent[a] {
			path = append(path, f.names[f.name[a]])
		}
		slices.Reverse(path)
		line := fmt.Sprintf("%s %g %g", strings.Join(path, ";"), f.value[i], f.self[i])
		if f.base != nil {
			line += fmt.Sprintf(" %g %g", f.base[i], f.baseSelf[i])
		}
		out = append(out, line)
	}
	return out
}

func TestFunctionsCountTotalsOncePerStack(t *testing.T) {
	f := viewsFlat(t, viewsFolded)
	got := map[string][2]float64{}
	for _, fn := range f.Functions() {
		got[fn.Name] = [2]float64{fn.Self, fn.Total}
	}
	want := map[string][2]float64{
		"main.main":       {0, 75},
		"main.send":       {0, 40},
		"main.enc":        {17, 67}, // 40 + 20 + 7: once under main.rec;main.rec
		"main.flush":      {5, 25},
		"main.rec":        {3, 10}, // the inner main.rec is not counted again
		"runtime.memmove": {50, 50},
		"runtime.gc":      {25, 25},
	}
	if len(got) != len(want) {
		t.Fatalf("functions = %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: self, total = %v, want %v", name, got[name], w)
		}
	}
}

func TestSortTop(t *testing.T) {
	fs := []TopFunction{
		{Name: "a", Self: 1, Total: 9, BaseSelf: 5, BaseTotal: 9},
		{Name: "b", Self: 4, Total: 4, BaseSelf: 4, BaseTotal: 1},
		{Name: "c", Self: 4, Total: 6, BaseSelf: 3.5, BaseTotal: 6},
	}
	for _, tc := range []struct {
		by    TopSort
		limit int
		want  string
	}{
		{TopBySelf, 0, "b c a"}, // ties by name
		{TopByTotal, 2, "a c"},
		{TopByDeltaSelf, 0, "a c b"},   // |1-5|, |4-3.5|, 0
		{TopByDeltaTotal, 1, "b"},      // |4-1|
		{TopByDeltaTotal, 10, "b a c"}, // then 0, 0 by name
	} {
		got := SortTop(slices.Clone(fs), tc.by, tc.limit)
		var names []string
		for _, g := range got {
			names = append(names, g.Name)
		}
		if strings.Join(names, " ") != tc.want {
			t.Errorf("SortTop(%s, %d) = %v, want %s", tc.by, tc.limit, names, tc.want)
		}
	}
}

func TestParseTopSort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		diff bool
		want TopSort
		bad  bool
	}{
		{"", false, TopBySelf, false},
		{"total", false, TopByTotal, false},
		{"delta_self", true, TopByDeltaSelf, false},
		{"delta_total", false, "", true},
		{"cum", true, "", true},
	} {
		got, err := ParseTopSort(tc.in, tc.diff)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseTopSort(%q, %v) = %q, %v", tc.in, tc.diff, got, err)
		}
	}
}

func TestInverted(t *testing.T) {
	f := viewsFlat(t, viewsFolded)
	want := []string{
		" 100 0",
		"main.enc 17 0",
		"main.enc;main.rec 7 0",
		"main.enc;main.rec;main.rec 7 0",
		"main.enc;main.rec;main.rec;main.main 7 7",
		"main.enc;main.send 10 0",
		"main.enc;main.send;main.main 10 10",
		"main.flush 5 0",
		"main.flush;main.main 5 5",
		"main.rec 3 0",
		"main.rec;main.main 3 3",
		"runtime.gc 25 25",
		"runtime.memmove 50 0",
		"runtime.memmove;main.enc 50 0",
		"runtime.memmove;main.enc;main.flush 20 0",
		"runtime.memmove;main.enc;main.flush;main.main 20 20",
		"runtime.memmove;main.enc;main.send 30 0",
		"runtime.memmove;main.enc;main.send;main.main 30 30",
	}
	if got := dump(f.Inverted()); !slices.Equal(got, want) {
		t.Errorf("inverted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if inv := f.Inverted(); inv.Total() != f.Total() {
		t.Errorf("inverted total %g, graph total %g", inv.Total(), f.Total())
	}
}

func TestSandwich(t *testing.T) {
	f := viewsFlat(t, viewsFolded)
	callers, ok := f.Callers("main.enc")
	if !ok {
		t.Fatal("Callers(main.enc): not found")
	}
	wantCallers := []string{
		" 67 0", // the root is main.enc itself
		"main.flush 20 0",
		"main.flush;main.main 20 20",
		"main.rec 7 0",
		"main.rec;main.rec 7 0",
		"main.rec;main.rec;main.main 7 7",
		"main.send 40 0",
		"main.send;main.main 40 40",
	}
	if got := dump(callers); !slices.Equal(got, wantCallers) {
		t.Errorf("callers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantCallers, "\n"))
	}
	if callers.names[callers.name[0]] != "main.enc" {
		t.Errorf("callers' root = %q", callers.names[callers.name[0]])
	}
	callees, ok := f.Callees("main.enc")
	if !ok {
		t.Fatal("Callees(main.enc): not found")
	}
	wantCallees := []string{" 67 17", "runtime.memmove 50 50"}
	if got := dump(callees); !slices.Equal(got, wantCallees) {
		t.Errorf("callees:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantCallees, "\n"))
	}
	// A recursive function: its inner calls stay below it.
	rec, _ := f.Callees("main.rec")
	wantRec := []string{" 10 3", "main.rec 7 0", "main.rec;main.enc 7 7"}
	if got := dump(rec); !slices.Equal(got, wantRec) {
		t.Errorf("callees of main.rec:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantRec, "\n"))
	}
	if _, ok := f.Callers("main.absent"); ok {
		t.Error("Callers of a function not in the graph: ok")
	}
	if _, ok := f.Callees("main.absent"); ok {
		t.Error("Callees of a function not in the graph: ok")
	}
	// The sandwich's views are cut as rows like the graph.
	rows := callers.Rows(SplitZoom("main.send"), 100, nil)
	if rows.Zoom != "main.send" || rows.Levels[0][2] != 67 {
		t.Errorf("callers rows: zoom %q, root %v", rows.Zoom, rows.Levels[0])
	}
}

func TestDiffViewsKeepBaseColumns(t *testing.T) {
	bp, bi := foldedProfile(t, "main.main;main.enc 10\nmain.main 2\n")
	tp, ti := foldedProfile(t, "main.main;main.enc 4\nmain.main;main.send 6\n")
	tree, err := Diff(bp, tp, bi, ti, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := NewDiffFlat(tree, OrderName)
	fns := map[string]TopFunction{}
	for _, fn := range f.Functions() {
		fns[fn.Name] = fn
	}
	if e := fns["main.enc"]; e.Self != 4 || e.BaseSelf != 10 || e.Total != 4 || e.BaseTotal != 10 {
		t.Errorf("main.enc = %+v", e)
	}
	if m := fns["main.main"]; m.Self != 0 || m.BaseSelf != 2 || m.Total != 10 || m.BaseTotal != 12 {
		t.Errorf("main.main = %+v", m)
	}
	got := dump(f.Inverted())
	wantInv := []string{
		" 10 0 12 0",
		"main.enc 4 0 10 0",
		"main.enc;main.main 4 4 10 10",
		"main.main 0 0 2 2",
		"main.send 6 0 0 0",
		"main.send;main.main 6 6 0 0",
	}
	if !slices.Equal(got, wantInv) {
		t.Errorf("inverted diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantInv, "\n"))
	}
	rows := f.Inverted().Rows(nil, 100, nil)
	if rows.Stride != DiffRowsStride {
		t.Errorf("inverted diff rows stride %d", rows.Stride)
	}
}
