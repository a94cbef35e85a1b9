package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbench/kbench/internal/embeddedbroker"
)

// highWatermarks sums the end offsets of every partition of topic: what the
// broker holds, counted independently of the producer's own bookkeeping.
func highWatermarks(t *testing.T, addr, topic string) int64 {
	t.Helper()
	var n int64
	for _, end := range partitionEnds(t, addr, topic) {
		n += end
	}
	return n
}

// partitionEnds are the end offsets of topic's partitions, by partition.
func partitionEnds(t *testing.T, addr, topic string) map[int]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A fresh Transport: the shared default caches metadata for seconds
	// and would not know a topic created a moment ago.
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 20 * time.Second, Transport: tr}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || md.Topics[0].Error != nil || len(md.Topics[0].Partitions) == 0 {
		t.Fatalf("metadata of %s: %+v", topic, md.Topics)
	}
	var reqs []kafka.OffsetRequest
	for _, p := range md.Topics[0].Partitions {
		reqs = append(reqs, kafka.LastOffsetOf(p.ID))
	}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int]int64{}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			t.Fatal(po.Error)
		}
		ends[po.Partition] = po.LastOffset
	}
	return ends
}

// TestAccumulatorQueueingLatency: in raw and client modes an unthrottled
// producer accumulates batches until buffer.memory is taken, as Kafka's
// RecordAccumulator does, so its record latency includes that queue
// (about buffer.memory / throughput): a 32× larger buffer.memory gives a
// clearly larger average latency. A throttled producer's latency stays
// at the scale of linger.ms whatever buffer.memory is. Every record is
// acknowledged exactly once: the broker's high watermarks hold exactly
// the records sent.
func TestAccumulatorQueueingLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 800,000 records and paced runs")
	}
	b := startBroker(t, embeddedbroker.Options{})
	run := func(t *testing.T, topic, mode string, n int64, args ...string) *rundoc.Result {
		t.Helper()
		opts, _ := testOptions(t)
		all := append([]string{"--bootstrap-server", b.Addr(), "--topic", topic, "--partitions", "2", "--mode", mode,
			"--num-records", fmt.Sprint(n), "--record-size", "256", "--profile", "none"}, args...)
		res, err := Run(context.Background(), mustParse(t, rundoc.Producer, all...), opts)
		if err != nil {
			t.Fatalf("%s: %v", topic, err)
		}
		if got := metric(t, res, "records-sent"); got != float64(n) {
			t.Errorf("%s: records-sent = %v, want %d", topic, got, n)
		}
		if got := highWatermarks(t, b.Addr(), topic); got != n {
			t.Errorf("%s: the broker holds %d records, want exactly the %d sent (each acknowledged once)", topic, got, n)
		}
		return res
	}
	for _, mode := range []string{rundoc.ModeRaw, rundoc.ModeClient} {
		t.Run(mode, func(t *testing.T) {
			const n = 200000
			small := run(t, "acc-small-"+mode, mode, n, "--producer-props", "buffer.memory=1048576")
			large := run(t, "acc-large-"+mode, mode, n, "--producer-props", "buffer.memory=33554432")
			s, l := metric(t, small, "record-latency-avg"), metric(t, large, "record-latency-avg")
			t.Logf("unthrottled average latency: buffer.memory 1 MiB %.2f ms, 32 MiB %.2f ms", s, l)
			if l < 3*s {
				t.Errorf("average latency with 32 MiB of buffer.memory is %.2f ms, with 1 MiB %.2f ms: want the larger buffer's queue (≥ 3×) in the latency", l, s)
			}
			const linger = 20
			for _, mem := range []string{"1048576", "67108864"} {
				res := run(t, "acc-throttled-"+mode+"-"+mem, mode, 3000, "--throughput", "3000",
					"--producer-props", "buffer.memory="+mem, fmt.Sprintf("linger.ms=%d", linger))
				p50, rtt := metric(t, res, "record-latency-p50"), metric(t, res, "request-latency-max")
				t.Logf("throttled p50 with buffer.memory %s: %.2f ms (longest produce round trip %.2f ms)", mem, p50, rtt)
				// Records arriving evenly wait linger/2 on average, then
				// their request's round trip, perhaps behind one other
				// request: the bound is the run's own longest round trip,
				// so a slow machine widens it, while records queued in
				// buffer.memory (the behaviour ruled out) would wait far
				// longer than any one request.
				// A client starved of CPU holds records without any
				// round trip growing: the run says so, and then its
				// latency says nothing of the accumulator.
				if busy := metric(t, res, "harness-cpu-saturation"); busy >= 100*harnessCPUShare {
					t.Logf("the machine left this run too little CPU (saturation %.1f%%): its latency is not the accumulator's", busy)
					continue
				}
				if bound := linger + 2*rtt + 100; p50 > bound {
					t.Errorf("throttled p50 = %.2f ms with buffer.memory %s, want it at linger.ms scale (≤ %.0f ms: linger.ms, twice the longest round trip, 100 ms)", p50, mem, bound)
				}
			}
		})
	}
}

// TestMaxBlockMs: when the broker stops answering, records fill
// buffer.memory; send then blocks, and after max.block.ms the run fails
// the way Kafka's producer fails such a send (a TimeoutException), with a
// message naming both settings.
func TestMaxBlockMs(t *testing.T) {
	for _, mode := range []string{rundoc.ModeRaw, rundoc.ModeClient, rundoc.ModeWriter} {
		t.Run(mode, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "blocked"))
			if err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			var once sync.Once
			wake := func() { once.Do(func() { close(release) }) }
			defer c.Close()
			defer wake()
			c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				c.SleepControl(func() { <-release }) // never answered while the test runs
				return nil, nil, false
			})
			opts, _ := testOptions(t)
			start := time.Now()
			_, err = Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", c.ListenAddrs()[0], "--topic", "blocked",
				"--mode", mode, "--num-records", "1000000", "--record-size", "1000", "--profile", "none", "--producer-props",
				"buffer.memory=262144", "max.block.ms=300", "request.timeout.ms=120000"), opts)
			wake()
			if err == nil {
				t.Fatal("a producer whose broker never answers succeeded")
			}
			for _, want := range []string{"max.block.ms", "300 ms", "buffer.memory", "TimeoutException"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if took := time.Since(start); took > 60*time.Second {
				t.Errorf("failing took %v: the run must end after max.block.ms, not after request.timeout.ms", took)
			}
		})
	}
	if _, err := rundoc.ParseArgs(rundoc.Producer, []string{"--producer-props", "max.block.ms=-1"}, Validate); err == nil || !strings.Contains(err.Error(), "max.block.ms") {
		t.Errorf("max.block.ms=-1: err %v, want it refused by name", err)
	}
}
