package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/runner/send"
)

// Rate mode: kbench's producer (the raw mode's accumulator, as `kbench run
// producer` sends) at --throughput records/s and a consumer reading every
// partition concurrently, as OpenMessaging Benchmark measures. Each record
// carries in its first 24 bytes its sequence number, the time it was due
// on the rate schedule and the time it was sent (since the run's time
// base, on this process's monotonic clock), so the consumer times it from
// both without a shared table, and counts it once.

// e2eDrainTimeout bounds how long the consumer may take, after the last
// acknowledgement, to receive every record acknowledged.
const e2eDrainTimeout = 30 * time.Second

// e2eMaxSeq bounds the sequence numbers taken as this run's: a larger one
// is not a record of this run, and would grow the bitmap of those seen.
const e2eMaxSeq = 1 << 40

// e2eStamper writes the stamp into a copy of each value: the accumulator
// keeps values by reference until their batch is sent, so every record
// needs its own bytes (carved from slabs, not allocated one by one).
type e2eStamper struct {
	// seq numbers the run's records, shared by the stampers of all its
	// producers.
	seq  *atomic.Uint64
	slab []byte
}

func (s *e2eStamper) stamp(value []byte, sent, intended time.Duration) []byte {
	n := len(value)
	if len(s.slab) < n {
		s.slab = make([]byte, max(n*256, 1<<20))
	}
	v := s.slab[:n:n]
	s.slab = s.slab[n:]
	copy(v, value)
	binary.BigEndian.PutUint64(v[0:], s.seq.Add(1)-1)
	binary.BigEndian.PutUint64(v[8:], uint64(intended))
	binary.BigEndian.PutUint64(v[16:], uint64(sent))
	return v
}

// readStamp reads a value's stamp; ok is false for a value too short to
// hold one.
func readStamp(v []byte) (seq uint64, intended, sent time.Duration, ok bool) {
	if len(v) < rundoc.E2EStampBytes {
		return 0, 0, 0, false
	}
	return binary.BigEndian.Uint64(v[0:]), time.Duration(binary.BigEndian.Uint64(v[8:])), time.Duration(binary.BigEndian.Uint64(v[16:])), true
}

func (r *run) e2eRate(ctx context.Context) error {
	topics, partitions, err := r.ensureTopics(ctx)
	if err != nil {
		return err
	}
	var offs []partOffsets
	for _, topic := range topics {
		o, err := r.topicOffsets(ctx, topic)
		if err != nil {
			return err
		}
		// A shard reads only its own partitions: what it sent, timed by
		// its own clock.
		owned := r.spec.OwnedPartitions(topic, partitions)
		for _, po := range o {
			if slices.Contains(owned, po.partition) {
				offs = append(offs, po)
			}
		}
	}
	shape, err := r.recordShape(partitions)
	if err != nil {
		return err
	}
	// --mode rate with --throughput -1 sends as fast as the producer can
	// (a sweep's maximum): no schedule, so no intended-time latency.
	throttled := r.spec.Throughput > 0
	stats := newProduceStats(throttled)
	es := newE2EStats()
	es.throttled = throttled
	// --threads producers per topic (OMB's producersPerTopic), each with
	// its own connections and buffer.memory as each of OMB's producers is
	// a KafkaProducer of its own, numbering the records together.
	seq := &atomic.Uint64{}
	keyParts := map[string][]int{} // a shard's keys' partitions, by owned set
	threads := make([]*producerThread, r.spec.Threads*len(topics))
	for i := range threads {
		t := &producerThread{id: i, topic: topics[i%len(topics)], credit: newCredit(r.st.bufferMemory, r.st.maxBlock), stats: stats, shape: shape, gen: shape.generator(i, len(threads))}
		t.stamp = (&e2eStamper{seq: seq}).stamp
		if r.spec.Shard != nil {
			t.gen.onto(r.spec.OwnedPartitions(t.topic, partitions), keyParts)
		}
		if t.client, err = r.newClientSender(ctx, t, partitions); err != nil {
			return err
		}
		t.sender = t.client
		threads[i] = t
	}
	// The consumers read from the start (through the warm-up), unless a
	// backlog is to be built without one: then they wait for it.
	gate := newConsumerGate(r.spec.BacklogBytes == 0 || r.spec.Warmup > 0)
	var cons interface {
		start(context.Context) <-chan error
		close()
	}
	if subs, members, ok := r.spec.Groups(); ok {
		es.subs = subs
		cons, err = r.newE2EGroups(ctx, topics, partitions, subs, members, stats.base, es, gate)
	} else {
		cons, err = r.newE2EConsumer(ctx, offs, stats.base, es, gate)
	}
	if err != nil {
		return err
	}
	defer cons.close()
	if r.spec.Topics > 0 {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"%d topic(s) (%s to %s, created for the run and deleted after it) of %d partitions, %d producer(s) each; the records and --throughput are split evenly over the %d producers",
			len(topics), topics[0], topics[len(topics)-1], partitions, r.spec.Threads, len(threads)))
	} else if len(threads) > 1 {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"%d producers (--threads), each with its own connections and buffer.memory; the records and --throughput are split evenly over them", len(threads)))
	}
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, shape.describe(r.spec))
	pace := fmt.Sprintf("at %v records/s", r.spec.Throughput)
	if !throttled {
		pace = "unthrottled (as fast as it can, while the consumer reads)"
	}
	consumer := "a consumer of every partition (one kafka-go Conn each"
	if _, _, ok := r.spec.Groups(); ok {
		consumer = "the subscriptions' consumer groups (kafka-go Readers"
	}
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
		"rate mode: a producer %s (kbench's raw mode: %s) and %s, fetch.min.bytes=1, fetch.max.wait.ms=%d) in the same process; "+
			"e2e-latency is from each record's send to its receipt, e2e-latency-intended from when the rate schedule wanted it sent (so a stalled producer cannot hide its queueing), publish-latency from its send to its acknowledgement; "+
			"each value's first %d bytes carry its sequence number and send times",
		pace, r.accumulatorNote(), consumer, r.st.maxWait.Milliseconds(), rundoc.E2EStampBytes))

	rate := r.spec.Throughput
	if rate > 0 {
		rate /= float64(len(threads))
	}
	cctx, cancelConsumer := context.WithCancel(ctx)
	// stopConsumer ends the consumer; the gate opens first, so that no
	// reader waits at it for ever.
	stopConsumer := func() {
		gate.open()
		cancelConsumer()
	}
	defer stopConsumer()
	// consumed gets the consumer's end once it stopped.
	consumed := make(chan error, 1)
	withRole(cctx, roleReceive, func(cctx context.Context) {
		inner := cons.start(cctx)
		go func() { consumed <- <-inner }()
	})
	// A fleet's shard warms up from when it is ready until the fleet's
	// start; any other run for --warmup seconds.
	var warmUntil time.Time
	if r.spec.Shard != nil {
		t0, err := r.awaitStart(ctx)
		if err != nil {
			stopConsumer()
			<-consumed
			return err
		}
		warmUntil = t0
	} else if r.spec.Warmup > 0 {
		warmUntil = time.Now().Add(time.Duration(r.spec.Warmup * float64(time.Second)))
	}
	if err := r.e2eWarmup(ctx, threads, rate, seq, es, warmUntil); err != nil {
		stopConsumer()
		<-consumed
		return err
	}
	if r.spec.Shard != nil {
		r.startedAt(warmUntil)
	}
	if r.spec.BacklogBytes > 0 {
		// Held from the window's start until the backlog is built (a
		// no-op without a warm-up: it was never opened).
		gate.close()
	}

	n := r.spec.NumRecords
	var deadline time.Time
	if r.spec.Duration > 0 {
		n = 0
	}
	if err := r.openWindow(); err != nil {
		return err
	}
	if r.spec.Duration > 0 {
		deadline = stats.base.Add(stats.now() + time.Duration(r.spec.Duration*float64(time.Second)))
	}
	r.rep.phase("measure", n)
	stopProgress := r.tickProgress("measure", n, es.receivedCount)
	stopSeries := r.recordSeries(es.seriesPoint)
	logged := []loggedHist{{rundoc.HistE2ELatency, &es.mu, es.hist}}
	if es.throttled {
		logged = append(logged, loggedHist{rundoc.HistE2ELatencyIntended, &es.mu, es.intended})
	}
	logged = append(logged, loggedHist{rundoc.HistPublishLatency, &stats.mu, stats.hist})
	if stats.throttled {
		logged = append(logged, loggedHist{rundoc.HistPublishDelay, &stats.mu, stats.delay})
	}
	stopLog := r.logIntervals(logged...)
	var backlog *backlogWatch
	if r.spec.BacklogBytes > 0 {
		backlog = r.watchBacklog(stats, es, gate.open)
	}
	var until func() time.Time
	if r.spec.DurationAfterDrain && backlog != nil {
		// OMB's testDurationMinutes: the duration runs from the drain.
		d := time.Duration(r.spec.Duration * float64(time.Second))
		until = func() time.Time {
			if at := backlog.drainedAt(); !at.IsZero() {
				return at.Add(d)
			}
			return time.Time{}
		}
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"--duration-after-drain: the producer sent until %v s after the backlog drained (OMB's testDurationMinutes after its drain), the build and the drain before it", r.spec.Duration))
	}
	sendErr := errors.Join(sendAllUntil(ctx, threads, n, deadline, until, rate, true)...)
	if backlog != nil {
		backlog.producerDone()
	}
	stats.mu.Lock()
	acked, firstErr, failures := stats.records, stats.firstErr, stats.errors
	stats.mu.Unlock()
	drainErr := error(nil)
	if sendErr == nil && firstErr == nil {
		drainErr = waitReceived(ctx, es, acked, consumed)
	}
	stopConsumer()
	consErr := <-consumed
	r.win.stop()
	stopProgress()
	stopSeries()
	stopLog()
	if backlog != nil {
		backlog.stop()
	}
	r.win.snapshot()
	r.rep.phase("finishing", 0)
	r.e2eRateResults(acked, stats, es)

	switch {
	case firstErr != nil:
		return fmt.Errorf("%d records failed; first error: %w", failures, r.explain(firstErr))
	case sendErr != nil && !errors.Is(sendErr, errStopped):
		return r.explain(sendErr)
	case ctx.Err() != nil:
		return ctx.Err()
	case consErr != nil:
		return fmt.Errorf("consumer: %w", r.explain(consErr))
	}
	if err := e2eCountError(acked, es); err != nil {
		return errors.Join(err, drainErr)
	}
	return nil
}

// e2eWarmup sends records at the run's rate until until (none when it
// is zero or past), which the consumer receives and no figure counts:
// the stamps of the records sent from then on are numbered from the
// first measured one.
func (r *run) e2eWarmup(ctx context.Context, threads []*producerThread, rate float64, seq *atomic.Uint64, es *e2eStats, until time.Time) error {
	if !time.Now().Before(until) {
		es.measureFrom(seq.Load())
		return nil
	}
	es.measureFrom(math.MaxUint64) // every record until the warm-up ends
	r.rep.phase("warmup", 0)
	r.rep.note("kbench: warm-up of %.1f s at the run's rate", time.Until(until).Seconds())
	errs := sendAll(ctx, threads, 0, until, rate, false)
	stats := threads[0].stats
	stats.mu.Lock()
	firstErr, failures := stats.firstErr, stats.errors
	stats.mu.Unlock()
	if firstErr != nil {
		return fmt.Errorf("warm-up: %d records failed; first error: %w", failures, r.explain(firstErr))
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, errStopped) {
			return fmt.Errorf("warm-up: %w", r.explain(err))
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// Every warm-up record was acknowledged (sendAll waits for them),
	// so every one numbered below this was sent in the warm-up.
	warm := seq.Load()
	es.measureFrom(warm)
	r.res.Measurement.WarmupRecords = int64(warm)
	what := fmt.Sprintf("%v s", r.spec.Warmup)
	if r.spec.Shard != nil {
		what = "from the shard's set-up to the fleet's start"
	}
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
		"warm-up: %s at the run's rate before the measured window (%d records, received by the consumer and in no figure)", what, warm))
	return nil
}

// waitReceived waits until the consumer has received want records, the
// consumer failed or e2eDrainTimeout passed.
func waitReceived(ctx context.Context, es *e2eStats, want int64, consumed <-chan error) error {
	limit := time.Now().Add(e2eDrainTimeout)
	es.mu.Lock()
	want *= int64(es.subs) // each subscription receives every record
	es.mu.Unlock()
	for es.receivedCount() < want {
		if time.Now().After(limit) {
			return fmt.Errorf("the consumer had received %d of %d records %v after the last acknowledgement", es.receivedCount(), want, e2eDrainTimeout)
		}
		if ctx.Err() != nil || len(consumed) > 0 {
			return nil
		}
		send.Sleep(ctx, time.Millisecond, nil)
	}
	return nil
}

func (r *run) e2eRateResults(acked int64, stats *produceStats, es *e2eStats) {
	es.mu.Lock()
	r.addLatency(es.hist, rundoc.HistE2ELatency,
		fmt.Sprintf("from each record's send to the consumer's receipt, all %d records received; HdrHistogram µs, 3 significant digits", es.hist.count()), e2eQuantiles)
	r.addLatency(es.intended, rundoc.HistE2ELatencyIntended,
		"from the time the rate schedule wanted each record sent to the consumer's receipt: includes the queueing a stalled producer would otherwise hide (coordinated omission)", e2eQuantiles)
	b := es.bytes
	es.mu.Unlock()
	stats.mu.Lock()
	r.addLatency(stats.hist, rundoc.HistPublishLatency,
		fmt.Sprintf("send → acknowledgement, all %d records, HdrHistogram µs, 3 significant digits", stats.hist.count()), latencyQuantiles)
	if stats.throttled {
		r.addLatency(stats.delay, rundoc.HistPublishDelay, publishDelayHelp, latencyQuantiles)
	}
	stats.mu.Unlock()
	r.e2eCounts(acked, es)
	r.res.Metrics = append(r.res.Metrics, r.win.processMetrics(b)...)
	r.harnessCheck("")
}

// e2eConsumer reads every partition from where it ended when the run
// started, one kafka-go Conn each.
type e2eConsumer struct {
	gate    *consumerGate
	parts   []*e2ePartition
	maxWait time.Duration
	maxByte int
	base    time.Time
	es      *e2eStats
}

type e2ePartition struct {
	conn *kafka.Conn
	next int64
	buf  []byte
}

func (r *run) newE2EConsumer(ctx context.Context, offs []partOffsets, base time.Time, es *e2eStats, gate *consumerGate) (*e2eConsumer, error) {
	dialer, err := r.st.sec.Dialer(r.clientID("consumer"), r.st.setupTimeout)
	if err != nil {
		return nil, err
	}
	c := &e2eConsumer{gate: gate, maxWait: r.st.maxWait, maxByte: r.st.maxPartBytes, base: base, es: es}
	for _, o := range offs {
		conn, err := dialer.DialLeader(ctx, "tcp", r.brokers[0], o.topic, o.partition)
		if err != nil {
			c.close()
			return nil, r.explain(err)
		}
		if _, err := conn.Seek(o.last, kafka.SeekAbsolute); err != nil {
			conn.Close()
			c.close()
			return nil, err
		}
		c.parts = append(c.parts, &e2ePartition{conn: conn, next: o.last, buf: make([]byte, max(r.spec.RecordSize, 64<<10))})
	}
	return c, nil
}

// start reads every partition until ctx ends; the channel gets the first
// error (nil when none) once every reader stopped.
func (c *e2eConsumer) start(ctx context.Context) <-chan error {
	c.gate.bind(ctx)
	out := make(chan error, 1)
	errs := make([]error, len(c.parts))
	var wg sync.WaitGroup
	for i, p := range c.parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.read(ctx, p)
		}()
	}
	// Conn reads ignore ctx: end them with a deadline.
	stop := context.AfterFunc(ctx, func() {
		for _, p := range c.parts {
			p.conn.SetReadDeadline(time.Now())
		}
	})
	go func() {
		wg.Wait()
		stop()
		out <- errors.Join(errs...)
	}()
	return out
}

func (c *e2eConsumer) read(ctx context.Context, p *e2ePartition) error {
	for ctx.Err() == nil {
		if _, ok := c.gate.enter(ctx); !ok {
			return nil
		}
		err := c.fetch(ctx, p)
		c.gate.exit()
		if err != nil {
			return err
		}
	}
	return nil
}

// fetch reads one batch of partition p.
func (c *e2eConsumer) fetch(ctx context.Context, p *e2ePartition) error {
	asked := p.next
	batch := p.conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: c.maxByte, MaxWait: c.maxWait})
	for {
		n, err := batch.Read(p.buf)
		if err != nil {
			if errors.Is(err, io.ErrShortBuffer) {
				p.buf = make([]byte, 2*len(p.buf))
			}
			break
		}
		// The broker answers with whole record batches, which may start
		// before the offset asked for.
		if batch.Offset()-1 < asked {
			continue
		}
		now := time.Since(c.base)
		seq, intended, sent, ok := readStamp(p.buf[:n])
		if !ok || seq >= e2eMaxSeq {
			c.es.mu.Lock()
			c.es.foreign++
			c.es.mu.Unlock()
			continue
		}
		c.es.receive(0, seq, n, now-sent, now-intended)
	}
	p.next = batch.Offset()
	// kafka-go reports a fetch that found no record within
	// fetch.max.wait.ms as RequestTimedOut: nothing was sent meanwhile
	// (a slow rate, a warm-up's end, the gate closing), not a failure.
	if err := batch.Close(); err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrShortBuffer) && !errors.Is(err, kafka.RequestTimedOut) {
		return fmt.Errorf("fetch partition: %w", err)
	}
	if _, err := p.conn.Seek(p.next, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil && ctx.Err() == nil {
		return fmt.Errorf("fetch partition: %w", err)
	}
	return nil
}

func (c *e2eConsumer) close() {
	for _, p := range c.parts {
		p.conn.Close()
	}
}
