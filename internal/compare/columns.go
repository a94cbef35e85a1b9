package compare

import (
	"strconv"

	"github.com/kbench/kbench/internal/rundoc"
)

// A Column is one column of a comparison: a single run, the runs of a
// repetition group, or several runs sharing a label. [Build] leaves a
// column's warm-up runs (rundoc.Run.Warmup) out of its statistics and says
// so in the table's notes; a column made only of warm-up runs keeps them.
type Column struct {
	Name string
	Runs []rundoc.Run
}

// Ways to form columns from runs, for [Columns].
const (
	ByRun   = "run"   // one column per run, named "#id label"
	ByLabel = "label" // one column per label, in first-seen order
	ByGroup = "group" // one column per repetition group; single runs stay alone
	// ByChange is two columns, the runs before a change point and the runs
	// from it on ([ChangeColumns]): a history's before/after comparison.
	ByChange = "change"
)

// Columns forms comparison columns from runs, in the order the runs come:
//
//   - by "run": one column per run, named "#12 trunk" ("#12" without a label);
//   - by "label": one column per distinct label in first-seen order, named
//     by the label ("CLASSIC", "CONSUMER (trunk)"; "(no label)" for runs
//     without one);
//   - by "group": one column per GroupID in first-seen order, named by the
//     label of its first run (or "group ID" without a label); two groups
//     with the same label get " (group ID)" appended. A run without a
//     GroupID is a column of its own, named as by "run".
//
// Any other value of by is taken as "run". Warm-up runs stay in the
// columns; [Build] excludes them from the statistics. The first column is
// the baseline.
func Columns(runs []rundoc.Run, by string) []Column {
	switch by {
	case ByLabel:
		return columnsByKey(runs, func(r rundoc.Run) (string, string) {
			return "l:" + r.Label, labelName(r.Label)
		})
	case ByGroup:
		cols := columnsByKey(runs, func(r rundoc.Run) (string, string) {
			if r.GroupID == "" {
				return "r:" + strconv.FormatUint(uint64(r.ID), 10), runName(r)
			}
			if r.Label == "" {
				return "g:" + r.GroupID, "group " + r.GroupID
			}
			return "g:" + r.GroupID, r.Label
		})
		// Two groups of the same label: tell them apart by group id.
		count := map[string]int{}
		for _, c := range cols {
			count[c.Name]++
		}
		for i, c := range cols {
			if count[c.Name] > 1 && c.Runs[0].GroupID != "" && c.Name != "group "+c.Runs[0].GroupID {
				cols[i].Name = c.Name + " (group " + c.Runs[0].GroupID + ")"
			}
		}
		return cols
	}
	cols := make([]Column, len(runs))
	for i, r := range runs {
		cols[i] = Column{Name: runName(r), Runs: []rundoc.Run{r}}
	}
	return cols
}

// ChangeColumns forms the two columns of a before/after comparison of a
// change point: the runs before run at (in the order the runs come, which
// is their series' time order), named "before #at", the baseline, and the
// runs from at on, named "from #at". If at is not among the runs, or is
// the first, every run is "before" and the table has one column.
func ChangeColumns(runs []rundoc.Run, at uint) []Column {
	atName := "#" + strconv.FormatUint(uint64(at), 10)
	before := Column{Name: "before " + atName}
	after := Column{Name: "from " + atName}
	split := len(runs)
	for i, r := range runs {
		if r.ID == at {
			split = i
			break
		}
	}
	before.Runs = append(before.Runs, runs[:split]...)
	after.Runs = append(after.Runs, runs[split:]...)
	var cols []Column
	for _, c := range []Column{before, after} {
		if len(c.Runs) > 0 {
			cols = append(cols, c)
		}
	}
	return cols
}

// columnsByKey groups runs by key in first-seen order.
func columnsByKey(runs []rundoc.Run, key func(rundoc.Run) (key, name string)) []Column {
	index := map[string]int{}
	var cols []Column
	for _, r := range runs {
		k, name := key(r)
		i, ok := index[k]
		if !ok {
			i = len(cols)
			index[k] = i
			cols = append(cols, Column{Name: name})
		}
		cols[i].Runs = append(cols[i].Runs, r)
	}
	return cols
}

// runName names a single run: "#12 trunk", or "#12" without a label.
func runName(r rundoc.Run) string {
	s := "#" + strconv.FormatUint(uint64(r.ID), 10)
	if r.Label != "" {
		s += " " + r.Label
	}
	return s
}

// labelName names a column of runs sharing a label.
func labelName(label string) string {
	if label == "" {
		return "(no label)"
	}
	return label
}
