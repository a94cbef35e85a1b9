package runner

import (
	"fmt"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// The catch-up read of e2e rate mode (--backlog-bytes), as OMB's
// consumerBacklogSizeGB runs it: the consumer is held while the producer
// runs until the records acknowledged and not yet received hold
// --backlog-bytes of payload, then it is let go while the producer goes
// on, and the drain is done once what waits for it is down to
// Spec.DrainedBacklog records (OMB's minimum backlog: what
// --backlog-drain-ratio leaves, and at least 1,000). The measured window
// holds all of it; the backlog's records carry the wait in their e2e
// latency, as they do in OMB.

// backlogPoll is how often the backlog is measured: its build and drain
// times are known to about this.
const backlogPoll = 5 * time.Millisecond

// backlogWatch follows a run's backlog and lets its consumer go.
type backlogWatch struct {
	r     *run
	stats *produceStats
	es    *e2eStats
	// release starts the consumer; it is called once.
	release func()

	mu sync.Mutex
	// resumed and drained are when the consumer was let go and when the
	// backlog was down to the drained level (zero until then); records
	// and bytes are the backlog at release; received and receivedAtDrain
	// the records the consumer had then and at the drain.
	resumed, drained          time.Time
	records, bytes            int64
	received, receivedAtDrain int64
	// early is set when the producer finished before the backlog was
	// built, and the consumer was let go then.
	early bool

	quit chan struct{}
	done chan struct{}
}

// watchBacklog holds the consumer (release starts it) until the backlog
// is built, then follows its drain until stop.
func (r *run) watchBacklog(stats *produceStats, es *e2eStats, release func()) *backlogWatch {
	b := &backlogWatch{r: r, stats: stats, es: es, release: release, quit: make(chan struct{}), done: make(chan struct{})}
	drainedAt := r.spec.DrainedBacklog()
	go func() {
		defer close(b.done)
		tick := time.NewTicker(backlogPoll)
		defer tick.Stop()
		for {
			select {
			case <-b.quit:
				return
			case now := <-tick.C:
				records, bytes, got := b.backlog()
				b.mu.Lock()
				switch {
				case b.resumed.IsZero() && bytes >= r.spec.BacklogBytes:
					b.releaseLocked(now, records, bytes, got, false)
				case !b.resumed.IsZero() && b.drained.IsZero() && records <= drainedAt:
					b.drained, b.receivedAtDrain = now, got
					r.rep.note("kbench: the backlog drained to %d records %.3f s after the consumer was let go", records, now.Sub(b.resumed).Seconds())
				}
				finished := !b.drained.IsZero()
				b.mu.Unlock()
				if finished {
					return
				}
			}
		}
	}()
	return b
}

// backlog is what waits for the consumer, as OMB counts it: the records
// acknowledged, once per subscription, and not received, and their
// payload bytes; and the records received.
func (b *backlogWatch) backlog() (records, bytes, received int64) {
	b.stats.mu.Lock()
	sent, sentBytes := b.stats.records, b.stats.bytes
	b.stats.mu.Unlock()
	b.es.mu.Lock()
	got, gotBytes, subs := b.es.received, b.es.bytes, int64(b.es.subs)
	b.es.mu.Unlock()
	return sent*subs - got, sentBytes*subs - gotBytes, got
}

// releaseLocked lets the consumer go at now; b.mu is held.
func (b *backlogWatch) releaseLocked(now time.Time, records, bytes, received int64, early bool) {
	b.resumed, b.records, b.bytes, b.received, b.early = now, records, bytes, received, early
	b.r.rep.note("kbench: backlog of %d records (%d bytes) after %.3f s; the consumer is let go", records, bytes, b.r.win.since(now))
	b.release()
}

// drainedAt is when the backlog drained, the zero time until it has.
func (b *backlogWatch) drainedAt() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.drained
}

// producerDone lets the consumer go if the backlog was never built: the
// producer has nothing more to send.
func (b *backlogWatch) producerDone() {
	records, bytes, got := b.backlog()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.resumed.IsZero() {
		b.releaseLocked(time.Now(), records, bytes, got, true)
	}
}

// stop ends the watch (the run's window has ended) and reports the
// backlog's figures and notes.
func (b *backlogWatch) stop() {
	close(b.quit)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.r
	add := func(name string, v float64, unit string, better rundoc.Better, help string) {
		r.res.Metrics = append(r.res.Metrics, rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better, Help: help})
	}
	want := r.spec.BacklogBytes
	notes := &r.res.Measurement.Notes
	*notes = append(*notes, fmt.Sprintf("backlog: the consumer was held until %d bytes of payload (%d records of %d bytes) waited for it, then let go while the producer went on; "+
		"the drain is done at %d records waiting (OMB's minimum backlog: max(1000, (1 − %v) × %d)); the held records' e2e latency includes their wait",
		want, r.spec.BacklogRecords(), r.spec.RecordSize, r.spec.DrainedBacklog(), drainRatio(r.spec), r.spec.BacklogRecords()))
	if b.resumed.IsZero() {
		*notes = append(*notes, "backlog: the run ended before the backlog was built")
		return
	}
	add("backlog-build-time", r.win.since(b.resumed), "s", "", "from the window's start to when the backlog was built and the consumer let go")
	add("backlog-records", float64(b.records), "records", "", "records acknowledged and not received when the consumer was let go")
	add("backlog-bytes", float64(b.bytes), "bytes", "", "their payload bytes")
	if b.early {
		*notes = append(*notes, fmt.Sprintf("backlog: the producer finished with %d bytes waiting, fewer than --backlog-bytes %d; the consumer was let go then", b.bytes, want))
	}
	if b.drained.IsZero() {
		*notes = append(*notes, fmt.Sprintf("backlog: it never drained to %d records within the run", r.spec.DrainedBacklog()))
		return
	}
	secs := b.drained.Sub(b.resumed).Seconds()
	add("backlog-drain-time", secs, "s", rundoc.LowerIsBetter, "from letting the consumer go to the backlog's drain (OMB's backlog drain time)")
	if secs > 0 {
		add("backlog-drain-rate", float64(b.receivedAtDrain-b.received)/secs, "records/s", rundoc.HigherIsBetter,
			"records the consumer received while draining / the drain's seconds (the producer went on meanwhile)")
	}
}

// drainRatio is the spec's --backlog-drain-ratio, 1 when not given.
func drainRatio(s rundoc.Spec) float64 {
	if s.BacklogDrainRatio == 0 {
		return 1
	}
	return s.BacklogDrainRatio
}
