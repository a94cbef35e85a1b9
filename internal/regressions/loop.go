package regressions

import (
	"context"
	"time"
)

// loop is one goroutine a Cache or a Notifier runs between its start and
// Close: it gets a context that close cancels, and close waits for it.
type loop struct {
	stop context.CancelFunc
	done chan struct{}
}

// start runs fn in its own goroutine with a context that ends at close,
// detached from ctx's cancellation (the caller's context may end before
// it closes what it started).
func (l *loop) start(ctx context.Context, fn func(ctx context.Context)) {
	ctx, l.stop = context.WithCancel(context.WithoutCancel(ctx))
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		fn(ctx)
	}()
}

// close cancels the goroutine and waits for it; a loop never started is
// a no-op.
func (l *loop) close() {
	if l.stop == nil {
		return
	}
	l.stop()
	<-l.done
}

// every calls fn every d until ctx ends.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
