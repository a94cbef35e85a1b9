package compare

import (
	"fmt"
	"slices"

	"github.com/kbench/kbench/internal/rundoc"
)

// Runs queued interleaved (rundoc.Run.ABBatch) ran alternately, one
// configuration after the other and back, so that whatever drifts on the
// machine during a batch (heat, other load, the page cache) reaches each
// configuration alike. Repetitions queued one configuration after another
// put all of a drift on one side, where the test takes it for a change.

// checkInterleaving sets t.NotInterleaved and says in t.Notes which
// columns were not interleaved with the baseline. Only a column and a
// baseline that both have repetitions (≥ 2 measured runs) are checked:
// with a single run on a side there is no repetition to interleave, and
// the notes already say that a single run is not tested. A column is
// interleaved with the baseline when every measured run of both has a
// batch and both sides ran in the same batches; the runs of a batch the
// other side has no run in ran apart from it.
func (t *Table) checkInterleaving(measured [][]rundoc.Run) {
	if len(measured) < 2 || len(measured[0]) < 2 {
		return
	}
	base := measured[0]
	for i := 1; i < len(measured); i++ {
		if len(measured[i]) < 2 {
			continue
		}
		apart := append(runsApart(base, measured[i]), runsApart(measured[i], base)...)
		if len(apart) == 0 {
			continue
		}
		slices.Sort(apart)
		name := t.Columns[i].Name
		t.NotInterleaved = append(t.NotInterleaved, name)
		what := fmt.Sprintf("%s and the baseline %s ran one after another, not interleaved", name, t.Columns[0].Name)
		if len(apart) < len(base)+len(measured[i]) {
			what = fmt.Sprintf("%s and the baseline %s were not all interleaved (runs that ran apart: %s)", name, t.Columns[0].Name, idList(apart))
		}
		t.Notes = append(t.Notes, what+": machine drift between them may land on one side and read as a change. "+
			"Queue configurations together to interleave them (an A/B submission, or added repetitions).")
	}
}

// runsApart are the runs of side that were not queued in a batch with a
// run of other.
func runsApart(side, other []rundoc.Run) []uint {
	batches := map[string]bool{}
	for _, r := range other {
		if r.ABBatch != "" {
			batches[r.ABBatch] = true
		}
	}
	var out []uint
	for _, r := range side {
		if r.ABBatch == "" || !batches[r.ABBatch] {
			out = append(out, r.ID)
		}
	}
	return out
}
