package runner

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/kafkasec"
)

// settings is what the Kafka properties of a spec mean for kafka-go, after
// validation. Each field names the property it came from.
type settings struct {
	clientID string // client.id
	sec      kafkasec.Config
	// setupTimeout bounds setting up a connection: TCP, TLS, SASL and,
	// in the preflight, the broker's first answer
	// (socket.connection.setup.timeout.ms, Kafka's default 10 s).
	setupTimeout time.Duration

	// Producer.
	acks           kafka.RequiredAcks // acks (default all, as in Kafka)
	acksName       string
	linger         time.Duration // linger.ms (Kafka 4 default 5 ms)
	batchBytes     int           // batch.size (default 16384)
	compression    kafka.Compression
	bufferMemory   int64         // buffer.memory: bytes awaiting acks before send blocks
	maxBlock       time.Duration // max.block.ms: how long send may block on buffer.memory
	maxRequestSize int           // max.request.size: bytes of batches in one produce request
	requestTimeout time.Duration // request.timeout.ms
	maxAttempts    int           // retries + 1
	backoffMin     time.Duration // retry.backoff.ms
	backoffMax     time.Duration // retry.backoff.max.ms
	maxInFlight    int           // max.in.flight.requests.per.connection

	// Consumer.
	group          string        // group.id
	minBytes       int           // fetch.min.bytes
	maxWait        time.Duration // fetch.max.wait.ms
	maxPartBytes   int           // max.partition.fetch.bytes
	commitInterval time.Duration // auto.commit.interval.ms; 0 = synchronous commits
	sessionTimeout time.Duration
	heartbeat      time.Duration
	isolation      kafka.IsolationLevel
	balancers      []kafka.GroupBalancer
	balancerName   string
	fromLatest     bool // auto.offset.reset=latest
}

// A property handler parses one value into settings.
type propHandler func(st *settings, v string) error

func msProp(dst func(*settings) *time.Duration, allowZero bool) propHandler {
	return func(st *settings, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || (n == 0 && !allowZero) {
			return fmt.Errorf("%q is not a valid number of milliseconds", v)
		}
		*dst(st) = time.Duration(n) * time.Millisecond
		return nil
	}
}

func intProp(dst func(*settings) *int, min int) propHandler {
	return func(st *settings, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			return fmt.Errorf("%q must be a whole number ≥ %d", v, min)
		}
		*dst(st) = n
		return nil
	}
}

func oneOf(allowed ...string) propHandler {
	return func(_ *settings, v string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("kbench sends and reads raw bytes; only %s is supported, got %q", strings.Join(allowed, " or "), v)
	}
}

var commonProps = map[string]propHandler{
	// bootstrap.servers is read by Spec.Targets; here it is only checked.
	"bootstrap.servers": func(_ *settings, v string) error {
		if len(rundoc.SplitServers(v)) == 0 {
			return fmt.Errorf("must list host:port pairs")
		}
		return nil
	},
	"client.id":                          func(st *settings, v string) error { st.clientID = v; return nil },
	"request.timeout.ms":                 msProp(func(st *settings) *time.Duration { return &st.requestTimeout }, false),
	"socket.connection.setup.timeout.ms": msProp(func(st *settings) *time.Duration { return &st.setupTimeout }, false),
}

var producerProps = map[string]propHandler{
	"acks": func(st *settings, v string) error {
		switch v {
		case "all", "-1":
			st.acks = kafka.RequireAll
		case "1":
			st.acks = kafka.RequireOne
		case "0":
			st.acks = kafka.RequireNone
		default:
			return fmt.Errorf("%q must be all, -1, 1 or 0", v)
		}
		st.acksName = v
		return nil
	},
	"linger.ms":  msProp(func(st *settings) *time.Duration { return &st.linger }, true),
	"batch.size": intProp(func(st *settings) *int { return &st.batchBytes }, 1),
	"compression.type": func(st *settings, v string) error {
		switch v {
		case "none":
			st.compression = 0
		case "gzip":
			st.compression = kafka.Gzip
		case "snappy":
			st.compression = kafka.Snappy
		case "lz4":
			st.compression = kafka.Lz4
		case "zstd":
			st.compression = kafka.Zstd
		default:
			return fmt.Errorf("%q must be none, gzip, snappy, lz4 or zstd", v)
		}
		return nil
	},
	"buffer.memory": func(st *settings, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%q must be a positive number of bytes", v)
		}
		st.bufferMemory = n
		return nil
	},
	"max.block.ms":     msProp(func(st *settings) *time.Duration { return &st.maxBlock }, true),
	"max.request.size": intProp(func(st *settings) *int { return &st.maxRequestSize }, 1),
	"retries": func(st *settings, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%q must be a whole number ≥ 0", v)
		}
		if n > 1000 {
			n = 1000 // Kafka's default is MAX_INT, bounded by delivery.timeout.ms
		}
		st.maxAttempts = int(n) + 1
		return nil
	},
	"retry.backoff.ms":                      msProp(func(st *settings) *time.Duration { return &st.backoffMin }, true),
	"retry.backoff.max.ms":                  msProp(func(st *settings) *time.Duration { return &st.backoffMax }, true),
	"max.in.flight.requests.per.connection": intProp(func(st *settings) *int { return &st.maxInFlight }, 1),
	"enable.idempotence": func(_ *settings, v string) error {
		if v != "false" {
			return fmt.Errorf("kafka-go has no idempotent producer; set enable.idempotence=false or leave it out")
		}
		return nil
	},
	"key.serializer":   oneOf("org.apache.kafka.common.serialization.ByteArraySerializer"),
	"value.serializer": oneOf("org.apache.kafka.common.serialization.ByteArraySerializer"),
}

var consumerProps = map[string]propHandler{
	"group.id":                  func(st *settings, v string) error { st.group = v; return nil },
	"fetch.min.bytes":           intProp(func(st *settings) *int { return &st.minBytes }, 1),
	"fetch.max.wait.ms":         msProp(func(st *settings) *time.Duration { return &st.maxWait }, false),
	"max.partition.fetch.bytes": intProp(func(st *settings) *int { return &st.maxPartBytes }, 1),
	"auto.commit.interval.ms":   msProp(func(st *settings) *time.Duration { return &st.commitInterval }, false),
	"enable.auto.commit": func(st *settings, v string) error {
		switch v {
		case "true":
		case "false":
			st.commitInterval = 0
		default:
			return fmt.Errorf("%q must be true or false", v)
		}
		return nil
	},
	"session.timeout.ms":    msProp(func(st *settings) *time.Duration { return &st.sessionTimeout }, false),
	"heartbeat.interval.ms": msProp(func(st *settings) *time.Duration { return &st.heartbeat }, false),
	"isolation.level": func(st *settings, v string) error {
		switch v {
		case "read_uncommitted":
			st.isolation = kafka.ReadUncommitted
		case "read_committed":
			st.isolation = kafka.ReadCommitted
		default:
			return fmt.Errorf("%q must be read_uncommitted or read_committed", v)
		}
		return nil
	},
	"auto.offset.reset": func(st *settings, v string) error {
		switch v {
		case "earliest":
			st.fromLatest = false
		case "latest":
			st.fromLatest = true
		default:
			return fmt.Errorf("%q must be earliest or latest", v)
		}
		return nil
	},
	"partition.assignment.strategy": func(st *settings, v string) error {
		var bs []kafka.GroupBalancer
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			switch name[strings.LastIndex(name, ".")+1:] {
			case "RangeAssignor", "range":
				bs = append(bs, kafka.RangeGroupBalancer{})
			case "RoundRobinAssignor", "roundrobin":
				bs = append(bs, kafka.RoundRobinGroupBalancer{})
			default:
				return fmt.Errorf("%q: kafka-go offers RangeAssignor and RoundRobinAssignor", name)
			}
		}
		st.balancers, st.balancerName = bs, v
		return nil
	},
	"key.deserializer":   oneOf("org.apache.kafka.common.serialization.ByteArrayDeserializer"),
	"value.deserializer": oneOf("org.apache.kafka.common.serialization.ByteArrayDeserializer"),
}

func workloadProps(workload rundoc.Workload) map[string]propHandler {
	switch workload {
	case rundoc.Consumer:
		return consumerProps
	case rundoc.E2E:
		return e2eProps
	}
	return producerProps
}

// e2eProps are the properties of e2e's --producer-props: its producer's
// and its consumer's, as Kafka's tool gives its one properties file to
// both clients.
var e2eProps = func() map[string]propHandler {
	m := maps.Clone(producerProps)
	maps.Copy(m, consumerProps)
	return m
}()

// supportedProps lists every property name a workload accepts.
func supportedProps(workload rundoc.Workload) []string {
	var names []string
	for k := range commonProps {
		names = append(names, k)
	}
	for k := range workloadProps(workload) {
		names = append(names, k)
	}
	names = append(names, kafkasec.Keys()...)
	sort.Strings(names)
	return names
}

// Validate is the runner's rundoc.Check: it adds the errors of mapping
// the spec's Kafka properties onto the client (clientSettings), so that
// ParseArgs, SpecFromParams and ReadSpecFile given it refuse a property
// the runner cannot honour where the spec is given (the command line, the
// form, the API) rather than when its run starts.
//
// It also looks for a producer's --payload-file, which the contract
// (rundoc) leaves alone so that whoever validates a spec it will not
// run (a server importing a result) touches no path the spec names.
func Validate(s *rundoc.Spec, errs *rundoc.FieldErrors) {
	validate(s, errs)
}

// validate is Validate; it also returns the client settings it built, ok
// false when there are none (a write-path spec, or properties refused).
func validate(s *rundoc.Spec, errs *rundoc.FieldErrors) (st settings, ok bool) {
	if s.Workload == rundoc.Writepath {
		return settings{}, false // it takes no properties (the contract refuses them)
	}
	if s.PayloadFile != "" && s.Workload == rundoc.Producer {
		if _, err := os.Stat(s.PayloadFile); err != nil {
			errs.Add("payload-file", "%v", err)
		}
	}
	st, err := clientSettings(s)
	if err != nil {
		if err := errs.Append(err); err != nil {
			// clientSettings reports only field errors; keep any other
			// against the properties rather than drop it.
			errs.Add(rundoc.PropsFlag(s.Workload), "%v", err)
		}
		return settings{}, false
	}
	return st, true
}

// ValidateWithFiles is Validate, then reads the TLS files the
// properties name as a run would (kafkasec.Config.Load): the check of
// properties an operator gives on this machine, such as a named
// cluster's file (serve's and worker's --cluster), whose faults are
// best told at start. A request's properties get Validate only: their
// files are the client's machine's, read by the run.
func ValidateWithFiles(s *rundoc.Spec, errs *rundoc.FieldErrors) {
	field := rundoc.PropsFlag(s.Workload)
	st, ok := validate(s, errs)
	if !ok || errs.Has(field) {
		return
	}
	if _, err := st.sec.Load(); err != nil {
		errs.Add(field, "%v", err)
	}
}

// clientSettings validates the spec's Kafka properties and maps them onto
// kafka-go. An unknown property is an error that lists the supported ones:
// silently ignoring a property would make a benchmark measure something
// other than what its user asked for. A Kafka tool's spec (Spec.Tool)
// is the exception: its properties go to Java's client, not kafka-go.
func clientSettings(s *rundoc.Spec) (settings, error) {
	st := settings{
		acks:           kafka.RequireAll,
		acksName:       "all",
		linger:         5 * time.Millisecond,
		batchBytes:     16384,
		bufferMemory:   32 << 20,
		maxBlock:       60 * time.Second,
		maxRequestSize: 1 << 20,
		requestTimeout: 30 * time.Second,
		setupTimeout:   10 * time.Second,
		maxAttempts:    10,
		backoffMin:     100 * time.Millisecond,
		backoffMax:     1 * time.Second,
		maxInFlight:    5,
		minBytes:       1,
		maxWait:        500 * time.Millisecond,
		maxPartBytes:   s.FetchSize,
		commitInterval: 5 * time.Second,
		sessionTimeout: 45 * time.Second,
		heartbeat:      3 * time.Second,
		isolation:      kafka.ReadUncommitted,
		balancers:      []kafka.GroupBalancer{kafka.RangeGroupBalancer{}},
		balancerName:   "range",
		fromLatest:     s.FromLatest,
		group:          s.Group,
	}
	secKeys := map[string]bool{}
	for _, k := range kafkasec.Keys() {
		secKeys[k] = true
	}
	own := workloadProps(s.Workload)
	keys := make([]string, 0, len(s.Props))
	for k := range s.Props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h, ok := commonProps[k]
		if !ok {
			h, ok = own[k]
		}
		if !ok {
			// A Kafka tool's run hands its properties to the Java client,
			// which reads many kbench's client does not (client.rack,
			// partitioner.class, …) and warns of unknown ones itself.
			if secKeys[k] || s.Tool != "" {
				continue
			}
			return st, rundoc.NewFieldError(rundoc.PropsFlag(s.Workload), "unsupported property %q; kbench supports: %s",
				k, strings.Join(supportedProps(s.Workload), ", "))
		}
		if err := h(&st, s.Props[k]); err != nil {
			return st, rundoc.NewFieldError(rundoc.PropsFlag(s.Workload), "%s: %v", k, err)
		}
	}
	if s.Workload == rundoc.E2E && st.maxPartBytes == 0 {
		st.maxPartBytes = 1 << 20 // Kafka's max.partition.fetch.bytes; e2e has no --fetch-size
	}
	if s.Workload == rundoc.E2E && !s.E2ERateMode() && st.acksName != "1" && st.acksName != "all" {
		// Kafka's tool refuses any other value (-1 and 0 included) with these words.
		return st, rundoc.NewFieldError(rundoc.PropsFlag(s.Workload), "acks=%s: Latency testing requires synchronous acknowledgement. Please use 1 or all", st.acksName)
	}
	// The explicit flags win over the equivalent properties, as in Kafka's tools.
	if s.Group != "" {
		st.group = s.Group
	}
	if s.FromLatest {
		st.fromLatest = true
	}
	// The contract refuses --from-latest with these flags; the property
	// means the same and is refused for the same reasons (rundoc's
	// validateConsumerGroups).
	if _, _, groups := s.Groups(); s.Workload == rundoc.Consumer && st.fromLatest && !s.FromLatest && (s.Topics > 0 || groups) {
		return st, rundoc.NewFieldError(rundoc.PropsFlag(s.Workload),
			"auto.offset.reset=latest: --topics and --subscriptions read the topics' records from their start, every subscription all of them")
	}
	if s.Workload == rundoc.Consumer && s.FetchSize != rundoc.DefaultSpec(rundoc.Consumer).FetchSize {
		st.maxPartBytes = s.FetchSize
	}
	if st.group == "" && s.Workload == rundoc.Consumer {
		st.group = fmt.Sprintf("perf-consumer-%d", rand.IntN(100000))
	}
	sec, err := kafkasec.FromProperties(s.Props, os.Getenv)
	if err != nil {
		return st, rundoc.NewFieldError(rundoc.PropsFlag(s.Workload), "%v", err)
	}
	st.sec = sec
	return st, nil
}

// brokers is where the client bootstraps from.
func brokers(s *rundoc.Spec) []string { return s.Targets() }

// embeddedTarget reports whether this spec runs against kbench's own broker.
func embeddedTarget(s *rundoc.Spec) bool { return len(s.Targets()) == 0 }

// Usage is `kbench run WORKLOAD --help`: the contract's flags
// (rundoc.Usage) and the Kafka properties this client understands, which
// only the runner knows.
func Usage(workload rundoc.Workload) string {
	u := rundoc.Usage(workload)
	if workload != rundoc.Writepath {
		u += fmt.Sprintf("\nKafka properties kbench understands: %s\n", strings.Join(supportedProps(workload), ", "))
	}
	return u
}

// e2eRule says why e2e rate mode does not apply a value of a property
// it takes, "" when it does; nil applies every value.
type e2eRule func(v string) string

// e2eRateProducer are the properties e2e rate mode's producers apply:
// kbench's raw-mode sender (produce_client.go) reads every one.
var e2eRateProducer = map[string]e2eRule{
	"acks": nil, "linger.ms": nil, "batch.size": nil, "compression.type": nil, "buffer.memory": nil, "max.block.ms": nil,
	"max.request.size": nil, "request.timeout.ms": nil, "retries": nil, "retry.backoff.ms": nil, "retry.backoff.max.ms": nil,
	"max.in.flight.requests.per.connection": nil, "client.id": nil, "socket.connection.setup.timeout.ms": nil,
	"enable.idempotence": func(v string) string {
		if v == "false" {
			return ""
		}
		return "kafka-go has no idempotent producer"
	},
}

// e2eRateConsumer are the properties e2e rate mode's consumers apply:
// the kafka-go Readers of its subscriptions (e2e_groups.go), which fetch
// with fetch.min.bytes 1 and read uncommitted, commit no offsets, and
// read their fresh topics from the start.
var e2eRateConsumer = map[string]e2eRule{
	"fetch.max.wait.ms": nil, "session.timeout.ms": nil, "heartbeat.interval.ms": nil, "partition.assignment.strategy": nil,
	"client.id": nil, "socket.connection.setup.timeout.ms": nil,
	"max.partition.fetch.bytes": func(v string) string {
		if n, err := strconv.Atoi(v); err == nil && n < 1<<20 {
			return "the subscriptions' kafka-go Readers fetch at least 1 MiB"
		}
		return ""
	},
	"fetch.min.bytes": func(v string) string {
		if v == "1" {
			return ""
		}
		return "kbench's consumers fetch with fetch.min.bytes 1, so that each record is timed as soon as it can be read"
	},
	"isolation.level": func(v string) string {
		if v == "read_uncommitted" {
			return ""
		}
		return "kbench's consumers read uncommitted (its producers send no transactions)"
	},
	"auto.offset.reset": func(v string) string {
		if v == "earliest" {
			return ""
		}
		return "kbench's subscriptions read their fresh topics from the start (the same records here: they join before the first is sent)"
	},
	"enable.auto.commit":      func(string) string { return "kbench's consumers commit no offsets" },
	"auto.commit.interval.ms": func(string) string { return "kbench's consumers commit no offsets" },
}

// E2ERateApplies is the runner's word on Kafka property key=value for
// e2e rate mode's producers (consumer false) or the consumers of its
// subscriptions (consumer true): notApplied says why they do not apply
// it as Java's client would ("" when they do), err that the value is
// one the property never takes. It is narrower than Validate, which
// takes every property the producer and consumer workloads know for
// e2e's one set of properties: kbench run omb lists what this refuses
// as not applied rather than let a driver file's property go unheeded.
// The connection's properties (security.protocol, sasl.*, ssl.*) are
// both clients' alike and judged with the spec (kafkasec).
func E2ERateApplies(consumer bool, key, value string) (notApplied string, err error) {
	if slices.Contains(kafkasec.Keys(), key) {
		return "", nil
	}
	rules, own, other, who := e2eRateProducer, producerProps, consumerProps, "producers"
	if consumer {
		rules, own, other, who = e2eRateConsumer, consumerProps, producerProps, "consumers"
	}
	rule, applied := rules[key]
	if applied && rule != nil {
		if why := rule(value); why != "" {
			return why, nil
		}
	}
	h, known := commonProps[key]
	if !known {
		h, known = own[key]
	}
	if known {
		var st settings
		if err := h(&st, value); err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
	}
	switch {
	case applied:
		return "", nil
	case known:
		return fmt.Sprintf("kbench's e2e %s do not apply it", who), nil
	case other[key] != nil:
		return fmt.Sprintf("a property of the other kind of client, which Java's %s ignore too", who), nil
	}
	return "kbench's client does not take it", nil
}
