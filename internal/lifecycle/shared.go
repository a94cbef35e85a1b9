package lifecycle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// Live events across processes. On a PostgreSQL store the run a page
// shows may execute in another process (a kbench worker on another
// machine), so every lifecycle on PostgreSQL shares the live events of
// the runs it executes, cancels or reaps through the store's run_events
// table (the outbox below), and a lifecycle asked for a run's events
// follows that table (follow), woken by the store's LISTEN/NOTIFY, and
// replays what other processes wrote into its own hub. Pages and API
// clients see one hub either way. On SQLite, one machine's store whose
// only worker is the server's own, events never leave memory.

// Tunables of the sharing; variables so that tests can shorten them.
var (
	// flushDelay is how long the outbox gathers events after the first
	// one before writing them in one transaction: a child reports
	// several events a second, and one insert for all of them costs the
	// database less than one each. It bounds the delay it adds.
	flushDelay = 50 * time.Millisecond
	// followPoll is how often a follower reads the table without being
	// woken, in case a notification was lost.
	followPoll = time.Second
	// followCheck is how often a follower reads the run's status, to stop
	// once the run has ended without a "done" event (written by a kbench
	// that shares none, or lost).
	followCheck = 5 * time.Second
	// followIdle is how long a follower keeps following a run nobody
	// watches any more.
	followIdle = time.Minute
	// eventsKeptFor is how long the events of an ended run stay in the
	// table (PruneRunEvents, on each reap).
	eventsKeptFor = time.Minute
)

// maxPending bounds the events waiting for the database: if it is
// unreachable, display events are dropped rather than held without end.
const maxPending = 10000

// sharedEvent is one live event as run_events stores it: a child's
// progress line (Runner), or an event the lifecycle made (Name, Data).
type sharedEvent struct {
	Runner *rundoc.Event    `json:"runner,omitempty"`
	Name   string           `json:"name,omitempty"`
	Data   *json.RawMessage `json:"data,omitempty"`
}

// newOrigin names this process's events in run_events.
func newOrigin() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// outbox writes a lifecycle's live events to run_events, a batch at a
// time, in the order they were published.
type outbox struct {
	st     *store.Store
	origin string
	q      *Manager

	once    sync.Once
	mu      sync.Mutex
	pending []store.RunEvent
	dropped int
	failing bool
	kick    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
}

func newOutbox(q *Manager) *outbox {
	ctx, cancel := context.WithCancel(context.Background())
	return &outbox{st: q.st, origin: q.origin, q: q, kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// add queues one event of run id; the first one starts the writer.
func (o *outbox) add(id uint, se sharedEvent) {
	data, err := json.Marshal(se)
	if err != nil {
		return
	}
	o.once.Do(func() { go o.loop() })
	o.mu.Lock()
	if len(o.pending) >= maxPending {
		o.dropped++
	} else {
		o.pending = append(o.pending, store.RunEvent{RunID: id, Origin: o.origin, Data: string(data)})
	}
	o.mu.Unlock()
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

func (o *outbox) loop() {
	defer close(o.done)
	for {
		select {
		case <-o.ctx.Done():
			o.flush()
			return
		case <-o.kick:
		}
		select {
		case <-o.ctx.Done():
		case <-time.After(flushDelay):
		}
		o.flush()
	}
}

// flush writes what is pending. Events that fail to store are dropped
// (they are for display; the run's result is stored apart), with one
// warning per streak of failures.
func (o *outbox) flush() {
	o.mu.Lock()
	batch, dropped := o.pending, o.dropped
	o.pending, o.dropped = nil, 0
	o.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := o.st.AppendRunEvents(ctx, batch)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err != nil && !o.failing:
		o.failing = true
		o.q.log.Warn("share live events through the database; other servers miss them until it answers", "events", len(batch), "err", err)
	case err == nil && o.failing:
		o.failing = false
		o.q.log.Info("sharing live events again")
	}
	if dropped > 0 {
		o.q.log.Warn("dropped live events: too many waiting for the database", "events", dropped)
	}
}

// close writes what is pending and stops the writer; a second call
// (Close twice) waits for nothing more.
func (o *outbox) close() {
	// A writer never started has nothing to wait for, and none starts
	// after this.
	o.once.Do(func() { close(o.done) })
	o.cancel()
	<-o.done
}

// publish sends an event the lifecycle makes (status, done) to the hub,
// and shares it on PostgreSQL.
func (q *Manager) publish(id uint, ev Event) {
	q.hub.Publish(id, ev)
	if q.out == nil {
		return
	}
	data, err := json.Marshal(ev.Data)
	if err != nil {
		return
	}
	raw := json.RawMessage(data)
	q.out.add(id, sharedEvent{Name: ev.Name, Data: &raw})
}

// publishRunner sends one progress line of a run's child to the hub, and
// shares it on PostgreSQL.
func (q *Manager) publishRunner(id uint, e rundoc.Event) {
	q.hub.PublishRunner(id, e)
	if q.out == nil {
		return
	}
	switch e.Type {
	case rundoc.EventPhase, rundoc.EventProgress, rundoc.EventInterval, rundoc.EventOutput, rundoc.EventNote:
		q.out.add(id, sharedEvent{Runner: &e})
	}
}

// follower replays the events other processes share of one run into
// the hub (PostgreSQL only). mu is held while it replays and while a
// subscriber joins, so a subscriber's catch-up (the hub's state) and the
// events it receives afterwards neither overlap nor leave a gap.
type follower struct {
	mu       sync.Mutex
	after    uint64 // the last event read
	replayed bool   // some came from another process
	ended    bool   // the run ended (or is not there): nothing more comes
	stopped  bool   // the follower is gone: a joiner needs a new one
	checked  time.Time
}

// subscribe subscribes to run id's events in the hub; on PostgreSQL
// through its follower (see follow), which first replays what other
// processes shared so far, so that the catch-up holds it.
func (q *Manager) subscribe(id uint) (<-chan Event, []Event, func()) {
	for {
		f := q.follow(id)
		if f == nil {
			return q.hub.Subscribe(id)
		}
		f.mu.Lock()
		if f.stopped {
			f.mu.Unlock()
			continue
		}
		ch, catchUp, cancel := q.hub.Subscribe(id)
		f.mu.Unlock()
		return ch, catchUp, cancel
	}
}

// follow returns run id's follower, started if it had none: it reads
// every event shared so far before returning (a late joiner's catch-up
// comes from the hub's state, never as a flood through its channel),
// then follows on its own goroutine. nil on SQLite or after Close.
func (q *Manager) follow(id uint) *follower {
	if q.out == nil {
		return nil
	}
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return nil
	}
	if f := q.following[id]; f != nil {
		q.mu.Unlock()
		return f
	}
	f := &follower{}
	f.mu.Lock()
	q.following[id] = f
	q.followers.Add(1)
	q.mu.Unlock()
	q.readShared(id, f)
	f.mu.Unlock()
	go func() {
		defer q.followers.Done()
		q.followRun(id, f)
	}()
	return f
}

// readShared replays the events of run id shared since the follower's
// last, and checks every followCheck that the run has not ended without
// a "done" event. Called with f.mu held.
func (q *Manager) readShared(id uint, f *follower) {
	ctx := q.followCtx
	for !f.ended {
		evs, err := q.st.RunEventsAfter(ctx, id, f.after, 500)
		if err != nil {
			if ctx.Err() == nil {
				q.log.Warn("follow a run's live events", "run", id, "err", err)
			}
			return
		}
		for _, e := range evs {
			f.after = e.ID
			var se sharedEvent
			if json.Unmarshal([]byte(e.Data), &se) != nil {
				continue
			}
			if e.Origin != q.origin {
				q.replay(id, se)
				f.replayed = true
			}
			if se.Name == "done" {
				f.ended = true // the hub dropped the run's state with it
				return
			}
		}
		if len(evs) < 500 {
			break
		}
	}
	if now := time.Now(); !f.ended && now.Sub(f.checked) >= followCheck {
		f.checked = now
		run, err := q.st.RunStatus(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			f.ended = true
			if f.replayed {
				q.hub.Forget(id)
			}
		case err == nil && run.Final():
			// Ended with no "done" shared (a kbench that shares none, or a
			// lost one): pages reload on this one.
			f.ended = true
			q.hub.Publish(id, Event{"done", map[string]string{"status": string(run.Status), "error": run.Error}})
		}
	}
}

// followRun follows run id, woken by the store when another process
// shares its events (and every followPoll in case a notification was
// lost), until the run has ended, nobody has watched it for followIdle,
// or Close. Events this process wrote are skipped: its hub had them
// first.
func (q *Manager) followRun(id uint, f *follower) {
	wake, unwatch := q.st.WatchRunEvents(id)
	defer unwatch()
	poll := time.NewTicker(followPoll)
	defer poll.Stop()
	var unwatched time.Time
	// Events shared between the first read and the watch started are read
	// at once: a wake-up may never come for them.
	first := make(chan struct{}, 1)
	first <- struct{}{}
	for {
		select {
		case <-q.followCtx.Done():
			q.endFollower(id, f, false)
			return
		case <-first:
		case <-wake:
		case <-poll.C:
		}
		f.mu.Lock()
		q.readShared(id, f)
		ended := f.ended
		f.mu.Unlock()
		if ended {
			q.endFollower(id, f, false)
			return
		}
		if q.hub.Subscribers(id) > 0 {
			unwatched = time.Time{}
			continue
		}
		if unwatched.IsZero() {
			unwatched = time.Now()
		} else if time.Since(unwatched) >= followIdle && q.endFollower(id, f, true) {
			return
		}
	}
}

// endFollower takes f out of the followers. With idle set it does so only
// if run id still has no subscriber (one may have joined meanwhile), and
// forgets the state f replayed, so that a later follower replays it from
// the first event without doubling it; it reports whether f ended.
func (q *Manager) endFollower(id uint, f *follower, idle bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if idle {
		if q.hub.Subscribers(id) > 0 {
			return false
		}
		if f.replayed {
			q.hub.Forget(id)
		}
	}
	f.stopped = true
	if q.following[id] == f {
		delete(q.following, id)
	}
	return true
}

// replay publishes one event another process shared into the hub.
func (q *Manager) replay(id uint, se sharedEvent) {
	if se.Runner != nil {
		q.hub.PublishRunner(id, *se.Runner)
		return
	}
	var data map[string]any
	if se.Data != nil && json.Unmarshal(*se.Data, &data) != nil {
		return
	}
	q.hub.Publish(id, Event{se.Name, data})
}
