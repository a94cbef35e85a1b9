package runner

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbench/kbench/runner/kafkasec"
	"github.com/kbench/kbench/runner/sysstat"
)

// Config is the configuration a run applied, after defaults: what the
// client really did, which is not always what was asked (a property a
// mode ignores is recorded with the value in effect). It is result.json's
// environment.config:
//
//	{"mode": "raw", "settings": [{"name": "acks", "value": "all"}, …]}
//
// Settings named like Kafka client properties (acks, linger.ms, …) hold
// the value in Kafka's own notation (milliseconds, bytes); settings named
// like kbench flags (record-size, partitions, strategy, …) hold the flag's
// value as the spec's JSON writes it. Comparisons diff settings by name.
type Config struct {
	// Mode is how the workload drove kafka-go: the producer's raw, client
	// or writer, the consumer's group or assign, the write path's
	// strategy.
	Mode     string    `json:"mode"`
	Settings []Setting `json:"settings"`
}

// Setting is one resolved configuration value.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// set replaces the named setting's value, or appends it.
func (c *Config) set(name, value string) {
	for i := range c.Settings {
		if c.Settings[i].Name == name {
			c.Settings[i].Value = value
			return
		}
	}
	c.Settings = append(c.Settings, Setting{Name: name, Value: value})
}

// Get returns the named setting's value.
func (c *Config) Get(name string) (string, bool) {
	for _, s := range c.Settings {
		if s.Name == name {
			return s.Value, true
		}
	}
	return "", false
}

// Target kinds: what a run talked to.
const (
	TargetEmbedded = "embedded" // kbench's own kfake broker, a child process
	TargetSink     = "sink"     // the write-path sink, a child process
	TargetCluster  = "cluster"  // bootstrap servers the user gave
)

// Target is what a run talked to, as result.json's environment.target:
// its kind, and the ApiVersions ranges its first reachable bootstrap
// server answered during the preflight. For a cluster, ReleaseGuess reads
// a Kafka release off those ranges ([GuessRelease]); it is always
// labelled as a guess, since brokers of other makes answer ranges too.
type Target struct {
	Kind string `json:"kind"`
	// APIVersionsFrom is the bootstrap server that answered: brokers of
	// one cluster may differ during a rolling upgrade.
	APIVersionsFrom string       `json:"api_versions_from,omitempty"`
	APIVersions     []APIVersion `json:"api_versions,omitempty"`
	ReleaseGuess    string       `json:"release_guess,omitempty"`
}

// APIVersion is the range of versions a broker takes for one API key.
type APIVersion struct {
	Key  int16  `json:"key"`
	Name string `json:"name"` // Kafka's name of the API ("Produce"), "" if unknown
	Min  int16  `json:"min"`
	Max  int16  `json:"max"`
}

// LoadAverage is the machine's load average when the run started
// (/proc/loadavg), result.json's environment.load_average.
type LoadAverage struct {
	Load1  float64 `json:"load1"`
	Load5  float64 `json:"load5"`
	Load15 float64 `json:"load15"`
}

// currentLoadAverage reads the load average, nil where there is none.
func currentLoadAverage() *LoadAverage {
	la, err := sysstat.ReadLoadAverage()
	if err != nil {
		return nil
	}
	return &LoadAverage{Load1: la.Load1, Load5: la.Load5, Load15: la.Load15}
}

// targetKind is what the spec talks to.
func (s *Spec) targetKind() string {
	switch {
	case s.Workload == Writepath && s.Sink:
		return TargetSink
	case s.embedded():
		return TargetEmbedded
	}
	return TargetCluster
}

// newTarget describes the target from the ApiVersions answer of addr.
func newTarget(kind, addr string, vs []kafka.ApiVersion) *Target {
	t := &Target{Kind: kind, APIVersionsFrom: addr}
	for _, v := range vs {
		t.APIVersions = append(t.APIVersions, APIVersion{Key: v.ApiKey, Name: kmsg.NameForKey(v.ApiKey), Min: v.MinVersion, Max: v.MaxVersion})
	}
	slices.SortFunc(t.APIVersions, func(a, b APIVersion) int { return int(a.Key) - int(b.Key) })
	if kind == TargetCluster && len(vs) > 0 {
		t.ReleaseGuess = GuessRelease(vs)
	}
	return t
}

// resolvedConfig records the settings the run applies, after defaults,
// as the workload's code uses them (see producer.go, produce_client.go,
// consumer.go, writepath*.go).
func (r *run) resolvedConfig() *Config {
	s, st := &r.spec, &r.st
	c := &Config{Mode: s.Mode, Settings: []Setting{}}
	num := func(n int64) string { return strconv.FormatInt(n, 10) }
	msec := func(d time.Duration) string { return num(d.Milliseconds()) }
	flt := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch s.Workload {
	case Producer:
		c.set("acks", acksName(st.acks))
		// kafka-go has no idempotent producer; clientSettings refuses
		// enable.idempotence=true (Kafka's default since 3.0).
		c.set("enable.idempotence", "false")
		c.set("compression.type", compressionName(st.compression))
		c.set("linger.ms", msec(st.linger))
		c.set("batch.size", num(int64(st.batchBytes)))
		if s.Mode == ModeWriter {
			// The Writer keeps one produce request in flight per
			// partition, whatever the property says.
			c.set("max.in.flight.requests.per.connection", "1 per partition (kafka-go Writer)")
			c.set("partitioner", "round-robin by batch-sized chunk (kafka-go RoundRobin)")
		} else {
			c.set("max.in.flight.requests.per.connection", num(int64(st.maxInFlight)))
			c.set("partitioner", "sticky: one partition until its batch fills, then the next (kbench)")
			c.set("max.request.size", num(int64(st.maxRequestSize)))
			// Records queue per partition until buffer.memory is taken,
			// as in KafkaProducer: unthrottled latency includes that queue.
			c.set("accumulator", "per-partition batches up to buffer.memory (KafkaProducer's)")
		}
		if s.KeySize > 0 {
			c.set("partitioner", "murmur2(key) mod partitions (Kafka's default for keyed records)")
		}
		c.set("buffer.memory", num(st.bufferMemory))
		c.set("max.block.ms", msec(st.maxBlock))
		c.set("retries", num(int64(st.maxAttempts-1)))
		c.set("retry.backoff.ms", msec(st.backoffMin))
		c.set("request.timeout.ms", msec(st.requestTimeout))
	case Consumer:
		if s.Mode == ModeAssign {
			// One connection per partition, fetching with
			// ReadBatchWith{MinBytes: 1}: no group, no commits, kafka-go's
			// default isolation level.
			c.set("fetch.min.bytes", "1")
			c.set("fetch.max.wait.ms", msec(st.maxWait))
			c.set("max.partition.fetch.bytes", num(int64(st.maxPartBytes)))
			c.set("isolation.level", "read_uncommitted")
			c.set("partition.assignment.strategy", "none (kbench assigns every partition)")
			c.set("enable.auto.commit", "false (no group)")
		} else {
			c.set("fetch.min.bytes", num(int64(st.minBytes)))
			c.set("fetch.max.wait.ms", msec(st.maxWait))
			c.set("max.partition.fetch.bytes", num(int64(st.maxPartBytes)))
			c.set("isolation.level", isolationName(st.isolation))
			c.set("partition.assignment.strategy", st.balancerName)
			if st.commitInterval > 0 {
				c.set("enable.auto.commit", "true")
				c.set("auto.commit.interval.ms", msec(st.commitInterval))
			} else {
				c.set("enable.auto.commit", "false")
			}
			c.set("session.timeout.ms", msec(st.sessionTimeout))
			c.set("heartbeat.interval.ms", msec(st.heartbeat))
		}
		if st.fromLatest {
			c.set("auto.offset.reset", "latest")
		} else {
			c.set("auto.offset.reset", "earliest")
		}
	case Writepath:
		c.Mode = s.Strategy
		c.set("strategy", s.Strategy)
		c.set("in-flight", num(int64(s.InFlight)))
		c.set("records-per-request", num(int64(s.RecordsPerRequest)))
		acks := s.Acks
		if acks == "-1" {
			acks = "all"
		}
		c.set("acks", acks)
		// Every strategy sends uncompressed batches: kbench's encoder
		// does not compress, and the kafka-go strategies are given none.
		c.set("compression.type", "none")
	}
	if s.Workload != Consumer {
		if s.PayloadFile != "" {
			c.set("payload", "file "+s.PayloadFile)
		} else {
			c.set("record-size", num(int64(s.RecordSize)))
		}
		c.set("throughput", flt(s.Throughput))
	}
	if s.Workload == Producer {
		c.set("threads", num(int64(s.Threads)))
	}
	c.set("security.protocol", securityProtocol(st.sec))
	if st.sec.Mechanism != "" {
		c.set("sasl.mechanism", string(st.sec.Mechanism))
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
