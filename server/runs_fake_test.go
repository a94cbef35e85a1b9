package server

import (
	"context"
	"slices"
	"sync"

	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
)

// fakeRuns is a hand-written Runs for tests of handlers that need no run
// to execute: it records the runs submitted (with their secrets) and
// canceled, and answers what the test sets. It changes nothing in the
// store: a submitted run stays queued there, a canceled one too. Live
// events come from hub, where a test publishes them as a run's process
// would.
type fakeRuns struct {
	hub *lifecycle.Hub

	mu        sync.Mutex
	submitted []uint
	secrets   map[uint]map[string]string
	canceled  []uint
	// submitErr and cancelErr, when set, are what Submit and Cancel
	// return (after recording the call).
	submitErr, cancelErr error
}

func newFakeRuns() *fakeRuns {
	return &fakeRuns{hub: lifecycle.NewHub(), secrets: map[uint]map[string]string{}}
}

var _ Runs = (*fakeRuns)(nil)

// Submit records run id and holds its secrets, as the lifecycle does
// until a worker takes the run.
func (f *fakeRuns) Submit(_ context.Context, id uint, secrets map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitted = append(f.submitted, id)
	if f.submitErr != nil {
		return f.submitErr
	}
	if secrets != nil {
		f.secrets[id] = secrets
	}
	return nil
}

// Cancel records run id.
func (f *fakeRuns) Cancel(_ context.Context, id uint) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.canceled = append(f.canceled, id)
	return f.cancelErr
}

// Subscribe follows run id's events on hub.
func (f *fakeRuns) Subscribe(id uint) (<-chan lifecycle.Event, []lifecycle.Event, func()) {
	return f.hub.Subscribe(id)
}

// Series returns the points published on hub for run id.
func (f *fakeRuns) Series(id uint) ([]rundoc.SeriesPoint, bool) { return f.hub.Series(id) }

// HeldSecrets returns the secrets submitted with the first of ids that
// has every one of keys, nil when none has.
func (f *fakeRuns) HeldSecrets(ids []uint, keys []string) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		sec := f.secrets[id]
		if sec != nil && !slices.ContainsFunc(keys, func(k string) bool { return sec[k] == "" }) {
			return sec
		}
	}
	return nil
}

// Submitted returns the runs submitted so far, in order.
func (f *fakeRuns) Submitted() []uint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.submitted)
}

// Canceled returns the runs canceled so far, in order.
func (f *fakeRuns) Canceled() []uint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.canceled)
}
