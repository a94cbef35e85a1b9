package launch

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/store"
)

// sweepOf reads sweep id's phase and its runs' links, by phase.
func sweepOf(t *testing.T, st *store.Store, id string) (string, map[int][]store.SweepRun) {
	t.Helper()
	sw, links, err := st.GetSweep(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	byPhase := map[int][]store.SweepRun{}
	for _, l := range links {
		byPhase[l.Phase] = append(byPhase[l.Phase], l)
	}
	return sw.Phase, byPhase
}

func oneConfigSweep(t *testing.T, rates []float64) *SweepRequest {
	t.Helper()
	reps := 1
	return &SweepRequest{Configs: []SweepConfigRequest{{Label: "a", Params: tinyParams(t)}}, RatesPct: rates, Repetitions: &reps}
}

// TestLaunchSweepPhases: a sweep queues its unthrottled run; the loop's
// pass queues nothing while it runs, then, once it has ended, one run
// per target rate at that share of the maximum it measured, and ends the
// sweep once those have ended.
func TestLaunchSweepPhases(t *testing.T) {
	l := newTestLauncher(t, nil)
	id, err := l.CreateSweep(t.Context(), oneConfigSweep(t, []float64{50, 100}))
	if err != nil {
		t.Fatal(err)
	}
	phase, links := sweepOf(t, l.st, id)
	if phase != store.SweepMaxRate || len(links[1]) != 1 || len(l.runs.queued()) != 1 {
		t.Fatalf("new sweep: phase %s, links %v, submitted %v", phase, links, l.runs.queued())
	}
	if err := l.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	if phase, _ := sweepOf(t, l.st, id); phase != store.SweepMaxRate || len(l.runs.queued()) != 1 {
		t.Fatalf("with its first run queued: phase %s, submitted %v", phase, l.runs.queued())
	}
	finishStored(t, l.st, links[1][0].RunID, 1000)
	if err := l.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	phase, links = sweepOf(t, l.st, id)
	var targets []float64
	for _, r := range links[2] {
		targets = append(targets, r.TargetRate)
	}
	slices.Sort(targets)
	if phase != store.SweepRates || !slices.Equal(targets, []float64{500, 1000}) || len(l.runs.queued()) != 3 {
		t.Fatalf("after its first phase: phase %s, target rates %v, submitted %v", phase, targets, l.runs.queued())
	}
	sw, _, _ := l.st.GetSweep(t.Context(), id)
	var maxes []SweepMax
	if err := json.Unmarshal([]byte(sw.MaxRates), &maxes); err != nil || len(maxes) != 1 || maxes[0].RecordsPerSec != 1000 {
		t.Errorf("maximum rates %s (%v), want 1000", sw.MaxRates, err)
	}
	for _, r := range links[2] {
		finishStored(t, l.st, r.RunID, r.TargetRate)
	}
	if err := l.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	if phase, _ := sweepOf(t, l.st, id); phase != store.SweepDone {
		t.Errorf("after its second phase: phase %s, want done", phase)
	}
}

// TestLaunchSweepCancel: canceling a sweep cancels its queued runs
// through Runs and ends it canceled; the loop's pass then queues nothing
// for it, and a second cancel is a conflict, an id of no sweep not found.
func TestLaunchSweepCancel(t *testing.T) {
	l := newTestLauncher(t, nil)
	id, err := l.CreateSweep(t.Context(), oneConfigSweep(t, []float64{50}))
	if err != nil {
		t.Fatal(err)
	}
	_, links := sweepOf(t, l.st, id)
	n, err := l.CancelSweep(t.Context(), id)
	if err != nil || n != 1 || !slices.Equal(l.runs.canceled, []uint{links[1][0].RunID}) {
		t.Fatalf("cancel: %d runs (%v), canceled %v", n, err, l.runs.canceled)
	}
	if err := l.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	if phase, links := sweepOf(t, l.st, id); phase != store.SweepCanceled || len(links[2]) != 0 || len(l.runs.queued()) != 1 {
		t.Errorf("after the loop's pass: phase %s, %d second-phase runs, submitted %v", phase, len(links[2]), l.runs.queued())
	}
	if _, err := l.CancelSweep(t.Context(), id); !errors.Is(err, store.ErrConflict) {
		t.Errorf("second cancel: %v, want a conflict", err)
	}
	if _, err := l.CancelSweep(t.Context(), "0123456789ab"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancel of no sweep: %v, want not found", err)
	}
	if _, err := l.CancelSweep(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancel of a malformed id: %v, want not found", err)
	}
}

// TestLaunchSweepLoop: Start's loop queues a second phase by itself once
// the store changed, and Close stops it.
func TestLaunchSweepLoop(t *testing.T) {
	l := newTestLauncher(t, nil)
	id, err := l.CreateSweep(t.Context(), oneConfigSweep(t, []float64{50}))
	if err != nil {
		t.Fatal(err)
	}
	l.Start(t.Context())
	_, links := sweepOf(t, l.st, id)
	finishStored(t, l.st, links[1][0].RunID, 1000)
	// A bound against a hang, not a timing assertion.
	deadline := time.Now().Add(time.Minute)
	for {
		if phase, _ := sweepOf(t, l.st, id); phase == store.SweepRates {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the loop never queued the second phase")
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.Close()
	l.Close() // a second Close has nothing to stop
}
