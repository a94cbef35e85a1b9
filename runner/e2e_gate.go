package runner

import (
	"context"
	"sync"
)

// consumerGate lets e2e rate mode's consumers read, or holds them: the
// backlog (--backlog-bytes) is built while they are held. With a
// warm-up they read during it, as OMB's consumers do, and the gate
// closes when the measured window opens, so that the backlog is built
// after the warm-up as OMB builds it.
//
// Each reader holds rw for reading around one fetch (a batch of a
// partition, or one message of a group's Reader); closing takes it for
// writing, so it returns once every fetch under way has ended and no
// reader fetches again until the gate opens. A fetch of a group's Reader
// waits for a message without end: it is given the gate's phase context,
// which closing cancels first. A partition's Conn fetch is not cut short
// (a timed-out Conn is closed by kafka-go): it ends within
// fetch.max.wait.ms.
type consumerGate struct {
	rw sync.RWMutex

	mu     sync.Mutex
	closed bool
	base   context.Context
	phase  context.Context
	cancel context.CancelFunc
}

// newConsumerGate is a gate, closed when open is false: the readers
// then wait from their first fetch.
func newConsumerGate(open bool) *consumerGate {
	g := &consumerGate{base: context.Background()}
	g.phase, g.cancel = context.WithCancel(g.base)
	if !open {
		g.rw.Lock()
		g.closed = true
	}
	return g
}

// bind makes the readers' fetches end with ctx (the consumers' own
// context) as well as when the gate closes; called before they start.
func (g *consumerGate) bind(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cancel()
	g.base = ctx
	g.phase, g.cancel = context.WithCancel(ctx)
}

// enter waits until the gate is open and returns the context of the
// fetch the reader then makes; exit follows the fetch. The reader stops
// when ctx ended: whoever ends it opens the gate first (stop).
func (g *consumerGate) enter(ctx context.Context) (context.Context, bool) {
	g.rw.RLock()
	if ctx.Err() != nil {
		g.rw.RUnlock()
		return nil, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.phase, true
}

func (g *consumerGate) exit() { g.rw.RUnlock() }

// close holds the readers: it returns once no fetch is under way.
func (g *consumerGate) close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	g.cancel()
	g.mu.Unlock()
	g.rw.Lock()
}

// open lets the readers go (again).
func (g *consumerGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		return
	}
	g.closed = false
	g.phase, g.cancel = context.WithCancel(g.base)
	g.rw.Unlock()
}
