package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"

	"github.com/kbench/kbench/runner/wire"
)

// clientSender produces with kafka-go's Client, doing the batching
// kafka.Writer would do itself: records go into one partition's batch until
// batch.size bytes or linger.ms, then the batch is sent while the next one
// fills, with up to max.in.flight.requests.per.connection requests
// outstanding. It serves two modes:
//
//   - client: each batch is a list of kafka.Record that kafka-go encodes
//     (Client.Produce), so kafka-go's record encoder is measured;
//   - raw: kbench encodes each record into the batch as it arrives
//     (runner/wire) and kafka-go sends the finished batch
//     (Client.RawProduce), so kafka-go's transport is measured without
//     its per-record encoding costs. It is the producer's counterpart of
//     the consumer's assign mode: the fastest way to drive a broker with
//     kafka-go, not the way applications produce.
type clientSender struct {
	t          *producerThread
	client     *kafka.Client
	raw        bool
	topic      string
	partitions int
	acks       kafka.RequiredAcks
	comp       kafka.Compression
	compressor *wire.Compressor // mode raw, nil without compression
	batchBytes int64
	linger     time.Duration
	// retries + 1, retry.backoff.ms and retry.backoff.max.ms
	maxAttempts            int
	backoffMin, backoffMax time.Duration
	inFlight               chan struct{}
	wg                     sync.WaitGroup
	next                   int   // partition of the next batch
	tsBase                 int64 // UnixMilli of the stats' time base, for record timestamps
	free                   chan *clientBatch

	mu    sync.Mutex
	stats kafka.WriterStats // the same figures the Writer reports
}

// Encoded sizes, so a batch stays within batch.size as Kafka counts it (and
// within the broker's message.max.bytes when batch.size is near it): a v2
// record batch has a 61-byte header, and each record without key or
// headers adds at most 23 bytes of varints and attributes.
const (
	batchOverhead  = 61
	recordOverhead = 23
)

type clientBatch struct {
	partition int
	recs      []kafka.Record   // mode client
	enc       wire.RecordBatch // mode raw
	slots     []*sendSlot
	bytes     int64
	opened    time.Duration
}

// add appends a record of value created at now (since the time base).
func (c *clientSender) add(b *clientBatch, value []byte, slot *sendSlot, now time.Duration) {
	if c.raw {
		b.enc.Append(c.tsBase+now.Milliseconds(), value)
	} else {
		b.recs = append(b.recs, kafka.Record{Value: kafka.NewBytes(value)})
	}
	b.slots = append(b.slots, slot)
	b.bytes += int64(len(value)) + recordOverhead
}

// open returns an empty batch for the next partition, reusing the memory of
// one already acknowledged when there is one: a raw batch's buffer grows to
// batch.size once and is then kept.
func (c *clientSender) open(now time.Duration) *clientBatch {
	var b *clientBatch
	select {
	case b = <-c.free:
	default:
		b = &clientBatch{}
	}
	b.partition, b.opened, b.bytes = c.next, now, batchOverhead
	c.next = (c.next + 1) % c.partitions
	return b
}

// release hands an acknowledged batch's memory back for reuse.
func (c *clientSender) release(b *clientBatch) {
	if !c.raw {
		return // kafka.Records are not reused: kafka-go may still read them
	}
	b.enc.Reset()
	clear(b.slots)
	b.slots = b.slots[:0]
	select {
	case c.free <- b:
	default:
	}
}

func (r *run) newClientSender(t *producerThread, partitions int) (*clientSender, error) {
	tr, err := r.transport(fmt.Sprintf("producer-%d", t.id+1)) // as the Writer's, so client.id reads the same in every mode
	if err != nil {
		return nil, err
	}
	raw := r.spec.Mode == ModeRaw
	var comp *wire.Compressor
	if codec := r.st.compression.Codec(); raw && codec != nil {
		comp = wire.StreamCompressor(codec.Code(), codec.NewWriter)
	}
	return &clientSender{
		t:           t,
		client:      &kafka.Client{Addr: kafka.TCP(r.brokers...), Transport: tr, Timeout: r.st.requestTimeout},
		raw:         raw,
		compressor:  comp,
		tsBase:      t.stats.base.UnixMilli(),
		free:        make(chan *clientBatch, r.st.maxInFlight+1),
		topic:       r.spec.Topic,
		partitions:  partitions,
		acks:        r.st.acks,
		comp:        r.st.compression,
		batchBytes:  int64(r.st.batchBytes),
		maxAttempts: r.st.maxAttempts,
		backoffMin:  r.st.backoffMin,
		backoffMax:  r.st.backoffMax,
		linger:      r.st.linger,
		inFlight:    make(chan struct{}, r.st.maxInFlight),
	}, nil
}

// send produces n records (rate records/s, 0 for no limit) and waits for
// every response.
func (c *clientSender) send(ctx context.Context, n int64, rate float64, measured bool) error {
	t := c.t
	start := t.stats.now()
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) / rate)
	}
	var b *clientBatch
	var err error
	for sent := int64(0); sent < n; {
		if ctx.Err() != nil || t.stats.failed() {
			break
		}
		now := t.stats.now()
		intended := now
		if rate > 0 {
			due := int64((now-start)/interval) + 1
			if due <= sent {
				// Nothing is due: send the open batch once it has lingered
				// long enough, else sleep until the next record or that.
				if b != nil && now >= b.opened+c.linger {
					c.dispatch(ctx, b, true)
					b = nil
					continue
				}
				wait := start + time.Duration(sent)*interval - now
				if b != nil {
					wait = min(wait, b.opened+c.linger-now)
				}
				sleepCtx(ctx, wait)
				continue
			}
			intended = start + time.Duration(sent)*interval
		}
		p := t.payload()
		if err = t.credit.acquire(ctx, int64(len(p))); err != nil {
			break
		}
		if b != nil && b.bytes+int64(len(p))+recordOverhead > c.batchBytes {
			c.dispatch(ctx, b, true) // full: wait for an in-flight slot
			b = nil
		}
		if b == nil {
			b = c.open(now)
		}
		s := t.slot()
		s.sent, s.intended, s.size, s.measured = now, intended, int32(len(p)), measured
		c.add(b, p, s, now)
		sent++
		if now-b.opened >= c.linger && c.dispatch(ctx, b, false) {
			b = nil // lingered enough and a slot was free; else keep filling
		}
	}
	if b != nil {
		c.dispatch(ctx, b, true)
	}
	c.wg.Wait()
	t.credit.idle()
	return err
}

// dispatch sends a batch when an in-flight slot is free. With wait false
// it gives up at once when none is (and reports false), so the batch can
// keep filling, as Kafka's producer fills batches while requests are out.
func (c *clientSender) dispatch(ctx context.Context, b *clientBatch, wait bool) bool {
	select {
	case c.inFlight <- struct{}{}:
	default:
		if !wait {
			return false
		}
		select {
		case c.inFlight <- struct{}{}:
		case <-ctx.Done():
			c.finish(ctx, b, ctx.Err(), 0)
			return true
		}
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.inFlight }()
		t0 := time.Now()
		err := c.produce(ctx, b)
		c.finish(ctx, b, err, time.Since(t0))
		if err == nil {
			// Only an answered request is done with the batch: one cut
			// short (a cancel, a lost connection) may still be being
			// written by kafka-go's connection goroutine, so its memory
			// is left to the garbage collector rather than reused.
			c.release(b)
		}
	}()
	return true
}

// produce sends one batch and waits for its response, retrying as the
// Writer does (retries, retry.backoff.ms, retry.backoff.max.ms): errors the
// broker calls temporary and dropped connections are retried after a
// growing pause, anything else fails the batch at once.
func (c *clientSender) produce(ctx context.Context, b *clientBatch) error {
	var batch []byte
	if c.raw {
		var err error
		if batch, err = b.enc.Finish(c.compressor); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		var resp *kafka.ProduceResponse
		var err error
		if c.raw {
			resp, err = c.client.RawProduce(ctx, &kafka.RawProduceRequest{
				Topic: c.topic, Partition: b.partition, RequiredAcks: c.acks,
				RawRecords: protocol.RawRecordSet{Reader: wire.NewRecordsField(batch)},
			})
		} else {
			if attempt > 1 {
				rewind(b.recs)
			}
			resp, err = c.client.Produce(ctx, &kafka.ProduceRequest{
				Topic: c.topic, Partition: b.partition, RequiredAcks: c.acks, Compression: c.comp,
				Records: kafka.NewRecordReader(b.recs...),
			})
		}
		if err == nil && resp != nil && resp.Error != nil {
			err = resp.Error
		}
		if err == nil || attempt >= c.maxAttempts || !retriable(err) {
			return err
		}
		c.mu.Lock()
		c.stats.Retries++
		c.mu.Unlock()
		sleepCtx(ctx, min(time.Duration(attempt*attempt)*c.backoffMin, c.backoffMax))
		if ctx.Err() != nil {
			return err
		}
	}
}

// rewind makes the values of records a failed attempt has read readable
// again: kafka.NewBytes values are bytes.Readers underneath.
func rewind(recs []kafka.Record) {
	for _, r := range recs {
		if s, ok := r.Value.(io.Seeker); ok {
			s.Seek(0, io.SeekStart)
		}
	}
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
// bytes to the buffer budget. A request cut short because the run is
// stopping (cancel, SIGINT, the end of --duration) was neither acknowledged
// nor refused by the broker, so its records count as neither: they are
// simply not in the result, as records still queued are not.
func (c *clientSender) finish(ctx context.Context, b *clientBatch, err error, took time.Duration) {
	if err != nil && ctx.Err() != nil {
		var bytes int64
		for _, s := range b.slots {
			bytes += int64(s.size)
		}
		c.t.credit.release(bytes)
		return
	}
	c.t.credit.release(c.t.stats.completeSlots(b.slots, err))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Writes++
	c.stats.BatchSize.Count++
	c.stats.BatchSize.Sum += int64(len(b.slots))
	c.stats.BatchBytes.Count++
	if c.raw {
		c.stats.BatchBytes.Sum += int64(b.enc.Len()) // exact, before compression
	} else {
		c.stats.BatchBytes.Sum += b.bytes // encoded size, upper bound
	}
	c.stats.WriteTime.Sum += took
	c.stats.WriteTime.Max = max(c.stats.WriteTime.Max, took)
	if err != nil {
		c.stats.Errors++
	}
}

// takeStats returns the figures gathered since the last call, like
// kafka.Writer.Stats does.
func (c *clientSender) takeStats() kafka.WriterStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	c.stats = kafka.WriterStats{}
	return s
}
