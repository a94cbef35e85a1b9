package profileset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
)

// fakeStore holds runs by id; GetRunsParts answers as the store does
// (ErrNotFound naming an unknown id), without profiles unless asked.
type fakeStore struct {
	runs map[uint]rundoc.Run
}

func (f *fakeStore) GetRunsParts(_ context.Context, ids []uint, parts store.RunParts) ([]rundoc.Run, error) {
	var out []rundoc.Run
	for _, id := range ids {
		r, ok := f.runs[id]
		if !ok {
			return nil, fmt.Errorf("store: run %d: %w", id, store.ErrNotFound)
		}
		if !parts.Profiles {
			r.Profiles = nil
		}
		out = append(out, r)
	}
	return out, nil
}

// leafProfile is a CPU profile of one function with value v.
func leafProfile(v int64) *profile.Profile {
	f := &profile.Function{ID: 1, Name: "main.f"}
	l := &profile.Location{ID: 1, Line: []profile.Line{{Function: f}}}
	return &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Function: []*profile.Function{f}, Location: []*profile.Location{l},
		Sample: []*profile.Sample{{Location: []*profile.Location{l}, Value: []int64{v, v * 10_000_000}}}}
}

// fixture: runs 1–4 with a client CPU profile (profile id 10×run) of
// value 10×run and a record count of 100×run; run 5 has only a broker
// profile and run 6 a heap profile as its client profile; run 7 a CPU
// profile without a record count.
func fixture() (*fakeStore, Loader, map[uint]*profile.Profile) {
	st := &fakeStore{runs: map[uint]rundoc.Run{}}
	profs := map[uint]*profile.Profile{}
	for id := uint(1); id <= 7; id++ {
		r := rundoc.Run{ID: id}
		switch id {
		case 5:
			r.Profiles = []rundoc.Profile{{ID: 50, Role: "broker", Kind: "cpu"}}
		case 6:
			r.Profiles = []rundoc.Profile{{ID: 60, Role: "client", Kind: "heap"}}
		default:
			r.Profiles = []rundoc.Profile{{ID: id * 10, Role: "client", Kind: "cpu"}}
			profs[id*10] = leafProfile(int64(id * 10))
		}
		if id != 7 {
			r.Metrics = []rundoc.Metric{{Name: "records", Value: float64(100 * id)}}
		}
		st.runs[id] = r
	}
	load := func(_ context.Context, id uint) (*profile.Profile, error) {
		p, ok := profs[id]
		if !ok {
			return nil, fmt.Errorf("no profile %d", id)
		}
		return p, nil
	}
	return st, load, profs
}

func field(err error) string {
	var fe *rundoc.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestLoad(t *testing.T) {
	st, load, _ := fixture()
	set, err := Load(context.Background(), st, load, Query{BaseRuns: []uint{1, 5, 2}, TargetRuns: []uint{3, 6}, Kind: "cpu", Role: "client", Sample: "samples"})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Base) != 2 || set.Base[0].RunID != 1 || set.Base[1].RunID != 2 || set.Base[1].ProfileID != 20 || len(set.Target) != 1 || set.Target[0].ProfileID != 30 {
		t.Fatalf("set %+v", set)
	}
	want := []Skip{{RunID: 5, Side: "base", Reason: "no cpu profile of the client"}, {RunID: 6, Side: "target", Reason: "no cpu profile of the client"}}
	if fmt.Sprint(set.Skipped) != fmt.Sprint(want) {
		t.Errorf("skipped %+v, want %+v", set.Skipped, want)
	}
	if set.Base[0].SampleIndex != 0 || set.Base[0].Work != 100 || set.Base[0].WorkErr != nil {
		t.Errorf("base[0] %+v", set.Base[0])
	}
	for _, tc := range []struct {
		mode     string
		base     []float64
		target   []float64
		scale    float64
		explains string
	}{
		{"total", []float64{10, 20}, []float64{30}, 2, "mean total"},
		{"", []float64{10, 20}, []float64{30}, 2, "mean total"},
		{"work", []float64{100, 200}, []float64{300}, 2, "per record"},
		{"none", []float64{1, 1}, []float64{1}, 1, "no normalization"},
	} {
		b, tg, norm, err := set.Inputs(tc.mode)
		if err != nil {
			t.Fatalf("%s: %v", tc.mode, err)
		}
		if fmt.Sprint(refs(b)) != fmt.Sprint(tc.base) || fmt.Sprint(refs(tg)) != fmt.Sprint(tc.target) || norm.Scale != tc.scale || !strings.Contains(norm.Explain, tc.explains) {
			t.Errorf("%s: refs %v %v, norm %+v", tc.mode, refs(b), refs(tg), norm)
		}
	}
	if _, _, _, err := set.Inputs("sideways"); field(err) != "normalize" {
		t.Errorf("normalize=sideways: %v", err)
	}
}

func refs(rs []profiles.RunInput) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Ref
	}
	return out
}

func TestLoadRefuses(t *testing.T) {
	st, load, _ := fixture()
	many := make([]uint, MaxRuns+1)
	for i := range many {
		many[i] = uint(i + 100)
	}
	for _, tc := range []struct {
		name  string
		q     Query
		field string
	}{
		{"51 runs", Query{BaseRuns: many, TargetRuns: []uint{1}, Kind: "cpu", Role: "client"}, "base_runs"},
		{"empty target", Query{BaseRuns: []uint{1}, Kind: "cpu", Role: "client"}, "target_runs"},
		{"twice", Query{BaseRuns: []uint{1, 1}, TargetRuns: []uint{2}, Kind: "cpu", Role: "client"}, "base_runs"},
		{"unknown", Query{BaseRuns: []uint{1}, TargetRuns: []uint{99}, Kind: "cpu", Role: "client"}, "target_runs"},
		{"no profile at all", Query{BaseRuns: []uint{5, 6}, TargetRuns: []uint{2}, Kind: "cpu", Role: "client"}, "base_runs"},
		{"no kind", Query{BaseRuns: []uint{1}, TargetRuns: []uint{2}, Role: "client"}, "kind"},
		{"no role", Query{BaseRuns: []uint{1}, TargetRuns: []uint{2}, Kind: "cpu"}, "role"},
		{"sample", Query{BaseRuns: []uint{1}, TargetRuns: []uint{2}, Kind: "cpu", Role: "client", Sample: "alloc_space"}, "sample"},
	} {
		if _, err := Load(context.Background(), st, load, tc.q); field(err) != tc.field {
			t.Errorf("%s: error %v, want a field error for %s", tc.name, err, tc.field)
		}
	}
}

func TestWork(t *testing.T) {
	st, load, _ := fixture()
	set, err := Load(context.Background(), st, load, Query{BaseRuns: []uint{7}, TargetRuns: []uint{1, 7}, Kind: "cpu", Role: "client"})
	if err != nil || len(set.Target) != 2 {
		t.Fatalf("run 7 on both sides: %v", err)
	}
	set, err = Load(context.Background(), st, load, Query{BaseRuns: []uint{7}, TargetRuns: []uint{1, 2}, Kind: "cpu", Role: "client"})
	if err != nil {
		t.Fatal(err)
	}
	if r := set.WorkReasons(); fmt.Sprint(r) != "[a run has no record count (run 7)]" {
		t.Errorf("reasons %q", r)
	}
	if _, _, _, err := set.Inputs("work"); field(err) != "normalize" || !strings.Contains(err.Error(), "run 7") {
		t.Errorf("work without a record count: %v", err)
	}
	// A pair words it as the pages always did.
	pair, err := Pair(context.Background(), st, Member{RunID: 7, ProfileID: 70, Prof: leafProfile(1)}, Member{RunID: 99, ProfileID: 10, Prof: leafProfile(1)}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := pair.WorkReasons(); fmt.Sprint(r) != "[the base run (run 7) has no record count the target run (run 99) could not be read]" {
		t.Errorf("pair reasons %q", r)
	}
	for _, tc := range []struct {
		run  rundoc.Run
		want float64
	}{
		{rundoc.Run{Metrics: []rundoc.Metric{{Name: "records", Value: 5}, {Name: "records-sent", Value: 7}}}, 7},
		{rundoc.Run{Metrics: []rundoc.Metric{{Name: "records-consumed-total", Value: 9}}}, 9},
		{rundoc.Run{Metrics: []rundoc.Metric{{Name: "records-sent", Value: 0}}, Measurement: &rundoc.Measurement{MeasuredRecords: 11}}, 11},
		{rundoc.Run{ID: 4}, 0},
	} {
		got, err := RunWork(&tc.run)
		if got != tc.want || (tc.want == 0) != errors.Is(err, ErrNoRecordCount) {
			t.Errorf("RunWork(%+v) = %v, %v; want %v", tc.run.Metrics, got, err, tc.want)
		}
	}
}

func TestParseIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"3,4, 5", "[3 4 5]"}, {"7", "[7]"}, {"", "error"}, {"x", "error"}, {"0", "error"}, {"-1", "error"}, {"+3", "error"},
		{"03", "error"}, {"4294967296", "error"}, {strings.Repeat("1,", MaxRuns+1), "error"},
	} {
		ids, err := ParseIDs("base_runs", tc.in)
		got := fmt.Sprint(ids)
		if err != nil {
			got = "error"
			if field(err) != "base_runs" {
				t.Errorf("%q: error %v names no field base_runs", tc.in, err)
			}
		}
		if got != tc.want {
			t.Errorf("ParseIDs(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
