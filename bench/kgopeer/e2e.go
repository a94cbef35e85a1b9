package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The e2e command is the peer of `kbench run e2e --throughput R` (rate
// mode): a kgo producer at a fixed rate and a kgo consumer in the same
// process, each record timed from its send (the Produce call) to the
// consumer's receipt (PollFetches returning it). Like kbench, each value
// carries its sequence number and send time in its first bytes, on this
// process's monotonic clock, so no table is shared and a record received
// twice is seen.

// e2eStamp is the bytes of a value's stamp: sequence number, send time.
const e2eStamp = 16

// e2eResult is the JSON line e2e prints.
type e2eResult struct {
	Client        string            `json:"client"`
	Workload      string            `json:"workload"`
	Records       int64             `json:"records"`
	Received      int64             `json:"received"`
	Duplicates    int64             `json:"duplicates"`
	Seconds       float64           `json:"seconds"`
	RecordsPerSec float64           `json:"records_per_sec"`
	P50Ms         float64           `json:"p50_ms"`
	P99Ms         float64           `json:"p99_ms"`
	P999Ms        float64           `json:"p999_ms"`
	MaxMs         float64           `json:"max_ms"`
	Settings      map[string]string `json:"settings"`
}

func cmdE2E(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlags("e2e", stderr, &c)
	numRecords := fs.Int64("num-records", 5000, "records to send")
	recordSize := fs.Int("record-size", 100, "bytes per record value (at least 16: the stamp)")
	rate := fs.Float64("throughput", 1000, "records/s, on a fixed schedule")
	linger := fs.Duration("linger", 0, "kgo.ProducerLinger (kbench's linger.ms)")
	acks := fs.String("acks", "all", "all or 1")
	maxWait := fs.Duration("fetch-max-wait", 500*time.Millisecond, "kgo.FetchMaxWait (kbench's fetch.max.wait.ms)")
	drain := fs.Duration("timeout", 30*time.Second, "how long the consumer may take, after the last acknowledgement, to receive every record")
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	if *numRecords < 1 || *recordSize < e2eStamp || !(*rate > 0) {
		return usageError{fmt.Errorf("--num-records ≥ 1, --record-size ≥ %d and --throughput > 0 are required", e2eStamp)}
	}
	var a kgo.Acks
	switch *acks {
	case "all", "-1":
		a = kgo.AllISRAcks()
	case "1":
		a = kgo.LeaderAck()
	default:
		return usageError{fmt.Errorf("--acks %q: want all or 1", *acks)}
	}

	// The producer's settings match kbench's rate mode (acks=all, no
	// compression, no idempotence, 16 KiB batches, up to 5 requests in
	// flight, 32 MiB buffered); the consumer's its fetches (min 1 byte,
	// 500 ms max wait, 1 MiB per partition).
	var prod settings
	prod.add("seed brokers", c.brokers, kgo.SeedBrokers(c.seeds()...))
	prod.add("topic", c.topic, kgo.DefaultProduceTopic(c.topic))
	prod.add("RequiredAcks", *acks, kgo.RequiredAcks(a))
	prod.add("DisableIdempotentWrite", "true", kgo.DisableIdempotentWrite())
	prod.add("MaxProduceRequestsInflightPerBroker", "5", kgo.MaxProduceRequestsInflightPerBroker(5))
	prod.add("ProducerBatchCompression", "none", kgo.ProducerBatchCompression(kgo.NoCompression()))
	prod.add("ProducerBatchMaxBytes", "16384", kgo.ProducerBatchMaxBytes(16384))
	prod.add("ProducerLinger", linger.String(), kgo.ProducerLinger(*linger))
	prod.add("MaxBufferedBytes", fmt.Sprint(32<<20), kgo.MaxBufferedBytes(32<<20))
	var cons settings
	cons.add("consumer seed brokers", c.brokers, kgo.SeedBrokers(c.seeds()...))
	cons.add("ConsumeTopics", c.topic+" (direct, no group, from the start of a new topic)", kgo.ConsumeTopics(c.topic))
	cons.add("ConsumeResetOffset", "start", kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	cons.add("FetchMinBytes", "1", kgo.FetchMinBytes(1))
	cons.add("FetchMaxWait", maxWait.String(), kgo.FetchMaxWait(*maxWait))
	cons.add("FetchMaxPartitionBytes", fmt.Sprint(1<<20), kgo.FetchMaxPartitionBytes(1<<20))
	prod.add("rate", fmt.Sprintf("%v records/s of %d B, fixed schedule, one warm-up record (not timed) first", *rate, *recordSize), nil)
	prod.print(stderr, "e2e")
	cons.print(stderr, "e2e")

	if err := createTopic(ctx, c.seeds(), c.topic, 1); err != nil {
		return err
	}
	pc, err := kgo.NewClient(prod.opts...)
	if err != nil {
		return err
	}
	defer pc.Close()
	cc, err := kgo.NewClient(cons.opts...)
	if err != nil {
		return err
	}
	defer cc.Close()

	n := *numRecords
	base := time.Now()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	seen := make([]bool, n)
	var received, dups int64
	warm := make(chan struct{})
	cctx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	consErr := make(chan error, 1)
	go func() {
		warmed := false
		for cctx.Err() == nil {
			fetches := cc.PollFetches(cctx)
			now := time.Since(base)
			var fatal error
			fetches.EachError(func(t string, p int32, err error) {
				if fatal == nil && !errors.Is(err, context.Canceled) && !kerr.IsRetriable(err) {
					fatal = fmt.Errorf("fetch %s/%d: %w", t, p, err)
				}
			})
			if fatal != nil {
				consErr <- fatal
				return
			}
			mu.Lock()
			fetches.EachRecord(func(r *kgo.Record) {
				if len(r.Value) < e2eStamp {
					return
				}
				seq := binary.BigEndian.Uint64(r.Value)
				if seq == 0 { // the warm-up record
					if !warmed {
						warmed = true
						close(warm)
					}
					return
				}
				i := int64(seq - 1)
				if i >= n {
					return
				}
				if seen[i] {
					dups++
					return
				}
				seen[i] = true
				received++
				lat = append(lat, now-time.Duration(binary.BigEndian.Uint64(r.Value[8:])))
			})
			mu.Unlock()
		}
		consErr <- nil
	}()

	value := func(seq uint64) []byte {
		v := make([]byte, *recordSize)
		for i := range v {
			v[i] = 'A' + byte(i%26)
		}
		binary.BigEndian.PutUint64(v, seq)
		binary.BigEndian.PutUint64(v[8:], uint64(time.Since(base)))
		return v
	}
	// Warm-up: one record through both clients (connections, metadata),
	// as kbench connects both before its window.
	if err := pc.ProduceSync(ctx, &kgo.Record{Value: value(0)}).FirstErr(); err != nil {
		return fmt.Errorf("warm-up record: %w", err)
	}
	select {
	case <-warm:
	case <-time.After(*drain):
		return errors.New("the warm-up record never arrived")
	case <-ctx.Done():
		return ctx.Err()
	}

	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	interval := time.Duration(float64(time.Second) / *rate)
	start := time.Now()
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		pc.Produce(ctx, &kgo.Record{Value: value(uint64(i + 1))}, func(_ *kgo.Record, err error) {
			if err != nil {
				errOnce.Do(func() { firstErr = err })
			}
			wg.Done()
		})
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("produce: %w", firstErr)
	}
	limit := time.Now().Add(*drain)
	for {
		mu.Lock()
		got := received
		mu.Unlock()
		if got >= n || time.Now().After(limit) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	secs := time.Since(start).Seconds()
	stopConsumer()
	if err := <-consErr; err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if received != n || dups != 0 {
		return fmt.Errorf("count check failed: %d sent, %d received, %d duplicates", n, received, dups)
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		i := int(p/100*float64(len(lat))+0.5) - 1
		return float64(lat[min(max(i, 0), len(lat)-1)]) / 1e6
	}
	desc := prod.desc
	for k, v := range cons.desc {
		desc[k] = v
	}
	return emitJSON(stdout, e2eResult{Client: "kgo", Workload: "e2e", Records: n, Received: received, Duplicates: dups,
		Seconds: secs, RecordsPerSec: float64(received) / secs, P50Ms: q(50), P99Ms: q(99), P999Ms: q(99.9),
		MaxMs: float64(lat[len(lat)-1]) / 1e6, Settings: desc})
}
