package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAddProfiles(t *testing.T) { eachBackend(t, testAddProfiles) }

func testAddProfiles(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	runs := []*Run{{Label: "x", Workload: "producer", Spec: "{}"}}
	if err := s.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	got, err := s.AddProfiles(ctx, runs[0].ID, []Profile{{Role: "client", Kind: "cpu", Data: []byte("abc"), Samples: 3}})
	if err != nil {
		t.Fatal(err)
	}
	// rundoc.Profile has no data by type; the data itself is stored, and
	// GetProfile has it.
	if len(got) != 1 || got[0].ID == 0 || got[0].Bytes != 3 || got[0].SHA256 == "" {
		t.Fatalf("AddProfiles = %+v, want one profile with id, size and checksum", got)
	}
	if full, err := s.GetProfile(ctx, got[0].ID); err != nil || string(full.Data) != "abc" {
		t.Errorf("GetProfile(%d) = %+v, %v; want its data %q", got[0].ID, full, err, "abc")
	}
	if _, err := s.AddProfiles(ctx, 9999, []Profile{{Role: "client", Kind: "cpu", Data: []byte("abc")}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run: err = %v, want ErrNotFound", err)
	}
	if _, err := s.AddProfiles(ctx, runs[0].ID, []Profile{{Role: "client", Kind: "cpu", Data: []byte("a")}, {Role: "", Kind: "cpu"}}); err == nil {
		t.Error("a profile without role was accepted")
	}
	ps, _ := s.ListProfiles(ctx, runs[0].ID)
	if len(ps) != 1 {
		t.Errorf("after a rejected batch: %d profiles, want 1 (all or none)", len(ps))
	}
}

func TestGenerationChangesOnWritesOnly(t *testing.T) {
	eachBackend(t, testGenerationChangesOnWritesOnly)
}

func testGenerationChangesOnWritesOnly(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g0 := s.Generation()
	runs := []*Run{{Label: "a", Workload: "producer", Spec: "{}"}}
	if err := s.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	g1 := s.Generation()
	if g1 == g0 {
		t.Fatal("CreateRuns did not change the generation")
	}
	s.GetRun(ctx, runs[0].ID)
	s.ListRuns(ctx, RunFilter{})
	s.Labels(ctx)
	if s.Generation() != g1 {
		t.Error("reads changed the generation")
	}
	if err := s.StartRun(ctx, runs[0].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if s.Generation() == g1 {
		t.Error("StartRun did not change the generation")
	}
}

func TestProfiledRuns(t *testing.T) { eachBackend(t, testProfiledRuns) }

// testProfiledRuns: ProfiledRuns keeps, in the order asked, the runs with
// a profile of the kind and role, once each however many they have.
func testProfiledRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	runs := []*Run{{Label: "a", Workload: "producer", Spec: "{}"}, {Label: "b", Workload: "producer", Spec: "{}"},
		{Label: "c", Workload: "producer", Spec: "{}"}, {Label: "d", Workload: "producer", Spec: "{}"}}
	if err := s.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	add := func(r *Run, ps ...Profile) {
		if _, err := s.AddProfiles(ctx, r.ID, ps); err != nil {
			t.Fatal(err)
		}
	}
	add(runs[0], Profile{Role: "client", Kind: "cpu", Data: []byte("a")}, Profile{Role: "client", Kind: "cpu", Data: []byte("b")})
	add(runs[1], Profile{Role: "client", Kind: "heap", Data: []byte("c")})
	add(runs[2], Profile{Role: "broker", Kind: "cpu", Data: []byte("d")})
	add(runs[3], Profile{Role: "client", Kind: "cpu", Data: []byte("e")})
	ids := []uint{runs[3].ID, runs[2].ID, runs[1].ID, runs[0].ID, 9999}
	got, err := s.ProfiledRuns(ctx, ids, "cpu", "client")
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint{runs[3].ID, runs[0].ID}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ProfiledRuns = %v, want %v", got, want)
	}
	if got, err := s.ProfiledRuns(ctx, nil, "cpu", "client"); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
}
