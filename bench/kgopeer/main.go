// Command kgopeer is the peer client of kbench's comparison benchmark
// (bench/compare.sh): the same producer and consumer workloads as
// `kbench run producer` and `kbench run consumer --mode assign`, written
// with franz-go's kgo client instead of segmentio/kafka-go.
//
//	kgopeer produce --brokers ADDR --topic T --num-records N --record-size S [--preset matched|kgo-defaults]
//	kgopeer consume --brokers ADDR --topic T --num-records N [--preset matched|kgo-defaults]
//	kgopeer e2e --brokers ADDR --topic T --num-records N --record-size S --throughput R [--linger D]
//	kgopeer create-topic --brokers ADDR --topic T [--partitions P]
//	kgopeer delete-topic --brokers ADDR --topic T
//
// produce and consume print one JSON line on stdout:
//
//	{"client":"kgo","workload":"produce","records":N,"seconds":S,"records_per_sec":R,"settings":{…}}
//
// and the kgo settings they used, one per line, on stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const usage = `kgopeer: franz-go (kgo) peer workloads for bench/compare.sh

usage:
  kgopeer produce      [flags]   produce N records, report records/s (send start → last ack)
  kgopeer consume      [flags]   read the first N records of a topic, report records/s
  kgopeer e2e          [flags]   producer at a fixed rate and consumer in one process, report send → receipt latency
  kgopeer create-topic [flags]   create a topic (exists already: no error)
  kgopeer delete-topic [flags]   delete a topic (missing: no error)

"kgopeer produce -h" lists a command's flags.
`

// Presets say how kgo is configured.
const (
	// presetMatched configures kgo like kbench's comparison run of
	// kafka-go: acks=all, no idempotence (kafka-go has none), one produce
	// request in flight, no compression, 1 MiB batches, 32 MiB of buffered
	// records (Kafka's buffer.memory), 10 ms linger; for consuming, the
	// fetch limits of kbench's assign consumer.
	presetMatched = "matched"
	// presetDefaults leaves every kgo option at its default.
	presetDefaults = "kgo-defaults"
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var run func(context.Context, []string, io.Writer, io.Writer) error
	switch args[0] {
	case "produce":
		run = cmdProduce
	case "consume":
		run = cmdConsume
	case "e2e":
		run = cmdE2E
	case "create-topic":
		run = cmdCreateTopic
	case "delete-topic":
		run = cmdDeleteTopic
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "kgopeer: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err := run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "kgopeer %s: %v\n", args[0], err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

type usageError struct{ error }

// common are the flags every command has.
type common struct {
	brokers    string
	topic      string
	cpuProfile string
}

func newFlags(name string, stderr io.Writer, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet("kgopeer "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.brokers, "brokers", "127.0.0.1:9092", "comma-separated host:port seed brokers")
	fs.StringVar(&c.topic, "topic", "", "topic (required)")
	if name == "produce" || name == "consume" {
		fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured part to this file")
	}
	return fs
}

// processCPU is the process's user + system CPU time so far, all threads
// included (getrusage(RUSAGE_SELF)), as kbench's window reads it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startProfile starts the CPU profile of the measured part, if asked for;
// the returned func stops it.
func (c *common) startProfile() (stop func() error, err error) {
	if c.cpuProfile == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(c.cpuProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func parse(fs *flag.FlagSet, args []string, c *common) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if c.topic == "" {
		return usageError{errors.New("--topic is required")}
	}
	return nil
}

func (c *common) seeds() []string {
	var out []string
	start := 0
	for i := 0; i <= len(c.brokers); i++ {
		if i == len(c.brokers) || c.brokers[i] == ',' {
			if s := c.brokers[start:i]; s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	return out
}

// settings are the kgo options of a run with a readable record of each, so
// the comparison can print exactly what it measured.
type settings struct {
	opts []kgo.Opt
	desc map[string]string
}

func (s *settings) add(name, value string, opt kgo.Opt) {
	if s.desc == nil {
		s.desc = map[string]string{}
	}
	s.desc[name] = value
	if opt != nil {
		s.opts = append(s.opts, opt)
	}
}

func (s *settings) print(w io.Writer, workload string) {
	keys := make([]string, 0, len(s.desc))
	for k := range s.desc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "kgopeer %s: %s = %s\n", workload, k, s.desc[k])
	}
}

// result is the one JSON line produce and consume print.
type result struct {
	Client        string  `json:"client"`
	Workload      string  `json:"workload"`
	Records       int64   `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	Bytes         int64   `json:"bytes"`
	// CPUSeconds is the process's user + system CPU time over the measured
	// part (getrusage at its start and end), the figure bench/cost
	// divides by the records.
	CPUSeconds float64           `json:"cpu_seconds"`
	Preset     string            `json:"preset"`
	Settings   map[string]string `json:"settings"`
}

func emit(w io.Writer, r result) error { return emitJSON(w, r) }

// emitJSON prints v as one JSON line.
func emitJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// ---- produce ----

func cmdProduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlags("produce", stderr, &c)
	numRecords := fs.Int64("num-records", 1_000_000, "records to produce")
	recordSize := fs.Int("record-size", 256, "bytes per record value (random uppercase letters, like Kafka's perf tool)")
	preset := fs.String("preset", presetMatched, "matched (configured like kbench's kafka-go producer) or kgo-defaults (every kgo option at its default)")
	acks := fs.String("acks", "all", "all, 1 or 0 (matched preset)")
	batchBytes := fs.Int("batch-bytes", 1<<20, "kgo.ProducerBatchMaxBytes (matched preset)")
	linger := fs.Duration("linger", 10*time.Millisecond, "kgo.ProducerLinger (matched preset; kgo's default is 10ms)")
	bufBytes := fs.Int("max-buffered-bytes", 32<<20, "kgo.MaxBufferedBytes, as Kafka's buffer.memory (matched preset)")
	partitions := fs.Int("partitions", 1, "partitions when the topic is created (it is created before the measurement)")
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	if *numRecords < 1 || *recordSize < 1 {
		return usageError{errors.New("--num-records and --record-size must be ≥ 1")}
	}

	var st settings
	st.add("seed brokers", c.brokers, kgo.SeedBrokers(c.seeds()...))
	st.add("topic", c.topic, kgo.DefaultProduceTopic(c.topic))
	switch *preset {
	case presetMatched:
		var a kgo.Acks
		switch *acks {
		case "all", "-1":
			a = kgo.AllISRAcks()
		case "1":
			a = kgo.LeaderAck()
		case "0":
			a = kgo.NoAck()
		default:
			return usageError{fmt.Errorf("--acks %q: want all, 1 or 0", *acks)}
		}
		st.add("RequiredAcks", *acks, kgo.RequiredAcks(a))
		// kafka-go has no idempotent producer; without idempotence kgo
		// keeps one produce request in flight per broker, as kafka-go's
		// Writer does per partition (one partition here).
		st.add("DisableIdempotentWrite", "true", kgo.DisableIdempotentWrite())
		st.add("MaxProduceRequestsInflightPerBroker", "1", kgo.MaxProduceRequestsInflightPerBroker(1))
		// kbench sends uncompressed unless compression.type says otherwise;
		// kgo tries snappy by default.
		st.add("ProducerBatchCompression", "none", kgo.ProducerBatchCompression(kgo.NoCompression()))
		st.add("ProducerBatchMaxBytes", fmt.Sprint(*batchBytes), kgo.ProducerBatchMaxBytes(int32(*batchBytes)))
		st.add("ProducerLinger", linger.String(), kgo.ProducerLinger(*linger))
		// kbench blocks the sender when buffer.memory (32 MiB) of records
		// await acknowledgement; let bytes, not kgo's record count, bind.
		st.add("MaxBufferedBytes", fmt.Sprint(*bufBytes), kgo.MaxBufferedBytes(*bufBytes))
		maxRecs := max(*bufBytes / *recordSize, 1)
		st.add("MaxBufferedRecords", fmt.Sprint(maxRecs), kgo.MaxBufferedRecords(maxRecs))
		st.add("partitioner", "default (one partition)", nil)
	case presetDefaults:
		st.add("all other options", "kgo defaults (acks=all, idempotent, 5 in flight, snappy preferred, 1000012-byte batches, 10ms linger, 50000 buffered records)", nil)
	default:
		return usageError{fmt.Errorf("--preset %q: want %s or %s", *preset, presetMatched, presetDefaults)}
	}
	st.add("record", fmt.Sprintf("%d B value, no key, one random uppercase payload reused (as Kafka's tool)", *recordSize), nil)
	st.print(stderr, "produce")

	if err := createTopic(ctx, c.seeds(), c.topic, int32(*partitions)); err != nil {
		return err
	}
	cl, err := kgo.NewClient(st.opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	rng := rand.New(rand.NewPCG(42, 1))
	payload := make([]byte, *recordSize)
	for i := range payload {
		payload[i] = byte('A' + rng.IntN(26))
	}

	n := *numRecords
	var (
		acked    atomic.Int64
		failed   atomic.Int64
		finished atomic.Int64
		errOnce  sync.Once
		firstErr error
		lastAck  atomic.Int64 // nanoseconds from the first send to the last acknowledgement
		done     = make(chan struct{})
	)
	stopProfile, err := c.startProfile()
	if err != nil {
		return err
	}
	cpu0 := processCPU()
	start := time.Now()
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
			errOnce.Do(func() { firstErr = err })
		} else {
			acked.Add(1)
		}
		if finished.Add(1) == n {
			lastAck.Store(int64(time.Since(start)))
			close(done)
		}
	}
	// Records live in slabs: one allocation per 4096 records, not per record.
	var slab []kgo.Record
	for i := int64(0); i < n; i++ {
		if len(slab) == 0 {
			slab = make([]kgo.Record, min(4096, n-i))
		}
		r := &slab[0]
		slab = slab[1:]
		r.Value = payload
		cl.Produce(ctx, r, promise) // blocks while the buffer is full
		if ctx.Err() != nil {
			break
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	cpu := processCPU() - cpu0
	if err := stopProfile(); err != nil {
		return err
	}
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("%d of %d records failed; first error: %w", f, n, firstErr)
	}
	secs := time.Duration(lastAck.Load()).Seconds()
	return emit(stdout, result{
		Client: "kgo", Workload: "produce", Records: acked.Load(), Seconds: secs,
		RecordsPerSec: float64(acked.Load()) / secs, Bytes: acked.Load() * int64(*recordSize),
		CPUSeconds: cpu.Seconds(), Preset: *preset, Settings: st.desc,
	})
}

// ---- consume ----

func cmdConsume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlags("consume", stderr, &c)
	numRecords := fs.Int64("num-records", 1_000_000, "records to read from the start of the topic")
	fs.Int64Var(numRecords, "messages", 1_000_000, "alias of --num-records")
	preset := fs.String("preset", presetMatched, "matched (fetch limits of kbench's assign consumer) or kgo-defaults")
	maxWait := fs.Duration("fetch-max-wait", 500*time.Millisecond, "kgo.FetchMaxWait (matched preset; Kafka's fetch.max.wait.ms)")
	partBytes := fs.Int("fetch-max-partition-bytes", 1<<20, "kgo.FetchMaxPartitionBytes (matched preset; kbench --fetch-size)")
	maxBytes := fs.Int("fetch-max-bytes", 1<<20, "kgo.FetchMaxBytes (matched preset; kafka-go's fetch asks for as much as one partition's limit)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long without a record")
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	if *numRecords < 1 {
		return usageError{errors.New("--num-records must be ≥ 1")}
	}
	var st settings
	st.add("seed brokers", c.brokers, kgo.SeedBrokers(c.seeds()...))
	st.add("ConsumeTopics", c.topic+" (direct, no group)", kgo.ConsumeTopics(c.topic))
	st.add("ConsumeResetOffset", "start", kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	switch *preset {
	case presetMatched:
		st.add("FetchMinBytes", "1", kgo.FetchMinBytes(1))
		st.add("FetchMaxWait", maxWait.String(), kgo.FetchMaxWait(*maxWait))
		st.add("FetchMaxPartitionBytes", fmt.Sprint(*partBytes), kgo.FetchMaxPartitionBytes(int32(*partBytes)))
		st.add("FetchMaxBytes", fmt.Sprint(*maxBytes), kgo.FetchMaxBytes(int32(*maxBytes)))
		st.add("isolation", "read uncommitted (default)", nil)
	case presetDefaults:
		st.add("all other options", "kgo defaults (5s max wait, 1 MiB per partition, 50 MiB per fetch)", nil)
	default:
		return usageError{fmt.Errorf("--preset %q: want %s or %s", *preset, presetMatched, presetDefaults)}
	}
	st.print(stderr, "consume")

	cl, err := kgo.NewClient(st.opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	n := *numRecords
	var got, bytes int64
	stopProfile, err := c.startProfile()
	if err != nil {
		return err
	}
	cpu0 := processCPU()
	start := time.Now()
	lastProgress := start
	var end time.Time
	for got < n {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if fetches.IsClientClosed() {
			return errors.New("client closed")
		}
		var fatal error
		fetches.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return
			}
			if fatal == nil && !kerr.IsRetriable(err) {
				fatal = fmt.Errorf("fetch %s/%d: %w", t, p, err)
			}
		})
		if fatal != nil {
			return fatal
		}
		k := int64(0)
		fetches.EachRecord(func(r *kgo.Record) {
			if got+k < n {
				k++
				bytes += int64(len(r.Key) + len(r.Value))
			}
		})
		got += k
		now := time.Now()
		if k > 0 {
			lastProgress = now
			if got >= n {
				end = now
			}
		} else if now.Sub(lastProgress) > *timeout {
			return fmt.Errorf("timed out: no record for %v after %d of %d records", *timeout, got, n)
		}
	}
	cpu := processCPU() - cpu0
	if err := stopProfile(); err != nil {
		return err
	}
	secs := end.Sub(start).Seconds()
	return emit(stdout, result{
		Client: "kgo", Workload: "consume", Records: got, Seconds: secs,
		RecordsPerSec: float64(got) / secs, Bytes: bytes, CPUSeconds: cpu.Seconds(), Preset: *preset, Settings: st.desc,
	})
}

// ---- admin ----

func cmdCreateTopic(ctx context.Context, args []string, _, stderr io.Writer) error {
	var c common
	fs := newFlags("create-topic", stderr, &c)
	partitions := fs.Int("partitions", 1, "partition count")
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	return createTopic(ctx, c.seeds(), c.topic, int32(*partitions))
}

func cmdDeleteTopic(ctx context.Context, args []string, _, stderr io.Writer) error {
	var c common
	fs := newFlags("delete-topic", stderr, &c)
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	return deleteTopic(ctx, c.seeds(), c.topic)
}

func adminClient(seeds []string) (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("kgopeer-admin"))
}

// createTopic creates topic with the broker's replication factor; a topic
// that already exists is not an error.
func createTopic(ctx context.Context, seeds []string, topic string, partitions int32) error {
	cl, err := adminClient(seeds)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, partitions, -1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
	}
	return nil
}

// deleteTopic deletes topic; a topic that does not exist is not an error.
func deleteTopic(ctx context.Context, seeds []string, topic string) error {
	cl, err := adminClient(seeds)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{topic} // up to v5
	t := kmsg.NewDeleteTopicsRequestTopic()
	t.Topic = kmsg.StringPtr(topic) // v6+
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("delete topic %s: %w", topic, err)
		}
	}
	return nil
}
