package lifecycle

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestCancelAtEveryPoint cancels a run at each point of its life and
// checks that the cancel is never lost: an accepted cancel (nil) always
// ends the run canceled, never running and never succeeded; a cancel that
// comes too late gets store.ErrConflict and the run keeps the final status
// it already had.
//
//   - pending: submitted, waiting behind a run a worker holds;
//   - taken: off the pending list, not yet started in the store;
//   - started: running in the store, no process yet;
//   - running: its process has reported an interval and waits;
//   - exited: its process has exited (successfully), its outcome is not
//     stored yet;
//   - final: its outcome is stored.
func TestCancelAtEveryPoint(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	for _, tc := range []struct {
		point      string
		wantStatus rundoc.Status
		conflict   bool // the cancel is refused: already final
		started    bool // the run's process was started
		measured   bool // what the process measured is kept
	}{
		{point: "pending", wantStatus: rundoc.StatusCanceled},
		{point: "taken", wantStatus: rundoc.StatusCanceled},
		{point: "started", wantStatus: rundoc.StatusCanceled},
		{point: "running", wantStatus: rundoc.StatusCanceled, started: true, measured: true},
		{point: "exited", wantStatus: rundoc.StatusCanceled, started: true, measured: true},
		{point: "final", wantStatus: rundoc.StatusSucceeded, conflict: true, started: true, measured: true},
	} {
		t.Run(tc.point, func(t *testing.T) {
			mode := "succeed"
			if tc.point == "running" {
				mode = "wait"
			}
			e := newEnv(t, mode, nil)
			ctx := context.Background()
			id := e.create(t, plainSpec)
			w := e.watch(t, e.Manager, id)
			cancels := make(chan error, 1)
			cancel := func() { cancels <- e.Cancel(ctx, id) }
			switch tc.point {
			case "pending":
				// A first run, held by the worker that took it, keeps ours pending.
				first := e.create(t, plainSpec)
				gate := make(chan struct{})
				e.SetHook(func(p string, got uint) {
					if p == "taken" && got == first {
						<-gate
					}
				})
				e.submit(t, e.Manager, first, nil)
				e.submit(t, e.Manager, id, map[string]string{"sasl.password": "pw"})
				cancel()
				if e.HeldSecrets([]uint{id}, []string{"sasl.password"}) != nil {
					t.Error("a canceled run's secrets are still held in memory")
				}
				close(gate)
			case "taken", "started", "exited":
				e.SetHook(func(p string, got uint) {
					if p == tc.point && got == id {
						cancel()
					}
				})
				e.submit(t, e.Manager, id, nil)
			case "running":
				e.submit(t, e.Manager, id, nil)
				w.until(t, "interval")
				cancel()
			case "final":
				e.submit(t, e.Manager, id, nil)
				w.until(t, "done")
				cancel()
			}
			err := <-cancels
			if tc.conflict {
				if !errors.Is(err, store.ErrConflict) {
					t.Errorf("cancel at %s = %v, want store.ErrConflict", tc.point, err)
				}
			} else {
				if err != nil {
					t.Errorf("cancel at %s = %v, want it accepted", tc.point, err)
				}
				done := w.until(t, "done")
				if got := done.Data.(map[string]string)["status"]; got != string(tc.wantStatus) {
					t.Errorf("done event says %s, want %s", got, tc.wantStatus)
				}
			}
			r := e.get(t, id)
			if r.Status != tc.wantStatus {
				t.Fatalf("run canceled at %s ended %s (%q), want %s", tc.point, r.Status, r.Error, tc.wantStatus)
			}
			if tc.wantStatus == rundoc.StatusCanceled && r.Complete {
				t.Error("a canceled run is marked complete")
			}
			if got := e.started(id); got != tc.started {
				t.Errorf("process started: %v, want %v", got, tc.started)
			}
			if got := len(r.Metrics) > 0 && len(r.Profiles) == 1; got != tc.measured {
				t.Errorf("measurements kept: %v (%d metrics, %d profiles), want %v", got, len(r.Metrics), len(r.Profiles), tc.measured)
			}
			// The queue goes on with the next run.
			e.SetHook(nil)
			next := e.create(t, plainSpec)
			wn := e.watch(t, e.Manager, next)
			e.submit(t, e.Manager, next, nil)
			want := rundoc.StatusSucceeded
			if mode == "wait" { // it waits to be stopped
				wn.until(t, "interval")
				if err := e.Cancel(ctx, next); err != nil {
					t.Fatal(err)
				}
				want = rundoc.StatusCanceled
			}
			wn.until(t, "done")
			if r := e.get(t, next); r.Status != want {
				t.Errorf("next run: %s (%s), want %s", r.Status, r.Error, want)
			}
		})
	}
}

// TestCancelRacesTheWorkers cancels runs while two workers execute them,
// with no synchronisation between the cancels and the runs: whatever point
// each cancel hits, an accepted cancel ends its run canceled, and a
// refused one (store.ErrConflict) found it already final. Under -race it
// also checks the lifecycle's own synchronisation.
func TestCancelRacesTheWorkers(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "succeed", func(o *Options) { o.Concurrency = 2 })
	ctx := context.Background()
	const n = 12
	ids := make([]uint, n)
	watches := make([]*watch, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range ids {
		ids[i] = e.create(t, plainSpec)
		watches[i] = e.watch(t, e.Manager, ids[i])
		e.submit(t, e.Manager, ids[i], nil)
		if i%3 == 2 {
			continue // some run to the end, so the others meet busy workers
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.Cancel(ctx, ids[i])
		}()
	}
	wg.Wait()
	for i, id := range ids {
		watches[i].until(t, "done")
		r := e.get(t, id)
		switch {
		case i%3 == 2:
			if r.Status != rundoc.StatusSucceeded {
				t.Errorf("run %d (not canceled): %s %q", id, r.Status, r.Error)
			}
		case errs[i] == nil:
			if r.Status != rundoc.StatusCanceled {
				t.Errorf("run %d: cancel accepted, run ended %s %q", id, r.Status, r.Error)
			}
		case errors.Is(errs[i], store.ErrConflict):
			if r.Status != rundoc.StatusSucceeded {
				t.Errorf("run %d: cancel refused as too late, run ended %s %q", id, r.Status, r.Error)
			}
		default:
			t.Errorf("run %d: cancel: %v", id, errs[i])
		}
	}
}

// TestCancelKillsAProcessThatIgnoresSIGINT: a run whose process does not
// stop on SIGINT is killed (SIGKILL to its process group) after the grace
// time, and still ends canceled; the worker goes on.
func TestCancelKillsAProcessThatIgnoresSIGINT(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "ignore", func(o *Options) { o.KillGrace = 1 })
	id := e.create(t, plainSpec)
	w := e.watch(t, e.Manager, id)
	e.submit(t, e.Manager, id, nil)
	w.until(t, "interval")
	if err := e.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	w.until(t, "done")
	if r := e.get(t, id); r.Status != rundoc.StatusCanceled || r.Error != "canceled by a user" {
		t.Errorf("run ended %s %q, want canceled by a user", r.Status, r.Error)
	}
}

// TestCancelUnknownRun: a run that does not exist is not found.
func TestCancelUnknownRun(t *testing.T) {
	e := newEnv(t, "succeed", nil)
	if err := e.Cancel(context.Background(), 99); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancel of an unknown run = %v, want not found", err)
	}
}

// TestCancelAfterTimeout: a cancel accepted while a run stopped by the
// run timeout has not been stored yet ends it canceled, as the accepted
// cancel promised, not failed.
func TestCancelAfterTimeout(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "wait", func(o *Options) { o.RunTimeout = 1 })
	id := e.create(t, plainSpec)
	w := e.watch(t, e.Manager, id)
	cancels := make(chan error, 1)
	e.SetHook(func(p string, got uint) {
		if p == "exited" && got == id {
			cancels <- e.Cancel(context.Background(), id)
		}
	})
	e.submit(t, e.Manager, id, nil)
	w.until(t, "done")
	if err := <-cancels; err != nil {
		t.Fatalf("cancel = %v, want it accepted", err)
	}
	if r := e.get(t, id); r.Status != rundoc.StatusCanceled || r.Error != "canceled by a user" {
		t.Errorf("run: %s %q, want canceled by a user", r.Status, r.Error)
	}
}
