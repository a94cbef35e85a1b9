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
