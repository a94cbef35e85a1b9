package lifecycle

import (
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestExecuting: Executing holds from the moment a worker takes a run
// until its outcome is stored, and not before or after: the busy signal
// that pauses the naming of regressions' functions.
func TestExecuting(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "succeed", nil)
	if e.Executing() {
		t.Fatal("executing before any run")
	}
	id := e.create(t, plainSpec)
	w := e.watch(t, e.Manager, id)
	during := make(chan bool, 2)
	e.SetHook(func(p string, got uint) {
		if got == id && (p == "taken" || p == "started") {
			during <- e.Executing()
		}
	})
	e.submit(t, e.Manager, id, nil)
	w.until(t, "done")
	for range 2 {
		if !<-during {
			t.Error("not executing while the run was taken")
		}
	}
	// The run's slot is released just after its outcome is stored.
	deadline := time.Now().Add(30 * time.Second)
	for e.Executing() {
		if time.Now().After(deadline) {
			t.Fatal("still executing 30 s after the run ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
