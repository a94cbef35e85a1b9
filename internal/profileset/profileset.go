// Package profileset loads the two sides of a profile comparison: for
// each side's runs, the run's profile of one kind and role, parsed, with
// the run's reference amounts (its total of the compared sample type, the
// records it moved), ready for profiles.DiffRuns, TopChangesRuns,
// MergeRuns and Significance. Runs without such a profile are skipped and
// reported, not errors.
//
// It sits outside server so that other readers of run sets (the
// regressions package, kbench check through the API) share one loader,
// and reads the store through the small Store interface so that tests
// use a fake. RunWork is the one place that says how many records a run
// moved.
package profileset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
)

// MaxRuns is the most runs a side may hold: each is a parsed profile in
// memory, and a diff of 50 against 50 is already seconds of work.
const MaxRuns = 50

// Store is what Load reads of the store (*store.Store has it).
type Store interface {
	GetRunsParts(ctx context.Context, ids []uint, parts store.RunParts) ([]rundoc.Run, error)
}

// Loader returns a stored profile, parsed, by profile id; the server
// passes its parse cache. The profile is only read.
type Loader func(ctx context.Context, profileID uint) (*profile.Profile, error)

// Query names the runs of both sides and the profile compared.
type Query struct {
	BaseRuns, TargetRuns []uint
	// Kind and Role select each run's profile ("cpu", "client"); when a
	// run has several of that kind and role, the first stored is taken.
	Kind, Role string
	// Sample is the sample type compared ("" for each profile's default).
	Sample string
}

// Member is one run of a side with its profile.
type Member struct {
	RunID, ProfileID uint
	Prof             *profile.Profile
	SampleIndex      int
	// Work is the records the run moved (RunWork); WorkErr says why it
	// is not known.
	Work    float64
	WorkErr error
}

// Skip is a run left out of a side, and why.
type Skip struct {
	RunID  uint   `json:"run_id"`
	Side   string `json:"side"`
	Reason string `json:"reason"`
}

// Set is both sides of a comparison. Base and Target are in the order
// the query named the runs.
type Set struct {
	Base, Target []Member
	Skipped      []Skip
}

// Load reads the runs of q's sides, finds each run's profile of q.Kind
// and q.Role, parses it and picks q.Sample. Errors that are the query's
// fault are *rundoc.FieldError naming base_runs, target_runs, kind, role
// or sample: a side with no runs, more than MaxRuns or a run id twice, an
// unknown run, a side none of whose runs has the profile, a sample type a
// profile lacks or whose type differs from the others'.
func Load(ctx context.Context, st Store, load Loader, q Query) (*Set, error) {
	if q.Kind == "" {
		return nil, &rundoc.FieldError{Field: "kind", Msg: "required with base_runs and target_runs (cpu, heap, wall, …)"}
	}
	if q.Role == "" {
		return nil, &rundoc.FieldError{Field: "role", Msg: "required with base_runs and target_runs (client, broker)"}
	}
	sides := []struct {
		field, name string
		ids         []uint
	}{{"base_runs", "base", q.BaseRuns}, {"target_runs", "target", q.TargetRuns}}
	for _, sd := range sides {
		if err := checkIDs(sd.field, sd.ids); err != nil {
			return nil, err
		}
	}
	set := &Set{}
	for _, sd := range sides {
		runs, err := st.GetRunsParts(ctx, sd.ids, store.RunParts{Profiles: true})
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, &rundoc.FieldError{Field: sd.field, Msg: strings.TrimPrefix(err.Error(), "store: ")}
			}
			return nil, fmt.Errorf("profileset: read the %s runs: %w", sd.name, err)
		}
		var members []Member
		for i := range runs {
			r := &runs[i]
			pid, ok := pick(r.Profiles, q.Kind, q.Role)
			if !ok {
				set.Skipped = append(set.Skipped, Skip{RunID: r.ID, Side: sd.name,
					Reason: fmt.Sprintf("no %s profile of the %s", q.Kind, q.Role)})
				continue
			}
			p, err := load(ctx, pid)
			if err != nil {
				return nil, fmt.Errorf("profileset: run %d: profile %d: %w", r.ID, pid, err)
			}
			m := Member{RunID: r.ID, ProfileID: pid, Prof: p}
			m.Work, m.WorkErr = RunWork(r)
			members = append(members, m)
		}
		if len(members) == 0 {
			return nil, &rundoc.FieldError{Field: sd.field, Msg: fmt.Sprintf("none of the %s runs (%s) has a %s profile of the %s",
				sd.name, joinIDs(sd.ids), q.Kind, q.Role)}
		}
		if sd.name == "base" {
			set.Base = members
		} else {
			set.Target = members
		}
	}
	if err := set.PickSample(q.Sample); err != nil {
		return nil, err
	}
	return set, nil
}

func checkIDs(field string, ids []uint) error {
	if len(ids) == 0 {
		return &rundoc.FieldError{Field: field, Msg: "must name at least one run"}
	}
	if len(ids) > MaxRuns {
		return &rundoc.FieldError{Field: field, Msg: fmt.Sprintf("names %d runs; at most %d a side", len(ids), MaxRuns)}
	}
	for i, id := range ids {
		if id == 0 {
			return &rundoc.FieldError{Field: field, Msg: "run ids are positive integers"}
		}
		if slices.Contains(ids[:i], id) {
			return &rundoc.FieldError{Field: field, Msg: fmt.Sprintf("names run %d twice", id)}
		}
	}
	return nil
}

// ParseIDs reads a comma-separated list of run ids ("3,4,5") as a query
// parameter holds it; errors name field. It does not check the count
// (Load does) but stops reading beyond MaxRuns+1 ids.
func ParseIDs(field, s string) ([]uint, error) {
	var out []uint
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var id uint64
		if _, err := fmt.Sscan(part, &id); err != nil || id == 0 || id > 1<<32-1 || fmt.Sprint(id) != part {
			return nil, &rundoc.FieldError{Field: field, Msg: fmt.Sprintf("%q is not a run id", part)}
		}
		out = append(out, uint(id))
		if len(out) > MaxRuns {
			return nil, &rundoc.FieldError{Field: field, Msg: fmt.Sprintf("names more than %d runs; at most %d a side", MaxRuns, MaxRuns)}
		}
	}
	if len(out) == 0 {
		return nil, &rundoc.FieldError{Field: field, Msg: "must name at least one run"}
	}
	return out, nil
}

// pick returns the first stored profile of a kind and role.
func pick(ps []rundoc.Profile, kind, role string) (uint, bool) {
	for _, p := range ps {
		if string(p.Kind) == kind && string(p.Role) == role {
			return p.ID, true
		}
	}
	return 0, false
}

// PickSample sets every member's SampleIndex to the sample type called
// name (profiles.PickSample: each profile's default when empty) and
// checks that all are of one type and unit, with the target's first run
// as the measure: a difference of two sample types means nothing.
func (s *Set) PickSample(name string) error {
	var want *profile.ValueType
	var wantRun uint
	for _, side := range []struct {
		name string
		ms   []Member
	}{{"target", s.Target}, {"base", s.Base}} {
		for i := range side.ms {
			m := &side.ms[i]
			idx, err := profiles.PickSample(m.Prof, name)
			if err != nil {
				return &rundoc.FieldError{Field: "sample", Msg: fmt.Sprintf("%s run %d: %v", side.name, m.RunID, err)}
			}
			m.SampleIndex = idx
			st := m.Prof.SampleType[idx]
			if want == nil {
				want, wantRun = st, m.RunID
				continue
			}
			if st.Type != want.Type || st.Unit != want.Unit {
				return &rundoc.FieldError{Field: "sample", Msg: fmt.Sprintf(
					"the %s run %d's profile compares %s (%s), the target run %d's %s (%s): different sample types; pick one both have with sample=",
					side.name, m.RunID, st.Type, st.Unit, wantRun, want.Type, want.Unit)}
			}
		}
	}
	return nil
}

// Inputs returns both sides as profiles.RunInput with the references of
// normalize ("total", "" meaning total, "work" or "none") and the
// normalisation's description (profiles.NormalizeRuns). normalize=work
// needs every run's record count (WorkReasons says which lack one);
// otherwise, and for an unknown mode, the error is a *rundoc.FieldError
// for normalize. When a run's total is not positive, normalize=total
// compares as measured (references 1) and says so, as
// profiles.NormalizeTotal does for a pair.
func (s *Set) Inputs(normalize string) (base, target []profiles.RunInput, norm profiles.Normalization, err error) {
	mode := normalize
	if mode == "" {
		mode = "total"
	}
	ref := func(Member) float64 { return 1 }
	switch mode {
	case "none":
	case "total":
		if s.totalsPositive() {
			ref = func(m Member) float64 {
				t, _ := profiles.SampleTotal(m.Prof, m.SampleIndex)
				return float64(t)
			}
		}
	case "work":
		if reasons := s.WorkReasons(); len(reasons) > 0 {
			return nil, nil, norm, &rundoc.FieldError{Field: "normalize", Msg: "work is not available: " + strings.Join(reasons, "; ")}
		}
		ref = func(m Member) float64 { return m.Work }
	default:
		return nil, nil, norm, &rundoc.FieldError{Field: "normalize", Msg: "must be total, work or none"}
	}
	conv := func(ms []Member) []profiles.RunInput {
		out := make([]profiles.RunInput, len(ms))
		for i, m := range ms {
			out[i] = profiles.RunInput{RunID: m.RunID, Prof: m.Prof, SampleIndex: m.SampleIndex, Ref: ref(m)}
		}
		return out
	}
	base, target = conv(s.Base), conv(s.Target)
	if mode == "total" && !s.totalsPositive() && (len(base) > 1 || len(target) > 1) {
		norm = profiles.NormalizeNone()
		norm.Mode = "total"
		norm.Explain = "cannot normalize by total: a run's total is not positive; values compare as measured"
		return base, target, norm, nil
	}
	norm, err = profiles.NormalizeRuns(mode, base, target, "records")
	if err != nil {
		return nil, nil, norm, &rundoc.FieldError{Field: "normalize", Msg: err.Error()}
	}
	return base, target, norm, nil
}

func (s *Set) totalsPositive() bool {
	for _, m := range slices.Concat(s.Base, s.Target) {
		if t, _ := profiles.SampleTotal(m.Prof, m.SampleIndex); t <= 0 {
			return false
		}
	}
	return true
}

// WorkReasons says why per-record normalisation is not available, one
// reason per entry (none when every run has a record count). For one run
// against one it names the base and the target run, and the same reason
// for both is said once.
func (s *Set) WorkReasons() []string {
	var lacking, unread []uint
	for _, m := range slices.Concat(s.Base, s.Target) {
		switch {
		case m.WorkErr == nil:
		case errors.Is(m.WorkErr, ErrNoRecordCount):
			if !slices.Contains(lacking, m.RunID) {
				lacking = append(lacking, m.RunID)
			}
		default:
			if !slices.Contains(unread, m.RunID) {
				unread = append(unread, m.RunID)
			}
		}
	}
	if len(lacking) == 0 && len(unread) == 0 {
		return nil
	}
	if len(s.Base) == 1 && len(s.Target) == 1 {
		return pairReasons(s.Base[0], s.Target[0])
	}
	var out []string
	if len(lacking) > 0 {
		out = append(out, fmt.Sprintf("%s no record count (%s)", plural(len(lacking), "a run has", "runs have"), runList(lacking)))
	}
	if len(unread) > 0 {
		out = append(out, fmt.Sprintf("%s could not be read (%s)", plural(len(unread), "a run", "runs"), runList(unread)))
	}
	return out
}

// pairReasons words why a pair lacks work, one reason per entry.
func pairReasons(b, t Member) []string {
	bErr, tErr := b.WorkErr, t.WorkErr
	if errors.Is(bErr, ErrNoRecordCount) && errors.Is(tErr, ErrNoRecordCount) {
		if b.RunID == t.RunID {
			return []string{fmt.Sprintf("run %d has no record count", b.RunID)}
		}
		return []string{fmt.Sprintf("neither run has a record count (runs %d and %d)", b.RunID, t.RunID)}
	}
	var out []string
	for _, side := range []struct {
		name string
		run  uint
		err  error
	}{{"base", b.RunID, bErr}, {"target", t.RunID, tErr}} {
		switch {
		case side.err == nil:
		case errors.Is(side.err, ErrNoRecordCount):
			out = append(out, fmt.Sprintf("the %s run (run %d) has no record count", side.name, side.run))
		default:
			out = append(out, fmt.Sprintf("the %s run (run %d) could not be read", side.name, side.run))
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func runList(ids []uint) string {
	if len(ids) == 1 {
		return fmt.Sprintf("run %d", ids[0])
	}
	return "runs " + joinIDs(ids)
}

func joinIDs(ids []uint) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

// ErrNoRecordCount: a run that records no count of the records it moved
// (an imported profile without Kafka's output, say).
var ErrNoRecordCount = errors.New("no record count")

// RunWork is how many records a run moved in its measured window: its
// record-count metric (records-sent of producers, records-consumed-total
// of consumers, records of older results) or else the measured_records of
// its measurement, which every kbench run writes (a write-path run's
// measured requests × records per request) and imports of Kafka's output
// fill in. A run with neither is ErrNoRecordCount.
func RunWork(run *rundoc.Run) (float64, error) {
	for _, name := range []string{"records-sent", "records-consumed-total", "records"} {
		for _, m := range run.Metrics {
			if m.Name == name && m.Value > 0 {
				return m.Value, nil
			}
		}
	}
	if m := run.Measurement; m != nil && m.MeasuredRecords > 0 {
		return float64(m.MeasuredRecords), nil
	}
	return 0, fmt.Errorf("run %d: %w", run.ID, ErrNoRecordCount)
}

// Pair is the set of one profile a side, for a comparison named by
// profile ids: the caller gives each side's run id, profile id and parsed
// profile; Pair reads both runs for their record counts (a run it cannot
// read leaves WorkErr set, not an error) and picks sample.
func Pair(ctx context.Context, st Store, base, target Member, sample string) (*Set, error) {
	set := &Set{Base: []Member{base}, Target: []Member{target}}
	for _, m := range []*Member{&set.Base[0], &set.Target[0]} {
		runs, err := st.GetRunsParts(ctx, []uint{m.RunID}, store.RunParts{})
		switch {
		case err != nil:
			m.WorkErr = err
		case len(runs) != 1:
			m.WorkErr = fmt.Errorf("run %d: %w", m.RunID, store.ErrNotFound)
		default:
			m.Work, m.WorkErr = RunWork(&runs[0])
		}
	}
	if err := set.PickSample(sample); err != nil {
		return nil, err
	}
	return set, nil
}
