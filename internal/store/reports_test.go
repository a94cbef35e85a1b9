package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

func TestReports(t *testing.T) { eachBackend(t, testReports) }

func testReports(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a := &Run{Label: "trunk", Status: rundoc.StatusSucceeded, Metrics: []Metric{{Name: "records-per-sec", Value: 10, Unit: "records/s", Better: "higher"}}}
	b := &Run{Label: "branch", Status: rundoc.StatusSucceeded}
	c := &Run{Label: "free", Status: rundoc.StatusSucceeded, Metrics: []Metric{{Name: "x", Value: 1}}, Series: []SeriesPoint{{Seq: 1, T: 1}}}
	q := &Run{Label: "queued"}
	create(t, s, a, b, c, q)

	r := &rundoc.Report{Title: "trunk vs branch", Notes: "n", RunIDs: []uint{b.ID, a.ID}, By: "run"}
	if err := s.CreateReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.ID == 0 || len(r.Slug) != 26 || strings.Trim(r.Slug, "abcdefghijklmnopqrstuvwxyz234567") != "" {
		t.Fatalf("report %+v: want an id and a 26-character base32 slug", r)
	}
	got, err := s.GetReport(ctx, r.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != r.Title || got.Notes != "n" || got.By != "run" || !slices.Equal(got.RunIDs, []uint{b.ID, a.ID}) || got.CreatedAt.IsZero() {
		t.Errorf("GetReport = %+v, want %+v (run order kept)", got, r)
	}
	if _, err := s.GetReport(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetReport(unknown) = %v, want ErrNotFound", err)
	}
	if s1, s2 := NewSlug(), NewSlug(); s1 == s2 {
		t.Errorf("two slugs in a row are both %q", s1)
	}

	// Unknown and repeated runs are refused, and nothing is stored.
	for _, ids := range [][]uint{{a.ID, 999}, {a.ID, a.ID}, nil} {
		bad := &rundoc.Report{Title: "x", RunIDs: ids}
		err := s.CreateReport(ctx, bad)
		if err == nil || bad.ID != 0 {
			t.Errorf("CreateReport(%v) = %v, id %d; want an error", ids, err, bad.ID)
		}
		if len(ids) == 2 && ids[1] == 999 && !errors.Is(err, ErrNotFound) {
			t.Errorf("CreateReport(unknown run) = %v, want ErrNotFound", err)
		}
	}

	// Deleting: a run used by a report is refused, as is an unfinished
	// run; a free run goes with its children.
	for _, id := range []uint{a.ID, b.ID} {
		err := s.DeleteRun(ctx, id)
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), r.Slug) {
			t.Errorf("DeleteRun(%d, used by a report) = %v, want ErrConflict naming the report", id, err)
		}
		get(t, s, id)
	}
	if err := s.DeleteRun(ctx, q.ID); !errors.Is(err, ErrConflict) {
		t.Errorf("DeleteRun(queued) = %v, want ErrConflict", err)
	}
	if err := s.DeleteRun(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteRun(unknown) = %v, want ErrNotFound", err)
	}
	gen := s.Generation()
	if err := s.DeleteRun(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if s.Generation() == gen {
		t.Error("DeleteRun did not bump the generation")
	}
	if _, err := s.GetRun(ctx, c.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted run still there: %v", err)
	}
	if n := rowCount(t, s, "metrics", c.ID) + rowCount(t, s, "series_points", c.ID); n != 0 {
		t.Errorf("%d metric/series rows left after DeleteRun", n)
	}
}
