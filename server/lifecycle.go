package server

import (
	"context"

	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
)

// Runs is what the server asks of the run lifecycle: the handlers call
// only this, never the queue, the processes or the hub behind it.
//
// It is defined here, where it is consumed, rather than in lifecycle: it
// lists exactly what the HTTP side needs, so a second implementation
// (the queue backed by a job engine on PostgreSQL) has to provide no
// more, and tests of handlers stand in a hand-written one.
// lifecycle.Manager is the implementation kbench uses; the serve command
// builds it, starts it before the server and closes it after, so starting
// and stopping are not the server's to ask.
//
// The store's status is a run's one state: Submit is called for runs
// already stored queued, and every change of status is a conditional
// update in the store, which the implementation makes.
type Runs interface {
	// Submit queues stored run id after those submitted before it, with
	// the secrets its process needs, held in memory only. A run whose
	// Submit fails stays queued in the store and is queued again by the
	// next Start.
	Submit(ctx context.Context, id uint, secrets map[string]string) error
	// Cancel stops run id: a queued run is canceled at once, a running
	// one is stopped and ends canceled. It wraps store.ErrConflict when
	// the run is already final.
	Cancel(ctx context.Context, id uint) error
	// Subscribe returns a channel of run id's live events and the events
	// that catch a new subscriber up; cancel must be called when done.
	Subscribe(id uint) (events <-chan lifecycle.Event, catchUp []lifecycle.Event, cancel func())
	// Series returns the interval points run id has reported so far;
	// ok is false when it is not running here.
	Series(id uint) (pts []rundoc.SeriesPoint, ok bool)
	// HeldSecrets returns the secrets held for the first of ids still
	// waiting to start that has every one of keys, nil when none has.
	HeldSecrets(ids []uint, keys []string) map[string]string
}

// lifecycle.Manager is a Runs.
var _ Runs = (*lifecycle.Manager)(nil)
