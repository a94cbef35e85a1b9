package main

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBatches(t *testing.T) {
	for _, tc := range []struct {
		n, per int
		want   []int
	}{
		{1000, 50, slices.Repeat([]int{50}, 20)},
		{101, 50, []int{50, 50, 1}},
		{3, 50, []int{3}},
		{0, 50, nil},
	} {
		if got := batches(tc.n, tc.per); !slices.Equal(got, tc.want) {
			t.Errorf("batches(%d, %d) = %v, want %v", tc.n, tc.per, got, tc.want)
		}
	}
}

func TestRunChildID(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		id      uint
		ok      bool
	}{
		{"/x/kbench\x00run\x00--spec\x00/d/w1/runs/42/spec.json\x00--out\x00/d/w1/runs/42\x00--progress\x00json\x00", 42, true},
		{"kbench\x00run\x00--spec\x00runs/7/spec.json\x00", 7, true},
		// the worker itself, and its fork before the exec
		{"/x/kbench\x00worker\x00--database\x00postgres://h/db\x00--queue\x00cap\x00", 0, false},
		// a spec elsewhere, or no run subcommand
		{"kbench\x00run\x00--spec\x00/d/other/42/spec.json\x00", 0, false},
		{"kbench\x00broker\x00--spec\x00/d/runs/42/spec.json\x00", 0, false},
		{"kbench\x00run\x00--spec\x00/d/runs/x/spec.json\x00", 0, false},
		{"", 0, false},
	} {
		id, ok := runChildID([]byte(tc.cmdline))
		if id != tc.id || ok != tc.ok {
			t.Errorf("runChildID(%q) = %d, %v; want %d, %v", tc.cmdline, id, ok, tc.id, tc.ok)
		}
	}
}

func TestParsePIDs(t *testing.T) {
	if got := parsePIDs([]byte("12 345 \n")); !slices.Equal(got, []int{12, 345}) {
		t.Errorf("got %v", got)
	}
	if got := parsePIDs(nil); got != nil {
		t.Errorf("empty: got %v", got)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := medianOr0(tc.xs); got != tc.want {
			t.Errorf("medianOr0(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestParseTextArray(t *testing.T) {
	if got := parseTextArray("{vm_2026_12_01T14_31_09_804882}"); !slices.Equal(got, []string{"vm_2026_12_01T14_31_09_804882"}) {
		t.Errorf("got %v", got)
	}
	if got := parseTextArray("{a,b}"); len(got) != 2 {
		t.Errorf("got %v", got)
	}
	if got := parseTextArray("{}"); got != nil {
		t.Errorf("got %v", got)
	}
}

// capacityFixture is three runs executed once each by two workers, as
// every source would report them.
func capacityFixture() (submitted, []dbRun, []riverJob, []workerDir, [][]uint, []apiRun) {
	s := submitted{Label: "cap", Queue: "cap", N: 3, IDs: []uint{1, 2, 3}}
	now := time.Now()
	tv := sql.NullTime{Time: now, Valid: true}
	w := func(id, pid int64) (sql.NullInt64, sql.NullInt64) {
		return sql.NullInt64{Int64: id, Valid: true}, sql.NullInt64{Int64: pid, Valid: true}
	}
	var runs []dbRun
	for _, x := range []struct {
		id      uint
		wid, pd int64
	}{{1, 1, 100}, {2, 2, 200}, {3, 1, 100}} {
		wid, pid := w(x.wid, x.pd)
		runs = append(runs, dbRun{ID: x.id, Status: "succeeded", Queue: "cap", Worker: "vm", WorkerID: wid, WorkerPID: pid, StartedAt: tv, FinishedAt: tv})
	}
	jobs := []riverJob{
		{ID: 1, RunID: 1, State: "completed", Attempt: 1, AttemptedBy: []string{"a"}},
		{ID: 2, RunID: 2, State: "completed", Attempt: 1, AttemptedBy: []string{"b"}},
		{ID: 3, RunID: 3, State: "completed", Attempt: 1, AttemptedBy: []string{"a"}},
	}
	workers := []workerDir{{PID: 100, Dir: "w1"}, {PID: 200, Dir: "w2"}}
	perDir := [][]uint{{1, 3}, {2}}
	api := []apiRun{
		{ID: 3, Status: "succeeded", Queue: "cap", Worker: "vm"},
		{ID: 2, Status: "succeeded", Queue: "cap", Worker: "vm"},
		{ID: 1, Status: "succeeded", Queue: "cap", Worker: "vm"},
	}
	return s, runs, jobs, workers, perDir, api
}

// TestCheck: every way a run can be lost, duplicated or fail is a
// violation of its kind; the clean fixture has none.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*submitted, *[]dbRun, *[]riverJob, *[][]uint, *[]apiRun)
		kind   string // "" for none
	}{
		{"clean", func(*submitted, *[]dbRun, *[]riverJob, *[][]uint, *[]apiRun) {}, ""},
		{"failed run", func(_ *submitted, r *[]dbRun, _ *[]riverJob, _ *[][]uint, _ *[]apiRun) {
			(*r)[1].Status, (*r)[1].Error = "failed", "boom"
		}, "status"},
		{"lost run", func(_ *submitted, r *[]dbRun, _ *[]riverJob, _ *[][]uint, _ *[]apiRun) { *r = (*r)[:2] }, "lost"},
		{"run not submitted", func(_ *submitted, r *[]dbRun, _ *[]riverJob, _ *[][]uint, _ *[]apiRun) {
			*r = append(*r, dbRun{ID: 9, Status: "succeeded", Queue: "cap"})
		}, "database"},
		{"second attempt", func(_ *submitted, _ *[]dbRun, j *[]riverJob, _ *[][]uint, _ *[]apiRun) { (*j)[0].Attempt = 2 }, "river"},
		{"two clients", func(_ *submitted, _ *[]dbRun, j *[]riverJob, _ *[][]uint, _ *[]apiRun) {
			(*j)[0].AttemptedBy = []string{"a", "b"}
		}, "river"},
		{"two jobs", func(_ *submitted, _ *[]dbRun, j *[]riverJob, _ *[][]uint, _ *[]apiRun) {
			*j = append(*j, riverJob{ID: 4, RunID: 2, State: "completed", Attempt: 1, AttemptedBy: []string{"a"}})
		}, "river"},
		{"job discarded", func(_ *submitted, _ *[]dbRun, j *[]riverJob, _ *[][]uint, _ *[]apiRun) { (*j)[2].State = "discarded" }, "river"},
		{"run in two directories", func(_ *submitted, _ *[]dbRun, _ *[]riverJob, d *[][]uint, _ *[]apiRun) {
			(*d)[1] = append((*d)[1], 1)
		}, "directory"},
		{"run in no directory", func(_ *submitted, _ *[]dbRun, _ *[]riverJob, d *[][]uint, _ *[]apiRun) { (*d)[0] = []uint{1} }, "directory"},
		{"recorded worker is not the one that ran it", func(_ *submitted, r *[]dbRun, _ *[]riverJob, _ *[][]uint, _ *[]apiRun) {
			(*r)[1].WorkerPID.Int64 = 100
		}, "worker"},
		{"no worker recorded", func(_ *submitted, r *[]dbRun, _ *[]riverJob, _ *[][]uint, _ *[]apiRun) {
			(*r)[0].WorkerID, (*r)[0].WorkerPID = sql.NullInt64{}, sql.NullInt64{}
		}, "worker"},
		{"api lists one less", func(_ *submitted, _ *[]dbRun, _ *[]riverJob, _ *[][]uint, a *[]apiRun) { *a = (*a)[1:] }, "api"},
		{"api status", func(_ *submitted, _ *[]dbRun, _ *[]riverJob, _ *[][]uint, a *[]apiRun) { (*a)[0].Status = "running" }, "api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, runs, jobs, workers, perDir, api := capacityFixture()
			tc.change(&s, &runs, &jobs, &perDir, &api)
			f, perWorker := check(s, runs, jobs, workers, perDir, api, len(api))
			if tc.kind == "" {
				if len(f.list) > 0 {
					t.Fatalf("violations: %s", strings.Join(f.list, "; "))
				}
				if perWorker["100"] != 2 || perWorker["200"] != 1 {
					t.Errorf("per worker %v, want 100:2 200:1", perWorker)
				}
				return
			}
			if f.counts[tc.kind] == 0 {
				t.Errorf("no %s violation; got %v", tc.kind, f.list)
			}
		})
	}
}
