package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/runner/send"
)

// sendChunk is how many records an unthrottled producer hands kafka-go per
// WriteMessages call: the call's fixed cost (partition lookup, a map) is
// then negligible, and every record of the chunk shares one send timestamp,
// which is also when it became eligible to be sent.
const sendChunk = 100

// sendSlot travels with each record through kafka-go (Message.WriterData)
// so the completion callback knows when the record was sent. The writer
// mode's slots live in slabs to avoid one allocation per record; the
// client and raw modes keep them in their batches.
type sendSlot struct {
	sent     time.Duration // since the run's time base
	intended time.Duration // when a throttled producer should have sent it
	size     int32
	measured bool
}

// produceStats aggregates acknowledgements from every producer thread.
type produceStats struct {
	base      time.Time
	throttled bool

	mu       sync.Mutex
	hist     *latencyHist // send → ack
	intended *latencyHist // intended send → ack (throttled runs only)
	delay    *latencyHist // intended send → send (throttled runs only)
	acked    int64        // all phases, for progress
	records  int64        // measured
	bytes    int64        // measured payload bytes
	errors   int64
	firstErr error
	// failed is firstErr != nil, for send loops to check per record
	// without taking mu.
	failed atomic.Bool
	// The current interval of the text lines and of the series.
	line, point ivCounters
}

func (s *produceStats) now() time.Duration { return time.Since(s.base) }

// newProduceStats starts the statistics of a producer's records, timed from
// now.
func newProduceStats(throttled bool) *produceStats {
	return &produceStats{base: time.Now(), throttled: throttled, hist: newLatencyHist(), intended: newLatencyHist(), delay: newLatencyHist(),
		point: pointCounters()}
}

// logged are the histograms of s whose intervals the run logs: the
// latency, and when throttled the intended-time latency and the delay.
func (s *produceStats) logged() []loggedHist {
	hs := []loggedHist{{rundoc.HistRecordLatency, &s.mu, s.hist}}
	if s.throttled {
		hs = append(hs, loggedHist{rundoc.HistRecordLatencyIntended, &s.mu, s.intended}, loggedHist{rundoc.HistPublishDelay, &s.mu, s.delay})
	}
	return hs
}

// publishDelayHelp is the help of publish-delay.
const publishDelayHelp = "from the time the rate schedule wanted each record sent to when it was sent: how far behind its schedule the producer ran " +
	"(OMB's publishDelayLatency); HdrHistogram µs, 3 significant digits"

// complete records a kafka-go Writer batch: each message carries its slot.
func (s *produceStats) complete(msgs []kafka.Message, err error) (bytes int64) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range msgs {
		bytes += s.recordLocked(msgs[i].WriterData.(*sendSlot), now, err)
	}
	s.noteErrLocked(err)
	return bytes
}

// completeSlots records a batch sent by the client mode.
func (s *produceStats) completeSlots(slots []sendSlot, err error) (bytes int64) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range slots {
		bytes += s.recordLocked(&slots[i], now, err)
	}
	s.noteErrLocked(err)
	return bytes
}

func (s *produceStats) noteErrLocked(err error) {
	if err != nil && s.firstErr == nil {
		s.firstErr = err
		s.failed.Store(true)
	}
}

// recordLocked counts one record's acknowledgement (or failure) at now and
// returns its size; s.mu is held.
func (s *produceStats) recordLocked(slot *sendSlot, now time.Duration, err error) int64 {
	size := int64(slot.size)
	if err != nil {
		s.errors++
		return size
	}
	s.acked++
	if !slot.measured {
		return size
	}
	lat := now - slot.sent
	s.hist.record(lat)
	if s.throttled {
		s.intended.record(now - slot.intended)
		s.delay.record(slot.sent - slot.intended)
	}
	s.records++
	s.bytes += size
	s.line.add(1, size, lat)
	s.point.add(1, size, lat)
	return size
}

// failedFast reports whether a record failed; it takes no lock.
func (s *produceStats) failedFast() bool { return s.failed.Load() }

// credit bounds the bytes of the writer mode's records not yet
// acknowledged, as Kafka's buffer.memory does: an unthrottled producer
// must block, not queue the whole run in memory and report that queue as
// latency, and blocks for at most max.block.ms. One goroutine acquires
// (the thread's); any may release.
type credit struct {
	free     atomic.Int64
	cap      int64
	maxBlock time.Duration
	wake     chan struct{}
	// waited is how long acquire blocked; only the acquirer touches it.
	waited time.Duration
}

func newCredit(capacity int64, maxBlock time.Duration) *credit {
	c := &credit{cap: capacity, maxBlock: maxBlock, wake: make(chan struct{}, 1)}
	c.free.Store(capacity)
	return c
}

// enough reports whether n bytes are free; a request larger than the
// whole budget waits for an idle producer instead of forever.
func (c *credit) enough(n int64) bool {
	f := c.free.Load()
	return f >= n || f == c.cap
}

// acquire takes n bytes, waiting at most max.block.ms for them.
func (c *credit) acquire(ctx context.Context, n int64) error {
	if !c.enough(n) {
		began := time.Now()
		defer func() { c.waited += time.Since(began) }()
		limit := time.NewTimer(c.maxBlock)
		defer limit.Stop()
		for !c.enough(n) {
			select {
			case <-c.wake:
			case <-limit.C:
				if !c.enough(n) {
					return maxBlockError(c.maxBlock, c.cap)
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	c.free.Add(-n)
	return nil
}

func (c *credit) release(n int64) {
	c.free.Add(n)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// idle waits until every acquired byte was released: all sent records have
// been acknowledged or have failed.
func (c *credit) idle() {
	for c.free.Load() < c.cap {
		<-c.wake
	}
}

type producerThread struct {
	id int
	// topic is the topic the thread sends to.
	topic  string
	w      *kafka.Writer // mode writer
	client *clientSender // mode client
	// sender sends the thread's records: the thread itself in mode
	// writer, client in the client and raw modes.
	sender send.Sender
	credit *credit
	stats  *produceStats
	gen    *recordGen
	shape  *recordShape
	slab   []sendSlot
	// stamp, when set (e2e's rate mode), returns the value to send in
	// place of the generated one, given when the record is sent and when
	// it was due; the client and raw modes call it.
	stamp func(value []byte, sent, intended time.Duration) []byte
}

// threadStats are a producer thread's figures since the last call.
type threadStats struct {
	requests kafka.WriterStats
	// wire is known in the client and raw modes only: kafka-go's Writer
	// reports no compressed sizes.
	wire      wireStats
	wireKnown bool
	// waited is how long send blocked on buffer.memory.
	waited time.Duration
}

// takeStats returns the thread's figures since the last call.
func (t *producerThread) takeStats() threadStats {
	if c := t.client; c != nil {
		st := threadStats{wireKnown: true, waited: c.waited}
		st.requests, st.wire = c.takeStats()
		c.waited = 0
		return st
	}
	st := threadStats{requests: t.w.Stats(), waited: t.credit.waited}
	t.credit.waited = 0
	return st
}

func (t *producerThread) slot() *sendSlot {
	if len(t.slab) == 0 {
		t.slab = make([]sendSlot, 4096)
	}
	s := &t.slab[0]
	t.slab = t.slab[1:]
	return s
}

// Send produces the phase's records through the thread's kafka-go Writer
// and waits for their acknowledgements.
func (t *producerThread) Send(ctx context.Context, ph send.Phase) error {
	msgs := make([]kafka.Message, sendChunk)
	n := ph.N
	deadline := phaseDeadline(ph, t.stats.base)
	pacer := send.NewPacer(ph.Rate, t.stats.now())
	var err error
	for sent := int64(0); n == 0 || sent < n; {
		if ctx.Err() != nil || t.stats.failedFast() {
			break
		}
		now := t.stats.now()
		if n == 0 && now >= deadline {
			if deadline = ph.End(t.stats.base, deadline, now); now >= deadline {
				break
			}
		}
		k := int64(sendChunk)
		if n > 0 {
			k = min(k, n-sent)
		}
		if pacer.Limited() {
			// Send the records due now, each stamped with when it should
			// have gone, so a stalled producer shows its queueing in the
			// intended-time latency.
			due := pacer.Ready(now)
			if due <= sent {
				wait := pacer.Due(sent) - now
				if n == 0 {
					wait = min(wait, deadline-now)
				}
				send.Sleep(ctx, wait, nil)
				continue
			}
			k = min(k, due-sent)
		}
		var bytes int64
		for j := int64(0); j < k; j++ {
			v, key, _ := t.gen.next()
			bytes += int64(len(v))
			msgs[j] = kafka.Message{Key: key, Value: v, Headers: t.shape.kheaders}
		}
		// Stamped before send may block on buffer.memory, as Kafka's tool
		// starts its clock before KafkaProducer.send.
		for j := int64(0); j < k; j++ {
			s := t.slot()
			s.sent, s.intended, s.size, s.measured = now, now, int32(len(msgs[j].Value)), ph.Measured
			if pacer.Limited() {
				s.intended = pacer.Due(sent + j)
			}
			msgs[j].WriterData = s
		}
		if err = t.credit.acquire(ctx, bytes); err != nil {
			break
		}
		if err = t.w.WriteMessages(ctx, msgs[:k]...); err != nil {
			t.credit.release(bytes)
			break
		}
		sent += k
	}
	if err != nil {
		return err // records still out are not waited for: the run fails
	}
	t.credit.idle()
	return nil
}

// phaseDeadline is the phase's deadline as a duration since base, for
// send loops that keep time that way; 0 without one.
func phaseDeadline(ph send.Phase, base time.Time) time.Duration {
	if ph.Deadline.IsZero() {
		return 0
	}
	return ph.Deadline.Sub(base)
}

func (r *run) newWriter(t *producerThread, partitions int) (*kafka.Writer, error) {
	tr, err := r.transport(fmt.Sprintf("producer-%d", t.id+1))
	if err != nil {
		return nil, err
	}
	sh := t.shape
	maxRecord, minRecord := sh.size, sh.size
	if sh.pool == nil {
		maxRecord, minRecord = 0, math.MaxInt
		for _, p := range sh.payloads {
			maxRecord, minRecord = max(maxRecord, len(p)), min(minRecord, len(p))
		}
	}
	maxRecord += int(sh.extraBytes())
	minRecord += int(sh.extraBytes())
	// Sticky-like: fill one partition's batch before moving on, as
	// Kafka's default partitioner does for records without keys; keyed
	// records go to murmur2(key)'s partition, as it does for keys.
	var balancer kafka.Balancer = &kafka.RoundRobin{}
	// kafka-go bounds a batch by bytes (batch.size) and by count; the count
	// must not bind first, but it is preallocated, so keep it just large
	// enough. A record larger than batch.size travels alone, as in Kafka.
	batchBytes := max(r.st.batchBytes, maxRecord+512)
	batchCount := min(batchBytes/max(minRecord, 1)+1, 100000)
	linger := r.st.linger
	if linger <= 0 {
		linger = time.Nanosecond // kafka-go treats 0 as "1 s"; linger.ms=0 means "send now"
	}
	if sh.keys != nil {
		balancer = &kafka.Murmur2Balancer{}
	} else {
		balancer = &kafka.RoundRobin{ChunkSize: batchCount}
	}
	if r.spec.Shard != nil {
		balancer = &ownedBalancer{inner: balancer, owned: r.spec.OwnedPartitions(t.topic, partitions)}
	}
	return &kafka.Writer{
		Addr:            kafka.TCP(r.brokers...),
		Topic:           t.topic,
		Balancer:        balancer,
		MaxAttempts:     r.st.maxAttempts,
		WriteBackoffMin: r.st.backoffMin,
		WriteBackoffMax: r.st.backoffMax,
		BatchSize:       batchCount,
		BatchBytes:      int64(batchBytes),
		BatchTimeout:    linger,
		ReadTimeout:     r.st.requestTimeout,
		WriteTimeout:    r.st.requestTimeout,
		RequiredAcks:    r.st.acks,
		Async:           true,
		Compression:     r.st.compression,
		Transport:       &metadataCache{next: tr, topic: t.topic},
		Completion: func(msgs []kafka.Message, err error) {
			t.credit.release(t.stats.complete(msgs, err))
		},
	}, nil
}

// ownedBalancer gives a shard's Writer's balancer only the shard's own
// partitions of the topic (OwnedPartitions): the others are other
// shards'.
type ownedBalancer struct {
	inner kafka.Balancer
	owned []int // ascending
}

// Balance passes inner the owned partitions, which are all among those
// the Writer knows once the topic's metadata is complete (ensureTopics
// checked the count), and otherwise those of them it does know.
func (b *ownedBalancer) Balance(msg kafka.Message, partitions ...int) int {
	if n := len(partitions); n > 0 && partitions[n-1] == n-1 && b.owned[len(b.owned)-1] < n {
		return b.inner.Balance(msg, b.owned...)
	}
	known := make([]int, 0, len(b.owned))
	for _, p := range b.owned {
		if slices.Contains(partitions, p) {
			known = append(known, p)
		}
	}
	if len(known) == 0 {
		return b.owned[0]
	}
	return b.inner.Balance(msg, known...)
}

func (r *run) produce(ctx context.Context) error {
	topics, partitions, err := r.ensureTopics(ctx)
	if err != nil {
		return err
	}
	shape, err := r.recordShape(partitions)
	if err != nil {
		return err
	}
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, shape.describe(r.spec))
	client := r.spec.Mode == rundoc.ModeClient || r.spec.Mode == rundoc.ModeRaw
	switch {
	case r.spec.Mode == rundoc.ModeClient:
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, "mode client: records are encoded by kafka-go's record encoder (protocol.RecordSet, as Client.Produce and the Writer encode them) when their batch is sent; "+r.accumulatorNote())
	case r.spec.Mode == rundoc.ModeRaw:
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, "mode raw: kbench encodes each batch into a record batch v2 when it is sent (runner/wire; no producer id); "+r.accumulatorNote())
	default:
		if r.st.maxInFlight > 1 && partitions == 1 {
			r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
				"max.in.flight.requests.per.connection=%d: kafka-go's Writer keeps one produce request in flight per partition, so with 1 partition it is effectively 1", r.st.maxInFlight))
		}
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"mode writer: the kafka-go Writer's per-message partition-count lookups are answered from a cache refreshed every %d lookups (see runner/metacache.go)", metadataReuse))
	}
	throttled := r.spec.Throughput > 0
	stats := newProduceStats(throttled)
	// --threads producers per topic, OMB's producersPerTopic: thread i
	// sends to topic i mod the topics, each with its own buffer.memory
	// share as in a run of one topic.
	threads := make([]*producerThread, r.spec.Threads*len(topics))
	keyParts := map[string][]int{} // a shard's keys' partitions, by owned set
	if r.spec.Topics > 0 {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"%d topics (%s to %s, created for the run and deleted after it) of %d partitions, %d producer thread(s) each; records and --throughput are split evenly over the %d threads",
			len(topics), topics[0], topics[len(topics)-1], partitions, r.spec.Threads, len(threads)))
	}
	for i := range threads {
		t := &producerThread{id: i, topic: topics[i%len(topics)], credit: newCredit(r.st.bufferMemory/int64(r.spec.Threads), r.st.maxBlock), stats: stats,
			shape: shape, gen: shape.generator(i, len(threads))}
		if r.spec.Shard != nil {
			t.gen.onto(r.spec.OwnedPartitions(t.topic, partitions), keyParts)
		}
		if client {
			t.client, err = r.newClientSender(ctx, t, partitions)
			t.sender = t.client
		} else {
			t.w, err = r.newWriter(t, partitions)
			t.sender = t
		}
		if err != nil {
			return err
		}
		threads[i] = t
	}
	closed := false
	closeWriters := func() {
		if closed {
			return
		}
		closed = true
		for _, t := range threads {
			if t.w == nil {
				continue
			}
			if t.credit.free.Load() < t.credit.cap {
				// Records are still out (the run stopped early): Close would
				// wait for them up to request.timeout.ms.
				go t.w.Close()
				continue
			}
			t.w.Close()
		}
	}
	defer closeWriters()

	rate := 0.0
	if throttled {
		rate = r.spec.Throughput / float64(len(threads))
	}
	runPhase := func(name string, total int64, deadline time.Time, measured bool) error {
		r.rep.phase(name, total)
		stats.mu.Lock()
		ackedBefore := stats.acked
		stats.mu.Unlock()
		stop := r.tickProgress(name, total, func() int64 {
			stats.mu.Lock()
			defer stats.mu.Unlock()
			return stats.acked - ackedBefore
		})
		defer stop()
		errs := sendAll(ctx, threads, total, deadline, rate, measured)
		stats.mu.Lock()
		firstErr, failures := stats.firstErr, stats.errors
		stats.mu.Unlock()
		if firstErr != nil {
			return fmt.Errorf("%d records failed; first error: %w", failures, r.explain(firstErr))
		}
		for i, err := range errs {
			if errors.Is(err, errStopped) {
				errs[i] = nil // the failure that stopped it is reported above
			}
		}
		if err := errors.Join(errs...); err != nil {
			return r.explain(err)
		}
		return ctx.Err()
	}

	if r.spec.Shard != nil {
		// A fleet's shard warms up at its rate from when it is ready
		// until the fleet's start, when every shard's window opens.
		t0, err := r.awaitStart(ctx)
		if err != nil {
			return err
		}
		stats.mu.Lock()
		ackedBefore := stats.acked
		stats.mu.Unlock()
		if time.Now().Before(t0) {
			if err := runPhase("warmup", 0, t0, false); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		stats.mu.Lock()
		r.res.Measurement.WarmupRecords = stats.acked - ackedBefore
		stats.mu.Unlock()
		r.startedAt(t0)
	}
	if r.spec.WarmupRecords > 0 {
		r.rep.kafka(kafkafmt.ProducerWarmupNotice(r.spec.WarmupRecords))
		if err := runPhase("warmup", r.spec.WarmupRecords, time.Time{}, false); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		r.res.Measurement.WarmupRecords = r.spec.WarmupRecords
	}
	for _, t := range threads {
		t.takeStats() // reset the client's counters: only the window counts
	}
	if err := r.openWindow(); err != nil {
		return err
	}
	stopIntervals := r.producerIntervals(stats)
	stopLog := r.logIntervals(stats.logged()...)
	stopSeries := r.recordSeries(func(secs float64) rundoc.SeriesPoint {
		stats.mu.Lock()
		c := stats.point.take()
		stats.mu.Unlock()
		return c.point(secs, c.records, c.bytes, c.records)
	})
	measured := r.spec.NumRecords - r.spec.WarmupRecords
	var deadline time.Time
	if r.spec.Duration > 0 {
		measured = 0
		deadline = stats.base.Add(stats.now() + time.Duration(r.spec.Duration*float64(time.Second)))
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"--duration %v: records were sent for %v s after the warm-up, then the window ran on until every one was acknowledged; CPU profiles of runs that did different amounts of work compare only per record",
			r.spec.Duration, r.spec.Duration))
	}
	phaseErr := runPhase("measure", measured, deadline, true)
	r.win.stop()
	stopIntervals()
	stopSeries()
	stopLog()
	var ws []threadStats
	for _, t := range threads {
		ws = append(ws, t.takeStats())
	}
	r.win.snapshot()
	r.rep.phase("finishing", 0)
	closeWriters()

	r.producerResults(stats, ws, shape)
	if phaseErr != nil {
		return phaseErr
	}
	if measured > 0 && stats.records < measured {
		return fmt.Errorf("%w: %d of %d records acknowledged", ErrIncomplete, stats.records, measured)
	}
	return nil
}

// sendAll runs a phase on every thread at once, each sending its share
// of total records (0 with a deadline) at rate records/s (its own share;
// ≤ 0 for no limit), and returns their errors by thread.
func sendAll(ctx context.Context, threads []*producerThread, total int64, deadline time.Time, rate float64, measured bool) []error {
	return sendAllUntil(ctx, threads, total, deadline, nil, rate, measured)
}

// sendAllUntil is sendAll with a phase end that until may move later
// (send.Phase.Until).
func sendAllUntil(ctx context.Context, threads []*producerThread, total int64, deadline time.Time, until func() time.Time, rate float64, measured bool) []error {
	errs := make([]error, len(threads))
	var wg sync.WaitGroup
	for i, t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			withRole(ctx, roleSend, func(ctx context.Context) {
				errs[i] = t.sender.Send(ctx, send.Phase{N: share(total, len(threads), i), Deadline: deadline, Until: until, Rate: rate, Measured: measured})
			})
		}()
	}
	wg.Wait()
	return errs
}

// tickProgress emits progress events for the live view until stopped.
func (r *run) tickProgress(phase string, total int64, done func() int64) (stop func()) {
	if !r.rep.json {
		return func() {}
	}
	start := time.Now()
	emit := func() { r.rep.progress(phase, done(), total, time.Since(start).Seconds()) }
	stopTicks := every(500*time.Millisecond, func(time.Time) { emit() })
	return func() { stopTicks(); emit() }
}

// producerIntervals prints Kafka's periodic producer line every reporting
// interval (the series has its own step: recordSeries).
func (r *run) producerIntervals(stats *produceStats) (stop func()) {
	last := time.Now()
	return every(time.Duration(r.spec.ReportingInterval)*time.Millisecond, func(now time.Time) {
		stats.mu.Lock()
		c := stats.line.take()
		stats.mu.Unlock()
		secs := now.Sub(last).Seconds()
		last = now
		pt := c.point(secs, c.records, c.bytes, c.records)
		r.rep.kafka(kafkafmt.ProducerInterval(c.records, pt.RecordsPerSec, pt.MBPerSec, pt.LatencyAvgMs, pt.LatencyMaxMs))
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// accumulatorNote says how the client and raw modes batch and send.
func (r *run) accumulatorNote() string {
	return fmt.Sprintf("records accumulate per partition as in KafkaProducer: a batch is sent when full (batch.size %d bytes) or after linger.ms (%d), "+
		"while fewer than %d requests are out to its leader (max.in.flight.requests.per.connection; one more request of full batches is encoded meanwhile, to go out when a slot frees, as KafkaProducer's batches are encoded before they are drained), one batch per partition per request up to max.request.size (%d bytes); "+
		"each batch holds batch.size bytes of buffer.memory (%d bytes per thread) until acknowledged, and send blocks when none is left, for at most max.block.ms (%d), "+
		"so an unthrottled run's latency includes about buffer.memory / throughput of queueing, as Kafka's does; compression %v; failed batches are retried as the Writer retries; "+
		"kafka-go's Transport does not pipeline, so each request in flight uses its own connection and, with more than one in flight, batches may reach a partition out of order",
		r.st.batchBytes, r.st.linger.Milliseconds(), r.st.maxInFlight, r.st.maxRequestSize, r.threadBufferMemory(), r.st.maxBlock.Milliseconds(), r.st.compression)
}

// threadBufferMemory is the buffer.memory of each producer thread: the
// producer workload's threads share it, e2e's producers (OMB's) each
// have it whole.
func (r *run) threadBufferMemory() int64 {
	if r.spec.Workload == rundoc.E2E {
		return r.st.bufferMemory
	}
	return r.st.bufferMemory / int64(r.spec.Threads)
}

func (r *run) producerResults(stats *produceStats, ws []threadStats, shape *recordShape) {
	secs := r.win.seconds()
	stats.mu.Lock()
	defer stats.mu.Unlock()
	h := stats.hist
	recRate := float64(stats.records) / secs
	mbRate := float64(stats.bytes) / secs / (1 << 20)
	m := &r.res.Measurement
	m.MeasuredRecords = stats.records
	m.LatencySamples = h.count()
	if h.clamped > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%d latencies above %v were recorded as %v", h.clamped, time.Hour, time.Hour))
	}
	add := func(name string, v float64, unit string, better rundoc.Better, help string) {
		r.res.Metrics = append(r.res.Metrics, rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better, Help: help})
	}
	add("records-sent", float64(stats.records), "records", "", "records acknowledged in the measured window")
	add("record-send-rate", recRate, "records/s", rundoc.HigherIsBetter, "acknowledged records / window seconds")
	add("mb-per-sec", mbRate, "MB/s", rundoc.HigherIsBetter, "payload MB/s; MB = 1,048,576 bytes, as Kafka's tools")
	r.addLatency(h, rundoc.HistRecordLatency, fmt.Sprintf("send → acknowledgement, all %d records, HdrHistogram µs, 3 significant digits", h.count()), latencyQuantiles)
	if stats.throttled {
		r.addLatency(stats.intended, rundoc.HistRecordLatencyIntended,
			"from the intended send time of a throttled producer to acknowledgement: includes queueing a stalled producer would otherwise hide (coordinated omission)", latencyQuantiles)
		r.addLatency(stats.delay, rundoc.HistPublishDelay, publishDelayHelp, latencyQuantiles)
	}
	add("record-error-total", float64(stats.errors), "records", rundoc.LowerIsBetter, "records kafka-go reported as failed after its retries")

	var writes, batchCount, batchRecs, batchBytes, retries int64
	var writeSum, writeMax, waited time.Duration
	var onWire wireStats
	wireKnown := true
	for _, t := range ws {
		s := t.requests
		writes += s.Writes
		retries += s.Retries
		batchCount += s.BatchSize.Count
		batchRecs += s.BatchSize.Sum
		batchBytes += s.BatchBytes.Sum
		writeSum += s.WriteTime.Sum
		writeMax = max(writeMax, s.WriteTime.Max)
		waited += t.waited
		wireKnown = wireKnown && t.wireKnown
		onWire.batches += t.wire.batches
		onWire.wireBytes += t.wire.wireBytes
		onWire.rawBytes += t.wire.rawBytes
		onWire.ratioSum += t.wire.ratioSum
	}
	if writes > 0 {
		add("request-rate", float64(writes)/secs, "requests/s", "", requestRateHelp(r.spec.Mode))
		add("request-latency-avg", ms(writeSum)/float64(writes), "ms", rundoc.LowerIsBetter, "produce request round trip, as kafka-go times it")
		add("request-latency-max", ms(writeMax), "ms", rundoc.LowerIsBetter, "produce request round trip, as kafka-go times it")
	}
	if batchCount > 0 {
		add("records-per-request-avg", float64(batchRecs)/float64(batchCount), "records", "", "records per produce batch")
		add("batch-size-avg", float64(batchBytes)/float64(batchCount), "bytes", "", "bytes per produce batch")
	}
	add("record-retry-total", float64(retries), "retries", rundoc.LowerIsBetter, "produce attempts kafka-go retried")
	recordBytes := float64(stats.bytes + stats.records*shape.extraBytes())
	add("record-bytes", recordBytes, "bytes", "",
		"logical bytes of the acknowledged records: values, keys, and header keys and values (mb-per-sec counts values only, as Kafka's tool)")
	switch {
	case !wireKnown:
		m.Notes = append(m.Notes, "mode writer: kafka-go's Writer reports no compressed batch sizes (its batch bytes are the messages' own sizes), so compression-rate-avg and bytes-on-wire are not measured; the client and raw modes measure them")
	case onWire.batches > 0:
		add("bytes-on-wire", float64(onWire.wireBytes), "bytes", rundoc.LowerIsBetter,
			"bytes of the acknowledged record batches as sent: compressed records, batch headers and record framing (the produce requests' own headers excluded)")
		add("compression-rate-avg", onWire.ratioSum/float64(onWire.batches), "ratio", rundoc.LowerIsBetter,
			fmt.Sprintf("average over %d batches of compressed ÷ uncompressed record batch bytes, as Kafka's compression-rate-avg (1 without compression)", onWire.batches))
		if recordBytes > 0 {
			add("wire-bytes-per-record-byte", float64(onWire.wireBytes)/recordBytes, "ratio", rundoc.LowerIsBetter,
				"bytes-on-wire ÷ record-bytes: batch overhead and compression together")
		}
	}
	if secs > 0 && len(ws) > 0 {
		add("bufferpool-wait-ratio", waited.Seconds()/(secs*float64(len(ws))), "ratio", "",
			"fraction of the window send spent blocked waiting for buffer.memory, per producer thread (Kafka's bufferpool-wait-ratio): near 1 when acknowledgements, not the producer, set the pace")
	}
	r.res.Metrics = append(r.res.Metrics, r.win.processMetrics(stats.bytes)...)
	behind := ""
	if stats.throttled && stats.intended.count() > 0 && h.count() > 0 {
		var reqAvg, blocked float64
		if writes > 0 {
			reqAvg = ms(writeSum) / float64(writes)
		}
		if secs > 0 && len(ws) > 0 {
			blocked = waited.Seconds() / (secs * float64(len(ws)))
		}
		behind = behindSchedule(stats.intended.quantileMs(99), h.quantileMs(99), reqAvg, blocked)
	}
	r.harnessCheck(behind)

	if stats.records > 0 {
		r.rep.kafka(kafkafmt.ProducerSummary(kafkafmt.ProducerTotals{
			Records: stats.records, RecordsPerSec: recRate, MBPerSec: mbRate,
			AvgLatencyMs: h.meanMs(), MaxLatencyMs: h.maxMs(),
			P50: int64(h.quantileMs(50)), P95: int64(h.quantileMs(95)), P99: int64(h.quantileMs(99)), P999: int64(h.quantileMs(99.9)),
			// With warm-up, Kafka labels the window's line "steady state".
			SteadyState: r.spec.WarmupRecords > 0,
		}))
		if note := producerLineNote(h); note != "" {
			m.OutputNotes = append(m.OutputNotes, note)
			r.rep.note("kbench: %s", note)
		}
	}
	if r.spec.PrintMetrics {
		r.rep.kafka(kafkafmt.PrintMetrics(r.kafkaMetrics("producer-metrics", "producer-1")))
	}
}

// kafkaMetrics maps this run's metrics onto Kafka client metric names for
// --print-metrics. Only figures kbench measured appear: a metric Kafka has
// and kafka-go does not expose is left out, never printed as zero.
func (r *run) kafkaMetrics(group, clientID string) []kafkafmt.Metric {
	tags := []kafkafmt.Tag{{Key: "client-id", Value: clientID}}
	var out []kafkafmt.Metric
	for _, m := range r.res.Metrics {
		name, ok := kafkaMetricNames[m.Name]
		if !ok {
			continue
		}
		out = append(out, kafkafmt.Metric{Group: group, Name: name, Tags: tags, Value: m.Value})
	}
	return out
}

// kafkaMetricNames maps kbench metric names to Kafka client metric names
// where the meaning is the same.
var kafkaMetricNames = map[string]string{
	"records-sent":            "record-send-total",
	"record-send-rate":        "record-send-rate",
	"record-error-total":      "record-error-total",
	"record-retry-total":      "record-retry-total",
	"request-rate":            "request-rate",
	"request-latency-avg":     "request-latency-avg",
	"request-latency-max":     "request-latency-max",
	"records-per-request-avg": "records-per-request-avg",
	"batch-size-avg":          "batch-size-avg",
	"compression-rate-avg":    "compression-rate-avg",
	"bufferpool-wait-ratio":   "bufferpool-wait-ratio",
	"records-consumed-total":  "records-consumed-total",
	"records-consumed-rate":   "records-consumed-rate",
	"bytes-consumed-total":    "bytes-consumed-total",
	"bytes-consumed-rate":     "bytes-consumed-rate",
	"fetch-rate":              "fetch-rate",
	"fetch-total":             "fetch-total",
	"fetch-latency-avg":       "fetch-latency-avg",
	"fetch-latency-max":       "fetch-latency-max",
	"fetch-size-avg":          "fetch-size-avg",
	"fetch-size-max":          "fetch-size-max",
	"records-lag-max":         "records-lag-max",
}
