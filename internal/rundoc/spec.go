package rundoc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Producer and consumer modes.
const (
	ModeRaw    = "raw"    // record batches encoded by kbench, sent by kafka-go's Transport (default)
	ModeWriter = "writer" // kafka-go's Writer: the application path
	ModeClient = "client" // kafka-go's record encoder, batched by kbench

	ModeGroup  = "group"  // kafka-go's consumer-group Reader: the application path
	ModeAssign = "assign" // one connection per partition fetching in parallel

	ModeKafka = "kafka" // e2e: Kafka's EndToEndLatency tool, one record at a time
	ModeRate  = "rate"  // e2e: a producer at --throughput (or unthrottled) and a concurrent consumer
)

// Spec is everything that defines a benchmark run. Its JSON field names are
// the CLI's flag names, so a spec reads the same on the command line, in the
// web form and in the API.
//
// Secrets never live in a Spec that is written anywhere: Redacted returns the
// copy to store.
type Spec struct {
	Workload Workload `json:"workload"`

	Topic           string `json:"topic"`
	BootstrapServer string `json:"bootstrap-server,omitempty"`
	NumRecords      int64  `json:"num-records"`
	RecordSize      int    `json:"record-size"`
	PayloadFile     string `json:"payload-file,omitempty"`
	// PayloadDelimiter splits PayloadFile into payloads (Kafka's default "\n").
	PayloadDelimiter string `json:"payload-delimiter,omitempty"`
	// PayloadEntropy, when set, makes every record's value different, its
	// bytes carrying PayloadEntropy × 8 bits of entropy each (0: every
	// byte equal; 1: random bytes); nil sends Kafka's tool's payload, one
	// value of random uppercase letters for every record.
	PayloadEntropy *float64 `json:"payload-entropy,omitempty"`
	// Payload is one value, given by its contents (base64 in JSON and
	// on the command line), sent as every record's value: how a request,
	// which never names a file on the server, gives a payload (OMB's
	// payloadFile). Its length is the record size.
	Payload []byte `json:"payload,omitempty"`
	// PayloadRandomRatio, when set, makes the values a pool of
	// PayloadPool payloads picked at random per record, each starting
	// with PayloadRandomRatio × the record size random bytes and ending
	// in zeros (OMB's useRandomizedPayloads, randomBytesRatio and
	// randomizedPayloadPoolSize).
	PayloadRandomRatio *float64 `json:"payload-random-ratio,omitempty"`
	PayloadPool        int      `json:"payload-pool,omitempty"`
	// KeySize is the bytes of each record's key; 0 sends null keys.
	KeySize int `json:"key-size,omitempty"`
	// KeyCount is how many distinct keys there are (KeyPoolSize when
	// 0), and KeyOrder how each record picks one: KeyOrderRandom (the
	// default) or KeyOrderRoundRobin, each producer cycling through them
	// (OMB's KEY_ROUND_ROBIN).
	KeyCount int    `json:"key-count,omitempty"`
	KeyOrder string `json:"key-order,omitempty"`
	// Headers is the number of headers on each record.
	Headers int `json:"headers,omitempty"`
	// Throughput caps records/s across all threads; -1 is unthrottled.
	Throughput float64 `json:"throughput"`
	// Props are the Kafka client properties: the config file's, overridden
	// by --producer-props / --consumer-props.
	Props map[string]string `json:"props,omitempty"`
	// ConfigFile is the --producer.config / --consumer.config path, kept
	// for the record; its contents are already merged into Props.
	ConfigFile        string `json:"config-file,omitempty"`
	PrintMetrics      bool   `json:"print-metrics,omitempty"`
	WarmupRecords     int64  `json:"warmup-records,omitempty"`
	ReportingInterval int64  `json:"reporting-interval"` // milliseconds
	Partitions        int    `json:"partitions"`
	// Topics is --topics: when given (1 or more), the run creates that
	// many topics of Partitions each, named TopicNames, fresh (none may
	// exist before) and deleted after it; 0 is the one --topic, used as
	// it is. Left out of the JSON when 0, so a spec without it reaches
	// older workers.
	Topics int `json:"topics,omitempty"`
	// TopicConfig and ReplicationFactor shape the topics of --topics,
	// which the run creates: their configs, as kafka-topics' --config
	// gives them (OMB's driver topicConfig), and their replicas (OMB's
	// replicationFactor; 0 is the broker's default). Left out of the
	// JSON when not given.
	TopicConfig       map[string]string `json:"topic-config,omitempty"`
	ReplicationFactor int               `json:"replication-factor,omitempty"`
	Threads           int               `json:"threads"`
	// BacklogBytes and BacklogDrainRatio are e2e rate mode's catch-up
	// read (OMB's consumerBacklogSizeGB and backlogDrainRatio, see
	// e2e.go); 0 for none, left out of the JSON then.
	BacklogBytes      int64   `json:"backlog-bytes,omitempty"`
	BacklogDrainRatio float64 `json:"backlog-drain-ratio,omitempty"`
	// Subscriptions and ConsumersPerSubscription are the consumer
	// groups of e2e rate mode and of the consumer's group mode (OMB's
	// subscriptionsPerTopic and consumerPerSubscription): 0 for none
	// (e2e: one reader of every partition, no group; consumer: its one
	// consumer), left out of the JSON then.
	Subscriptions            int `json:"subscriptions,omitempty"`
	ConsumersPerSubscription int `json:"consumers-per-subscription,omitempty"`
	// GroupsPerTopic makes each subscription a group per topic, as OMB's
	// subscriptions are, rather than one group over every topic.
	GroupsPerTopic bool `json:"groups-per-topic,omitempty"`
	// DurationAfterDrain measures Duration from the backlog's drain, as
	// OMB's testDurationMinutes runs after its backlog drained.
	DurationAfterDrain bool `json:"duration-after-drain,omitempty"`
	// Notes are said in the run's result, as given: what whoever made
	// the spec wants its reader to know (kbench run omb's translation:
	// what it could not apply, and how it read the workload).
	Notes    []string `json:"notes,omitempty"`
	Profiles []string `json:"profile"`
	// ProfileWindows is --profile-windows: on, off, or empty for the
	// default (WantsProfileWindows). Empty is left out of the JSON, so a
	// spec that keeps the default reaches a worker older than the option,
	// which refuses parameters it does not know, as it always did.
	ProfileWindows string `json:"profile-windows,omitempty"`

	// Consumer only.
	Group             string `json:"group,omitempty"`
	FetchSize         int    `json:"fetch-size,omitempty"`
	Timeout           int64  `json:"timeout,omitempty"` // milliseconds without a record before giving up
	FromLatest        bool   `json:"from-latest,omitempty"`
	ShowDetailedStats bool   `json:"show-detailed-stats,omitempty"`
	Mode              string `json:"mode,omitempty"`

	// Writepath only (see runner's writepath.go); its --request-rate
	// (alias --throughput) is Throughput, in requests/s.
	Strategy string  `json:"strategy,omitempty"`
	Requests int64   `json:"requests,omitempty"`
	Duration float64 `json:"duration,omitempty"` // seconds, instead of Requests or NumRecords
	// Warmup is e2e rate mode's warm-up, in seconds: traffic before the
	// measured window, none of it in a figure.
	Warmup            float64 `json:"warmup,omitempty"`
	RecordsPerRequest int     `json:"records-per-request,omitempty"`
	InFlight          int     `json:"in-flight,omitempty"`
	WarmupRequests    int64   `json:"warmup-requests,omitempty"`
	Acks              string  `json:"acks,omitempty"`
	Sink              bool    `json:"sink,omitempty"`

	// Cluster names the cluster the run targets among those the machine
	// executing it names (serve's --cluster NAME=FILE): its connection
	// properties, secrets included, are read from that machine's file
	// when the run starts and merged into Props then, so a stored spec
	// holds the name alone. It is no flag of `kbench run` (which takes
	// properties files itself); spec files and params carry it.
	Cluster string `json:"cluster,omitempty"`

	// Shard makes the run one shard of a fleet run (DivideFleet): it
	// drives only the partitions Shard.Assign gives it, of topics the
	// fleet's shards share on one cluster. The server writes it into a
	// shard's spec, with the shard's Throughput, Threads and Duration;
	// it is no flag. Left out of the JSON when nil, so a spec without it
	// reaches older workers.
	Shard *Shard `json:"shard,omitempty"`
	// Workers makes the run a fleet's parent: its load is driven by
	// Workers shards, each on its own worker (DivideFleet), and its
	// result is their merge. The server sets it from a request's
	// top-level "workers"; it is no flag, and 0 (left out of the JSON)
	// is a run of one process. Being part of the spec, it is part of the
	// fingerprint: fleets of different sizes never share a series.
	Workers int `json:"workers,omitempty"`

	// Tool names the Kafka tool that runs the workload instead of
	// kbench's client (serve's and worker's --tool NAME=PATH): the run's
	// child executes that machine's program of that name with an
	// argument template filled from this spec. The spec holds the name
	// alone, never a path. Like Cluster it is no flag of `kbench run`;
	// spec files and params carry it.
	Tool string `json:"tool,omitempty"`
}

// MinRate is the lowest --throughput (records/s) and --request-rate
// (requests/s) taken: the interval between sends of a slower rate would
// overflow the clock's arithmetic and silently unthrottle the run.
const MinRate = 0.001

// The shape of keys and headers (--key-size, --headers).
const (
	// KeyPoolSize is how many distinct keys a run with --key-size draws
	// from by default: enough to spread over any partition count.
	KeyPoolSize = 1024
	MaxKeySize  = 1 << 20
	// MaxKeyCount bounds --key-count, and MaxKeyBytes the keys' bytes
	// together: every key is built before the run.
	MaxKeyCount = 1000000
	MaxKeyBytes = 64 << 20
	MaxHeaders  = 1000
	// Headers have KIP-1096's shape: small string keys and values, the
	// same on every record. Keys are "header-000", "header-001", …
	HeaderKeyLen   = 10
	HeaderValueLen = 16
)

// Key orders (--key-order).
const (
	KeyOrderRandom     = "random"
	KeyOrderRoundRobin = "round-robin"
)

// The payloads a spec gives (--payload, --payload-random-ratio): the
// largest --payload, which the spec holds; the pool of random payloads
// by default and at most, count and bytes, all built before the run.
const (
	MaxPayloadBytes    = 1 << 20
	DefaultPayloadPool = 1000
	MaxPayloadPool     = 100000
	MaxPayloadPoolSize = 256 << 20
)

// payloadSetter reads --payload: base64, padded or not.
func payloadSetter(s *Spec, v []string) error {
	text := strings.TrimSpace(v[0])
	if len(text) > base64.StdEncoding.EncodedLen(MaxPayloadBytes) {
		return fmt.Errorf("is over %d bytes", MaxPayloadBytes)
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(text)
	}
	if err != nil {
		return fmt.Errorf("is not base64: %v", err)
	}
	if len(data) == 0 {
		return errors.New("is empty")
	}
	s.Payload = data
	return nil
}

// FieldError is invalid input for one option. Field is the option's flag
// name, so the CLI, the form and the API all point at the same thing.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return "--" + e.Field + ": " + e.Msg }

// ErrHelp is returned by ParseArgs for -h/--help.
var ErrHelp = errors.New("help requested")

// NewFieldError is the error of one invalid field.
func NewFieldError(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// DefaultSpec returns the spec a workload runs with when no flag is given.
// Defaults follow Kafka's tools where they have one.
func DefaultSpec(workload Workload) Spec {
	s := Spec{
		Workload:          workload,
		Topic:             "kbench-" + string(workload),
		NumRecords:        500000,
		RecordSize:        512,
		Throughput:        -1,
		ReportingInterval: 5000,
		Partitions:        1,
		Threads:           1,
		Profiles:          []string{"cpu", "heap"},
	}
	if workload == Producer {
		// raw by default: kbench is an instrument, and this is the path on
		// which kafka-go is not the bottleneck (see runner's
		// produce_client.go).
		s.Mode = ModeRaw
	}
	if workload == Consumer {
		s.FetchSize = 1024 * 1024
		s.Timeout = 10000
		s.Mode = ModeGroup
	}
	if workload == Writepath {
		writepathDefaults(&s)
	}
	if workload == E2E {
		e2eDefaults(&s)
	}
	return s
}

type optKind int

const (
	kindString optKind = iota
	kindInt
	kindFloat
	kindBool
	kindList  // comma-separated, repeatable
	kindProps // k=v pairs: several arguments after the flag, or an object in JSON
	// kindMap takes k=v pairs as kindProps does, into a map of its own
	// (--topic-config) rather than the client's properties.
	kindMap
)

// pairs reports whether the kind takes k=v pairs.
func (k optKind) pairs() bool { return k == kindProps || k == kindMap }

// option is one flag of `kbench run`. The same table parses command lines,
// API params and the web form, so every entry point validates alike.
type option struct {
	name      string
	aliases   []string
	kind      optKind
	workloads []Workload // nil: every workload
	help      string
	set       func(s *Spec, vals []string) error
	// key is the spec's JSON field the flag sets, when it is not name
	// (--messages sets num-records): stored specs keep one key.
	key string
	// choices is the closed set of values the flag takes (nil: any), and
	// get reads its value back from a spec, for validation.
	choices []Choice
	get     func(s *Spec) string
	// check, when set, refuses a value as given before set takes it.
	check func(v string) error
	// unset are the workloads whose value may be empty: chosen by other
	// flags (e2e's mode follows --throughput unless given), as unsetHelp
	// says, which Flags gives as their default.
	unset     []Workload
	unsetHelp string
}

// apply checks and sets the option's values.
func (o option) apply(s *Spec, vals []string) error {
	if o.check != nil && len(vals) == 1 {
		if err := o.check(vals[0]); err != nil {
			return err
		}
	}
	return o.set(s, vals)
}

// Choice is one value of a flag with a closed set of values. The CLI, the
// API and the web form's selects all read the option table's list.
type Choice struct {
	Value string
	// Workloads are the workloads it is valid for; nil: every one its
	// flag applies to.
	Workloads []Workload
	// Aliases are other spellings taken for it (Kafka's -1 for all).
	Aliases []string
	// Help says what it means; "" when the value says it.
	Help string
}

// For reports whether the choice is valid for workload.
func (c Choice) For(workload Workload) bool {
	return c.Workloads == nil || slices.Contains(c.Workloads, workload)
}

func (c Choice) matches(v string) bool { return v == c.Value || slices.Contains(c.Aliases, v) }

// jsonKey is the spec's JSON field of the flag.
func (o option) jsonKey() string {
	if o.key != "" {
		return o.key
	}
	return o.name
}

// allows reports whether v is one of the flag's choices for workload.
func (o option) allows(workload Workload, v string) bool {
	for _, c := range o.choices {
		if c.For(workload) && c.matches(v) {
			return true
		}
	}
	return false
}

// choiceList names the choices valid for workload: "a, b or c".
func (o option) choiceList(workload Workload, withHelp bool) string {
	var parts []string
	for _, c := range o.choices {
		if !c.For(workload) {
			continue
		}
		var notes []string
		for _, a := range c.Aliases {
			notes = append(notes, "or "+a)
		}
		if withHelp && c.Help != "" {
			notes = append(notes, c.Help)
		}
		p := c.Value
		if len(notes) > 0 {
			p += " (" + strings.Join(notes, "; ") + ")"
		}
		parts = append(parts, p)
	}
	return orList(parts)
}

// fullHelp is the flag's help with its choices for workload ("" for all
// of the flag's: per workload when they differ between them).
func (o option) fullHelp(workload Workload) string {
	if len(o.choices) == 0 {
		return o.help
	}
	ws := o.workloads
	if ws == nil {
		ws = Workloads()
	}
	if workload != "" {
		ws = []Workload{workload}
	}
	var groups []string
	shared := true
	for _, w := range ws[1:] {
		shared = shared && o.choiceList(w, false) == o.choiceList(ws[0], false)
	}
	if shared {
		return o.help + ": " + o.choiceList(ws[0], true)
	}
	for _, w := range ws {
		groups = append(groups, string(w)+": "+o.choiceList(w, true))
	}
	return o.help + "; " + strings.Join(groups, "; ")
}

func (o option) appliesTo(workload Workload) bool {
	if o.workloads == nil {
		return true
	}
	for _, w := range o.workloads {
		if w == workload {
			return true
		}
	}
	return false
}

var both = []Workload{Producer, Consumer}

func options() []option {
	return append([]option{
		{name: "topic", kind: kindString, help: "topic to produce to / consume from (created when missing)",
			set: func(s *Spec, v []string) error { s.Topic = v[0]; return nil }},
		{name: "bootstrap-server", aliases: []string{"broker-list", "bootstrap-servers"}, kind: kindString,
			help: "host:port[,host:port] of a Kafka cluster; empty starts the embedded broker",
			set:  func(s *Spec, v []string) error { s.BootstrapServer = v[0]; return nil }},
		// The count is --num-records in kafka-producer-perf-test and
		// --messages in kafka-consumer-perf-test; each takes the other's
		// name too.
		{name: "num-records", aliases: []string{"messages"}, kind: kindInt, workloads: []Workload{Producer, E2E},
			help: "records to send, warm-up records included (not with --duration)",
			set:  intSetter(func(s *Spec, n int64) { s.NumRecords = n })},
		{name: "messages", aliases: []string{"num-records"}, key: "num-records", kind: kindInt, workloads: []Workload{Consumer},
			help: "records to consume, warm-up records included (not with --duration)",
			set:  intSetter(func(s *Spec, n int64) { s.NumRecords = n })},
		{name: "duration", kind: kindFloat,
			help: "seconds to send or consume for in the measured window, after any warm-up, instead of a count (--num-records, --messages, --requests); the profile then covers a fixed time, not a fixed amount of work",
			set:  floatSetter(func(s *Spec, f float64) { s.Duration = f }),
			// 0 would mean "no duration" in a spec: refuse it here, where a
			// user typed it.
			check: func(v string) error {
				if f, err := strconv.ParseFloat(v, 64); err == nil && f <= 0 {
					return fmt.Errorf("must be positive seconds, got %v", v)
				}
				return nil
			}},
		{name: "warmup", kind: kindFloat, workloads: []Workload{E2E},
			help: "rate mode: seconds of traffic at the run's rate before the measured window, its records received and in no figure (OMB's warmupDurationMinutes, in seconds)",
			set:  floatSetter(func(s *Spec, f float64) { s.Warmup = f })},
		{name: "record-size", kind: kindInt, help: "bytes per record (consumer: of the records it prefills)",
			set: intSetter(func(s *Spec, n int64) { s.RecordSize = int(n) })},
		{name: "payload-file", kind: kindString, workloads: []Workload{Producer},
			help: "file of payloads, split by --payload-delimiter, picked at random per record",
			set:  func(s *Spec, v []string) error { s.PayloadFile = v[0]; return nil }},
		{name: "payload-delimiter", kind: kindString, workloads: []Workload{Producer},
			help: `delimiter of --payload-file (default "\n")`,
			set:  func(s *Spec, v []string) error { s.PayloadDelimiter = v[0]; return nil }},
		{name: "payload-entropy", kind: kindFloat, workloads: []Workload{Producer},
			help: "0 to 1: each record gets a different value whose bytes carry this × 8 bits of entropy (0: every byte equal; 1: random bytes), so compression is measured on realistic data; default: one value of random uppercase letters for every record, as Kafka's tool sends",
			set:  floatSetter(func(s *Spec, f float64) { s.PayloadEntropy = &f })},
		{name: "payload", kind: kindString, workloads: []Workload{Producer, E2E},
			help: fmt.Sprintf("one payload, base64, sent as every record's value: its contents, never a file (the way a request gives OMB's payloadFile); its length is the record size; at most %d bytes", MaxPayloadBytes),
			set:  payloadSetter},
		{name: "payload-random-ratio", kind: kindFloat, workloads: []Workload{Producer, E2E},
			help: "0 to 1: each record's value is one of --payload-pool payloads picked at random, each this share of the record size in random bytes followed by zeros (OMB's useRandomizedPayloads and randomBytesRatio)",
			set:  floatSetter(func(s *Spec, f float64) { s.PayloadRandomRatio = &f })},
		{name: "payload-pool", kind: kindInt, workloads: []Workload{Producer, E2E},
			help: fmt.Sprintf("with --payload-random-ratio: how many payloads (OMB's randomizedPayloadPoolSize; default %d)", DefaultPayloadPool),
			set:  intSetter(func(s *Spec, n int64) { s.PayloadPool = int(n) })},
		{name: "key-size", kind: kindInt, workloads: []Workload{Producer, E2E},
			help: fmt.Sprintf("bytes of each record's key, drawn from --key-count distinct keys (default %d) and partitioned by murmur2 as Kafka's default partitioner does; 0: null keys", KeyPoolSize),
			set:  intSetter(func(s *Spec, n int64) { s.KeySize = int(n) })},
		{name: "key-count", kind: kindInt, workloads: []Workload{Producer, E2E},
			help: fmt.Sprintf("with --key-size: how many distinct keys, 1 to %d", MaxKeyCount),
			set:  intSetter(func(s *Spec, n int64) { s.KeyCount = int(n) })},
		{name: "key-order", kind: kindString, workloads: []Workload{Producer, E2E},
			help:  "with --key-size: how each record picks its key",
			set:   func(s *Spec, v []string) error { s.KeyOrder = v[0]; return nil },
			get:   func(s *Spec) string { return s.KeyOrder },
			unset: []Workload{Producer, E2E}, unsetHelp: KeyOrderRandom,
			choices: []Choice{
				{Value: KeyOrderRandom, Help: "one at random (OMB's RANDOM_NANO)"},
				{Value: KeyOrderRoundRobin, Help: "each producer cycles through them in turn (OMB's KEY_ROUND_ROBIN)"},
			}},
		{name: "headers", kind: kindInt, workloads: []Workload{Producer},
			help: fmt.Sprintf("headers on each record, the same on every record: keys header-000, header-001, … (%d bytes), values of %d uppercase letters", HeaderKeyLen, HeaderValueLen),
			set:  intSetter(func(s *Spec, n int64) { s.Headers = int(n) })},
		{name: "throughput", kind: kindFloat, workloads: []Workload{Producer, E2E},
			help: "maximum records/s across all threads; -1 for no limit (e2e: the fixed rate of rate mode; -1, the default, is Kafka's EndToEndLatency mode, one record at a time)",
			set:  floatSetter(func(s *Spec, f float64) { s.Throughput = f })},
		// Kafka 4.2 (KIP-1147) names the properties --command-property and
		// the file --command-config in every perf tool; kbench takes both.
		{name: "producer-props", aliases: []string{"command-property"}, kind: kindProps, workloads: []Workload{Producer, E2E},
			help: "Kafka producer properties k=v …, overriding --producer.config",
			set:  propsSetter},
		{name: "consumer-props", aliases: []string{"command-property"}, kind: kindProps, workloads: []Workload{Consumer},
			help: "Kafka consumer properties k=v …, overriding --consumer.config",
			set:  propsSetter},
		{name: "producer.config", aliases: []string{"command-config"}, kind: kindString, workloads: []Workload{Producer, E2E},
			help: "Kafka producer properties file", set: configFileSetter},
		{name: "consumer.config", aliases: []string{"command-config"}, kind: kindString, workloads: []Workload{Consumer},
			help: "Kafka consumer properties file", set: configFileSetter},
		{name: "print-metrics", kind: kindBool, workloads: both, help: "print client metrics at the end, in Kafka's layout",
			set: boolSetter(func(s *Spec, b bool) { s.PrintMetrics = b })},
		{name: "warmup-records", kind: kindInt, workloads: both,
			help: "the first of the records counted (--num-records, --messages), sent or consumed before the measured window and in no figure",
			set:  intSetter(func(s *Spec, n int64) { s.WarmupRecords = n })},
		{name: "reporting-interval", kind: kindInt, help: "milliseconds between interval lines",
			set: intSetter(func(s *Spec, n int64) { s.ReportingInterval = n })},
		{name: "partitions", kind: kindInt, help: "partitions of the topic when kbench creates it",
			set: intSetter(func(s *Spec, n int64) { s.Partitions = int(n) })},
		{name: "topics", kind: kindInt, workloads: []Workload{Producer, Consumer, E2E},
			help: "run over N topics, TOPIC-0000 to TOPIC-(N-1), created fresh for it and deleted after; --threads producers per topic, --throughput the total " +
				"(consumer: the records to read are prefilled over them, --messages the total)",
			set: intSetter(func(s *Spec, n int64) { s.Topics = int(n) })},
		{name: "topic-config", kind: kindMap, workloads: []Workload{Producer, E2E},
			help: "with --topics: configs of the topics the run creates, k=v … as kafka-topics --config takes them (OMB's driver topicConfig)",
			set:  mapSetter(func(s *Spec) *map[string]string { return &s.TopicConfig })},
		{name: "replication-factor", kind: kindInt, workloads: []Workload{Producer, E2E},
			help: fmt.Sprintf("with --topics: replicas of each topic the run creates, 1 to %d (OMB's driver replicationFactor); default: the broker's. The embedded broker then runs as that many brokers", MaxReplicationFactor),
			set:  intSetter(func(s *Spec, n int64) { s.ReplicationFactor = int(n) })},
		{name: "subscriptions", kind: kindInt, workloads: []Workload{Consumer, E2E},
			help: "consumer groups that each read every topic, so each record is received once per subscription (OMB's subscriptionsPerTopic; e2e: rate mode with --topics; consumer: --mode group, counts are totals over the subscriptions)",
			set:  intSetter(func(s *Spec, n int64) { s.Subscriptions = int(n) })},
		{name: "consumers-per-subscription", kind: kindInt, workloads: []Workload{Consumer, E2E},
			help: "members of each subscription's group, sharing its partitions (OMB's consumerPerSubscription; e2e: rate mode with --topics; consumer: --mode group)",
			set:  intSetter(func(s *Spec, n int64) { s.ConsumersPerSubscription = int(n) })},
		{name: "groups-per-topic", kind: kindBool, workloads: []Workload{E2E},
			help: "with --subscriptions or --consumers-per-subscription: each subscription is a consumer group per topic, as OMB's are (topics × subscriptions × consumers-per-subscription Readers), rather than one group over every topic",
			set:  boolSetter(func(s *Spec, b bool) { s.GroupsPerTopic = b })},
		{name: "duration-after-drain", kind: kindBool, workloads: []Workload{E2E},
			help: "with --backlog-bytes and --duration: the duration runs from the backlog's drain, as OMB's testDurationMinutes does, so the run lasts the build, the drain and then --duration (without end while the backlog does not drain)",
			set:  boolSetter(func(s *Spec, b bool) { s.DurationAfterDrain = b })},
		{name: "backlog-bytes", kind: kindInt, workloads: []Workload{E2E},
			help: "rate mode: hold the consumer until this many payload bytes wait for it, then let it catch up while the producer goes on, and time the drain (OMB's consumerBacklogSizeGB, in bytes)",
			set:  intSetter(func(s *Spec, n int64) { s.BacklogBytes = n })},
		{name: "backlog-drain-ratio", kind: kindFloat, workloads: []Workload{E2E},
			help: "with --backlog-bytes: the share of the backlog that must drain for the drain to count as done, 0 to 1 (OMB's backlogDrainRatio; default 1, all but 1,000 records)",
			set:  floatSetter(func(s *Spec, f float64) { s.BacklogDrainRatio = f })},
		{name: "threads", kind: kindInt, workloads: []Workload{Producer, E2E},
			help: "parallel producers, each with its own connections; with --topics, per topic (e2e: rate mode only, each producer with its own buffer.memory, OMB's producersPerTopic)",
			set:  intSetter(func(s *Spec, n int64) { s.Threads = int(n) })},
		{name: "notes", kind: kindList,
			help: fmt.Sprintf("a note said in the run's result, as given (repeatable; at most %d of %d characters each): kbench run omb writes what it could not apply there", MaxNotes, MaxNoteLen),
			set:  func(s *Spec, v []string) error { s.Notes = append(s.Notes, v...); return nil }},
		{name: "profile", kind: kindList,
			help: "profiles to capture over the measured window: " + strings.Join(names(ProfileKinds()), ",") + " or none",
			set:  profileSetter},
		profileWindowsOption(),
		{name: "group", kind: kindString, workloads: []Workload{Consumer},
			help: "consumer group id (default perf-consumer-<random>)",
			set:  func(s *Spec, v []string) error { s.Group = v[0]; return nil }},
		{name: "fetch-size", kind: kindInt, workloads: []Workload{Consumer},
			help: "bytes per partition per fetch (max.partition.fetch.bytes)",
			set:  intSetter(func(s *Spec, n int64) { s.FetchSize = int(n) })},
		{name: "timeout", kind: kindInt, workloads: []Workload{Consumer},
			help: "milliseconds without a record before the consumer gives up",
			set:  intSetter(func(s *Spec, n int64) { s.Timeout = n })},
		{name: "from-latest", kind: kindBool, workloads: []Workload{Consumer},
			help: "start at the end of the topic and read only records produced after the start",
			set:  boolSetter(func(s *Spec, b bool) { s.FromLatest = b })},
		{name: "show-detailed-stats", kind: kindBool, workloads: []Workload{Consumer},
			help: "print a row per reporting interval",
			set:  boolSetter(func(s *Spec, b bool) { s.ShowDetailedStats = b })},
		{name: "mode", kind: kindString, workloads: []Workload{Producer, Consumer, E2E},
			help:      "how kafka-go sends or reads (e2e: which measurement; empty: rate mode when --throughput is positive, Kafka's mode otherwise)",
			set:       func(s *Spec, v []string) error { s.Mode = v[0]; return nil },
			get:       func(s *Spec) string { return s.Mode },
			unset:     []Workload{E2E},
			unsetHelp: "kafka, or rate with a positive throughput",
			choices: []Choice{
				{Value: ModeRaw, Workloads: []Workload{Producer}, Help: "record batches kbench encodes, accumulated as KafkaProducer does and sent by kafka-go's Transport: the fastest kafka-go path"},
				{Value: ModeWriter, Workloads: []Workload{Producer}, Help: "kafka-go's Writer, what applications use"},
				{Value: ModeClient, Workloads: []Workload{Producer}, Help: "the same accumulator, with kafka-go's record encoder"},
				{Value: ModeGroup, Workloads: []Workload{Consumer}, Help: "kafka-go's consumer-group Reader"},
				{Value: ModeAssign, Workloads: []Workload{Consumer}, Help: "a connection per partition"},
				{Value: ModeKafka, Workloads: []Workload{E2E}, Help: "Kafka's EndToEndLatency tool: one record produced synchronously, polled back, repeat (--throughput must stay -1)"},
				{Value: ModeRate, Workloads: []Workload{E2E}, Help: "a producer at --throughput records/s, or as fast as it can with -1, and a consumer reading concurrently"},
			}},
	}, writepathOptions()...)
}

func intSetter(f func(*Spec, int64)) func(*Spec, []string) error {
	return func(s *Spec, v []string) error {
		n, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return fmt.Errorf("%q is out of range", v[0])
			}
			return fmt.Errorf("%q is not a whole number", v[0])
		}
		f(s, n)
		return nil
	}
}

// floatSetter parses a finite number. NaN and ±Inf are refused: every range
// check is false for NaN, so it would pass validation and then mean
// something nobody asked for (and a spec holding one cannot be encoded).
func floatSetter(f func(*Spec, float64)) func(*Spec, []string) error {
	return func(s *Spec, v []string) error {
		x, err := strconv.ParseFloat(v[0], 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && math.IsInf(x, 0):
			return fmt.Errorf("%q is out of range", v[0])
		case err != nil && !errors.Is(err, strconv.ErrRange):
			// ErrRange with a finite x is an underflow to (almost) zero,
			// which the range checks judge like any small number.
			return fmt.Errorf("%q is not a number", v[0])
		case math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("%q is not a finite number", v[0])
		}
		f(s, x)
		return nil
	}
}

func boolSetter(f func(*Spec, bool)) func(*Spec, []string) error {
	return func(s *Spec, v []string) error {
		switch strings.ToLower(v[0]) {
		case "true", "1", "yes", "on":
			f(s, true)
		case "false", "0", "no", "off":
			f(s, false)
		default:
			return fmt.Errorf("%q is not true or false", v[0])
		}
		return nil
	}
}

func propsSetter(s *Spec, vals []string) error {
	if len(vals) == 0 {
		return errors.New("needs at least one key=value")
	}
	if s.Props == nil {
		s.Props = map[string]string{}
	}
	for _, kv := range vals {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%q is not key=value", kv)
		}
		s.Props[k] = strings.TrimSpace(v)
	}
	return nil
}

// mapSetter sets a map of k=v pairs (--topic-config): each value
// replaces the key's earlier one.
func mapSetter(field func(*Spec) *map[string]string) func(*Spec, []string) error {
	return func(s *Spec, vals []string) error {
		if len(vals) == 0 {
			return errors.New("needs at least one key=value")
		}
		m := field(s)
		if *m == nil {
			*m = map[string]string{}
		}
		for _, kv := range vals {
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return fmt.Errorf("%q is not key=value", kv)
			}
			(*m)[k] = strings.TrimSpace(v)
		}
		return nil
	}
}

func configFileSetter(s *Spec, v []string) error {
	data, err := os.ReadFile(v[0])
	if err != nil {
		return fmt.Errorf("read %s: %w", v[0], err)
	}
	file, err := ParseProperties(string(data))
	if err != nil {
		return fmt.Errorf("%s: %w", v[0], err)
	}
	// The file is the base; --*-props given earlier or later win over it.
	merged := file
	for k, val := range s.Props {
		merged[k] = val
	}
	s.Props = merged
	s.ConfigFile = v[0]
	return nil
}

func profileSetter(s *Spec, vals []string) error {
	var kinds []string
	for _, v := range vals {
		for _, k := range strings.Split(v, ",") {
			k = strings.TrimSpace(k)
			switch {
			case k == "" || k == "none":
			case ProfileKind(k).Captured():
				kinds = append(kinds, k)
			default:
				return fmt.Errorf("unknown profile %q (want some of %s, or none)", k, strings.Join(names(ProfileKinds()), ","))
			}
		}
	}
	s.Profiles = dedupe(kinds)
	return nil
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func lookupOption(workload Workload, name string) (option, bool) {
	for _, o := range options() {
		if !o.appliesTo(workload) {
			continue
		}
		if o.name == name {
			return o, true
		}
		for _, a := range o.aliases {
			if a == name {
				return o, true
			}
		}
	}
	return option{}, false
}

// ParseArgs parses `kbench run <workload>` arguments with Kafka's flag names:
// --flag value, --flag=value, bare boolean flags, and --producer-props
// followed by any number of key=value arguments. Props from a config file
// are overridden by --*-props regardless of their order, as in Kafka.
func ParseArgs(workload Workload, args []string, checks ...Check) (Spec, error) {
	if !workload.Runnable() {
		return Spec{}, NewFieldError("workload", "unknown workload %q (want producer, consumer, writepath or e2e)", workload)
	}
	return parseArgs(workload, args, nil, checks)
}

// parseArgs is ParseArgs, reading the flags of `kbench run` itself into
// cmd when it is not nil. With no workload (cmd's spec comes from a file)
// only those flags are taken, and no spec is built.
func parseArgs(workload Workload, args []string, cmd *RunCommand, checks []Check) (Spec, error) {
	a := newAssembly(workload)
	// Bad values are collected, so that one attempt reports them all; an
	// argument that cannot be placed ends the parse.
	stop := func(field, format string, args ...any) (Spec, error) {
		a.errs.Add(field, format, args...)
		a.errs.SortByOptions()
		return a.s, a.errs
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "-h" || arg == "--help" || arg == "-help" {
			return a.s, ErrHelp
		}
		if w := Workload(arg); cmd != nil && workload == "" && cmd.SpecFile == "" && w.Runnable() {
			// The workload may follow kbench's own flags
			// (kbench run --out DIR producer …).
			workload, cmd.Workload, a = w, w, newAssembly(w)
			continue
		}
		if cmd != nil && cmd.SpecFile != "" && Workload(arg).Runnable() {
			return stop("spec", "takes the whole spec; give no workload or other flags with it")
		}
		if !strings.HasPrefix(arg, "-") {
			return a.s, fmt.Errorf("unexpected argument %q (flags start with --)", arg)
		}
		name := strings.TrimLeft(arg, "-")
		if name == "" || strings.HasPrefix(name, "=") {
			return a.s, fmt.Errorf("unexpected argument %q (flags look like --name value)", arg)
		}
		var val string
		hasVal := false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, hasVal = k, v, true
		}
		if f, ok := lookupCommandFlag(name); ok && cmd != nil {
			switch {
			case hasVal:
			case i+1 < len(args):
				i++
				val = args[i]
			default:
				return stop(f.name, "needs a value")
			}
			if err := f.set(cmd, val); err != nil {
				a.errs.Add(f.name, "%s", err)
			}
			continue
		}
		if workload == "" {
			if cmd != nil && cmd.SpecFile != "" {
				return stop("spec", "takes the whole spec; give no workload or other flags with it")
			}
			return stop(name, "needs a workload: name one (producer, consumer, writepath or e2e) before the flags, or give --spec FILE")
		}
		o, ok := lookupOption(workload, name)
		if !ok {
			return stop(name, "unknown flag for kbench run %s (see --help)", workload)
		}
		var vals []string
		switch {
		case o.kind.pairs():
			if hasVal {
				vals = append(vals, val)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				vals = append(vals, args[i])
			}
			if len(vals) == 0 {
				return stop(o.name, "needs at least one key=value")
			}
		case hasVal:
			vals = []string{val}
		case o.kind == kindBool:
			vals = []string{"true"}
		case i+1 < len(args):
			i++
			vals = []string{args[i]}
		default:
			return stop(o.name, "needs a value")
		}
		a.take(o, vals)
	}
	if workload == "" {
		return a.s, a.errs.Err()
	}
	return a.spec(workload, checks)
}

// assembly builds a spec from the values given for its options, by flag
// (ParseArgs) or by parameter (SpecFromParams), one way: properties and a
// config file are merged at the end whatever their order, as in Kafka's
// tools, and every bad value is collected.
type assembly struct {
	s                 Spec
	errs              FieldErrors
	configFile, props []string
	given             map[string]bool // JSON keys given a value
}

func newAssembly(workload Workload) *assembly {
	a := &assembly{given: map[string]bool{}}
	if workload != "" {
		a.s = DefaultSpec(workload)
	}
	return a
}

// take gives option o the values vals.
func (a *assembly) take(o option, vals []string) {
	switch {
	case o.kind == kindProps:
		a.props = append(a.props, vals...)
	case strings.HasSuffix(o.name, ".config"):
		a.configFile = vals
	default:
		a.given[o.jsonKey()] = true
		if err := o.apply(&a.s, vals); err != nil {
			a.errs.Add(o.name, "%s", err)
		}
	}
}

// spec finishes the spec of workload: a duration replaces the default
// count, properties are merged, and it is validated (checks after the
// contract's own).
func (a *assembly) spec(workload Workload, checks []Check) (Spec, error) {
	durationReplacesCount(&a.s, a.given)
	return a.s, finish(&a.s, workload, a.configFile, a.props, a.errs, checks)
}

// durationReplacesCount drops the default count of a producer or consumer
// spec given --duration without one: the duration is what ends the run.
func durationReplacesCount(s *Spec, given map[string]bool) {
	if s.Duration > 0 && s.Workload != Writepath && !given["num-records"] {
		s.NumRecords = 0
	}
	// A --payload is the record: its length is the size, unless one
	// was given (validation then holds them together).
	if len(s.Payload) > 0 && !given["record-size"] {
		s.RecordSize = len(s.Payload)
	}
}

// finish merges the properties into s, validates it (with checks after
// the contract's own) and returns every field error found, errs (the
// parse errors) included, in table order.
func finish(s *Spec, workload Workload, configFile, props []string, errs FieldErrors, checks []Check) error {
	if err := errs.Append(applyProps(s, workload, configFile, props)); err != nil {
		return err
	}
	s.validate(&errs, checks)
	errs.SortByOptions()
	return errs.Err()
}

// applyProps merges a config file and --*-props into s.Props, props last.
func applyProps(s *Spec, workload Workload, configFile, props []string) error {
	if configFile != nil {
		if err := configFileSetter(s, configFile); err != nil {
			return &FieldError{Field: strings.TrimSuffix(PropsFlag(workload), "-props") + ".config", Msg: err.Error()}
		}
	}
	if props != nil {
		if err := propsSetter(s, props); err != nil {
			return &FieldError{Field: PropsFlag(workload), Msg: err.Error()}
		}
	}
	return nil
}

// SpecFromParams builds a spec from JSON params keyed by flag name, the
// form the API and the server's spec files use. Values may be JSON numbers,
// booleans or strings; props may be an object or a list of "k=v".
func SpecFromParams(workload Workload, params map[string]json.RawMessage, checks ...Check) (Spec, error) {
	if !workload.Runnable() {
		return Spec{}, NewFieldError("workload", "unknown workload %q (want producer, consumer, writepath or e2e)", workload)
	}
	a := newAssembly(workload)
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic: the first bad field is always the same one
	for _, name := range names {
		if name == "cluster" {
			a.s.Cluster = clusterParam(params[name], &a.errs)
			continue
		}
		if name == "tool" {
			a.s.Tool = toolParam(params[name], &a.errs)
			continue
		}
		if name == "shard" {
			a.s.Shard = shardParam(params[name], &a.errs)
			continue
		}
		if name == "workers" {
			if err := json.Unmarshal(params[name], &a.s.Workers); err != nil {
				a.errs.Add("workers", "want a whole number of workers")
			}
			continue
		}
		o, ok := lookupOption(workload, name)
		if !ok && name == "props" {
			o, ok = lookupOption(workload, PropsFlag(workload))
		}
		switch {
		case !ok && name == "":
			a.errs.Add("params", "a parameter has an empty name")
			continue
		case !ok:
			a.errs.Add(name, "unknown parameter for workload %s", workload)
			continue
		}
		vals, err := rawToStrings(params[name], o.kind)
		if err != nil {
			a.errs.Add(o.name, "%s", err)
			continue
		}
		a.take(o, vals)
	}
	return a.spec(workload, checks)
}

func rawToStrings(raw json.RawMessage, kind optKind) ([]string, error) {
	// Numbers keep their literal text: through float64, 12345678901234567
	// would become …68 and 1e999 +Inf.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON value: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON value: data after the value")
	}
	scalar := func(x any) (string, error) {
		switch x := x.(type) {
		case string:
			return x, nil
		case json.Number:
			return numberText(x), nil
		case bool:
			return fmt.Sprint(x), nil
		}
		return "", fmt.Errorf("want a string, number or boolean, got %s", string(raw))
	}
	switch x := v.(type) {
	case map[string]any:
		if !kind.pairs() {
			return nil, fmt.Errorf("want a single value, got an object")
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]string, 0, len(keys))
		for _, k := range keys {
			sv, err := scalar(x[k])
			if err != nil {
				return nil, fmt.Errorf("property %s: %v", k, err)
			}
			out = append(out, k+"="+sv)
		}
		return out, nil
	case []any:
		if !kind.pairs() && kind != kindList {
			return nil, fmt.Errorf("want a single value, got a list")
		}
		out := make([]string, 0, len(x))
		for _, e := range x {
			sv, err := scalar(e)
			if err != nil {
				return nil, err
			}
			out = append(out, sv)
		}
		return out, nil
	case nil:
		return nil, fmt.Errorf("must not be null")
	default:
		sv, err := scalar(x)
		if err != nil {
			return nil, err
		}
		return []string{sv}, nil
	}
}

// numberText is a JSON number as the flag parsers take it: its literal,
// except that a whole number written as a float (1e3, 20.0) reads as the
// integer, when float64 holds it exactly, so int flags accept it as before.
func numberText(n json.Number) string {
	s := n.String()
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return s
}

func trimFloat(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprint(f)
}

// Check is validation of a spec beyond the contract's, made by whoever
// runs it: runner.Validate adds the mapping of Kafka properties onto its
// client. It adds its errors to errs, which already holds the contract's;
// those of a field whose value did not parse are dropped.
type Check func(s *Spec, errs *FieldErrors)

// Validate checks ranges and combinations, then runs checks, and reports
// every bad field (a FieldErrors) in the option table's order. Kafka
// properties are checked by the client that takes them
// (runner.Validate), which also names them.
func (s *Spec) Validate(checks ...Check) error {
	var errs FieldErrors
	s.validate(&errs, checks)
	errs.SortByOptions()
	return errs.Err()
}

// validate adds the spec's field errors to errs: every rule a field
// breaks. A field that already has one (its value did not parse) is not
// judged again, as what it holds is not what was given, and checks across
// fields are made only when the fields they read are valid.
func (s *Spec) validate(errs *FieldErrors, checks []Check) {
	parsed := len(*errs)
	unparsed := map[string]bool{}
	for _, fe := range *errs {
		unparsed[fe.Field] = true
	}
	defer func() {
		kept := (*errs)[:parsed]
		for _, fe := range (*errs)[parsed:] {
			if !unparsed[fe.Field] {
				kept = append(kept, fe)
			}
		}
		*errs = kept
	}()
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs.Add(field, format, args...)
		}
	}
	if err := CheckTopic(s.Topic); err != nil {
		errs.Add("topic", "%v", err)
	}
	s.validatePropNames(errs)
	check(s.ReportingInterval < 100, "reporting-interval", "must be at least 100 ms, got %d", s.ReportingInterval)
	check(s.Partitions < 1 || s.Partitions > 10000, "partitions", "must be between 1 and 10000, got %d", s.Partitions)
	check(s.Topics < 0 || s.Topics > MaxTopics, "topics", "must be between 1 and %d, got %d", MaxTopics, s.Topics)
	s.validateTopicShape(errs)
	if s.Topics > 0 && len(s.Topic)+len("-0000") > 249 {
		errs.Add("topics", "the topics' names, %s-0000 and on, are longer than Kafka's 249 characters", s.Topic)
	}
	check(s.Duration < 0, "duration", "must be positive seconds, got %v", s.Duration)
	check(s.Duration > 0 && s.Duration < MinDuration, "duration", "must be at least %v s, got %v", MinDuration, s.Duration)
	check(s.Duration > MaxDuration, "duration", "must be at most %v s (7 days), got %v", MaxDuration, s.Duration)
	s.validateNotes(errs)
	s.validateShard(errs)
	s.validateFleet(errs)
	check(s.ProfileWindows == ProfileWindowsOn && !slices.Contains(s.Profiles, string(KindCPU)), "profile-windows",
		"windows a cpu profile: give --profile cpu with it")
	if s.Workload == Writepath {
		s.validateWritepath(errs)
	} else {
		s.validateClient(errs)
	}
	// The checks only add errors to fields the contract leaves alone
	// (runner's: the properties), so they may come after it.
	for _, c := range checks {
		c(s, errs)
	}
	// Closed sets last, so that a specific message (--acks 0) stands
	// alone.
	for _, o := range options() {
		if len(o.choices) > 0 && o.appliesTo(s.Workload) {
			v := o.get(s)
			if v == "" && slices.Contains(o.unset, s.Workload) {
				continue
			}
			check(!errs.Has(o.name) && !o.allows(s.Workload, v), o.name, "must be %s, got %q", o.choiceList(s.Workload, false), v)
		}
	}
}

// MaxNotes and MaxNoteLen bound --notes: they are stored with the spec.
const (
	MaxNotes   = 100
	MaxNoteLen = 2000
)

// validateNotes adds the error of the first note that is too long or
// holds a control character, or of too many notes.
func (s *Spec) validateNotes(errs *FieldErrors) {
	if len(s.Notes) > MaxNotes {
		errs.Add("notes", "at most %d notes, got %d", MaxNotes, len(s.Notes))
		return
	}
	for i, n := range s.Notes {
		switch {
		case strings.TrimSpace(n) == "":
			errs.Add("notes", "note %d is empty", i+1)
		case utf8.RuneCountInString(n) > MaxNoteLen || !utf8.ValidString(n):
			errs.Add("notes", "note %d is not UTF-8 text of at most %d characters", i+1, MaxNoteLen)
		case strings.ContainsFunc(n, unicode.IsControl):
			errs.Add("notes", "note %d holds a control character: a note is one line", i+1)
		default:
			continue
		}
		return
	}
}

// validatePropNames adds the first property whose name or value is not
// one a Java client reads (CheckPropKey, CheckPropValue) under the
// workload's props flag: every spec, wherever it comes from, is checked
// before its properties reach a tool's command line or a properties file.
func (s *Spec) validatePropNames(errs *FieldErrors) {
	if err := CheckProps(s.Props); err != nil {
		errs.Add(PropsFlag(s.Workload), "%v", err)
	}
}

// validateClient adds the errors of the producer's and the consumer's own
// flags.
func (s *Spec) validateClient(errs *FieldErrors) {
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs.Add(field, format, args...)
		}
	}
	count := countFlag(s.Workload)
	if s.Duration > 0 {
		check(!errs.Has(count) && s.NumRecords > 0, "duration", "give --%s or --duration, not both", count)
		check(s.NumRecords < 0, count, "must be at least 1, got %d", s.NumRecords)
	} else {
		check(s.NumRecords <= 0, count, "must be at least 1, got %d", s.NumRecords)
	}
	check(s.RecordSize <= 0 && s.PayloadFile == "", "record-size", "must be at least 1 byte, got %d", s.RecordSize)
	check(s.RecordSize > 64<<20, "record-size", "must be at most 64 MiB, got %d", s.RecordSize)
	check(s.Throughput == 0 || (s.Throughput < 0 && s.Throughput != -1), "throughput",
		"must be positive records/s, or -1 for no limit, got %v", s.Throughput)
	check(s.Throughput > 0 && s.Throughput < MinRate, "throughput",
		"must be at least %v records/s, or -1 for no limit, got %v", MinRate, s.Throughput)
	check(s.WarmupRecords < 0, "warmup-records", "must not be negative, got %d", s.WarmupRecords)
	check(!errs.Has(count) && s.NumRecords > 0 && s.WarmupRecords >= s.NumRecords, "warmup-records",
		"must be fewer than --%s (%d), which include them, got %d", count, s.NumRecords, s.WarmupRecords)
	check(s.Threads < 1 || s.Threads > 256, "threads", "must be between 1 and 256, got %d", s.Threads)
	if s.Workload == E2E {
		s.validateE2E(errs)
	}
	if s.Workload == Consumer {
		check(s.FetchSize < 1, "fetch-size", "must be at least 1 byte, got %d", s.FetchSize)
		check(s.Timeout < 1, "timeout", "must be at least 1 ms, got %d", s.Timeout)
		check(s.FromLatest && s.Mode == ModeAssign, "from-latest", "only applies to --mode group")
		s.validateConsumerGroups(errs)
		if err := CheckGroup(s.Group); err != nil {
			errs.Add("group", "%v", err)
		}
	}
	s.validatePayload(errs)
	if e := s.PayloadEntropy; e != nil {
		check(*e < 0 || *e > 1, "payload-entropy", "must be between 0 and 1, got %v", *e)
		check(s.PayloadFile != "", "payload-entropy", "applies to generated payloads; give --payload-file or --payload-entropy, not both")
	}
	check(s.KeySize < 0 || s.KeySize > MaxKeySize, "key-size", "must be between 0 (null keys) and %d bytes, got %d", MaxKeySize, s.KeySize)
	check(s.Headers < 0 || s.Headers > MaxHeaders, "headers", "must be between 0 and %d, got %d", MaxHeaders, s.Headers)
}

// validatePayload adds the errors of --payload, --payload-random-ratio,
// --payload-pool and the keys' --key-count and --key-order: one way of
// making values at a time, and pools that fit in memory.
func (s *Spec) validatePayload(errs *FieldErrors) {
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs.Add(field, format, args...)
		}
	}
	if len(s.Payload) > 0 {
		check(len(s.Payload) > MaxPayloadBytes, "payload", "is %d bytes, over %d", len(s.Payload), MaxPayloadBytes)
		check(s.PayloadFile != "", "payload", "give --payload or --payload-file, not both")
		check(s.PayloadEntropy != nil || s.PayloadRandomRatio != nil, "payload", "is the one value of every record: give it or a generated payload (--payload-entropy, --payload-random-ratio), not both")
		check(!errs.Has("record-size") && s.RecordSize != len(s.Payload), "payload", "is %d bytes, and --record-size %d: give the same size, or leave --record-size out", len(s.Payload), s.RecordSize)
	}
	if r := s.PayloadRandomRatio; r != nil {
		check(*r < 0 || *r > 1, "payload-random-ratio", "must be between 0 and 1, got %v", *r)
		check(s.PayloadFile != "" || s.PayloadEntropy != nil, "payload-random-ratio", "applies to generated payloads; give one of --payload-file, --payload-entropy and --payload-random-ratio")
		pool := s.PayloadPoolSize()
		check(pool < 1 || pool > MaxPayloadPool, "payload-pool", "must be between 1 and %d, got %d", MaxPayloadPool, pool)
		check(!errs.Has("record-size") && pool > 0 && int64(pool)*int64(s.RecordSize) > MaxPayloadPoolSize, "payload-pool",
			"%d payloads of %d bytes are over %d MiB, built before the run", pool, s.RecordSize, MaxPayloadPoolSize>>20)
	} else {
		check(s.PayloadPool != 0, "payload-pool", "applies with --payload-random-ratio")
	}
	if s.KeySize == 0 {
		check(s.KeyCount != 0, "key-count", "applies with --key-size")
		check(s.KeyOrder != "", "key-order", "applies with --key-size")
		return
	}
	check(s.KeyCount < 0 || s.KeyCount > MaxKeyCount, "key-count", "must be between 1 and %d, got %d", MaxKeyCount, s.KeyCount)
	check(!errs.Has("key-size") && s.KeyCount > 0 && int64(s.KeyCount)*int64(s.KeySize) > MaxKeyBytes, "key-count",
		"%d keys of %d bytes are over %d MiB, built before the run", s.KeyCount, s.KeySize, MaxKeyBytes>>20)
}

// PayloadPoolSize is how many payloads --payload-random-ratio makes:
// --payload-pool, DefaultPayloadPool when not given.
func (s *Spec) PayloadPoolSize() int {
	if s.PayloadPool == 0 {
		return DefaultPayloadPool
	}
	return s.PayloadPool
}

// Keys is how many distinct keys a run with --key-size draws from.
func (s *Spec) Keys() int {
	if s.KeyCount == 0 {
		return KeyPoolSize
	}
	return s.KeyCount
}

// countFlag is the flag of a workload's record count, as Kafka's tool
// for it names it.
func countFlag(workload Workload) string {
	if workload == Consumer {
		return "messages"
	}
	return "num-records"
}

// Usage describes the flags of a workload, for --help; runner.Usage adds
// the Kafka properties its client understands.
func Usage(workload Workload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: kbench run %s [flags]\n\n", workload)
	d := DefaultSpec(workload)
	for _, o := range options() {
		if !o.appliesTo(workload) {
			continue
		}
		names := "--" + o.name
		for _, a := range o.aliases {
			names += ", --" + a
		}
		fmt.Fprintf(&b, "  %-36s %s%s\n", names, o.fullHelp(workload), defaultNote(d, o.jsonKey()))
	}
	b.WriteString("\n" + commandUsage())
	return b.String()
}

func defaultNote(d Spec, name string) string {
	if v := defaultValue(d, name); v != "" {
		return " (default " + v + ")"
	}
	return ""
}

// Flag describes one option of `kbench run`, for building forms and docs.
type Flag struct {
	Name      string
	Aliases   []string
	Kind      string     // string, int, float, bool, list, props
	Workloads []Workload // the workloads it applies to
	Help      string
	// Default is the default value as text, "" when there is none: the
	// first workload's, when Defaults differ.
	Default string
	// Defaults are the defaults by workload.
	Defaults map[Workload]string
	// Choices is the closed set of values the flag takes; nil: any.
	Choices []Choice
}

// Flags lists every option of `kbench run` in the order --help shows them.
func Flags() []Flag {
	kinds := map[optKind]string{kindString: "string", kindInt: "int", kindFloat: "float", kindBool: "bool", kindList: "list", kindProps: "props", kindMap: "props"}
	var out []Flag
	for _, o := range options() {
		ws := o.workloads
		if ws == nil {
			ws = Workloads()
		}
		f := Flag{Name: o.name, Aliases: o.aliases, Kind: kinds[o.kind], Workloads: ws, Help: o.fullHelp(""),
			Defaults: map[Workload]string{}, Choices: o.choices}
		for _, w := range ws {
			d := defaultValue(DefaultSpec(w), o.jsonKey())
			if d == "" && slices.Contains(o.unset, w) {
				d = o.unsetHelp
			}
			f.Defaults[w] = d
			if f.Default == "" {
				f.Default = d
			}
		}
		out = append(out, f)
	}
	return out
}

// defaultValue is the default of a flag as text, read from the spec's JSON
// so it can never disagree with DefaultSpec.
func defaultValue(s Spec, name string) string {
	params, err := s.Params()
	if err != nil {
		// DefaultSpec is a constant of this package: it always encodes.
		panic(fmt.Sprintf("rundoc: default spec of %s: %v", s.Workload, err))
	}
	raw, ok := params[name]
	if !ok {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		panic(fmt.Sprintf("rundoc: default of --%s: %v", name, err))
	}
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	case float64:
		return trimFloat(v)
	case bool:
		if !v {
			return ""
		}
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// Targets lists the bootstrap servers the spec points at: --bootstrap-server,
// else bootstrap.servers from its properties; none means the embedded broker.
func (s Spec) Targets() []string {
	if s.BootstrapServer != "" {
		return SplitServers(s.BootstrapServer)
	}
	return SplitServers(s.Props["bootstrap.servers"])
}

// SplitServers reads a bootstrap-server list: comma-separated, spaces
// and empty entries ignored.
func SplitServers(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// MaxReplicationFactor bounds --replication-factor (Kafka's is the
// number of brokers, which no cluster kbench targets exceeds);
// MaxTopicConfigs bounds --topic-config's pairs.
const (
	MaxReplicationFactor = 16
	MaxTopicConfigs      = 100
)

// validateTopicShape adds the errors of --topic-config and
// --replication-factor: they shape the topics the run creates, so they
// need --topics; the configs' names and values are checked as
// properties are, since a tool's command line may carry them.
func (s *Spec) validateTopicShape(errs *FieldErrors) {
	if len(s.TopicConfig) > 0 {
		switch {
		case s.Topics == 0:
			errs.Add("topic-config", "applies to the topics the run creates: give --topics")
		case len(s.TopicConfig) > MaxTopicConfigs:
			errs.Add("topic-config", "at most %d configs, got %d", MaxTopicConfigs, len(s.TopicConfig))
		default:
			if err := CheckProps(s.TopicConfig); err != nil {
				errs.Add("topic-config", "%v", err)
			}
		}
	}
	switch {
	case s.ReplicationFactor < 0 || s.ReplicationFactor > MaxReplicationFactor:
		errs.Add("replication-factor", "must be between 1 and %d, got %d", MaxReplicationFactor, s.ReplicationFactor)
	case s.ReplicationFactor > 0 && s.Topics == 0:
		errs.Add("replication-factor", "applies to the topics the run creates: give --topics")
	}
}

// EmbeddedBrokers is how many brokers the embedded broker runs as for
// the spec: as many as its topics' replicas, one by default.
func (s *Spec) EmbeddedBrokers() int { return max(1, s.ReplicationFactor) }

// MaxTopics bounds --topics; MaxEmbeddedTopics is the bound on the
// embedded broker, which keeps every record of every topic in memory.
const (
	MaxTopics         = 10000
	MaxEmbeddedTopics = 64
)

// TopicNames are the topics the run uses: TOPIC-0000 to TOPIC-(N-1) with
// --topics N (four digits: names sort in their order), else the one
// --topic.
func (s *Spec) TopicNames() []string {
	if s.Topics == 0 {
		return []string{s.Topic}
	}
	names := make([]string, s.Topics)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", s.Topic, i)
	}
	return names
}
