package profiles

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRankFunctionsSynthetic: 20 runs before and 20 after, where one
// leaf's work per record (kafka.compress, 6 % of the CPU) grows by 30 %,
// normalized by work, for five seeds. The leaf is named first, with its
// callers in Explains; its unchanged sibling syscall.write is not named,
// and none of its callers is listed.
func TestRankFunctionsSynthetic(t *testing.T) {
	work := synthDefault
	work.byTotal = false
	ancestors := []string{"kafka.Write", "send.Loop", "main.run", "runtime.goexit"}
	for s := range 5 {
		rng := rand.New(rand.NewPCG(uint64(s), 5))
		base := synthRuns(rng, 1, 20, work, "", 1)
		target := synthRuns(rng, 100, 20, work, "kafka.compress", 1.3)
		res := Significance(base, target, 0.05)
		ranked := RankFunctions(res, base, target, 3)
		var names []string
		for _, r := range ranked {
			names = append(names, r.Name)
		}
		if len(ranked) == 0 || ranked[0].Name != "kafka.compress" {
			t.Errorf("seed %d: ranked %v, want kafka.compress first", s, names)
			continue
		}
		if r := ranked[0]; r.DeltaPct < 20 || r.DeltaPct > 40 || r.Delta <= 0 || r.QValue > 0.05 {
			t.Errorf("seed %d: %+v, want about +30 %%", s, r)
		}
		if slices.Contains(names, "syscall.write") {
			t.Errorf("seed %d: the unchanged sibling is named: %v", s, names)
		}
		for _, a := range ancestors {
			if slices.Contains(names, a) {
				t.Errorf("seed %d: caller %s listed: %v", s, a, names)
			}
			// Every caller grew with the leaf; those found significant
			// are explained by it.
			if f, _ := res.Function(a); *f.Significant && !slices.Contains(ranked[0].Explains, a) {
				t.Errorf("seed %d: %s significant but not in the leaf's Explains %v", s, a, ranked[0].Explains)
			}
		}
	}
}

// TestRankFunctionsExplained checks the rule that leaves out callers on
// hand-made runs that repeat exactly within a side (3 against 3, no
// spread: every change is significant, every non-change is not).
func TestRankFunctionsExplained(t *testing.T) {
	for _, c := range []struct {
		name         string
		base, target string
		want         string // ranked names, each with its Explains after ":"
	}{
		{
			name:   "a chain: the leaf explains its callers",
			base:   "main;A;B;C 100\nmain;A;B 50\nmain;A;X 50\nmain;Y 100",
			target: "main;A;B;C 150\nmain;A;B 50\nmain;A;X 50\nmain;Y 100",
			want:   "C:A,B,main",
		},
		{
			name:   "a caller whose own flat moved stays",
			base:   "main;A;B;C 100\nmain;A 50\nmain;Y 100",
			target: "main;A;B;C 150\nmain;A 250\nmain;Y 100",
			want:   "A:main C:B,main",
		},
		{
			name:   "recursion explains nothing",
			base:   "main;R;S;R 100\nmain;Z 100",
			target: "main;R;S;R 150\nmain;Z 100",
			want:   "R:main S:main",
		},
		{
			name:   "a shrinking leaf and a growing one under the same caller",
			base:   "main;A;C 100\nmain;A;D 100\nmain;Y 100",
			target: "main;A;C 40\nmain;A;D 130\nmain;Y 100",
			// A (and main) moved −30: C (−60, the same way) explains it, as
			// |−30 − (−60)| < 60.
			want: "C:A,main D:",
		},
		{
			name:   "no change",
			base:   "main;A 100\nmain;B 100",
			target: "main;A 100\nmain;B 100",
			want:   "",
		},
	} {
		var base, target []RunInput
		for i := range 3 {
			base = append(base, RunInput{RunID: uint(i + 1), Prof: foldedRun(t, c.base), Ref: 1})
			target = append(target, RunInput{RunID: uint(i + 10), Prof: foldedRun(t, c.target), Ref: 1})
		}
		res := Significance(base, target, 0.05)
		var got []string
		for _, r := range RankFunctions(res, base, target, 0) {
			got = append(got, r.Name+":"+strings.Join(r.Explains, ","))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: ranked %q, want %q", c.name, g, c.want)
		}
		if r := RankFunctions(Significance(base[:2], target, 0.05), base[:2], target, 0); r != nil {
			t.Errorf("%s: undecided result ranked %v, want nil", c.name, r)
		}
	}
}
