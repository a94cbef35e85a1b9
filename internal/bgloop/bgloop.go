// Package bgloop runs the background goroutines kbench's long-lived parts
// own (the regressions cache's warm-up, the webhook notifier, the sweep
// loop): one goroutine between a Start and a Close, with a context Close
// cancels, and Close waiting for it. Standard library only.
package bgloop

import (
	"context"
	"time"
)

// Loop is one goroutine run between Start and Close. The zero Loop is
// ready; Close of a Loop never started does nothing.
type Loop struct {
	stop context.CancelFunc
	done chan struct{}
}

// Start runs fn in its own goroutine with a context that ends at Close,
// detached from ctx's cancellation: the caller's context may end before
// it closes what it started, and what it started must still stop in
// order.
func (l *Loop) Start(ctx context.Context, fn func(ctx context.Context)) {
	ctx, l.stop = context.WithCancel(context.WithoutCancel(ctx))
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		fn(ctx)
	}()
}

// Close cancels the goroutine's context and waits for fn to return.
func (l *Loop) Close() {
	if l.stop == nil {
		return
	}
	l.stop()
	<-l.done
}

// Every calls fn every d until ctx ends.
func Every(ctx context.Context, d time.Duration, fn func()) {
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
