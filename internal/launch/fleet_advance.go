// The fleet pass: each pass of the sweep loop moves every fleet whose
// parent has not ended. The parent runs once a shard does; it fails,
// naming the shard, as soon as a shard ends other than succeeded (its
// siblings are canceled, their partial results kept as theirs); it is
// canceled with its shards; and once every shard succeeded it gets the
// merge of their results (fleetmerge). Every step is conditional in the
// store, so several servers passing over one fleet do it once.

package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kbench/kbench/internal/fleetmerge"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
)

// AdvanceFleets advances every fleet whose parent has not ended.
func (l *Launcher) AdvanceFleets(ctx context.Context) error {
	fleets, err := l.store.UnfinishedFleets(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i := range fleets {
		// One fleet's trouble (a database error) must not hold back the
		// others: each is tried, and the pass tried again.
		if err := l.advanceFleet(ctx, &fleets[i]); err != nil {
			errs = append(errs, fmt.Errorf("launch: fleet %d: %w", fleets[i].ID, err))
		}
	}
	return errors.Join(errs...)
}

func (l *Launcher) advanceFleet(ctx context.Context, f *store.Fleet) error {
	_, links, err := l.store.GetFleet(ctx, f.ID)
	if err != nil {
		return err
	}
	ids := make([]uint, len(links))
	for i, s := range links {
		ids[i] = s.RunID
	}
	// Statuses and metrics only: the merge reads series and profiles
	// itself, once, rather than every pass of a fleet still running.
	runs, err := l.store.GetRunsParts(ctx, ids, store.RunParts{})
	if errors.Is(err, store.ErrNotFound) {
		// A shard's run was deleted: the fleet cannot be whole again.
		why := fmt.Sprintf("a shard's run was deleted (%v)", err)
		if err := l.store.EndFleet(ctx, f.ID, store.FleetFailed, why); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
		live, err := l.store.SweepRunsMetrics(ctx, ids, nil)
		if err != nil {
			return err
		}
		return l.endParent(ctx, f, live, rundoc.StatusFailed, why)
	}
	if err != nil {
		return err
	}
	var first *time.Time
	for _, r := range runs {
		if r.StartedAt != nil && (first == nil || r.StartedAt.Before(*first)) {
			first = r.StartedAt
		}
	}
	if first != nil {
		if err := l.store.StartRun(ctx, f.ParentID, *first); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	switch f.Phase {
	case store.FleetFailed, store.FleetCanceled:
		return l.endParent(ctx, f, runs, statusOfFleet(f.Phase), f.Error)
	case store.FleetMerged:
		return l.mergeParent(ctx, f, links, ids)
	}
	for i, r := range runs {
		if !r.Final() || r.Status == rundoc.StatusSucceeded {
			continue
		}
		to, verb := store.FleetFailed, string(r.Status)
		if r.Status == rundoc.StatusCanceled {
			to = store.FleetCanceled
		}
		where := ""
		if r.Worker != "" {
			where = " on " + r.Worker
		}
		why := fmt.Sprintf("shard %d of %d (run %d%s) %s", i+1, f.Shards, r.ID, where, verb)
		if r.Error != "" {
			why += ": " + r.Error
		}
		if err := l.store.EndFleet(ctx, f.ID, to, why); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return nil // another process ended it: the next pass reads why
			}
			return err
		}
		return l.endParent(ctx, f, runs, statusOfFleet(to), why)
	}
	if slices.ContainsFunc(runs, func(r rundoc.Run) bool { return r.Status != rundoc.StatusSucceeded }) {
		return nil // shards still going
	}
	if err := l.store.EndFleet(ctx, f.ID, store.FleetMerged, "", store.FleetStarted); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil
		}
		return err
	}
	return l.mergeParent(ctx, f, links, ids)
}

func statusOfFleet(phase string) rundoc.Status {
	if phase == store.FleetCanceled {
		return rundoc.StatusCanceled
	}
	return rundoc.StatusFailed
}

// endParent ends a fleet's parent with status and why, after canceling
// the shards that have not ended: no partial figure becomes the
// fleet's, and the shards keep what they measured as their own results.
func (l *Launcher) endParent(ctx context.Context, f *store.Fleet, shards []rundoc.Run, status rundoc.Status, why string) error {
	for _, r := range shards {
		if r.Final() {
			continue
		}
		if err := l.runs.Cancel(ctx, r.ID); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	err := l.store.FinishRun(ctx, f.ParentID, store.Outcome{Status: status, Error: "fleet: " + why})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// mergeParent stores the merge of the shards' results as the parent's.
// A merge that fails fails the parent, saying why.
func (l *Launcher) mergeParent(ctx context.Context, f *store.Fleet, links []store.FleetShard, ids []uint) error {
	runs, err := l.store.GetRunsParts(ctx, ids, store.RunParts{Series: true, Profiles: true})
	if err != nil {
		return err
	}
	outcome, err := l.merged(ctx, f, links, runs)
	if err != nil {
		outcome = store.Outcome{Status: rundoc.StatusFailed, Error: "fleet: merging the shards' results: " + err.Error()}
	}
	err = l.store.FinishRun(ctx, f.ParentID, outcome)
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// merged reads the shards' histogram logs and merges their results.
func (l *Launcher) merged(ctx context.Context, f *store.Fleet, links []store.FleetShard, runs []rundoc.Run) (store.Outcome, error) {
	shards := make([]fleetmerge.Shard, len(runs))
	for i, r := range runs {
		s := fleetmerge.Shard{Index: i, Series: r.Series, Metrics: r.Metrics}
		if r.Measurement != nil {
			s.Start = r.Measurement.ShardStart
		}
		if o := links[i].ClockOffsetMs; o != nil {
			s.ClockOffsetMs = *o
		}
		text, err := l.store.RunHistogramLog(ctx, r.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return store.Outcome{}, err
		default:
			if _, s.Intervals, err = runhist.ReadLog(bytes.NewReader(text)); err != nil {
				return store.Outcome{}, fmt.Errorf("shard %d: %w", i+1, err)
			}
		}
		shards[i] = s
	}
	m, err := fleetmerge.Merge(runs[0].Workload, shards)
	if err != nil {
		return store.Outcome{}, err
	}
	var records int64
	for _, p := range m.Series {
		records += p.Records
	}
	out := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Metrics: m.Metrics, Series: m.Series, Histograms: m.Histograms,
		Measurement: &rundoc.Measurement{MeasuredRecords: records, Notes: m.Notes}}
	if len(m.Intervals) > 0 {
		var log bytes.Buffer
		start := time.Time{}
		if f.StartAt != nil {
			start = *f.StartAt
		}
		if err := runhist.WriteLog(&log, start, m.Intervals); err != nil {
			return store.Outcome{}, err
		}
		out.HistogramLog = log.Bytes()
	}
	if out.Profiles, err = l.mergedProfiles(ctx, links, runs); err != nil {
		return store.Outcome{}, err
	}
	out.Measurement.Notes = append(out.Measurement.Notes, fmt.Sprintf("profiles: each kind every shard has is their merge, "+
		"each sample labelled worker (HOST#ID) and shard (1 to %d): filter by label to see one worker", len(runs)))
	return out, nil
}

// mergedProfiles merges, for each role and kind of profile every shard
// has, the shards' profiles into one labelled by worker and shard
// (profiles.MergeLabelled); the shards keep their own.
func (l *Launcher) mergedProfiles(ctx context.Context, links []store.FleetShard, runs []rundoc.Run) ([]store.Profile, error) {
	type key struct {
		role rundoc.ProfileRole
		kind rundoc.ProfileKind
	}
	ids := map[key][]uint{}
	var order []key
	for _, p := range runs[0].Profiles {
		k := key{p.Role, p.Kind}
		if _, seen := ids[k]; !seen {
			order = append(order, k)
			ids[k] = nil
		}
	}
	for _, r := range runs {
		for _, k := range order {
			i := slices.IndexFunc(r.Profiles, func(p rundoc.Profile) bool { return p.Role == k.role && p.Kind == k.kind })
			if i < 0 {
				delete(ids, k) // not every shard has it
				continue
			}
			if _, ok := ids[k]; ok {
				ids[k] = append(ids[k], r.Profiles[i].ID)
			}
		}
	}
	labels := make([]map[string]string, len(runs))
	for i, r := range runs {
		worker := r.Worker
		if w := links[i].WorkerID; w != nil {
			worker = fmt.Sprintf("%s#%d", r.Worker, *w)
		}
		labels[i] = map[string]string{"worker": worker, "shard": strconv.Itoa(i + 1)}
	}
	var out []store.Profile
	for _, k := range order {
		pids, ok := ids[k]
		if !ok || len(pids) != len(runs) {
			continue
		}
		data := make([][]byte, len(pids))
		for i, id := range pids {
			p, err := l.store.GetProfile(ctx, id)
			if err != nil {
				return nil, err
			}
			data[i] = p.Data
		}
		merged, err := profiles.MergeLabelled(data, labels)
		if err != nil {
			return nil, fmt.Errorf("%s %s profiles: %w", k.role, k.kind, err)
		}
		sum, err := profiles.Summarize(merged)
		if err != nil {
			return nil, err
		}
		out = append(out, store.Profile{Role: k.role, Kind: k.kind, Samples: sum.Samples, Data: merged})
	}
	return out, nil
}

// CancelFleet cancels the fleet whose parent is run id: the fleet ends
// canceled first (so no pass merges it), then its shards that have not
// ended are canceled or stopped, and the parent ends canceled. It
// reports false, doing nothing, when run id is no fleet's parent; a
// fleet that has ended is store.ErrConflict.
func (l *Launcher) CancelFleet(ctx context.Context, id uint) (bool, error) {
	f, links, err := l.store.FleetOfParent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	const why = "canceled by a user"
	if err := l.store.EndFleet(ctx, f.ID, store.FleetCanceled, why); err != nil {
		return true, err
	}
	ids := make([]uint, len(links))
	for i, s := range links {
		ids[i] = s.RunID
	}
	if _, err := l.cancelUnended(ctx, ids); err != nil {
		return true, err
	}
	err = l.store.FinishRun(ctx, id, store.Outcome{Status: rundoc.StatusCanceled, Error: "fleet: " + why})
	if errors.Is(err, store.ErrConflict) {
		err = nil // a pass ended it after the fleet's end: the same outcome
	}
	return true, err
}
