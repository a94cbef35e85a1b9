package check

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/client/wire"
)

// functionSource is a fakeSource that names functions: answer, and the
// sides it was asked about.
type functionSource struct {
	*fakeSource
	answer       wire.Functions
	base, target []uint
}

func (f *functionSource) Functions(_ context.Context, base, target []uint) (wire.Functions, error) {
	f.base, f.target = base, target
	return f.answer, nil
}

// TestAssessNamesFunctions: with a Source that names functions, each
// series' report carries the functions that moved from its baseline's
// runs to its candidates (in --json as functions and function_naming),
// and the Markdown says so in one line; a server that names none, or
// runs without profiles, leave both out.
func TestAssessNamesFunctions(t *testing.T) {
	named := wire.Functions{FunctionNaming: wire.FunctionNaming{Status: wire.FunctionsNamed, Kind: "cpu", Role: "client",
		RunsBase: []uint{7, 8, 9}, RunsTarget: []uint{17}, Normalize: "work", Unit: "nanoseconds/record", RunsNeeded: 3,
		DiffURL: "/compare/profiles?base_runs=7,8,9&target_runs=17&kind=cpu&role=client"},
		Functions: []wire.MovedFunction{{Name: "send.encode", Delta: 612, DeltaPct: 30.7, QValue: 1e-9}, {Name: "b", DeltaPct: -5}, {Name: "c", DeltaPct: 2}, {Name: "d", DeltaPct: 1}}}
	for _, tt := range []struct {
		name     string
		answer   wire.Functions
		wantJSON bool
		wantMD   string
	}{
		{"named", named, true, "Functions that moved (3 baseline runs against 1 candidates with CPU profiles, per record): `send.encode` +30.7%, `b` −5.0%, `c` +2.0% ([differential flame graph](http://kbench.test/compare/profiles?base_runs=7,8,9&target_runs=17&kind=cpu&role=client))."},
		{"computing", wire.Functions{FunctionNaming: wire.FunctionNaming{Status: wire.FunctionsComputing, RunsBase: []uint{7}, RunsTarget: []uint{17}}}, true, "still being named on the server"},
		{"too few", wire.Functions{FunctionNaming: wire.FunctionNaming{Status: wire.FunctionsTooFewRuns, Reason: "1 run with profiles before the change"}}, true, "Functions that moved: 1 run with profiles before the change."},
		{"no profiles", wire.Functions{FunctionNaming: wire.FunctionNaming{Status: wire.FunctionsNoProfiles}}, true, ""},
		{"server names none", wire.Functions{}, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &functionSource{fakeSource: &fakeSource{changePoints: []int{6}}, answer: tt.answer}
			for _, p := range join(noisy(1, 1, 6, 90000, 0.01), noisy(2, 7, 10, 115000, 0.01)) {
				f.add(p.Value, "trunk")
			}
			cand := f.add(105000, "trunk")
			rep, err := Assess(context.Background(), f, []Run{cand}, Baseline{}, []string{rate}, flagOptions)
			if err != nil {
				t.Fatal(err)
			}
			if want := []uint{7, 8, 9, 10, 11, 12, 13, 14, 15, 16}; !slices.Equal(f.base, want) || !slices.Equal(f.target, []uint{cand.ID}) {
				t.Errorf("asked %v against %v, want the baseline %v against the candidate", f.base, f.target, want)
			}
			js, _ := json.Marshal(rep)
			if got := strings.Contains(string(js), `"function_naming":`); got != tt.wantJSON {
				t.Errorf("--json has function_naming: %v, want %v\n%s", got, tt.wantJSON, js)
			}
			md := rep.Markdown(f.Base())
			if tt.wantMD == "" && strings.Contains(md, "Functions that moved") || tt.wantMD != "" && !strings.Contains(md, tt.wantMD) {
				t.Errorf("Markdown, want %q:\n%s", tt.wantMD, md)
			}
		})
	}
}
