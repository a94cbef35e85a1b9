package launch

import (
	"slices"
	"testing"
)

// TestLaunchABInterleaved: an A/B submission stores each configuration's
// runs as one repetition group under its label, all of one A/B batch,
// and submits them round by round, each round the reverse of the one
// before, warm-up rounds first.
func TestLaunchABInterleaved(t *testing.T) {
	l := newTestLauncher(t, nil)
	req := Request{Workload: "producer", Repetitions: 2, WarmupRuns: 1,
		Configs: []Config{{Label: "a", Params: tinyParams(t)}, {Label: "b", Params: tinyParams(t)}}}
	res, err := l.CreateAB(t.Context(), &req)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	var ids []uint
	for _, r := range res.Runs {
		labels = append(labels, r.Label)
		ids = append(ids, r.ID)
		if r.ABBatch != res.Batch {
			t.Errorf("run %d in batch %q, want %q", r.ID, r.ABBatch, res.Batch)
		}
	}
	if want := []string{"a", "b", "b", "a", "a", "b"}; !slices.Equal(labels, want) {
		t.Errorf("queue order %v, want %v", labels, want)
	}
	if !res.Runs[0].Warmup || !res.Runs[1].Warmup || res.Runs[2].Warmup {
		t.Errorf("the first round is not the warm-up round")
	}
	if len(res.Groups) != 2 || res.Runs[0].GroupID != res.Groups[0] || res.Runs[1].GroupID != res.Groups[1] {
		t.Errorf("groups %v, runs' %q and %q", res.Groups, res.Runs[0].GroupID, res.Runs[1].GroupID)
	}
	if got := l.runs.queued(); !slices.Equal(got, ids) {
		t.Errorf("submitted %v, want %v", got, ids)
	}
}

// TestLaunchABRefusesTool: a submission of configurations that names a
// tool is refused on "tool", and nothing is stored.
func TestLaunchABRefusesTool(t *testing.T) {
	l := newTestLauncher(t, nil)
	req := Request{Workload: "producer", Tool: "perf", Configs: []Config{{Label: "a"}, {Label: "b"}}}
	if _, err := l.CreateAB(t.Context(), &req); fieldOf(err) != "tool" {
		t.Errorf("A/B with a tool: %v, want a field error on tool", err)
	}
	if n, _ := l.st.CountRuns(t.Context()); n != 0 {
		t.Errorf("%d runs stored", n)
	}
}

func TestInterleaveOrder(t *testing.T) {
	if got, want := interleaveOrder(3, 3), []int{0, 1, 2, 2, 1, 0, 0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("interleaveOrder(3, 3) = %v, want %v", got, want)
	}
}
