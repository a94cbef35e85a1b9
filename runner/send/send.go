// Package send holds what kbench's producers share: the Phase a send
// loop is asked to carry out, the Sender interface every producer
// implements (the producer workload's Writer mode and its client and raw
// modes, e2e's rate mode through the latter, and the write-path lab's
// strategies), and the Pacer that spaces a throttled phase's records or
// requests. It imports only the standard library: the producers live in
// runner and runner/writepath, and both import it.
package send

import (
	"context"
	"math"
	"time"
)

// Phase is one call's share of a workload phase (warm-up or measure).
type Phase struct {
	// N is how many records (or requests) to send; 0 sends until Deadline.
	N int64
	// Deadline ends a phase of N == 0; the zero time means none.
	Deadline time.Time
	// Until, when set, may move the end of a phase of N == 0 later: once
	// Deadline has passed the sender asks it, and the phase ends when the
	// time it returns has passed; the zero time means the end is not
	// known yet, and the sender goes on and asks again (UntilPoll later).
	// e2e's backlog uses it to run its duration from the drain.
	Until func() time.Time
	// Rate is records (or requests) per second; 0 for no limit.
	Rate float64
	// Measured marks the measured phase: only its records count.
	Measured bool
}

// Sender sends one phase and returns once every record (or request) it
// sent is answered, or the first failed, or ctx ended.
type Sender interface {
	Send(ctx context.Context, ph Phase) error
}

// Pacer spaces a phase's sends at a fixed rate, as Kafka's tools throttle:
// item i of the phase (from 0) is due at start + i/rate. Times are
// durations since the sender's time base. A sender asks Ready how many
// items are due and stamps each with Due, its intended send time, so that
// a stalled producer shows its queueing in the intended-time latency
// (coordinated omission).
type Pacer struct {
	start time.Duration
	// interval is 1/rate in nanoseconds, 0 for no limit. A float: at
	// 3,000,000 items/s a whole-nanosecond interval (333 ns) would pace
	// 0.1% fast, and the error grows with every item.
	interval float64
}

// NewPacer paces at rate items per second from start; a rate of 0 or less
// is no limit.
func NewPacer(rate float64, start time.Duration) Pacer {
	p := Pacer{start: start}
	if rate > 0 {
		p.interval = float64(time.Second) / rate
	}
	return p
}

// Limited reports whether the pacer has a rate.
func (p Pacer) Limited() bool { return p.interval > 0 }

// Due is when item i should be sent; start for every item without a rate.
func (p Pacer) Due(i int64) time.Duration {
	return p.start + time.Duration(float64(i)*p.interval)
}

// Ready is how many items are due at now: items 0 to Ready-1 (none
// before start). Without a rate every item is.
func (p Pacer) Ready(now time.Duration) int64 {
	if p.interval <= 0 {
		return math.MaxInt64
	}
	if now < p.start {
		return 0
	}
	return int64(float64(now-p.start)/p.interval) + 1
}

// Wait sleeps until item i is due, given the time now, or until ctx ends.
func (p Pacer) Wait(ctx context.Context, now time.Duration, i int64) {
	if p.interval > 0 {
		Sleep(ctx, p.Due(i)-now, nil)
	}
}

// UntilPoll is how often a sender asks a phase's Until while its end is
// not known.
const UntilPoll = 10 * time.Millisecond

// End is when a phase of N == 0 ends, as a duration since base, asked
// once its deadline (the same, since base) passed at now: the deadline
// itself without Until; else Until's time, or, while that is not known,
// now + UntilPoll, to be asked again then.
func (ph Phase) End(base time.Time, deadline, now time.Duration) time.Duration {
	if ph.Until == nil {
		return deadline
	}
	u := ph.Until()
	if u.IsZero() {
		return now + UntilPoll
	}
	return u.Sub(base)
}

// Sleep waits for d, a value on wake (nil: none) or the end of ctx.
func Sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-ctx.Done():
	}
}
