package server

import (
	"context"
	"time"
)

// background is one goroutine the server runs between Start and Close
// (the regressions warm-up, notifications, sweeps): Start gives it a
// context that Close cancels, and Close waits for it to return.
type background struct {
	stop context.CancelFunc
	done chan struct{}
}

// start runs fn in its own goroutine with a context that ends at stop,
// detached from ctx's cancellation (Start's context may end before Close).
func (b *background) start(ctx context.Context, fn func(ctx context.Context)) {
	ctx, b.stop = context.WithCancel(context.WithoutCancel(ctx))
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		fn(ctx)
	}()
}

// close cancels the goroutine and waits for it; a background never
// started is a no-op.
func (b *background) close() {
	if b.stop == nil {
		return
	}
	b.stop()
	<-b.done
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
