package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// TestRemoteRunFinishingBeforeItsCancel: a cancel that finds a run
// running on another process's worker, whose run then ends succeeded
// before the worker receives the cancellation, leaves the run succeeded
// (never canceled) and answers a conflict naming that status rather than
// saying the cancel was accepted. The worker then takes the next run.
func TestRemoteRunFinishingBeforeItsCancel(t *testing.T) {
	ctx := context.Background()
	e := newReapEnv(t)
	server, _ := openPG(t, e.st, "succeed", "", "server-host")
	worker, _ := openPG(t, e.st, "succeed", "lab-f", "host-f")
	id := e.create("lab-f")

	finish := make(chan struct{})  // the run may store its outcome
	stored := make(chan struct{})  // it has: its job is still running
	release := make(chan struct{}) // its job may end
	worker.SetHook(func(point string, run uint) {
		if run != id {
			return
		}
		switch point {
		case "exited":
			<-finish
		case "stored":
			close(stored)
			<-release
		}
	})
	// The cancel has read the run running; before it reaches River, the
	// run ends on its own and its outcome is stored.
	server.SetHook(func(point string, run uint) {
		if point == "remote-cancel" && run == id {
			close(finish)
			<-stored
		}
	})
	if err := server.Submit(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor(id, func(r *rundoc.Run) bool { return r.Status == rundoc.StatusRunning }, "running")
	err := server.Cancel(ctx, id)
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "succeeded") {
		t.Errorf("cancel of a remote run that ended succeeded first: %v, want a conflict naming its status", err)
	}
	close(release)
	worker.SetHook(nil)
	for _, r := range []*rundoc.Run{e.run(id), e.waitFor(id, func(r *rundoc.Run) bool { return e.jobState(id) == "completed" }, "with its job completed")} {
		if r.Status != rundoc.StatusSucceeded || r.Error != "" {
			t.Errorf("the run after the late cancel: %s %q, want succeeded", r.Status, r.Error)
		}
	}
	next := e.create("lab-f")
	if err := server.Submit(ctx, next, nil); err != nil {
		t.Fatal(err)
	}
	if r := e.waitFor(next, func(r *rundoc.Run) bool { return r.Final() }, "final"); r.Status != rundoc.StatusSucceeded {
		t.Errorf("the next run on the worker: %s %q, want succeeded", r.Status, r.Error)
	}
}
