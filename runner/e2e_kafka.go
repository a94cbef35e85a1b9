package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// Kafka's EndToEndLatency tool: for each of --num-records records, send
// one record synchronously (linger.ms=0: alone in its request, waiting for
// its acknowledgement), poll for it with fetch.max.wait.ms=0 until it
// arrives or a minute passes, check it is the record sent and the only one,
// and time the whole round trip.

// e2ePollTimeout is the tool's POLL_TIMEOUT_MS.
const e2ePollTimeout = 60 * time.Second

// e2eReplicationFactor and the tool's partition count are those it
// creates a missing topic with (kbench takes --partitions, default 1).
const e2eReplicationFactor = 1

// javaRandom is java.util.Random, so that the records' values are those
// the tool sends with new Random(0).
type javaRandom struct{ seed int64 }

const (
	javaRandMul  = 0x5DEECE66D
	javaRandMask = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandMul) & javaRandMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandMul + 0xB) & javaRandMask
	return int32(r.seed >> (48 - bits))
}

// nextInt is Random.nextInt(bound) for a positive bound, int32 overflow
// included.
func (r *javaRandom) nextInt(bound int32) int32 {
	v := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(v)) >> 31)
	}
	u := v
	for v = u % bound; u-v+m < 0; v = u % bound {
		u = r.next(31)
	}
	return v
}

func (r *run) e2eKafka(ctx context.Context) error {
	partitions, err := r.e2eTopic(ctx)
	if err != nil {
		return err
	}
	offs, err := r.offsets(ctx)
	if err != nil {
		return err
	}
	// The tool's consumer is assigned every partition and seeks to the
	// end: only records produced from now on are read.
	pos := make(map[int]int64, len(offs))
	for _, o := range offs {
		pos[o.partition] = o.last
	}
	tr, err := r.transport("e2e")
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(r.brokers...), Transport: tr, Timeout: r.st.requestTimeout}
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
		"Kafka's mode (EndToEndLatency): each record is sent alone with kafka-go's Client.Produce (acks=%s) and waited for, then fetched back with Client.Fetch (fetch.max.wait.ms=0, fetched again until it arrives, for at most %v) from the partition it went to (partition i mod %d for record i); the round trip is timed from before the send to the fetch's answer; values are %d bytes of one letter drawn by java.util.Random(0), as the tool's",
		r.st.acksName, e2ePollTimeout, partitions, r.spec.RecordSize))

	n := r.spec.NumRecords
	es := newE2EStats()
	nanos := make([]int64, 0, n)
	msg := make([]byte, r.spec.RecordSize)
	rnd := newJavaRandom(0)
	if err := r.openWindow(); err != nil {
		return err
	}
	r.rep.phase("measure", n)
	stopProgress := r.tickProgress("measure", n, es.receivedCount)
	stopSeries := r.recordSeries(es.seriesPoint)
	stopLog := r.logIntervals(loggedHist{rundoc.HistE2ELatency, &es.mu, es.hist})
	var sent int64
	var loopErr error
	for i := int64(0); i < n; i++ {
		letter := byte(rnd.nextInt(26) + 65)
		for j := range msg {
			msg[j] = letter
		}
		p := int(i % int64(partitions))
		begin := time.Now()
		if loopErr = r.e2eSend(ctx, client, p, msg); loopErr != nil {
			break
		}
		sent++
		var values [][]byte
		values, pos[p], loopErr = r.e2ePoll(ctx, client, p, pos[p])
		elapsed := time.Since(begin)
		if loopErr != nil {
			break
		}
		if loopErr = e2eValidate(msg, values); loopErr != nil {
			break
		}
		if i%kafkafmt.E2EProgressEvery == 0 {
			r.rep.kafka(kafkafmt.E2EProgress(i, elapsed.Nanoseconds()))
		}
		nanos = append(nanos, elapsed.Nanoseconds())
		es.receive(0, uint64(i), len(msg), elapsed, 0)
	}
	r.win.stop()
	stopProgress()
	stopSeries()
	stopLog()
	r.win.snapshot()
	r.rep.phase("finishing", 0)
	if loopErr == nil && ctx.Err() == nil {
		r.rep.kafka(kafkafmt.E2ESummary(nanos))
	}
	r.e2eKafkaResults(sent, es)
	if loopErr != nil {
		return r.explain(loopErr)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return e2eCountError(sent, es)
}

func (r *run) e2eKafkaResults(sent int64, es *e2eStats) {
	r.addLatency(es.hist, rundoc.HistE2ELatency,
		fmt.Sprintf("round trip of each of %d records: synchronous send, then fetched back (Kafka's EndToEndLatency); HdrHistogram µs, 3 significant digits", es.hist.count()), e2eQuantiles)
	r.e2eCounts(sent, es)
	es.mu.Lock()
	b := es.bytes
	es.mu.Unlock()
	r.res.Metrics = append(r.res.Metrics, r.win.processMetrics(b)...)
	r.harnessCheck("")
}

// e2eTopic creates the topic when it is missing, printing the tool's line
// (and its line when that fails), and returns its partition count.
func (r *run) e2eTopic(ctx context.Context) (int, error) {
	client, done, err := r.adminClient()
	if err != nil {
		return 0, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{r.spec.Topic}})
	if err != nil {
		return 0, fmt.Errorf("topic %s metadata: %w", r.spec.Topic, r.explain(err))
	}
	for _, t := range md.Topics {
		if t.Name == r.spec.Topic && t.Error == nil && len(t.Partitions) > 0 {
			r.res.Environment.Config.Set("partitions", strconv.Itoa(len(t.Partitions)))
			return len(t.Partitions), nil
		}
	}
	r.rep.kafka(kafkafmt.E2ETopicCreation(r.spec.Topic, r.spec.Partitions, e2eReplicationFactor))
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: r.spec.Topic, NumPartitions: r.spec.Partitions, ReplicationFactor: e2eReplicationFactor,
	}}})
	if err == nil {
		err = resp.Errors[r.spec.Topic]
	}
	if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		r.rep.kafka("Creation of topic " + r.spec.Topic + " failed\n")
		return 0, fmt.Errorf("create topic %s: %w", r.spec.Topic, r.explain(err))
	}
	r.res.Environment.Config.Set("partitions", strconv.Itoa(r.spec.Partitions))
	return r.spec.Partitions, nil
}

// e2eSend produces value alone to partition p and waits for its
// acknowledgement.
func (r *run) e2eSend(ctx context.Context, client *kafka.Client, p int, value []byte) error {
	resp, err := client.Produce(ctx, &kafka.ProduceRequest{
		Topic:        r.spec.Topic,
		Partition:    p,
		RequiredAcks: r.st.acks,
		Compression:  r.st.compression,
		Records:      kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes(value)}),
	})
	if err == nil {
		err = resp.Error
	}
	if err != nil {
		return fmt.Errorf("send to %s/%d: %w", r.spec.Topic, p, err)
	}
	return nil
}

// e2ePoll fetches partition p from offset at with no wait on the broker,
// again and again until a fetch holds records or e2ePollTimeout passes
// (the tool's consumer.poll with fetch.max.wait.ms=0). It returns the
// values of the records at or after at and the offset after the last.
func (r *run) e2ePoll(ctx context.Context, client *kafka.Client, p int, at int64) ([][]byte, int64, error) {
	deadline := time.Now().Add(e2ePollTimeout)
	for {
		// MaxWait 1 ns is sent as 0 ms; kafka-go replaces 0 by its default.
		resp, err := client.Fetch(ctx, &kafka.FetchRequest{
			Topic: r.spec.Topic, Partition: p, Offset: at,
			MinBytes: 1, MaxBytes: int64(r.st.maxPartBytes), MaxWait: time.Nanosecond,
			IsolationLevel: r.st.isolation,
		})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			return nil, at, fmt.Errorf("fetch %s/%d at offset %d: %w", r.spec.Topic, p, at, err)
		}
		var values [][]byte
		next := at
		for {
			rec, err := resp.Records.ReadRecord()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					return nil, at, fmt.Errorf("fetch %s/%d: %w", r.spec.Topic, p, err)
				}
				break
			}
			if rec.Offset < at {
				continue // the broker answers whole batches, which may start earlier
			}
			v, err := kafka.ReadAll(rec.Value)
			if err != nil {
				return nil, at, fmt.Errorf("fetch %s/%d: %w", r.spec.Topic, p, err)
			}
			values = append(values, v)
			next = rec.Offset + 1
		}
		if len(values) > 0 {
			return values, next, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, at, err
		}
		if time.Now().After(deadline) {
			return nil, at, fmt.Errorf("poll() timed out before finding a result (timeout:[%d])", e2ePollTimeout.Milliseconds())
		}
	}
}

// e2eValidate is the tool's check of what a poll returned: the record
// sent, and only it.
func e2eValidate(sent []byte, values [][]byte) error {
	if !bytes.Equal(values[0], sent) {
		return fmt.Errorf("The message read [%s] did not match the message sent [%s]", values[0], sent) //lint:ignore ST1005 Kafka's tool's words
	}
	if len(values) != 1 {
		return fmt.Errorf("Only one result was expected during this test. We found [%d]", len(values)) //lint:ignore ST1005 Kafka's tool's words
	}
	return nil
}
