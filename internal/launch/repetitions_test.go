package launch

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// TestLaunchAddRepetitions: adding repetitions to a comparison by group
// queues n more runs of each column, interleaved, appended to each
// column's group with the next indexes; imported runs are refused as a
// field error on "runs", runs in no group by group as a conflict naming
// them.
func TestLaunchAddRepetitions(t *testing.T) {
	l := newTestLauncher(t, nil)
	ab, err := l.CreateAB(t.Context(), &Request{Workload: "producer", Repetitions: 1,
		Configs: []Config{{Label: "a", Params: tinyParams(t)}, {Label: "b", Params: tinyParams(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint
	for _, r := range ab.Runs {
		ids = append(ids, r.ID)
	}
	runs, err := l.st.GetRuns(t.Context(), ids)
	if err != nil {
		t.Fatal(err)
	}
	added, batch, err := l.AddRepetitions(t.Context(), runs, compare.ByGroup, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range added {
		got = append(got, r.Label)
		if r.ABBatch != batch || r.ABBatch == ab.Batch {
			t.Errorf("run %d in batch %q, want a new batch %q", r.ID, r.ABBatch, batch)
		}
	}
	if want := []string{"a", "b", "b", "a"}; !slices.Equal(got, want) {
		t.Errorf("added %v, want %v", got, want)
	}
	if added[0].GroupID != ab.Groups[0] || added[0].GroupIndex != 2 || added[3].GroupIndex != 3 {
		t.Errorf("first added run in group %q #%d, last #%d; want group %q from #2", added[0].GroupID, added[0].GroupIndex, added[3].GroupIndex, ab.Groups[0])
	}

	imported := &store.Run{Label: "old", Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, Source: rundoc.SourceImported}
	loose := &store.Run{Label: "loose", Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, Source: rundoc.SourceLaunched, Spec: runs[0].Spec}
	if err := l.st.CreateRuns(t.Context(), []*store.Run{imported, loose}); err != nil {
		t.Fatal(err)
	}
	both, err := l.st.GetRuns(t.Context(), []uint{imported.ID, loose.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = l.AddRepetitions(t.Context(), both[:1], compare.ByGroup, 1)
	var re *RerunError
	if fieldOf(err) != "runs" || !errors.As(err, &re) || errors.Is(err, store.ErrConflict) {
		t.Errorf("imported: %v, want a field error on runs", err)
	}
	_, _, err = l.AddRepetitions(t.Context(), both[1:], compare.ByGroup, 1)
	if !errors.As(err, &re) || !errors.Is(err, store.ErrConflict) || fieldOf(err) != "" || len(re.Refused) != 1 || re.Refused[0].Run != loose.ID {
		t.Errorf("in no group: %v, want a conflict naming run %d", err, loose.ID)
	}
	if refused := l.PlanRepetitions(both, compare.ByGroup); len(refused) != 2 {
		t.Errorf("plan: %v, want both runs refused", refused)
	}
}
