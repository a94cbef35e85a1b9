package ui

import (
	"testing"

	"github.com/kbench/kbench/client/wire"
)

// TestNewFunctionsCell: what a change's row shows of its functions, by
// the naming's status: the top three with their change per record or
// share of the total, computing…, a note, or nothing.
func TestNewFunctionsCell(t *testing.T) {
	named := func(unit string, fs ...wire.MovedFunction) (wire.FunctionNaming, []wire.MovedFunction) {
		return wire.FunctionNaming{Status: wire.FunctionsNamed, Unit: unit, RunsBase: []uint{1, 2, 3}, RunsTarget: []uint{4, 5, 6}, DiffURL: "/compare/profiles?x"}, fs
	}
	enc := wire.MovedFunction{Name: "send.encode", Delta: 612, DeltaPct: 30.7, Base: 1990, Target: 2602, QValue: 1e-20}
	four := []wire.MovedFunction{enc, {Name: "b", DeltaPct: 1}, {Name: "c", DeltaPct: 1}, {Name: "d", DeltaPct: 1}}
	for _, tt := range []struct {
		name   string
		naming *wire.FunctionNaming
		fs     []wire.MovedFunction
		check  func(FunctionsCell) bool
	}{
		{"not named here", nil, nil, func(c FunctionsCell) bool { return !c.Shown() }},
		{"no profiles", &wire.FunctionNaming{Status: wire.FunctionsNoProfiles, Reason: "no run before the change has a cpu profile"}, nil,
			func(c FunctionsCell) bool { return !c.Shown() }},
		{"computing", &wire.FunctionNaming{Status: wire.FunctionsComputing, DiffURL: "/d"}, nil,
			func(c FunctionsCell) bool { return c.Shown() && c.Computing && c.DiffURL == "/d" }},
		{"too few", &wire.FunctionNaming{Status: wire.FunctionsTooFewRuns, Reason: "2 runs with profiles"}, nil,
			func(c FunctionsCell) bool { return c.Shown() && c.Note == "2 runs with profiles" && len(c.Top) == 0 }},
		{"per record", namingPtr(named("nanoseconds/record", enc)), []wire.MovedFunction{enc},
			func(c FunctionsCell) bool {
				return len(c.Top) == 1 && c.Top[0].Name == "send.encode" && c.Top[0].Change == "+30.7% (+612 ns/record)" &&
					c.Top[0].Title == "1.99 µs/record → 2.60 µs/record, q = 1.0e-20, 3 runs against 3" && c.More == 0
			}},
		{"share of total", namingPtr(named("share of total")), []wire.MovedFunction{{Name: "f", Delta: 0.05, DeltaPct: 25, Base: 0.2, Target: 0.25}},
			func(c FunctionsCell) bool { return len(c.Top) == 1 && c.Top[0].Change == "+25.0% (+5.0% of the total)" }},
		{"top three", namingPtr(named("nanoseconds/record")), four, func(c FunctionsCell) bool { return len(c.Top) == 3 && c.More == 1 }},
		{"none moved", namingPtr(named("nanoseconds/record")), nil, func(c FunctionsCell) bool { return c.Shown() && c.None }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if c := NewFunctionsCell(tt.fs, tt.naming); !tt.check(c) {
				t.Errorf("%+v", c)
			}
		})
	}
}

func namingPtr(n wire.FunctionNaming, _ []wire.MovedFunction) *wire.FunctionNaming { return &n }
