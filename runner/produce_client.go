package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// clientSender produces with kafka-go's Client.Produce, doing the batching
// kafka.Writer would do itself: records go into one partition's batch until
// batch.size bytes or linger.ms, then the batch is sent while the next one
// fills, with up to max.in.flight.requests.per.connection requests
// outstanding. It is the producer's counterpart of the consumer's assign
// mode: kafka-go's fastest produce path, not the one applications use.
type clientSender struct {
	t          *producerThread
	client     *kafka.Client
	topic      string
	partitions int
	acks       kafka.RequiredAcks
	comp       kafka.Compression
	batchBytes int64
	linger     time.Duration
	inFlight   chan struct{}
	wg         sync.WaitGroup
	next       int // partition of the next batch

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
	recs      []kafka.Record
	slots     []*sendSlot
	bytes     int64
	opened    time.Duration
}

func (r *run) newClientSender(t *producerThread, partitions int) (*clientSender, error) {
	tr, err := r.transport("producer-client")
	if err != nil {
		return nil, err
	}
	return &clientSender{
		t:          t,
		client:     &kafka.Client{Addr: kafka.TCP(r.brokers...), Transport: tr, Timeout: r.st.requestTimeout},
		topic:      r.spec.Topic,
		partitions: partitions,
		acks:       r.st.acks,
		comp:       r.st.compression,
		batchBytes: int64(r.st.batchBytes),
		linger:     r.st.linger,
		inFlight:   make(chan struct{}, r.st.maxInFlight),
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
			b = &clientBatch{partition: c.next, opened: now, bytes: batchOverhead}
			c.next = (c.next + 1) % c.partitions
		}
		s := t.slot()
		s.sent, s.intended, s.size, s.measured = now, intended, int32(len(p)), measured
		b.recs = append(b.recs, kafka.Record{Value: kafka.NewBytes(p)})
		b.slots = append(b.slots, s)
		b.bytes += int64(len(p)) + recordOverhead
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
			c.finish(b, ctx.Err(), 0)
			return true
		}
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.inFlight }()
		t0 := time.Now()
		resp, err := c.client.Produce(ctx, &kafka.ProduceRequest{
			Topic: c.topic, Partition: b.partition, RequiredAcks: c.acks, Compression: c.comp,
			Records: kafka.NewRecordReader(b.recs...),
		})
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		c.finish(b, err, time.Since(t0))
	}()
	return true
}

// finish records the batch's acknowledgements (or failure) and returns its
// bytes to the buffer budget.
func (c *clientSender) finish(b *clientBatch, err error, took time.Duration) {
	var bytes int64
	if errors.Is(err, context.Canceled) && c.t.stats.failed() {
		err = nil // another batch's error already ended the run
	}
	bytes = c.t.stats.completeSlots(b.slots, err)
	c.t.credit.release(bytes)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Writes++
	c.stats.BatchSize.Count++
	c.stats.BatchSize.Sum += int64(len(b.recs))
	c.stats.BatchBytes.Count++
	c.stats.BatchBytes.Sum += b.bytes // encoded size, upper bound
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
