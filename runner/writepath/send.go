package writepath

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/runner/send"
	"github.com/kbench/kbench/runner/wire"
)

// rawSlot is what the response reader needs to know about a request in
// flight. The writer and the reader meet only through the socket, which
// the race detector cannot see, hence atomics.
type rawSlot struct {
	start    atomic.Int64 // write start, ns since Shape.Base
	measured atomic.Bool
}

// rawClient writes kbench's own encoding of the request (runner/wire) to
// one TCP connection with the gather, per-buffer or copy strategy, and
// reads the responses in a goroutine of their own.
type rawClient struct {
	shape    *Shape
	conn     *net.TCPConn
	req      *wire.Request
	strategy string

	sem   chan struct{} // one token per request in flight
	slots []rawSlot     // by correlation id modulo in-flight
	next  int32         // the next correlation id; writer only

	// Write scratch: net.Buffers.WriteTo consumes the slice it is given, so
	// each call gets a fresh copy of the request's buffer list in scratch.
	scratch [][]byte
	vec     net.Buffers
	flat    []byte

	dead     chan struct{} // closed when the reader stops
	readErr  error         // why it stopped; read after dead is closed
	activity atomic.Int64  // last write or response, ns since base
	timedOut atomic.Bool
	quit     chan struct{}
	once     sync.Once
}

// NewRawClient is a gather, per-buffer or copy strategy (rundoc's
// Strategy names) writing req to conn.
func NewRawClient(conn *net.TCPConn, req *wire.Request, strategy string, shape *Shape) *rawClient {
	c := &rawClient{
		shape:    shape,
		conn:     conn,
		req:      req,
		strategy: strategy,
		sem:      make(chan struct{}, shape.InFlight),
		slots:    make([]rawSlot, shape.InFlight),
		scratch:  make([][]byte, 0, min(req.NumBuffers(), maxIovecs)),
		dead:     make(chan struct{}),
		quit:     make(chan struct{}),
	}
	go c.read()
	go c.watch()
	return c
}

// read matches responses to requests: a broker answers the requests of a
// connection in order, so each response must carry the next correlation
// id.
func (c *rawClient) read() {
	defer close(c.dead)
	rd := bufio.NewReaderSize(c.conn, 64<<10)
	var buf []byte
	var expect int32
	for {
		frame, err := wire.ReadFrame(rd, buf)
		if err != nil {
			c.readErr = err
			return
		}
		buf = frame
		resp, err := wire.ParseProduceResponse(frame, wire.ProduceVersion)
		switch {
		case err != nil:
			c.readErr = fmt.Errorf("unreadable Produce response: %w", err)
		case resp.CorrelationID != expect:
			c.readErr = fmt.Errorf("response with correlation id %d, expected %d", resp.CorrelationID, expect)
		case resp.ErrorCode != 0:
			c.readErr = fmt.Errorf("broker refused the request to %s partition %d: %w", resp.ErrorTopic, resp.ErrorPartition, kafka.Error(resp.ErrorCode))
		case resp.Partitions != 1:
			c.readErr = fmt.Errorf("the Produce response answers %d partitions, want 1", resp.Partitions)
		}
		if c.readErr != nil {
			return
		}
		slot := &c.slots[uint32(expect)%uint32(len(c.slots))]
		now := c.shape.Since()
		c.shape.Stats.Record(now-time.Duration(slot.start.Load()), slot.measured.Load())
		c.activity.Store(int64(now))
		expect++
		<-c.sem
	}
}

// watch closes the connection when requests stay unanswered too long.
func (c *rawClient) watch() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-c.dead:
			return
		case <-tick.C:
			idle := c.shape.Since() - time.Duration(c.activity.Load())
			if len(c.sem) > 0 && idle > Timeout {
				c.timedOut.Store(true)
				c.conn.Close()
				return
			}
		}
	}
}

// failure is why the reader stopped.
func (c *rawClient) failure() error {
	<-c.dead
	if c.timedOut.Load() {
		return fmt.Errorf("%w to a request within %v", errNoResponse, Timeout)
	}
	if errors.Is(c.readErr, net.ErrClosed) {
		return errors.New("connection closed")
	}
	return c.readErr
}

func (c *rawClient) Send(ctx context.Context, ph send.Phase) error {
	stop := context.AfterFunc(ctx, func() { c.conn.Close() })
	defer stop()
	err := c.sendAll(ctx, ph)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // the closed connection is the cancel's doing
	}
	return err
}

func (c *rawClient) sendAll(ctx context.Context, ph send.Phase) error {
	pacer := send.NewPacer(ph.Rate, c.shape.Since())
	for i := int64(0); ph.N == 0 || i < ph.N; i++ {
		if !ph.Deadline.IsZero() && !time.Now().Before(ph.Deadline) {
			break
		}
		pacer.Wait(ctx, c.shape.Since(), i)
		select {
		case c.sem <- struct{}{}:
		case <-c.dead:
			return c.failure()
		case <-ctx.Done():
			return ctx.Err()
		}
		id := c.next
		c.next++
		slot := &c.slots[uint32(id)%uint32(len(c.slots))]
		slot.measured.Store(ph.Measured)
		now := int64(c.shape.Since())
		slot.start.Store(now)
		c.activity.Store(now)
		c.req.SetCorrelationID(id)
		if err := c.write(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			select {
			case <-c.dead:
				return c.failure()
			default:
			}
			return fmt.Errorf("write request: %w", err)
		}
	}
	return drainInFlight(ctx, c.sem, c.dead, c.failure)
}

// drainInFlight waits for every request in flight to be answered: once all
// of sem's tokens can be taken, none is out. It gives up with failure()
// when failed closes, or with the context's error.
func drainInFlight(ctx context.Context, sem chan struct{}, failed <-chan struct{}, failure func() error) error {
	for range cap(sem) {
		select {
		case sem <- struct{}{}:
		case <-failed:
			return failure()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for range cap(sem) {
		<-sem
	}
	return nil
}

// write sends the request with the client's strategy.
func (c *rawClient) write() error {
	bufs := c.req.Buffers()
	switch c.strategy {
	case rundoc.StrategyGather:
		for len(bufs) > 0 {
			k := min(len(bufs), maxIovecs)
			c.vec = append(c.scratch[:0], bufs[:k]...)
			if _, err := c.vec.WriteTo(c.conn); err != nil {
				return err
			}
			bufs = bufs[k:]
		}
	case rundoc.StrategyPerBuffer:
		for _, b := range bufs {
			if _, err := c.conn.Write(b); err != nil {
				return err
			}
		}
	case rundoc.StrategyCopy:
		c.flat = c.req.AppendTo(c.flat[:0])
		if _, err := c.conn.Write(c.flat); err != nil {
			return err
		}
	default:
		return fmt.Errorf("strategy %q does not write kbench's own encoding", c.strategy)
	}
	return nil
}

func (c *rawClient) Describe() string {
	bufs := c.req.Buffers()
	minRec, maxRec := len(bufs[2]), len(bufs[2])
	for _, b := range bufs[2:] {
		minRec, maxRec = min(minRec, len(b)), max(maxRec, len(b))
	}
	recSize := fmt.Sprint(minRec)
	if maxRec != minRec {
		recSize = fmt.Sprintf("%d–%d", minRec, maxRec)
	}
	how := map[string]string{
		rundoc.StrategyGather:    "all buffers of a request in one net.Buffers.WriteTo on the *net.TCPConn, which is one writev(2)",
		rundoc.StrategyPerBuffer: "one Write, so one write(2), per buffer",
		rundoc.StrategyCopy:      "the buffers copied into one reused buffer, then one Write",
	}[c.strategy]
	if c.strategy == rundoc.StrategyGather && len(bufs) > maxIovecs {
		how += fmt.Sprintf(" per %d buffers (IOV_MAX), %d calls per request", maxIovecs, (len(bufs)+maxIovecs-1)/maxIovecs)
	}
	return fmt.Sprintf("strategy %s: %s; %d buffers per request: request header and Produce fields (%d B), record-batch header (%d B), "+
		"then one buffer per record (%d records of %s B: %d B value plus the record's own framing); %d B per request; "+
		"Produce v%d with one uncompressed record batch v2 (CRC-32C), encoded once by kbench (runner/wire), only the correlation id changing between requests; "+
		"up to %d requests in flight on one connection to %s",
		c.strategy, how, len(bufs), len(bufs[0]), len(bufs[1]), len(bufs)-2, recSize, len(c.shape.Payload), c.req.Len(),
		wire.ProduceVersion, c.shape.InFlight, c.conn.RemoteAddr())
}

func (c *rawClient) Close() {
	c.once.Do(func() {
		close(c.quit)
		c.conn.Close()
		<-c.dead
	})
}

// kgSlot travels with a request's records through kafka-go's Writer.
type kgSlot struct {
	start    time.Duration
	measured bool
}

// kafkaGoWriter sends the records through kafka-go's Writer and Transport:
// async, one batch of exactly records-per-request records per request.
type kafkaGoWriter struct {
	shape  *Shape
	w      *kafka.Writer
	tr     *kafka.Transport
	msgs   []kafka.Message
	sem    chan struct{}
	slots  []kgSlot
	seq    int
	failed chan struct{}
	once   sync.Once
}

// NewKafkaGoWriter is the kafka-go strategy: a Writer to brokers on a
// fresh Transport tr, whose requests go through rt (tr, or a cache in
// front of it).
func NewKafkaGoWriter(shape *Shape, brokers []string, tr *kafka.Transport, rt kafka.RoundTripper) Client {
	// Only the run's topic: kafka-go's discovery asks for every topic
	// otherwise, which a busy cluster answers slowly and the sink with
	// what it has seen so far.
	tr.MetadataTopics = []string{shape.Topic}
	c := &kafkaGoWriter{
		shape:  shape,
		tr:     tr,
		msgs:   make([]kafka.Message, shape.Records),
		sem:    make(chan struct{}, shape.InFlight),
		slots:  make([]kgSlot, shape.InFlight),
		failed: make(chan struct{}),
	}
	acks := kafka.RequireAll
	if shape.Acks == 1 {
		acks = kafka.RequireOne
	}
	c.w = &kafka.Writer{
		Addr:     kafka.TCP(brokers...),
		Topic:    shape.Topic,
		Balancer: kafka.BalancerFunc(func(kafka.Message, ...int) int { return 0 }),
		// A retried batch would be a second request for one latency.
		MaxAttempts: 1,
		BatchSize:   shape.Records,
		// Never the binding bound: a batch closes at BatchSize records.
		BatchBytes:   int64(shape.Records)*int64(len(shape.Payload)+64) + 1<<20,
		BatchTimeout: Timeout,
		ReadTimeout:  Timeout,
		WriteTimeout: Timeout,
		RequiredAcks: acks,
		Async:        true,
		Transport:    rt,
		Completion:   c.complete,
	}
	return c
}

func (c *kafkaGoWriter) fail(err error) {
	c.shape.Stats.Fail(err)
	c.once.Do(func() { close(c.failed) })
}

func (c *kafkaGoWriter) complete(msgs []kafka.Message, err error) {
	switch {
	case err != nil:
		c.fail(fmt.Errorf("kafka-go Writer: %w", err))
	case len(msgs) != c.shape.Records:
		c.fail(fmt.Errorf("kafka-go Writer sent %d records in one request, expected %d", len(msgs), c.shape.Records))
	default:
		slot := msgs[0].WriterData.(*kgSlot)
		c.shape.Stats.Record(c.shape.Since()-slot.start, slot.measured)
	}
	select {
	case <-c.sem:
	default: // more batches than requests: already failed above
	}
}

func (c *kafkaGoWriter) Send(ctx context.Context, ph send.Phase) error {
	pacer := send.NewPacer(ph.Rate, c.shape.Since())
	for i := int64(0); ph.N == 0 || i < ph.N; i++ {
		if !ph.Deadline.IsZero() && !time.Now().Before(ph.Deadline) {
			break
		}
		pacer.Wait(ctx, c.shape.Since(), i)
		select {
		case c.sem <- struct{}{}:
		case <-c.failed:
			return c.shape.Stats.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
		slot := &c.slots[c.seq%len(c.slots)]
		c.seq++
		slot.start, slot.measured = c.shape.Since(), ph.Measured
		for j := range c.msgs {
			c.msgs[j] = kafka.Message{Value: c.shape.Payload, WriterData: slot}
		}
		if err := c.w.WriteMessages(ctx, c.msgs...); err != nil {
			<-c.sem
			return fmt.Errorf("kafka-go Writer: %w", err)
		}
	}
	return drainInFlight(ctx, c.sem, c.failed, c.shape.Stats.Err)
}

func (c *kafkaGoWriter) Describe() string {
	return fmt.Sprintf("strategy kafka-go: the same records (%d of %d B per request) through kafka-go's Writer (async, BatchSize %d so each request carries exactly one batch, RequiredAcks %v, MaxAttempts 1) "+
		"and a fresh Transport, which encode each Produce request themselves; the Writer keeps one request in flight per partition, so --in-flight %d only bounds the batches queued; "+
		"its per-message partition lookups are answered from kbench's metadata cache (runner/metacache.go); buffers-per-request does not apply",
		c.shape.Records, len(c.shape.Payload), c.shape.Records, c.w.RequiredAcks, c.shape.InFlight)
}

func (c *kafkaGoWriter) Close() {
	c.w.Close()
	c.tr.CloseIdleConnections()
}

// kafkaGoConn sends the records through one kafka-go Conn (WriteMessages,
// which is WriteCompressedMessages without a codec), from in-flight
// goroutines at once.
type kafkaGoConn struct {
	shape *Shape
	conn  *kafka.Conn
}

// NewKafkaGoConn is the kafka-go-conn strategy on conn, a kafka-go Conn
// to the leader of the shape's partition; it closes conn if it fails.
func NewKafkaGoConn(conn *kafka.Conn, shape *Shape) (Client, error) {
	if err := conn.SetRequiredAcks(int(shape.Acks)); err != nil {
		conn.Close()
		return nil, err
	}
	return &kafkaGoConn{shape: shape, conn: conn}, nil
}

func (c *kafkaGoConn) Send(ctx context.Context, ph send.Phase) error {
	n, deadline := ph.N, ph.Deadline
	var activity atomic.Int64
	var busy atomic.Int64
	activity.Store(int64(c.shape.Since()))
	var timedOut atomic.Bool
	quit := make(chan struct{})
	defer close(quit)
	go func() { // close the connection when requests stay unanswered
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if busy.Load() > 0 && c.shape.Since()-time.Duration(activity.Load()) > Timeout {
					timedOut.Store(true)
					c.conn.Close()
					return
				}
			}
		}
	}()
	stop := context.AfterFunc(ctx, func() { c.conn.Close() })
	defer stop()

	pacer := send.NewPacer(ph.Rate, c.shape.Since())
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range c.shape.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := make([]kafka.Message, c.shape.Records)
			for !failed.Load() {
				i := next.Add(1) - 1
				if (n > 0 && i >= n) || (!deadline.IsZero() && !time.Now().Before(deadline)) {
					return
				}
				pacer.Wait(ctx, c.shape.Since(), i)
				for j := range msgs {
					msgs[j] = kafka.Message{Value: c.shape.Payload}
				}
				busy.Add(1)
				t0 := c.shape.Since()
				_, err := c.conn.WriteMessages(msgs...)
				now := c.shape.Since()
				busy.Add(-1)
				activity.Store(int64(now))
				if err != nil {
					failed.Store(true)
					if timedOut.Load() {
						err = fmt.Errorf("%w to a request within %v", errNoResponse, Timeout)
					}
					c.shape.Stats.Fail(fmt.Errorf("kafka-go Conn: %w", err))
					return
				}
				c.shape.Stats.Record(now-t0, ph.Measured)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return c.shape.Stats.Err()
}

func (c *kafkaGoConn) Describe() string {
	return fmt.Sprintf("strategy kafka-go-conn: the same records (%d of %d B per request) through one kafka-go Conn to the partition leader (Conn.WriteMessages, "+
		"which encodes each Produce request itself), called by %d goroutines at once for --in-flight %d; "+
		"kafka-go's Conn hands each response to its caller by having every waiting goroutine re-check the next response's correlation id in a loop (Conn.waitResponse), "+
		"which takes most of the client's CPU when more than one request is in flight; buffers-per-request does not apply",
		c.shape.Records, len(c.shape.Payload), c.shape.InFlight, c.shape.InFlight)
}

func (c *kafkaGoConn) Close() { c.conn.Close() }
