package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/rawproduce"

	"github.com/kbench/kbench/runner/send"
	"github.com/kbench/kbench/runner/wire"
)

// clientSender is kbench's own producer for --mode client and raw: a
// record accumulator and a sender that behave like KafkaProducer's, so that
// its record latency means what Kafka's tool's does.
//
//   - send appends each record to the open batch of its partition and
//     returns at once; a batch is sendable when it is full (batch.size) or
//     has lingered linger.ms, or at once while send is blocked on memory or
//     the phase is ending;
//   - sendable batches are drained into produce requests, one batch per
//     partition per request, up to max.request.size, while fewer than
//     max.in.flight.requests.per.connection requests are out to the
//     partition's leader, and records keep accumulating meanwhile;
//   - a new batch takes batch.size bytes (or the record's size when larger)
//     of buffer.memory until it is acknowledged, as Kafka's BufferPool
//     does, and send blocks only when no such room is left, for at most
//     max.block.ms.
//
// An unthrottled producer therefore runs with a full buffer and its latency
// includes that queue (about buffer.memory / throughput), while a throttled
// one waits about linger.ms. One goroutine (the thread's) both appends and
// drains, so the hot path takes no lock; each request is a goroutine that
// returns memory and its in-flight slot when answered.
//
// The two modes differ in who encodes the batch:
//
//   - client: the batch is a list of kafka.Record that kafka-go's record
//     encoder (protocol.RecordSet, what Client.Produce and the Writer use)
//     encodes and compresses when the batch is sent;
//   - raw: kbench's own encoder (runner/wire) lays the batch out when it
//     is sent, from the values, keys and timestamps the batch kept while
//     it waited, into one of a few reused buffers. (Encoding each record
//     as it arrives would copy every value into buffer.memory's worth of
//     batch buffers, cold in the CPU's caches: 30% more CPU a record with
//     a full 32 MiB buffer.) It is the producer's counterpart of the
//     consumer's assign mode: the fastest way to drive a broker with
//     kafka-go.
//
// Both send the encoded batches with kafka-go's Transport (a raw Produce
// request, as Client.RawProduce builds, but with every ready partition of
// one leader in it).
type clientSender struct {
	t          *producerThread
	tr         kafka.RoundTripper
	addr       net.Addr
	raw        bool
	topic      string
	acks       kafka.RequiredAcks
	attributes protocol.Attributes // mode client: the codec kafka-go compresses with
	compressor *wire.Compressor    // mode raw, nil without compression
	batchBytes int64
	maxRequest int64
	linger     time.Duration
	maxBlock   time.Duration
	timeout    time.Duration // request.timeout.ms
	// retries + 1, retry.backoff.ms and retry.backoff.max.ms
	maxAttempts            int
	backoffMin, backoffMax time.Duration
	maxInFlight            int32
	tsBase                 int64          // UnixMilli of the stats' time base, for record timestamps
	headers                wire.Headers   // mode raw
	kheaders               []kafka.Header // mode client
	// recordExtra bounds a record's encoded size besides its key and value:
	// varints, attributes and headers.
	recordExtra int64
	keyed       bool // records have keys (--key-size)

	// The accumulator: touched only by the thread's goroutine.
	queues    []batchQueue // by partition
	leaderOf  []int        // partition → broker index
	led       [][]int      // broker index → the partitions it leads
	drainFrom []int        // broker index → where the next drain starts
	sticky    int          // partition of records without a key
	// owned are the partitions the thread sends to, ascending: all of
	// the topic's, or a shard's (OwnedPartitions); stickyAt is sticky's
	// place among them.
	owned     []int
	stickyAt  int
	full      int // queued batches that are full
	queued    int // batches in the queues
	lingerAt  time.Duration
	exhausted bool // send is waiting for buffer.memory: every batch is sendable
	flushing  bool // the phase is ending: every batch is sendable
	// waited is how long send blocked on buffer.memory.
	waited time.Duration

	// inFlight counts each broker's requests from the moment their
	// batches are taken until they are answered: up to max.in.flight out
	// and one more being encoded (of full batches only) to go out next.
	// outSlots holds the max.in.flight slots of the requests out.
	inFlight []atomic.Int32 // by broker index
	outSlots []chan struct{}
	memFree  atomic.Int64 // bytes of this thread's buffer.memory not held by a batch
	memCap   int64
	wake     chan struct{} // a request finished: memory or a slot came free
	reqCtx   context.Context
	wg       sync.WaitGroup

	freeMu   sync.Mutex
	free     []*clientBatch
	encoders []*wire.RecordBatch

	mu    sync.Mutex
	stats kafka.WriterStats // the same figures the Writer reports
	wire  wireStats
}

// wireStats are what the acknowledged batches of the measured phase
// were made of.
type wireStats struct {
	batches   int64
	wireBytes int64   // record batches as sent: compressed, headers included
	rawBytes  int64   // the same batches uncompressed
	ratioSum  float64 // Σ wire/raw per batch, for Kafka's compression-rate-avg
}

// Encoded sizes, so a batch stays within batch.size as Kafka counts it (and
// within the broker's message.max.bytes when batch.size is near it): a v2
// record batch has a 61-byte header, and each record without key or
// headers adds at most 23 bytes of varints and attributes (a key's length
// and a header count take up to 4 bytes more than a null key's and no
// headers').
const (
	batchOverhead  = 61
	recordOverhead = 23
)

type clientBatch struct {
	partition int
	recs      []kafka.Record // mode client
	// Mode raw: the records as references (values, keys when the run has
	// any, timestamps as ms after base), encoded when the batch is sent.
	vals [][]byte
	keys [][]byte
	tsd  []int32
	base int64
	enc  *wire.RecordBatch // the encoding, from the sender's pool, while sent
	// slots are the records' send times and sizes, by value: they live and
	// are reused with the batch, so a record costs no slab allocation and
	// the collector has no pointers to follow.
	slots    []sendSlot
	bytes    int64 // upper bound of the encoded size, for batch.size
	reserved int64 // bytes of buffer.memory held
	opened   time.Duration
	full     bool

	// Set when the batch is sent.
	encoded bytes.Buffer // mode client: kafka-go's encoding
	payload []byte       // the batch as sent (mode client: with its length first)
	wireLen int          // bytes of the record batch as sent
	rawLen  int          // bytes of the record batch uncompressed
}

// batchQueue is one partition's batches, oldest first; only the last may
// still take records (it is not full).
type batchQueue struct {
	batches []*clientBatch
	head    int
}

func (q *batchQueue) first() *clientBatch {
	if q.head == len(q.batches) {
		return nil
	}
	return q.batches[q.head]
}

// open is the batch still taking records, if any.
func (q *batchQueue) open() *clientBatch {
	if q.head == len(q.batches) {
		return nil
	}
	if b := q.batches[len(q.batches)-1]; !b.full {
		return b
	}
	return nil
}

func (q *batchQueue) push(b *clientBatch) {
	if q.head > 0 && q.head == len(q.batches) {
		q.batches, q.head = q.batches[:0], 0
	}
	q.batches = append(q.batches, b)
}

func (q *batchQueue) pop() *clientBatch {
	b := q.batches[q.head]
	q.batches[q.head] = nil
	q.head++
	if q.head > 64 && q.head*2 > len(q.batches) {
		n := copy(q.batches, q.batches[q.head:])
		clear(q.batches[n:])
		q.batches, q.head = q.batches[:n], 0
	}
	return b
}

func (r *run) newClientSender(ctx context.Context, t *producerThread, partitions int) (*clientSender, error) {
	tr, err := r.transport(fmt.Sprintf("producer-%d", t.id+1)) // as the Writer's, so client.id reads the same in every mode
	if err != nil {
		return nil, err
	}
	// e2e's rate mode sends as the producer's default mode does.
	raw := r.spec.Mode == rundoc.ModeRaw || r.spec.Workload == rundoc.E2E
	var comp *wire.Compressor
	if codec := r.st.compression.Codec(); raw && codec != nil {
		comp = wire.StreamCompressor(codec.Code(), codec.NewWriter)
	}
	c := &clientSender{
		t:           t,
		tr:          tr,
		addr:        kafka.TCP(r.brokers...),
		raw:         raw,
		compressor:  comp,
		attributes:  protocol.Attributes(r.st.compression) & 7,
		tsBase:      t.stats.base.UnixMilli(),
		topic:       t.topic,
		acks:        r.st.acks,
		batchBytes:  int64(r.st.batchBytes),
		maxRequest:  int64(r.st.maxRequestSize),
		maxAttempts: r.st.maxAttempts,
		backoffMin:  r.st.backoffMin,
		backoffMax:  r.st.backoffMax,
		linger:      r.st.linger,
		maxBlock:    r.st.maxBlock,
		timeout:     r.st.requestTimeout,
		maxInFlight: int32(r.st.maxInFlight),
		memCap:      r.st.bufferMemory / int64(r.spec.Threads),
		headers:     t.shape.headers,
		kheaders:    t.shape.kheaders,
		recordExtra: recordExtra(t.shape),
		keyed:       t.shape.keys != nil,
		queues:      make([]batchQueue, partitions),
		lingerAt:    math.MaxInt64,
		wake:        make(chan struct{}, 1),
	}
	c.owned = r.spec.OwnedPartitions(t.topic, partitions)
	if len(c.owned) == 0 {
		return nil, fmt.Errorf("topic %s: the shard owns none of its partitions", t.topic)
	}
	c.sticky = c.owned[0]
	c.memFree.Store(c.memCap)
	if err := c.mapLeaders(ctx, partitions); err != nil {
		return nil, err
	}
	return c, nil
}

// mapLeaders learns each partition's leader: max.in.flight counts requests
// per broker connection, as in Kafka. (Should a leader move during the
// run, kafka-go routes the request to the new one and only the in-flight
// count keeps the old mapping.)
func (c *clientSender) mapLeaders(ctx context.Context, partitions int) error {
	client := &kafka.Client{Addr: c.addr, Transport: c.tr, Timeout: c.timeout}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{c.topic}})
	if err != nil {
		return fmt.Errorf("topic %s metadata: %w", c.topic, err)
	}
	c.leaderOf = make([]int, partitions)
	index := map[int]int{}
	for _, tp := range md.Topics {
		if tp.Name != c.topic {
			continue
		}
		for _, p := range tp.Partitions {
			if p.ID < 0 || p.ID >= partitions {
				continue
			}
			i, ok := index[p.Leader.ID]
			if !ok {
				i = len(index)
				index[p.Leader.ID] = i
			}
			c.leaderOf[p.ID] = i
		}
	}
	if len(index) == 0 {
		index[0] = 0 // no leader known: one broker, and kafka-go finds it
	}
	c.led = make([][]int, len(index))
	for _, p := range c.owned {
		c.led[c.leaderOf[p]] = append(c.led[c.leaderOf[p]], p)
	}
	c.drainFrom = make([]int, len(index))
	c.inFlight = make([]atomic.Int32, len(index))
	c.outSlots = make([]chan struct{}, len(index))
	for i := range c.outSlots {
		c.outSlots[i] = make(chan struct{}, c.maxInFlight)
	}
	return nil
}

// ErrMaxBlock is the error of a send that waited max.block.ms for
// buffer.memory: Kafka's producer fails it with a TimeoutException.
var ErrMaxBlock = errors.New("send blocked for max.block.ms")

func maxBlockError(maxBlock time.Duration, capacity int64) error {
	return fmt.Errorf("%w (%d ms) waiting for buffer.memory: all %d bytes of this producer's buffer were held by records not yet acknowledged; "+
		"Kafka's producer fails such a send with a TimeoutException (\"Failed to allocate memory within the configured max blocking time\")",
		ErrMaxBlock, maxBlock.Milliseconds(), capacity)
}

// Send produces the phase's records and waits for every response.
func (c *clientSender) Send(ctx context.Context, ph send.Phase) error {
	t := c.t
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.reqCtx = reqCtx
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
		intended := now
		if pacer.Limited() {
			if pacer.Ready(now) <= sent {
				// Nothing is due: send what can be sent, then sleep until
				// the next record, a batch's linger or a response.
				c.maybeDrain(now)
				wait := pacer.Due(sent) - now
				if c.queued > 0 && c.slotFree() {
					wait = min(wait, c.lingerAt-now)
				}
				if n == 0 {
					wait = min(wait, deadline-now)
				}
				send.Sleep(ctx, wait, c.wake)
				continue
			}
			intended = pacer.Due(sent)
		}
		value, key, part := t.gen.next()
		if t.stamp != nil {
			value = t.stamp(value, now, intended)
		}
		if err = c.append(ctx, now, intended, value, key, part, ph.Measured); err != nil {
			break
		}
		sent++
		c.maybeDrain(now)
	}
	if err == nil {
		err = c.flush(ctx)
	}
	if err != nil || ctx.Err() != nil || t.stats.failedFast() {
		// Stopping early: requests cut short and records still queued are
		// neither acknowledged nor failed; they are not in the result.
		cancel()
		c.discard()
	}
	c.wg.Wait()
	return err
}

// signal wakes the thread's goroutine if it waits.
func (c *clientSender) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// append adds one record to the open batch of its partition (part, or
// the sticky partition for a record without a key), opening a batch (and
// taking its memory, which may block) when there is none or the record
// does not fit.
func (c *clientSender) append(ctx context.Context, now, intended time.Duration, value, key []byte, part int, measured bool) error {
	size := int64(len(value)+len(key)) + c.recordExtra
	p := part
	if p < 0 {
		p = c.sticky
	}
	b := c.queues[p].open()
	if b != nil && b.bytes+size > c.batchBytes {
		// Full: it is sendable now, and records without a key move on to
		// the next partition, as Kafka's sticky partitioner does.
		c.close(b)
		b = nil
		if part < 0 {
			c.stickyAt = (c.stickyAt + 1) % len(c.owned)
			c.sticky = c.owned[c.stickyAt]
			p = c.sticky
			b = c.queues[p].open()
		}
	}
	if b == nil {
		var err error
		if b, err = c.newBatch(ctx, p, now, size); err != nil {
			return err
		}
	}
	ts := c.tsBase + now.Milliseconds()
	if c.raw {
		if len(b.vals) == 0 {
			b.base = ts
		}
		b.vals = append(b.vals, value)
		if c.keyed {
			b.keys = append(b.keys, key)
		}
		b.tsd = append(b.tsd, int32(ts-b.base))
	} else {
		b.recs = append(b.recs, kafka.Record{Time: time.UnixMilli(ts), Key: kafka.NewBytes(key), Value: kafka.NewBytes(value), Headers: c.kheaders})
	}
	b.slots = append(b.slots, sendSlot{sent: now, intended: intended, size: int32(len(value)), measured: measured})
	b.bytes += size
	return nil
}

// recordExtra bounds a record's encoded size besides its key and value.
func recordExtra(sh *recordShape) int64 {
	n := int64(recordOverhead + sh.headers.Len())
	if sh.keySize > 0 {
		n += 4
	}
	if sh.headers.Count() > 0 {
		n += 4
	}
	return n
}

func (c *clientSender) close(b *clientBatch) {
	if !b.full {
		b.full = true
		c.full++
	}
}

// newBatch opens a batch for partition p, taking batch.size bytes (or the
// record's size, when larger) of buffer.memory, waiting for them when they
// are taken.
func (c *clientSender) newBatch(ctx context.Context, p int, now time.Duration, size int64) (*clientBatch, error) {
	need := max(c.batchBytes, size+batchOverhead)
	if need > c.memCap {
		return nil, fmt.Errorf("a batch of %d bytes (batch.size, or one record and its batch header) does not fit in buffer.memory (%d bytes per producer thread)", need, c.memCap)
	}
	if c.memFree.Load() < need {
		if err := c.waitMemory(ctx, need); err != nil {
			return nil, err
		}
		now = c.t.stats.now()
	}
	c.memFree.Add(-need)
	b := c.getBatch()
	if cap(b.slots) == 0 {
		// A new batch: size its per-record lists for a full batch of
		// records like this one, once, instead of growing them by
		// doubling (copies that were a tenth of a short run's CPU).
		c.sizeLists(b, int(c.batchBytes/size)+1)
	}
	b.partition, b.opened, b.bytes, b.reserved, b.full = p, now, batchOverhead, need, false
	c.queues[p].push(b)
	c.queued++
	c.lingerAt = min(c.lingerAt, now+c.linger)
	return b, nil
}

// sizeLists gives a new batch room for n records.
func (c *clientSender) sizeLists(b *clientBatch, n int) {
	b.slots = make([]sendSlot, 0, n)
	if !c.raw {
		b.recs = make([]kafka.Record, 0, n)
		return
	}
	b.vals = make([][]byte, 0, n)
	b.tsd = make([]int32, 0, n)
	if c.keyed {
		b.keys = make([][]byte, 0, n)
	}
}

// waitMemory blocks until need bytes of buffer.memory are free, for at
// most max.block.ms. While it waits every batch is sendable, as in Kafka
// (the accumulator is "exhausted").
func (c *clientSender) waitMemory(ctx context.Context, need int64) error {
	began := time.Now()
	c.exhausted = true
	defer func() {
		c.exhausted = false
		c.waited += time.Since(began)
	}()
	limit := time.NewTimer(c.maxBlock)
	defer limit.Stop()
	for c.memFree.Load() < need {
		c.drain(c.t.stats.now())
		if c.memFree.Load() >= need {
			break
		}
		select {
		case <-c.wake:
		case <-limit.C:
			if c.memFree.Load() >= need {
				return nil
			}
			return maxBlockError(c.maxBlock, c.memCap)
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.t.stats.failedFast() {
			return errStopped
		}
	}
	return nil
}

// errStopped ends a send loop that stopped because a record failed; the
// failure itself is what the run reports.
var errStopped = errors.New("stopped after a failed record")

func (c *clientSender) getBatch() *clientBatch {
	c.freeMu.Lock()
	defer c.freeMu.Unlock()
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b
	}
	return &clientBatch{}
}

// getEncoder returns a raw batch encoder: one per batch being sent, so
// their buffers stay few and warm in the CPU's caches, however many batches
// wait in buffer.memory.
func (c *clientSender) getEncoder() *wire.RecordBatch {
	c.freeMu.Lock()
	defer c.freeMu.Unlock()
	if n := len(c.encoders); n > 0 {
		e := c.encoders[n-1]
		c.encoders = c.encoders[:n-1]
		return e
	}
	return &wire.RecordBatch{}
}

func (c *clientSender) putEncoder(e *wire.RecordBatch) {
	e.Reset()
	c.freeMu.Lock()
	c.encoders = append(c.encoders, e)
	c.freeMu.Unlock()
}

// putBatch keeps a finished batch's memory for the next one.
func (c *clientSender) putBatch(b *clientBatch) {
	if b.enc != nil {
		c.putEncoder(b.enc)
		b.enc = nil
	}
	clear(b.vals)
	clear(b.keys)
	b.vals, b.keys, b.tsd = b.vals[:0], b.keys[:0], b.tsd[:0]
	clear(b.recs)
	b.recs = b.recs[:0]
	b.slots = b.slots[:0]
	b.encoded.Reset()
	b.payload = nil
	c.freeMu.Lock()
	c.free = append(c.free, b)
	c.freeMu.Unlock()
}

// slotFree reports whether some broker can take another request: fewer
// than max.in.flight out, or the one encoded ahead not taken yet.
func (c *clientSender) slotFree() bool {
	for i := range c.inFlight {
		if c.inFlight[i].Load() <= c.maxInFlight {
			return true
		}
	}
	return false
}

// maybeDrain drains when a batch may be sendable and a slot is free; it is
// cheap enough to call after every record.
func (c *clientSender) maybeDrain(now time.Duration) {
	if (c.full > 0 || now >= c.lingerAt) && c.slotFree() {
		c.drain(now)
	}
}

// drain sends the sendable batches, request by request, while their
// leaders have a free in-flight slot. One more request of full batches per
// leader is taken to be encoded while the others are out, so that it goes
// out as soon as a slot frees: KafkaProducer's batches are encoded as
// records arrive, so they too are ready when the sender drains them.
func (c *clientSender) drain(now time.Duration) {
	for bi := range c.led {
		for {
			n := c.inFlight[bi].Load()
			if n > c.maxInFlight {
				break
			}
			req := c.collect(bi, now, n == c.maxInFlight)
			if len(req) == 0 {
				break
			}
			c.inFlight[bi].Add(1)
			c.wg.Add(1)
			go c.request(bi, req)
		}
	}
	c.lingerAt = math.MaxInt64
	for i := range c.queues {
		if b := c.queues[i].open(); b != nil {
			c.lingerAt = min(c.lingerAt, b.opened+c.linger)
		}
	}
}

// collect takes the first batch of each sendable partition of broker bi
// (only full ones with fullOnly), up to max.request.size (the first batch
// always goes), starting where the last request stopped so that no
// partition starves.
func (c *clientSender) collect(bi int, now time.Duration, fullOnly bool) []*clientBatch {
	parts := c.led[bi]
	var out []*clientBatch
	var size int64
	start := c.drainFrom[bi]
	for i := range parts {
		p := parts[(start+i)%len(parts)]
		q := &c.queues[p]
		b := q.first()
		if b == nil || !(b.full || !fullOnly && (now-b.opened >= c.linger || c.exhausted || c.flushing)) {
			continue
		}
		if len(out) > 0 && size+b.bytes > c.maxRequest {
			break
		}
		q.pop()
		if b.full {
			c.full--
		}
		b.full = true // no more records: it is being sent
		c.queued--
		size += b.bytes
		out = append(out, b)
		c.drainFrom[bi] = (start + i + 1) % len(parts)
	}
	return out
}

// flush sends every queued batch and waits for every response.
func (c *clientSender) flush(ctx context.Context) error {
	c.flushing = true
	defer func() { c.flushing = false }()
	for c.queued > 0 {
		c.drain(c.t.stats.now())
		if c.queued == 0 {
			break
		}
		select {
		case <-c.wake:
		case <-ctx.Done():
			return nil // the caller sees ctx's error
		}
		if c.t.stats.failedFast() {
			return nil
		}
	}
	c.wg.Wait()
	return nil
}

// discard drops the queued batches of a run that stops early: their
// records are neither acknowledged nor failed.
func (c *clientSender) discard() {
	for i := range c.queues {
		q := &c.queues[i]
		for q.first() != nil {
			b := q.pop()
			c.memFree.Add(b.reserved)
			c.putBatch(b)
		}
	}
	c.full, c.queued, c.lingerAt = 0, 0, math.MaxInt64
}

// request sends batches in one produce request to broker bi and completes
// them; batches the broker refuses with a retriable error are retried one
// by one, as the Writer retries (retries, retry.backoff.ms,
// retry.backoff.max.ms).
func (c *clientSender) request(bi int, batches []*clientBatch) {
	defer c.wg.Done()
	defer func() {
		c.inFlight[bi].Add(-1)
		c.signal()
	}()
	errs := make([]error, len(batches))
	var ready []*clientBatch
	withRole(c.reqCtx, roleEncode, func(context.Context) {
		for i, b := range batches {
			if errs[i] = c.encode(b); errs[i] == nil {
				ready = append(ready, b)
			}
		}
	})
	// Out: wait for an in-flight slot (it is free at once unless this
	// request was encoded ahead).
	select {
	case c.outSlots[bi] <- struct{}{}:
		defer func() { <-c.outSlots[bi] }()
	case <-c.reqCtx.Done():
		for _, b := range batches {
			c.finish(b, c.reqCtx.Err())
		}
		return
	}
	if len(ready) > 0 {
		results := c.produce(ready)
		j := 0
		for i := range batches {
			if errs[i] == nil {
				errs[i] = results[j]
				j++
			}
		}
	}
	for i, b := range batches {
		err := errs[i]
		for attempt := 2; err != nil && attempt <= c.maxAttempts && c.retriable(err) && c.reqCtx.Err() == nil; attempt++ {
			c.mu.Lock()
			c.stats.Retries++
			c.mu.Unlock()
			send.Sleep(c.reqCtx, min(time.Duration((attempt-1)*(attempt-1))*c.backoffMin, c.backoffMax), nil)
			if c.reqCtx.Err() != nil {
				break
			}
			err = c.produce([]*clientBatch{b})[0]
		}
		c.finish(b, err)
	}
}

// encode lays the batch out as it is sent: kbench's encoding (raw) or
// kafka-go's record encoder (client), compressed as configured.
func (c *clientSender) encode(b *clientBatch) error {
	if c.raw {
		enc := c.getEncoder()
		b.enc = enc
		enc.Reserve(int(b.bytes))
		for i, v := range b.vals {
			var key []byte
			if c.keyed {
				key = b.keys[i]
			}
			enc.AppendRecord(b.base+int64(b.tsd[i]), key, v, c.headers)
		}
		data, err := enc.Finish(c.compressor)
		if err != nil {
			return err
		}
		b.payload, b.wireLen, b.rawLen = data, len(data), enc.Len()
		return nil
	}
	// The uncompressed size, from the lengths, before kafka-go reads the
	// values (its readers' Len counts what is left to read).
	b.rawLen = batchOverhead
	base := b.recs[0].Time.UnixMilli()
	for i, r := range b.recs {
		keyLen := -1
		if r.Key != nil {
			keyLen = r.Key.Len()
		}
		b.rawLen += wire.RecordSizeOf(int32(i), r.Time.UnixMilli()-base, keyLen, r.Value.Len(), c.headers)
	}
	rs := protocol.RecordSet{Version: 2, Attributes: c.attributes, Records: kafka.NewRecordReader(b.recs...)}
	b.encoded.Reset()
	if _, err := rs.WriteTo(&b.encoded); err != nil {
		return fmt.Errorf("encode record batch: %w", err)
	}
	b.payload = b.encoded.Bytes()
	b.wireLen = len(b.payload) - 4 // the records field's int32 length comes first
	return nil
}

// produce sends batches (of partitions with one leader) in one Produce
// request and returns each batch's outcome. kafka-go's Transport routes
// the request to the leader, encodes it and reads the answer.
func (c *clientSender) produce(batches []*clientBatch) []error {
	errs := make([]error, len(batches))
	parts := make([]rawproduce.RequestPartition, len(batches))
	for i, b := range batches {
		var r io.Reader
		if c.raw {
			r = wire.NewRecordsField(b.payload)
		} else {
			r = bytes.NewReader(b.payload)
		}
		parts[i] = rawproduce.RequestPartition{Partition: int32(b.partition), RecordSet: protocol.RawRecordSet{Reader: r}}
	}
	ctx, cancel := context.WithTimeout(c.reqCtx, c.timeout)
	defer cancel()
	t0 := time.Now()
	m, err := c.tr.RoundTrip(ctx, c.addr, &rawproduce.Request{
		Acks: int16(c.acks),
		// Half the timeout, as kafka-go's Client sends it, so the broker
		// answers before the client gives up.
		Timeout: int32(c.timeout.Milliseconds() / 2),
		Topics:  []rawproduce.RequestTopic{{Topic: c.topic, Partitions: parts}},
	})
	took := time.Since(t0)
	c.mu.Lock()
	c.stats.Writes++
	c.stats.WriteTime.Sum += took
	c.stats.WriteTime.Max = max(c.stats.WriteTime.Max, took)
	c.mu.Unlock()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	res, _ := m.(*produce.Response)
	if res == nil {
		return errs // acks=0: no response to wait for
	}
	for i, b := range batches {
		errs[i] = fmt.Errorf("no answer for partition %d in the Produce response", b.partition)
		for _, tp := range res.Topics {
			for _, pp := range tp.Partitions {
				if tp.Topic == c.topic && int(pp.Partition) == b.partition {
					errs[i] = nil
					if pp.ErrorCode != 0 {
						errs[i] = kafka.Error(pp.ErrorCode)
					}
				}
			}
		}
	}
	return errs
}

// retriable reports whether a failed batch may succeed if sent again: the
// broker says so (a kafka.Error that is Temporary, such as
// NOT_LEADER_OR_FOLLOWER), the connection broke, or kafka-go could not
// route a request of several partitions (their leaders moved apart).
func (c *clientSender) retriable(err error) bool {
	var routing *rawproduce.Error
	return retriable(err) || errors.As(err, &routing)
}

// retriable reports whether a failed produce request may succeed if sent
// again: the broker says so (a kafka.Error that is Temporary, such as
// NOT_LEADER_OR_FOLLOWER), or the connection broke.
func retriable(err error) bool {
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) && temp.Temporary() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// finish records the batch's acknowledgements (or failure) and returns its
// memory to buffer.memory. A request cut short because the run is stopping
// (cancel, SIGINT, a failure elsewhere) was neither acknowledged nor
// refused by the broker, so its records count as neither: they are simply
// not in the result, as records still queued are not.
func (c *clientSender) finish(b *clientBatch, err error) {
	defer func() {
		c.memFree.Add(b.reserved)
		if err == nil {
			// Only an answered request is done with the batch's bytes: one
			// cut short (a cancel, a lost connection) may still be being
			// written by kafka-go's connection goroutine, so its buffers
			// are left to the garbage collector rather than reused.
			c.putBatch(b)
		}
	}()
	if err != nil && c.reqCtx.Err() != nil {
		return
	}
	c.t.stats.completeSlots(b.slots, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.BatchSize.Count++
	c.stats.BatchSize.Sum += int64(len(b.slots))
	c.stats.BatchBytes.Count++
	c.stats.BatchBytes.Sum += int64(b.rawLen) // exact, before compression
	if err != nil {
		c.stats.Errors++
		return
	}
	if len(b.slots) > 0 && b.slots[0].measured && b.rawLen > 0 {
		c.wire.batches++
		c.wire.wireBytes += int64(b.wireLen)
		c.wire.rawBytes += int64(b.rawLen)
		c.wire.ratioSum += float64(b.wireLen) / float64(b.rawLen)
	}
}

// takeStats returns the figures gathered since the last call, like
// kafka.Writer.Stats does.
func (c *clientSender) takeStats() (kafka.WriterStats, wireStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, w := c.stats, c.wire
	c.stats, c.wire = kafka.WriterStats{}, wireStats{}
	return s, w
}
