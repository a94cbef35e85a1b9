package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kbench/kbench/client"
)

// plantedRuns are three runs a side in which main;work;hot does 50 %
// more per record in the target while steady and other stay within 1 %
// of their base values.
func plantedRuns(t *testing.T, ts *testServer, n int) (base, target []uint) {
	t.Helper()
	run := func(hot, steady, other int) string {
		return fmt.Sprintf("main;work;hot %d\nmain;work;steady %d\nmain;other %d\n", hot, steady, other)
	}
	bs := []string{run(1000, 500, 500), run(1010, 505, 495), run(990, 495, 502)}
	tg := []string{run(1500, 499, 501), run(1490, 503, 497), run(1510, 501, 499)}
	return seedProfiledRuns(t, ts, 1000, bs[:n]...), seedProfiledRuns(t, ts, 1000, tg[:n]...)
}

func changeNamed(d client.Diff, name string) (client.FunctionChange, bool) {
	for _, ch := range d.Changes {
		if ch.Name == name {
			return ch, true
		}
	}
	return client.FunctionChange{}, false
}

// TestDiffSignificanceDecided: at 3 runs against 3 the planted change is
// significant in every format, a function that did not move is tested
// and not significant, and the rows and tree carry their verdicts.
func TestDiffSignificanceDecided(t *testing.T) {
	ts := newTestServer(t, nil)
	base, target := plantedRuns(t, ts, 3)
	q := fmt.Sprintf("base_runs=%s&target_runs=%s&kind=cpu&role=client&normalize=work&sample=samples", joinUints(base), joinUints(target))
	for _, format := range []string{"tree", "rows", "compact"} {
		d := getDiff(t, ts, q+"&format="+format)
		s := d.Significance
		if s == nil || s.Method != "welch-log-share" || s.Q != 0.05 || s.RunsNeeded != 3 || !s.Decided || s.Tested < 4 {
			t.Fatalf("%s: significance %+v", format, s)
		}
		hot, ok := changeNamed(d, "hot")
		if !ok || hot.Significant == nil || !*hot.Significant || hot.QValue == nil || *hot.QValue > 0.05 || hot.FlatQValue == nil {
			t.Errorf("%s: hot %+v, want significant", format, hot)
		}
		if len(hot.BaseRuns) != 3 || len(hot.TargetRuns) != 3 || len(hot.BaseRunsFlat) != 3 || len(hot.TargetRunsFlat) != 3 {
			t.Errorf("%s: hot's per-run shares %v %v %v %v", format, hot.BaseRuns, hot.TargetRuns, hot.BaseRunsFlat, hot.TargetRunsFlat)
		} else if hot.BaseRuns[0] != 1.0 || hot.TargetRuns[2] != 1.51 { // samples per record: 1000/1000, 1510/1000
			t.Errorf("%s: hot's shares %v %v, want per record", format, hot.BaseRuns, hot.TargetRuns)
		}
		steady, ok := changeNamed(d, "steady")
		if !ok || steady.Significant == nil || *steady.Significant || steady.QValue == nil {
			t.Errorf("%s: steady %+v, want tested, not significant", format, steady)
		}
		switch format {
		case "rows":
			r := d.Rows
			if r == nil || len(r.Significant) != len(r.Names) {
				t.Fatalf("rows: significant %v for names %v", r.Significant, r.Names)
			}
			for i, name := range r.Names {
				v := r.Significant[i]
				switch name {
				case "hot":
					if v == nil || !*v {
						t.Errorf("rows: hot's verdict %v", v)
					}
				case "steady", "other":
					if v == nil || *v {
						t.Errorf("rows: %s's verdict %v", name, v)
					}
				}
			}
		case "tree":
			var hotNode, steadyNode *client.DiffNode
			for _, w := range d.Tree.Children[0].Children { // main's children
				for _, c := range w.Children {
					switch c.Name {
					case "hot":
						hotNode = c
					case "steady":
						steadyNode = c
					}
				}
			}
			if hotNode == nil || hotNode.Significant == nil || !*hotNode.Significant || steadyNode == nil || steadyNode.Significant == nil || *steadyNode.Significant {
				t.Errorf("tree: hot %+v steady %+v", hotNode, steadyNode)
			}
		}
	}
}

// TestDiffSignificanceUndecided: at 2 runs against 2 the same change is
// not decided: every verdict and q value is null, the rows carry no
// verdicts, and the answer says how many runs a side would decide.
func TestDiffSignificanceUndecided(t *testing.T) {
	ts := newTestServer(t, nil)
	base, target := plantedRuns(t, ts, 2)
	q := fmt.Sprintf("base_runs=%s&target_runs=%s&kind=cpu&role=client&normalize=work", joinUints(base), joinUints(target))
	for _, format := range []string{"tree", "rows"} {
		d := getDiff(t, ts, q+"&format="+format)
		if s := d.Significance; s == nil || s.Decided || s.RunsNeeded != 3 || s.Tested != 0 {
			t.Errorf("%s: significance %+v, want undecided, 3 runs needed", format, s)
		}
		hot, ok := changeNamed(d, "hot")
		if !ok || hot.Significant != nil || hot.QValue != nil || hot.FlatQValue != nil || len(hot.BaseRuns) != 2 {
			t.Errorf("%s: hot %+v, want no verdict and its 2 per-run shares", format, hot)
		}
		if d.Rows != nil && d.Rows.Significant != nil {
			t.Errorf("rows: verdicts %v on an undecided diff", d.Rows.Significant)
		}
	}
}

// TestDiffSignificanceCached: a page's zooms and searches ask for rows
// again; the comparison's tests run once and are kept beside its flats.
func TestDiffSignificanceCached(t *testing.T) {
	ts := newTestServer(t, nil)
	base, target := plantedRuns(t, ts, 3)
	q := fmt.Sprintf("base_runs=%s&target_runs=%s&kind=cpu&role=client&normalize=work&format=rows", joinUints(base), joinUints(target))
	first := getDiff(t, ts, q)
	zoomed := getDiff(t, ts, q+"&zoom=main%3Bwork&search=hot")
	a, _ := json.Marshal(first.Changes)
	b, _ := json.Marshal(zoomed.Changes)
	if !bytes.Equal(a, b) || *first.Significance != *zoomed.Significance {
		t.Errorf("a zoom changed the tests: %+v against %+v", zoomed.Significance, first.Significance)
	}
	lp, err := ts.loadProfile(t.Context(), first.ProfilesTarget[0])
	if err != nil {
		t.Fatal(err)
	}
	lp.flatMu.Lock()
	n := len(lp.stats)
	var kept *diffStats
	for _, st := range lp.stats {
		kept = st
	}
	lp.flatMu.Unlock()
	if n != 1 {
		t.Fatalf("%d sets of tests kept for one comparison, want 1", n)
	}
	// The kept result is what the next answer is built from.
	kept.changes[0].Name = "kept"
	if again := getDiff(t, ts, q+"&width=400"); again.Changes[0].Name != "kept" {
		t.Errorf("the next answer recomputed the tests (first change %q)", again.Changes[0].Name)
	}
}
