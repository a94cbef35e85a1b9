package bgloop

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoopCloseWaits: Close cancels the loop's context and returns only
// after fn has returned, even when the context Start was given has ended
// first; a second Close and a Close of a Loop never started do nothing.
func TestLoopCloseWaits(t *testing.T) {
	var never Loop
	never.Close()

	parent, cancel := context.WithCancel(context.Background())
	var l Loop
	var returned atomic.Bool
	started := make(chan struct{})
	l.Start(parent, func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		time.Sleep(10 * time.Millisecond) // Close must wait for this
		returned.Store(true)
	})
	<-started
	cancel() // the caller's context ending does not stop the loop
	select {
	case <-l.done:
		t.Fatal("the loop stopped when the caller's context ended")
	case <-time.After(20 * time.Millisecond):
	}
	l.Close()
	if !returned.Load() {
		t.Fatal("Close returned before fn did")
	}
	l.Close()
}

// TestEvery: fn runs on every tick until the context ends, and not after
// Every returned. (A tick ready together with the end may still run once:
// select picks either.)
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func() {
			if n.Add(1) == 3 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	got := n.Load()
	if got < 3 {
		t.Errorf("fn ran %d times, want at least 3", got)
	}
	time.Sleep(5 * time.Millisecond)
	if after := n.Load(); after != got {
		t.Errorf("fn ran %d more times after Every returned", after-got)
	}
}
