package profiles

import (
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestNormalizeFrameName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// HotSpot lambdas as JFR names them (class + address + identity hash).
		{"WritePath$$Lambda$7+0x00007fb8c4a1b2c8.495053715.run", "WritePath$$Lambda$7.run"},
		{"WriteLoop$$Lambda$90+0x00007f1c28007a08.494317290.run", "WriteLoop$$Lambda$90.run"},
		{"Foo$$Lambda+0x0000000800c4b000.apply", "Foo$$Lambda.apply"},
		// Hidden classes (JDK 15+) with "/0x".
		{"Foo$$Lambda/0x0000000800c4b000.apply", "Foo$$Lambda.apply"},
		{"Foo$$Lambda$7/0x0000000800c4b000.apply", "Foo$$Lambda$7.apply"},
		{"java.lang.invoke.LambdaForm$MH/0x0000000800c4c000.invoke", "java.lang.invoke.LambdaForm$MH.invoke"},
		{"a.B$$Lambda$7/0x0000000800c4b000.12345.run", "a.B$$Lambda$7.run"},
		// The lambda's number stays: distinct lambdas of one class.
		{"WritePath$$Lambda$8+0x00007fb8c4a1b2c8.1.run", "WritePath$$Lambda$8.run"},
		// Only an address, or addresses that are no class's: unchanged.
		{"0x4a1b2c", "0x4a1b2c"},
		{"0x00007fb8c4a1b2c8", "0x00007fb8c4a1b2c8"},
		{"runtime.memmove", "runtime.memmove"},
		{"libc.so+0x1c", "libc.so+0x1c"},
		{"main.f+0x1c", "main.f+0x1c"},
		{"Foo/0x12g.run", "Foo/0x12g.run"},
		{"Foo/0x", "Foo/0x"},
		{"/0x1234", "/0x1234"},
		{"Foo$$Lambda+0x", "Foo$$Lambda+0x"},
		{"", ""},
	} {
		if got := NormalizeFrameName(tc.in); got != tc.want {
			t.Errorf("NormalizeFrameName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzNormalizeFrameName(f *testing.F) {
	for _, s := range []string{
		"WritePath$$Lambda$7+0x00007fb8c4a1b2c8.495053715.run", "Foo$$Lambda/0x0000000800c4b000.apply",
		"0x4a1b2c", "a/0x1/0x2", "X$$Lambda$1+0x1.2.3+0x4", "A/0x1.0x2", "B$$Lambda/0x1+0x2.5", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeFrameName(s)
		if again := NormalizeFrameName(got); again != got {
			t.Errorf("not idempotent: %q → %q → %q", s, got, again)
		}
		if strings.HasPrefix(s, "0x") && got != s {
			t.Errorf("an address name %q was rewritten to %q", s, got)
		}
		if len(got) > len(s) {
			t.Errorf("%q grew to %q", s, got)
		}
		if s != "" && got == "" {
			t.Errorf("%q became empty", s)
		}
	})
}

// lambdaProfile is a profile of one stack main → caller → the lambda
// named name, with value v.
func lambdaProfile(name string, v int64) *profile.Profile {
	fs := []*profile.Function{{ID: 1, Name: "main"}, {ID: 2, Name: "caller"}, {ID: 3, Name: name}}
	var locs []*profile.Location
	for i, f := range fs {
		locs = append(locs, &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}})
	}
	return &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "wall", Unit: "count"}, Period: 1,
		Function: fs, Location: locs,
		Sample: []*profile.Sample{{Location: []*profile.Location{locs[2], locs[1], locs[0]}, Value: []int64{v}}}}
}

func TestLambdasMatchAcrossRuns(t *testing.T) {
	a := lambdaProfile("W$$Lambda$7+0x00007fb8c4a1b2c8.495053715.run", 10)
	b := lambdaProfile("W$$Lambda$7+0x00007f38aaaa0000.495053715.run", 12)
	d, err := Diff(a, b, 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	leaf := d.Children[0].Children[0]
	if len(leaf.Children) != 1 || leaf.Children[0].Name != "W$$Lambda$7.run" || leaf.Children[0].Base != 10 || leaf.Children[0].Value != 12 {
		t.Fatalf("caller's children = %+v, want one W$$Lambda$7.run with base 10, value 12", leaf.Children)
	}
	ch := TopChanges(a, b, 0, 0, 1, 0)
	for _, c := range ch {
		if strings.Contains(c.Name, "0x") {
			t.Errorf("change %+v names an address", c)
		}
	}
	want := map[string][]string{"W$$Lambda$7.run": {
		"W$$Lambda$7+0x00007f38aaaa0000.495053715.run", "W$$Lambda$7+0x00007fb8c4a1b2c8.495053715.run"}}
	got := NameVariants(a, b)
	if len(got) != 1 || strings.Join(got["W$$Lambda$7.run"], ",") != strings.Join(want["W$$Lambda$7.run"], ",") {
		t.Errorf("NameVariants = %v, want %v", got, want)
	}
	if got := NameVariants(fixtureGoCPU(false)); got != nil {
		t.Errorf("NameVariants of a Go profile = %v, want nil", got)
	}
}
