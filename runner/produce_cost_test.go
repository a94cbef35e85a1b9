package runner

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// benchSender is a raw-mode clientSender with one partition and no
// connection: what kbench itself does per record (accumulate, encode the
// batch, record each acknowledgement's latency and the interval
// counters), without kafka-go's transport.
func benchSender(batchBytes, memory int64) *clientSender {
	stats := &produceStats{base: time.Now(), hist: newLatencyHist(), intended: newLatencyHist()}
	t := &producerThread{stats: stats}
	c := &clientSender{
		t: t, raw: true, batchBytes: batchBytes, maxRequest: 1 << 20, linger: 10 * time.Millisecond,
		maxBlock: time.Minute, maxInFlight: 1, tsBase: stats.base.UnixMilli(),
		recordExtra: recordOverhead, queues: make([]batchQueue, 1), owned: []int{0}, leaderOf: []int{0}, led: [][]int{{0}},
		drainFrom: make([]int, 1), inFlight: make([]atomic.Int32, 1), memCap: memory,
		lingerAt: math.MaxInt64, wake: make(chan struct{}, 1), reqCtx: context.Background(),
	}
	c.memFree.Store(memory)
	return c
}

// completeFull encodes and acknowledges every full batch, as an answered
// request does.
func (c *clientSender) completeFull(now time.Duration) {
	for _, b := range c.collect(0, now, true) {
		if err := c.encode(b); err != nil {
			panic(err)
		}
		c.finish(b, nil)
	}
}

// BenchmarkProducerAccumulate is the raw producer's own cost per record:
// append to a batch, encode it when full, record the acknowledgement.
// 256-byte values in 1 MiB batches with 32 MiB of buffer.memory, as
// bench/cost runs it.
func BenchmarkProducerAccumulate(b *testing.B) {
	c := benchSender(1<<20, 32<<20)
	value := make([]byte, 256)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now := c.t.stats.now()
		if err := c.append(ctx, now, now, value, nil, -1, true); err != nil {
			b.Fatal(err)
		}
		if c.full > 0 {
			c.completeFull(now)
		}
	}
}

// TestProducerAccumulateCounts: the benchmark's sender acknowledges every
// record of every full batch it encodes, once.
func TestProducerAccumulateCounts(t *testing.T) {
	c := benchSender(4096, 1<<20)
	value := make([]byte, 100)
	ctx := context.Background()
	const n = 1000
	for i := 0; i < n; i++ {
		now := c.t.stats.now()
		if err := c.append(ctx, now, now, value, nil, -1, true); err != nil {
			t.Fatal(err)
		}
		if c.full > 0 {
			c.completeFull(now)
		}
	}
	c.flushing = true
	for _, b := range c.collect(0, c.t.stats.now(), false) {
		if err := c.encode(b); err != nil {
			t.Fatal(err)
		}
		c.finish(b, nil)
	}
	if c.t.stats.records != n || c.t.stats.bytes != n*100 || c.t.stats.hist.count() != n {
		t.Errorf("acknowledged %d records, %d bytes, %d latencies; want %d, %d, %d",
			c.t.stats.records, c.t.stats.bytes, c.t.stats.hist.count(), n, n*100, n)
	}
	if c.memFree.Load() != c.memCap {
		t.Errorf("buffer.memory free %d of %d after every batch was acknowledged", c.memFree.Load(), c.memCap)
	}
}
