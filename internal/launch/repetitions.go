package launch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// Adding repetitions to a comparison runs each column's configuration N
// more times, interleaved as an A/B submission is (abtest.go), in a new
// A/B batch, the new runs appended to the columns' repetition groups: the
// comparison grows on both sides at once. A column's configuration is the
// spec stored with its runs. Runs that cannot be run again are named with
// why, and nothing is queued: imported runs (no spec), a column whose runs
// differ in configuration, a spec that needs a secret the server no longer
// holds (secrets stay in memory only until a run starts), a target
// --allow-target no longer allows, a run in no repetition group when
// columns are by group.

// Refusal is a run whose configuration cannot be run again, and why.
type Refusal struct {
	Run    uint   `json:"run"`
	Reason string `json:"reason"`
}

// RerunError refuses to add repetitions, naming every run that cannot be
// run again. It is a conflict (it is store.ErrConflict, a 409): the
// request is well formed, but the runs' state does not allow it; the
// server's answer lists Refused as "not_rerunnable". A request naming
// imported runs is bad input instead (it is a *rundoc.FieldError on
// "runs", a 400): no state of the server would ever let them run.
type RerunError struct{ Refused []Refusal }

// ReasonImported is why an imported run cannot be run again.
const ReasonImported = "imported: kbench has no configuration of it to run again"

// imported reports whether any refused run is an imported one.
func (e *RerunError) imported() bool {
	for _, r := range e.Refused {
		if r.Reason == ReasonImported {
			return true
		}
	}
	return false
}

// Error names the runs by reason, in the order they come.
func (e *RerunError) Error() string {
	var reasons []string
	runs := map[string][]string{}
	for _, r := range e.Refused {
		if runs[r.Reason] == nil {
			reasons = append(reasons, r.Reason)
		}
		runs[r.Reason] = append(runs[r.Reason], "#"+strconv.FormatUint(uint64(r.Run), 10))
	}
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = "run " + strings.Join(runs[why], ", ") + ": " + why
		if len(runs[why]) > 1 {
			parts[i] = "runs " + strings.Join(runs[why], ", ") + ": " + why
		}
	}
	return "cannot add repetitions: " + strings.Join(parts, "; ")
}

// Is makes a refusal of runs that are not imported a store.ErrConflict.
func (e *RerunError) Is(target error) bool { return target == store.ErrConflict && !e.imported() }

// As makes a refusal of imported runs a *rundoc.FieldError on field
// "runs", which a server answers 400 naming the field.
func (e *RerunError) As(target any) bool {
	if fe, ok := target.(**rundoc.FieldError); ok && e.imported() {
		*fe = &rundoc.FieldError{Field: "runs", Msg: e.Error()}
		return true
	}
	return false
}

// PlanRepetitions names every run of runs that cannot be run again when
// repetitions are added to its columns (formed by by), none when all
// can: the comparison page offers the button or says why not.
func (l *Launcher) PlanRepetitions(runs []rundoc.Run, by string) []Refusal {
	_, refused := l.planRepetitions(runs, by)
	return refused
}

// planRepetitions makes one side per column of runs (formed by by) to
// queue more repetitions of, or names every run that cannot be run again.
func (l *Launcher) planRepetitions(runs []rundoc.Run, by string) ([]abSide, []Refusal) {
	var sides []abSide
	var refused []Refusal
	for _, col := range compare.Columns(runs, by) {
		side, bad := l.planColumn(col, by)
		if len(bad) > 0 {
			refused = append(refused, bad...)
			continue
		}
		sides = append(sides, side)
	}
	return sides, refused
}

// planColumn is planRepetitions for one column.
func (l *Launcher) planColumn(col compare.Column, by string) (abSide, []Refusal) {
	var measured []rundoc.Run
	for _, r := range col.Runs {
		if !r.Warmup {
			measured = append(measured, r)
		}
	}
	if len(measured) == 0 {
		measured = col.Runs
	}
	all := func(format string, args ...any) []Refusal {
		out := make([]Refusal, len(measured))
		for i, r := range measured {
			out[i] = Refusal{r.ID, fmt.Sprintf(format, args...)}
		}
		return out
	}
	var bad []Refusal
	for _, r := range measured {
		if IsImported(&r) {
			bad = append(bad, Refusal{r.ID, ReasonImported})
		}
	}
	if len(bad) > 0 {
		return abSide{}, bad
	}
	first := measured[0]
	if by == compare.ByGroup && first.GroupID == "" {
		return abSide{}, all("in no repetition group: compare by label to add repetitions to it")
	}
	for _, r := range measured[1:] {
		if r.Spec != first.Spec {
			bad = append(bad, Refusal{r.ID, fmt.Sprintf("configuration differs from run #%d's in column %s: compare by group to repeat each", first.ID, col.Name)})
		}
	}
	if len(bad) > 0 {
		return abSide{}, bad
	}
	file, err := rundoc.ParseSpecFile([]byte(first.Spec))
	if err != nil {
		return abSide{}, all("stored configuration unreadable: %v", err)
	}
	spec, err := rundoc.SpecFromParams(file.Workload, file.Params, l.opts.Validate)
	if err != nil {
		return abSide{}, all("stored configuration no longer accepted: %v", err)
	}
	if fe := l.targetRefusal(spec.Targets()); fe != nil {
		return abSide{}, all("target no longer allowed: %s", fe.Msg)
	}
	var secrets map[string]string
	if needs := redactedProps(spec); len(needs) > 0 {
		var same []uint
		for _, r := range col.Runs {
			if r.Spec == first.Spec {
				same = append(same, r.ID)
			}
		}
		if secrets = l.runs.HeldSecrets(same, needs); secrets == nil {
			return abSide{}, all("needs a secret the server no longer holds (%s): secrets stay in memory only until a run starts; submit the configuration again with it",
				strings.Join(needs, ", "))
		}
	}
	group := first.GroupID
	if by == compare.ByLabel {
		group = ""
		for _, r := range measured {
			switch {
			case r.GroupID == "" || r.GroupID == group:
			case group == "":
				group = r.GroupID
			default:
				group = "-" // several: the new runs get a group of their own
			}
		}
		if group == "" || group == "-" {
			group = randomID(8)
		}
	}
	return abSide{label: first.Label, group: group, workload: file.Workload, specJSON: first.Spec, fingerprint: first.Fingerprint, secrets: secrets,
		meta: repeatedMeta(&first), queue: first.Queue}, nil
}

// IsImported reports whether r was imported: kbench has no spec of it to
// run again.
func IsImported(r *rundoc.Run) bool { return r.Source == rundoc.SourceImported || r.Spec == "" }

// redactedProps are the properties of spec whose secret the store does
// not have, sorted.
func redactedProps(spec rundoc.Spec) []string {
	var out []string
	for k, v := range spec.Props {
		if strings.Contains(v, rundoc.Redacted) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// AddRepetitions queues n more repetitions of each column of the
// comparison of runs by by, and returns the new runs (in queue order) and
// their A/B batch. Runs that cannot be run again are a *RerunError.
func (l *Launcher) AddRepetitions(ctx context.Context, runs []rundoc.Run, by string, n int) ([]*store.Run, string, error) {
	cols := len(compare.Columns(runs, by))
	if total := len(runs) + n*cols; total > MaxCompareRuns {
		return nil, "", rundoc.NewFieldError("n", "%d more runs of each of %d columns would make the comparison %d runs; at most %d can be compared",
			n, cols, total, MaxCompareRuns)
	}
	sides, refused := l.planRepetitions(runs, by)
	if len(refused) > 0 {
		return nil, "", &RerunError{refused}
	}
	if err := l.admitRuns(ctx, "n", n*len(sides), fmt.Sprintf("%d more runs of each of %d columns make %d runs", n, len(sides), n*len(sides))); err != nil {
		return nil, "", err
	}
	batch := randomID(8)
	added, err := l.queueInterleaved(ctx, batch, sides, 0, n)
	if err != nil {
		return nil, "", err
	}
	return added, batch, nil
}

// repeatedMeta is the metadata of runs added to a column: its first run's
// tags, but for a version that run recorded itself (the kafka-go of its
// build, see runner's resultMeta): the new runs record their own.
func repeatedMeta(first *rundoc.Run) map[string]string {
	meta := maps.Clone(first.Meta)
	if v, ok := meta[rundoc.MetaVersion]; ok && first.Environment != nil && v == first.Environment.KafkaGoVersion {
		delete(meta, rundoc.MetaVersion)
	}
	return meta
}
