package runner

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbench/kbench/internal/kafkasec"
	"github.com/kbench/kbench/internal/sysstat"
)

// currentLoadAverage reads the load average, nil where there is none.
func currentLoadAverage() *rundoc.LoadAverage {
	la, err := sysstat.ReadLoadAverage()
	if err != nil {
		return nil
	}
	return &rundoc.LoadAverage{Load1: la.Load1, Load5: la.Load5, Load15: la.Load15}
}

// targetKind is what the spec talks to.
func targetKind(s *rundoc.Spec) string {
	switch {
	case s.Workload == rundoc.Writepath && s.Sink:
		return rundoc.TargetSink
	case embeddedTarget(s):
		return rundoc.TargetEmbedded
	}
	return rundoc.TargetCluster
}

// newTarget describes the target from the ApiVersions answer of addr.
func newTarget(kind, addr string, vs []kafka.ApiVersion) *rundoc.Target {
	t := &rundoc.Target{Kind: kind, APIVersionsFrom: addr}
	for _, v := range vs {
		t.APIVersions = append(t.APIVersions, rundoc.APIVersion{Key: v.ApiKey, Name: kmsg.NameForKey(v.ApiKey), Min: v.MinVersion, Max: v.MaxVersion})
	}
	slices.SortFunc(t.APIVersions, func(a, b rundoc.APIVersion) int { return int(a.Key) - int(b.Key) })
	if kind == rundoc.TargetCluster && len(vs) > 0 {
		t.ReleaseGuess = GuessRelease(vs)
	}
	return t
}

// resolvedConfig records the settings the run applies, after defaults,
// as the workload's code uses them (see producer.go, produce_client.go,
// consumer.go, writepath*.go).
func (r *run) resolvedConfig() *rundoc.Config {
	s, st := &r.spec, &r.st
	c := &rundoc.Config{Mode: s.Mode, Settings: []rundoc.Setting{}}
	num := func(n int64) string { return strconv.FormatInt(n, 10) }
	msec := func(d time.Duration) string { return num(d.Milliseconds()) }
	flt := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch s.Workload {
	case rundoc.Producer:
		c.Set("acks", acksName(st.acks))
		// kafka-go has no idempotent producer; clientSettings refuses
		// enable.idempotence=true (Kafka's default since 3.0).
		c.Set("enable.idempotence", "false")
		c.Set("compression.type", compressionName(st.compression))
		c.Set("linger.ms", msec(st.linger))
		c.Set("batch.size", num(int64(st.batchBytes)))
		if s.Mode == rundoc.ModeWriter {
			// The Writer keeps one produce request in flight per
			// partition, whatever the property says.
			c.Set("max.in.flight.requests.per.connection", "1 per partition (kafka-go Writer)")
			c.Set("partitioner", "round-robin by batch-sized chunk (kafka-go RoundRobin)")
		} else {
			c.Set("max.in.flight.requests.per.connection", num(int64(st.maxInFlight)))
			c.Set("partitioner", "sticky: one partition until its batch fills, then the next (kbench)")
			c.Set("max.request.size", num(int64(st.maxRequestSize)))
			// Records queue per partition until buffer.memory is taken,
			// as in KafkaProducer: unthrottled latency includes that queue.
			c.Set("accumulator", "per-partition batches up to buffer.memory (KafkaProducer's)")
		}
		if s.KeySize > 0 {
			c.Set("partitioner", "murmur2(key) mod partitions (Kafka's default for keyed records)")
		}
		c.Set("buffer.memory", num(st.bufferMemory))
		c.Set("max.block.ms", msec(st.maxBlock))
		c.Set("retries", num(int64(st.maxAttempts-1)))
		c.Set("retry.backoff.ms", msec(st.backoffMin))
		c.Set("request.timeout.ms", msec(st.requestTimeout))
	case rundoc.Consumer:
		if s.Mode == rundoc.ModeAssign {
			// One connection per partition, fetching with
			// ReadBatchWith{MinBytes: 1}: no group, no commits, kafka-go's
			// default isolation level.
			c.Set("fetch.min.bytes", "1")
			c.Set("fetch.max.wait.ms", msec(st.maxWait))
			c.Set("max.partition.fetch.bytes", num(int64(st.maxPartBytes)))
			c.Set("isolation.level", "read_uncommitted")
			c.Set("partition.assignment.strategy", "none (kbench assigns every partition)")
			c.Set("enable.auto.commit", "false (no group)")
		} else {
			c.Set("fetch.min.bytes", num(int64(st.minBytes)))
			c.Set("fetch.max.wait.ms", msec(st.maxWait))
			c.Set("max.partition.fetch.bytes", num(int64(st.maxPartBytes)))
			c.Set("isolation.level", isolationName(st.isolation))
			c.Set("partition.assignment.strategy", st.balancerName)
			if st.commitInterval > 0 {
				c.Set("enable.auto.commit", "true")
				c.Set("auto.commit.interval.ms", msec(st.commitInterval))
			} else {
				c.Set("enable.auto.commit", "false")
			}
			c.Set("session.timeout.ms", msec(st.sessionTimeout))
			c.Set("heartbeat.interval.ms", msec(st.heartbeat))
		}
		if st.fromLatest {
			c.Set("auto.offset.reset", "latest")
		} else {
			c.Set("auto.offset.reset", "earliest")
		}
	case rundoc.E2E:
		c.Set("acks", acksName(st.acks))
		c.Set("compression.type", compressionName(st.compression))
		if s.E2ERateMode() {
			c.Mode = "rate"
			c.Set("linger.ms", msec(st.linger))
			c.Set("batch.size", num(int64(st.batchBytes)))
			c.Set("max.in.flight.requests.per.connection", num(int64(st.maxInFlight)))
			c.Set("buffer.memory", num(st.bufferMemory))
			c.Set("fetch.min.bytes", "1")
			c.Set("fetch.max.wait.ms", msec(st.maxWait))
		} else {
			// Kafka's tool forces these, whatever its properties file says.
			c.Mode = "kafka"
			c.Set("linger.ms", "0 (each record sent alone, synchronously)")
			c.Set("fetch.max.wait.ms", "0")
		}
		c.Set("max.partition.fetch.bytes", num(int64(st.maxPartBytes)))
	case rundoc.Writepath:
		c.Mode = s.Strategy
		c.Set("strategy", s.Strategy)
		c.Set("in-flight", num(int64(s.InFlight)))
		c.Set("records-per-request", num(int64(s.RecordsPerRequest)))
		acks := s.Acks
		if acks == "-1" {
			acks = "all"
		}
		c.Set("acks", acks)
		// Every strategy sends uncompressed batches: kbench's encoder
		// does not compress, and the kafka-go strategies are given none.
		c.Set("compression.type", "none")
	}
	if s.Workload != rundoc.Consumer {
		switch {
		case s.PayloadFile != "":
			c.Set("payload", "file "+s.PayloadFile)
		case len(s.Payload) > 0:
			c.Set("payload", fmt.Sprintf("given (--payload, %d bytes)", len(s.Payload)))
		case s.PayloadRandomRatio != nil:
			c.Set("payload", fmt.Sprintf("%d payloads, %v of each random, the rest zeros (--payload-random-ratio)", s.PayloadPoolSize(), *s.PayloadRandomRatio))
			c.Set("record-size", num(int64(s.RecordSize)))
		default:
			c.Set("record-size", num(int64(s.RecordSize)))
		}
		c.Set("throughput", flt(s.Throughput))
	}
	if s.Workload == rundoc.Producer || s.E2ERateMode() && s.Threads > 1 {
		c.Set("threads", num(int64(s.Threads)))
	}
	if s.Warmup > 0 {
		c.Set("warmup", flt(s.Warmup)+" s")
	}
	c.Set("security.protocol", securityProtocol(st.sec))
	if st.sec.Mechanism != "" {
		c.Set("sasl.mechanism", string(st.sec.Mechanism))
	}
	return c
}

// securityProtocol is the protocol in effect ("" means PLAINTEXT).
func securityProtocol(sec kafkasec.Config) string {
	if sec.Protocol == "" {
		return "PLAINTEXT"
	}
	return string(sec.Protocol)
}

func acksName(a kafka.RequiredAcks) string {
	switch a {
	case kafka.RequireAll:
		return "all"
	case kafka.RequireOne:
		return "1"
	case kafka.RequireNone:
		return "0"
	}
	return fmt.Sprint(int(a))
}

func compressionName(c kafka.Compression) string {
	if c.Codec() == nil {
		return "none"
	}
	return c.String()
}

func isolationName(l kafka.IsolationLevel) string {
	if l == kafka.ReadCommitted {
		return "read_committed"
	}
	return "read_uncommitted"
}
