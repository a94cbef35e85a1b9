package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// A fleet's shard at its worker (docs/architecture.md, "Fleet runs").
// The worker takes the shard's job only where store.TakeShard allows it,
// starts the child, and once the child reports ready (rundoc.EventReady)
// measures its clock against the database's, checks in at the fleet's
// barrier and waits for the start the database sets. It passes that
// start on to the child's stdin in the child's own clock.

const (
	// shardSnooze is how long a shard that must wait (another shard of
	// its fleet on this worker, another fleet gathering) waits before a
	// worker tries it again.
	shardSnooze = 2 * time.Second
	// offsetSamples is how many round trips to the database estimate the
	// clock offset: the shortest bounds the error best.
	offsetSamples = 8
	// barrierPoll is how often a shard at the barrier reads its fleet
	// when no notification woke it (one may be lost with a connection).
	barrierPoll = 500 * time.Millisecond
)

// takeShard lets run id start on this worker: nil for a run that is no
// fleet's shard or a shard it may take now, a *jobs.Snooze when it must
// wait. A database error makes it wait too: trying later loses nothing,
// while executing a shard the fleet does not know is taken would.
func (q *Manager) takeShard(ctx context.Context, id uint) error {
	q.mu.Lock()
	w := q.worker
	q.mu.Unlock()
	if w == nil {
		return nil // no worker row: a store the fleets' checks refused at submission
	}
	shard, err := q.st.IsShard(ctx, id)
	if err == nil && !shard {
		return nil
	}
	if err == nil {
		_, err = q.st.TakeShard(ctx, id, w.ID)
	}
	switch {
	case err == nil, errors.Is(err, store.ErrNotFound):
		return nil
	case errors.Is(err, store.ErrShardMustWait):
		q.log.Info("fleet shard waits", "run", id, "why", err)
		return &jobs.Snooze{After: shardSnooze, Why: err.Error()}
	default:
		q.log.Warn("fleet shard: take", "run", id, "err", err)
		return &jobs.Snooze{After: shardSnooze, Why: err.Error()}
	}
}

// clockOffset estimates this machine's clock against the clock read
// returns (the database's), NTP-style: read is called between two
// readings of this clock, so the other clock's reading falls within that
// round trip, and taking it at the round trip's middle is off by at
// most half of it. Of n round trips the shortest is kept. offset is
// positive when this machine's clock is ahead.
func clockOffset(ctx context.Context, read func(context.Context) (time.Time, error), n int) (offset, roundTrip time.Duration, err error) {
	roundTrip = time.Duration(math.MaxInt64)
	for range n {
		t1 := time.Now()
		other, err := read(ctx)
		t2 := time.Now()
		if err != nil {
			return 0, 0, err
		}
		if rt := t2.Sub(t1); rt < roundTrip { // monotonic: no step of the wall clock enters it
			roundTrip = rt
			offset = t1.Add(rt / 2).Round(0).Sub(other)
		}
	}
	return offset, roundTrip, nil
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// awaitFleetStart checks shard run id in at its fleet's barrier and waits
// for the fleet's start, returned in this machine's clock. A fleet that
// ends first, or one whose last shard has not checked in within its
// barrier timeout of the first, is an error naming what went wrong; a
// shard that finds the timeout passed fails the fleet for all of them.
func (q *Manager) awaitFleetStart(ctx context.Context, id uint) (time.Time, error) {
	offset, rt, err := clockOffset(ctx, q.st.DatabaseClock, offsetSamples)
	if err != nil {
		return time.Time{}, fmt.Errorf("fleet barrier: measure this worker's clock against the database's: %w", err)
	}
	f, err := q.st.CheckInShard(ctx, id, millis(offset), millis(rt))
	if err != nil {
		return time.Time{}, fmt.Errorf("fleet barrier: check in: %w", err)
	}
	q.log.Info("fleet shard checked in", "run", id, "fleet", f.ID, "clock_offset_ms", millis(offset), "round_trip_ms", millis(rt))
	wake, stop := q.st.WatchRunEvents(f.ParentID)
	defer stop()
	tick := time.NewTicker(barrierPoll)
	defer tick.Stop()
	for {
		switch {
		case f.Phase == store.FleetStarted && f.StartAt != nil:
			// The start is the database's time: this clock reads it
			// offset later.
			return f.StartAt.Add(offset), nil
		case store.FleetEnded(f.Phase):
			return time.Time{}, fmt.Errorf("fleet %d %s before it started: %s", f.ID, f.Phase, f.Error)
		case f.FirstCheckInAt != nil:
			if err := q.barrierTimedOut(ctx, f); err != nil {
				return time.Time{}, err
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-wake:
		case <-tick.C:
		}
		if f, _, err = q.st.GetFleet(ctx, f.ID); err != nil {
			return time.Time{}, fmt.Errorf("fleet barrier: %w", err)
		}
	}
}

// barrierTimedOut fails fleet f, naming the shards missing, once its
// barrier timeout has passed since its first check-in by the database's
// clock. Of several shards seeing it, one ends the fleet; each returns
// the error it stored.
func (q *Manager) barrierTimedOut(ctx context.Context, f *store.Fleet) error {
	now, err := q.st.DatabaseClock(ctx)
	if err != nil {
		return nil // read again at the next poll
	}
	timeout := time.Duration(f.BarrierTimeoutS * float64(time.Second))
	if now.Sub(*f.FirstCheckInAt) <= timeout {
		return nil
	}
	_, shards, err := q.st.GetFleet(ctx, f.ID)
	if err != nil {
		return nil
	}
	var missing []string
	for _, s := range shards {
		if s.CheckedInAt != nil {
			continue
		}
		state := "no worker took it"
		if s.WorkerID != nil {
			state = fmt.Sprintf("worker %d took it and its run was not ready", *s.WorkerID)
		}
		missing = append(missing, fmt.Sprintf("shard %d of %d (run %d: %s)", s.ShardIndex+1, f.Shards, s.RunID, state))
	}
	if len(missing) == 0 {
		return nil // all in: the start is being set
	}
	why := fmt.Sprintf("%s did not check in within the barrier timeout of %v s after the first check-in",
		strings.Join(missing, ", "), f.BarrierTimeoutS)
	if err := q.st.EndFleet(ctx, f.ID, store.FleetFailed, why, store.FleetGathering); err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("fleet barrier: %w", err)
	}
	// Ended by this shard or another: the fleet's error says why.
	return fmt.Errorf("fleet %d failed: %s", f.ID, why)
}

// startShard runs the barrier for shard run id, whose child reported
// ready, and writes the start to the child's stdin; when the barrier
// fails the child is stopped and the run fails with why.
func (q *Manager) startShard(ctx context.Context, id uint, stdin io.Writer, ex *execution) {
	t0, err := q.awaitFleetStart(ctx, id)
	if err == nil {
		_, err = io.WriteString(stdin, rundoc.ShardStartLine(t0))
	}
	if err != nil && ctx.Err() == nil {
		q.log.Warn("fleet shard not started", "run", id, "err", err)
		ex.fail(err.Error())
	}
}

// shardEnded is the error of a shard whose fleet ended before the shard
// started: it is not run (its siblings are being stopped, or were).
func (q *Manager) shardEnded(ctx context.Context, id uint) error {
	f, _, err := q.st.FleetOfShard(ctx, id)
	if err != nil || !store.FleetEnded(f.Phase) {
		return nil
	}
	return fmt.Errorf("fleet %d %s before this shard started: %s", f.ID, f.Phase, f.Error)
}
