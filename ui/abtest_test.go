package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestAddRepetitionsSuggested: the comparison page's form starts at the
// number of repetitions the table says its undecided changes need, within
// what the comparison can still hold, and says where the number comes
// from; without a suggestion it starts at DefaultAddRepetitions.
func TestAddRepetitionsSuggested(t *testing.T) {
	q := CompareQuery{Runs: []uint{1, 2, 3, 4}, By: "group"}
	tests := []struct {
		suggested, maxRuns, wantN int
		wantHint                  bool
	}{
		{0, 50, DefaultAddRepetitions, false},
		{7, 50, 7, true},
		{30, 50, 23, true}, // (50 - 4 runs) / 2 columns
		{3, 6, 1, true},
	}
	for _, tt := range tests {
		v := NewAddRepetitions(q, 2, nil, tt.maxRuns, 50, tt.suggested)
		if v.N != tt.wantN || v.Suggested != tt.suggested {
			t.Errorf("suggested %d, max %d runs: N %d (suggested %d), want %d", tt.suggested, tt.maxRuns, v.N, v.Suggested, tt.wantN)
		}
		runs := []rundoc.Run{{ID: 1, Label: "a", Workload: "producer", Status: rundoc.StatusSucceeded},
			{ID: 2, Label: "b", Workload: "producer", Status: rundoc.StatusSucceeded}}
		tab, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cv := NewCompareView(tab, runs, CompareQuery{Runs: []uint{1, 2}, By: compare.ByLabel}, "")
		cv.AddRuns = v
		page := render(t, newTestUI(t), "compare", cv)
		if !strings.Contains(page, fmt.Sprintf(`name="n" value="%d"`, tt.wantN)) {
			t.Errorf("suggested %d: the form does not start at %d", tt.suggested, tt.wantN)
		}
		if got := strings.Contains(page, `id="add-reps-suggested"`); got != tt.wantHint {
			t.Errorf("suggested %d: hint shown %v, want %v", tt.suggested, got, tt.wantHint)
		}
	}
}
