package ombwork

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// DefaultTopic is the prefix of the topics an OMB run creates
// (kbench-omb-0000, …), fresh for the run and deleted after it.
const DefaultTopic = "kbench-omb"

// Options are what the caller adds to the files.
type Options struct {
	// Payload is the contents of the workload's payloadFile: the file
	// `kbench run omb` read, or on a server the request's payload
	// parameter (a request never names a file on the server's disk). nil
	// when there is none.
	Payload []byte
	// PayloadFrom says where Payload came from, for the notes.
	PayloadFrom string
	// NoPayload says how to give the payload when payloadFile is set and
	// Payload is nil: the caller's words (a command line and a request
	// give it differently).
	NoPayload string
	// Duration and Warmup, when set, replace testDurationMinutes and
	// warmupDurationMinutes, in seconds: OMB's are whole minutes.
	Duration, Warmup *float64
	// Applies is the runner's word on a Kafka client property for e2e
	// rate mode's producers (consumer false) or its subscriptions'
	// consumers (consumer true): notApplied says why they do not apply
	// key=value as Java's client would ("" when they do), err that the
	// value is one the property never takes (runner.E2ERateApplies).
	// Required.
	Applies func(consumer bool, key, value string) (notApplied string, err error)
}

// Translation is an OMB workload and driver as a kbench e2e run in rate
// mode.
type Translation struct {
	// Params are the run's, keyed by flag name, for
	// rundoc.SpecFromParams; "notes" holds the Notes.
	Params map[string]json.RawMessage
	// Bootstrap is commonConfig's bootstrap.servers, "" when it gives
	// none (the embedded broker): the run's target, which the caller
	// puts in the spec (--bootstrap-server) unless it is given another,
	// and which must pass its target policy like any bootstrap server.
	Bootstrap string
	// Origin maps each param to the field of the files it came from, so
	// that an error about a param names the field (Remap).
	Origin map[string]string
	// NotApplied are the driver's properties kbench's client does not
	// apply, each with why; the Notes say them too.
	NotApplied []string
	// Notes say how the files were read; they are the run's first.
	Notes []string
	// Unthrottled is producerRate 0: OMB's search for the highest
	// sustainable rate, which kbench runs as a maximum-throughput run.
	Unthrottled bool
}

// Remap renames the fields of err's field errors that are params of the
// translation to the fields of the files they came from: an error about
// "topics" is one about omb-workload.topics. Other errors pass as they
// are.
func (t *Translation) Remap(err error) error {
	var fes rundoc.FieldErrors
	var fe *rundoc.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fes):
		out := make(rundoc.FieldErrors, 0, len(fes))
		for _, e := range fes {
			out = append(out, t.remapOne(e))
		}
		return out
	case errors.As(err, &fe):
		return t.remapOne(fe)
	}
	return err
}

func (t *Translation) remapOne(fe *rundoc.FieldError) *rundoc.FieldError {
	if to, ok := t.Origin[fe.Field]; ok {
		return &rundoc.FieldError{Field: to, Msg: fe.Msg + " (kbench's --" + fe.Field + ")"}
	}
	return fe
}

// translator holds a translation under way.
type translator struct {
	w    *Workload
	d    *Driver
	opts Options
	t    *Translation
	errs rundoc.FieldErrors
	// notes and notApplied, in the order they are found.
	notes []string
}

func (x *translator) werr(field, format string, args ...any) {
	x.errs.Add(FieldWorkload+"."+field, format, args...)
}

func (x *translator) derr(field, format string, args ...any) {
	x.errs.Add(FieldDriver+"."+field, format, args...)
}

// set gives param name the value v (JSON-encoded), from field origin.
func (x *translator) set(name string, v any, origin string) {
	data, err := json.Marshal(v)
	if err != nil {
		// Values here are numbers, strings, booleans and maps of
		// strings, checked finite: never unencodable.
		panic(fmt.Sprintf("ombwork: encode %s: %v", name, err))
	}
	x.t.Params[name] = data
	x.t.Origin[name] = origin
}

// Translate makes an e2e rate-mode run of workload w with driver d. A
// field kbench cannot honour is an error naming it (a
// rundoc.FieldErrors of every such field, omb-workload.<field> or
// omb-driver.<field>); the driver's client properties kbench does not
// apply are listed (NotApplied, and the notes).
func Translate(w *Workload, d *Driver, opts Options) (*Translation, error) {
	if opts.Applies == nil {
		return nil, errors.New("ombwork: Translate needs Options.Applies, the runner's word on Kafka properties")
	}
	x := &translator{w: w, d: d, opts: opts, t: &Translation{Params: map[string]json.RawMessage{}, Origin: map[string]string{}}}
	x.shape()
	x.payload()
	x.keys()
	x.rate()
	x.durations()
	x.topics()
	x.properties()
	x.errs.SortBy(slices.Concat(workloadOrder, prefixed(FieldDriver, "name", "driverClass", "replicationFactor", "topicConfig", "commonConfig", "producerConfig", "consumerConfig")))
	if err := x.errs.Err(); err != nil {
		return nil, err
	}
	x.t.Notes = append([]string{x.summary()}, x.notes...)
	x.t.Notes = append(x.t.Notes, notAppliedNotes(x.t.NotApplied)...)
	x.t.Notes = append(x.t.Notes, "kbench runs OMB's clients as its own: kafka-go in one process (kbench's raw producer and kafka-go Readers), where OMB runs Java clients on its workers; "+
		"its end-to-end latency is timed from a nanosecond stamp in each value, where OMB reads the record's millisecond timestamp")
	x.set("notes", x.t.Notes, FieldWorkload+".name")
	return x.t, nil
}

// summary is the first note: what the files were and what kbench runs.
func (x *translator) summary() string {
	w, d := x.w, x.d
	name := func(s, what string) string {
		if s == "" {
			return "an unnamed " + what
		}
		return fmt.Sprintf("%s %q", what, s)
	}
	return fmt.Sprintf("OpenMessaging Benchmark: %s with %s, run as kbench's e2e rate mode: %d topic(s) of %d partition(s), %d producer(s) per topic, "+
		"%d subscription(s) per topic of %d consumer(s) each (a consumer group per topic and subscription), %d-byte messages",
		name(w.Name, "workload"), name(d.Name, "driver"), w.Topics, w.PartitionsPerTopic, w.ProducersPerTopic,
		w.SubscriptionsPerTopic, w.ConsumerPerSubscription, w.MessageSize)
}

// shape translates the topics, partitions, producers, subscriptions and
// the message size.
func (x *translator) shape() {
	w := x.w
	positive := func(field string, n, hi int, why string) bool {
		switch {
		case n < 1:
			x.werr(field, "must be at least 1, got %d%s", n, why)
		case n > hi:
			x.werr(field, "must be at most %d in kbench, got %d", hi, n)
		default:
			return true
		}
		return false
	}
	topicsOK := positive("topics", w.Topics, rundoc.MaxTopics, "")
	positive("partitionsPerTopic", w.PartitionsPerTopic, 10000, "")
	prodOK := positive("producersPerTopic", w.ProducersPerTopic, 256, ": kbench runs producers")
	subsOK := positive("subscriptionsPerTopic", w.SubscriptionsPerTopic, rundoc.MaxSubscriptionMembers,
		": kbench's e2e run measures from the producer to a subscription (kbench run producer measures producers alone)")
	consOK := positive("consumerPerSubscription", w.ConsumerPerSubscription, rundoc.MaxSubscriptionMembers, "")
	switch {
	case w.MessageSize < rundoc.E2EStampBytes:
		x.werr("messageSize", "must be at least %d bytes in kbench, got %d: each of its records carries its sequence number and send times in its first %d bytes",
			rundoc.E2EStampBytes, w.MessageSize, rundoc.E2EStampBytes)
	case w.MessageSize > 64<<20:
		x.werr("messageSize", "must be at most 64 MiB in kbench, got %d", w.MessageSize)
	}
	if topicsOK && prodOK && w.Topics*w.ProducersPerTopic > rundoc.MaxE2EProducers {
		x.werr("producersPerTopic", "%d topics × %d producers make %d producers, more than the %d kbench runs in one process",
			w.Topics, w.ProducersPerTopic, w.Topics*w.ProducersPerTopic, rundoc.MaxE2EProducers)
	}
	if topicsOK && subsOK && consOK {
		if n := w.Topics * w.SubscriptionsPerTopic * w.ConsumerPerSubscription; n > rundoc.MaxE2EReaders {
			x.werr("consumerPerSubscription", "%d topics × %d subscriptions × %d consumers make %d consumers, more than the %d kbench runs in one process",
				w.Topics, w.SubscriptionsPerTopic, w.ConsumerPerSubscription, n, rundoc.MaxE2EReaders)
		}
	}
	x.set("mode", rundoc.ModeRate, FieldWorkload)
	x.set("topic", DefaultTopic, FieldWorkload)
	x.set("topics", w.Topics, FieldWorkload+".topics")
	x.set("partitions", w.PartitionsPerTopic, FieldWorkload+".partitionsPerTopic")
	x.set("threads", w.ProducersPerTopic, FieldWorkload+".producersPerTopic")
	x.set("subscriptions", w.SubscriptionsPerTopic, FieldWorkload+".subscriptionsPerTopic")
	x.set("consumers-per-subscription", w.ConsumerPerSubscription, FieldWorkload+".consumerPerSubscription")
	// OMB names a subscription per topic (sub-000-… for each topic).
	x.set("groups-per-topic", true, FieldWorkload+".subscriptionsPerTopic")
	x.set("record-size", w.MessageSize, FieldWorkload+".messageSize")
}

// payload translates the message's value: OMB's randomized payloads, or
// its payload file, whose contents the caller gives.
func (x *translator) payload() {
	w := x.w
	if w.UseRandomizedPayloads {
		pool := w.RandomizedPayloadPoolSize
		switch {
		case pool < 1:
			x.werr("randomizedPayloadPoolSize", "must be at least 1 with useRandomizedPayloads, got %d: OMB draws each message from this pool", pool)
		case pool > rundoc.MaxPayloadPool:
			x.werr("randomizedPayloadPoolSize", "must be at most %d in kbench, got %d", rundoc.MaxPayloadPool, pool)
		case int64(pool)*int64(w.MessageSize) > rundoc.MaxPayloadPoolSize:
			x.werr("randomizedPayloadPoolSize", "%d payloads of %d bytes are over %d MiB, which kbench builds before the run", pool, w.MessageSize, rundoc.MaxPayloadPoolSize>>20)
		}
		x.set("payload-random-ratio", w.RandomBytesRatio, FieldWorkload+".randomBytesRatio")
		x.set("payload-pool", pool, FieldWorkload+".randomizedPayloadPoolSize")
		note := fmt.Sprintf("useRandomizedPayloads: a pool of %d payloads, each %d random bytes (randomBytesRatio %v of %d) then zeros, one picked at random per message, as OMB makes them; kbench's stamp takes each value's first %d bytes",
			pool, int(float64(w.MessageSize)*w.RandomBytesRatio), w.RandomBytesRatio, w.MessageSize, rundoc.E2EStampBytes)
		if w.PayloadFile != "" {
			note += fmt.Sprintf("; payloadFile %s is not read, as OMB does not read it with randomized payloads", quoted(w.PayloadFile))
		}
		x.notes = append(x.notes, note)
		return
	}
	switch {
	case w.PayloadFile == "":
		x.werr("payloadFile", "must be given unless useRandomizedPayloads is true: OMB sends its contents as every message")
		return
	case x.opts.Payload == nil:
		msg := x.opts.NoPayload
		if msg == "" {
			msg = "its contents are needed"
		}
		x.werr("payloadFile", "%s: %s", quoted(w.PayloadFile), msg)
		return
	case len(x.opts.Payload) != w.MessageSize:
		x.werr("payloadFile", "%s is %d bytes, and messageSize %d: OMB refuses a payload of another length", quoted(w.PayloadFile), len(x.opts.Payload), w.MessageSize)
		return
	case len(x.opts.Payload) > rundoc.MaxPayloadBytes:
		x.werr("payloadFile", "%s is %d bytes, more than the %d kbench takes as one payload", quoted(w.PayloadFile), len(x.opts.Payload), rundoc.MaxPayloadBytes)
		return
	}
	x.set("payload", base64.StdEncoding.EncodeToString(x.opts.Payload), FieldWorkload+".payloadFile")
	from := ""
	if x.opts.PayloadFrom != "" {
		from = " (" + x.opts.PayloadFrom + ")"
	}
	x.notes = append(x.notes, fmt.Sprintf("payloadFile %s: its %d bytes%s are every message's value; kbench's stamp takes their first %d bytes",
		quoted(w.PayloadFile), len(x.opts.Payload), from, rundoc.E2EStampBytes))
}

// keys translates the key distributor: OMB's 10,000 keys of 10
// characters, taken in turn or at random.
func (x *translator) keys() {
	order := ""
	switch x.w.KeyDistributor {
	case KeyRoundRobin:
		order = rundoc.KeyOrderRoundRobin
	case KeyRandomNano:
		order = rundoc.KeyOrderRandom
	default:
		return // NO_KEY: null keys, kbench's default
	}
	origin := FieldWorkload + ".keyDistributor"
	x.set("key-size", ombKeySize, origin)
	x.set("key-count", ombKeyCount, origin)
	x.set("key-order", order, origin)
	x.notes = append(x.notes, fmt.Sprintf("keyDistributor %s: %d keys of %d characters, %s, partitioned by murmur2 as Kafka's default partitioner does; OMB's keys are random URL-safe base64, kbench's random uppercase letters",
		x.w.KeyDistributor, ombKeyCount, ombKeySize, map[string]string{rundoc.KeyOrderRoundRobin: "each producer taking them in turn", rundoc.KeyOrderRandom: "one at random per message"}[order]))
}

// rate translates producerRate and the backlog.
func (x *translator) rate() {
	w := x.w
	if w.ProducerRate == 0 {
		x.t.Unthrottled = true
		x.set("throughput", -1, FieldWorkload+".producerRate")
		x.notes = append(x.notes, "producerRate 0: OMB searches for the highest rate its consumers keep up with; kbench runs unthrottled instead, each producer as fast as it can: "+
			"a maximum-throughput run, whose latency is that of a saturated client (for the highest rate a latency target allows, use kbench's latency-target search)")
	} else {
		x.set("throughput", w.ProducerRate, FieldWorkload+".producerRate")
		x.notes = append(x.notes, fmt.Sprintf("producerRate %d messages/s in all, shared by the %d producer(s), each sending its share on a fixed schedule", w.ProducerRate, w.Topics*w.ProducersPerTopic))
	}
	if w.ConsumerBacklogSizeGB == 0 {
		return
	}
	if w.ProducerRate == 0 {
		x.werr("consumerBacklogSizeGB", "needs a producerRate: OMB refuses to build a backlog while it searches for a rate (producerRate 0)")
		return
	}
	if w.BacklogDrainRatio <= 0 {
		x.werr("backlogDrainRatio", "must be above 0 in kbench, got %v: its backlog waits for a share of the backlog to drain", w.BacklogDrainRatio)
		return
	}
	origin := FieldWorkload + ".consumerBacklogSizeGB"
	x.set("backlog-bytes", w.ConsumerBacklogSizeGB<<30, origin)
	if w.BacklogDrainRatio != 1 {
		x.set("backlog-drain-ratio", w.BacklogDrainRatio, FieldWorkload+".backlogDrainRatio")
	}
	x.set("duration-after-drain", true, origin)
	x.notes = append(x.notes, fmt.Sprintf("consumerBacklogSizeGB %d: after the warm-up the consumers are held until %d GiB wait for them, then let go while the producers go on; "+
		"the test duration runs from the backlog's drain (backlogDrainRatio %v), as OMB's does", w.ConsumerBacklogSizeGB, w.ConsumerBacklogSizeGB, w.BacklogDrainRatio))
}

// durations translates testDurationMinutes and warmupDurationMinutes,
// or the caller's overrides in seconds.
func (x *translator) durations() {
	w := x.w
	if d := x.opts.Duration; d != nil {
		x.set("duration", *d, "duration")
		x.notes = append(x.notes, fmt.Sprintf("duration: %v s, given in place of testDurationMinutes %d", *d, w.TestDurationMinutes))
	} else if w.TestDurationMinutes < 1 {
		x.werr("testDurationMinutes", "must be at least 1, got %d: OMB would run without end (or give a duration in seconds)", w.TestDurationMinutes)
	} else {
		x.set("duration", w.TestDurationMinutes*60, FieldWorkload+".testDurationMinutes")
	}
	if wu := x.opts.Warmup; wu != nil {
		if *wu > 0 {
			x.set("warmup", *wu, "warmup")
		}
		x.notes = append(x.notes, fmt.Sprintf("warm-up: %v s, given in place of warmupDurationMinutes %d", *wu, w.WarmupDurationMinutes))
		return
	}
	if w.WarmupDurationMinutes > 0 {
		x.set("warmup", w.WarmupDurationMinutes*60, FieldWorkload+".warmupDurationMinutes")
	}
	if !w.Given("warmupDurationMinutes") {
		x.notes = append(x.notes, "warmupDurationMinutes not given: OMB's default of 1 minute")
	}
}

// topics translates the driver's topic configs and replication factor.
func (x *translator) topics() {
	d := x.d
	switch {
	case d.ReplicationFactor < 1:
		x.derr("replicationFactor", "must be given, at least 1: OMB creates its topics with it")
	case d.ReplicationFactor > rundoc.MaxReplicationFactor:
		x.derr("replicationFactor", "must be at most %d in kbench, got %d", rundoc.MaxReplicationFactor, d.ReplicationFactor)
	default:
		x.set("replication-factor", d.ReplicationFactor, FieldDriver+".replicationFactor")
	}
	if len(d.TopicConfig) > rundoc.MaxTopicConfigs {
		x.derr("topicConfig", "holds %d configs, more than the %d kbench takes", len(d.TopicConfig), rundoc.MaxTopicConfigs)
	} else if len(d.TopicConfig) > 0 {
		x.set("topic-config", d.TopicConfig, FieldDriver+".topicConfig")
	}
}

// role is one kind of client of the driver: its properties are
// commonConfig's with its own section's over them.
type role struct {
	consumer bool
	section  string // producerConfig or consumerConfig
	own      map[string]string
	props    map[string]string // merged
	applied  map[string]string // Applies' word on each property
}

func (x *translator) role(consumer bool) *role {
	r := &role{consumer: consumer, section: "producerConfig", own: x.d.ProducerConfig, props: map[string]string{}, applied: map[string]string{}}
	if consumer {
		r.section, r.own = "consumerConfig", x.d.ConsumerConfig
	}
	for k, v := range x.d.CommonConfig {
		r.props[k] = v
	}
	for k, v := range r.own {
		r.props[k] = v
	}
	return r
}

// from names where a role's property came from.
func (r *role) from(k string) string {
	if _, ok := r.own[k]; ok {
		return r.section
	}
	return "commonConfig"
}

func (r *role) who() string {
	if r.consumer {
		return "the consumers"
	}
	return "the producers"
}

// properties translates commonConfig, producerConfig and consumerConfig
// into kbench's properties, which its e2e producers and consumers share:
// bootstrap.servers is the target, the connection's properties go to
// both, and every other property is applied where the runner says the
// client applies it and listed as not applied elsewhere.
func (x *translator) properties() {
	prod, cons := x.role(false), x.role(true)
	pb, cb := prod.props["bootstrap.servers"], cons.props["bootstrap.servers"]
	if rundoc.SplitServers(pb) == nil && pb != "" {
		x.derr(prod.from("bootstrap.servers"), "bootstrap.servers lists no host:port")
	}
	if strings.Join(rundoc.SplitServers(pb), ",") != strings.Join(rundoc.SplitServers(cb), ",") {
		x.derr(cons.from("bootstrap.servers"), "bootstrap.servers differs from the producers' (%s): kbench's producers and consumers reach one cluster", quoted(pb))
	}
	x.t.Bootstrap = strings.Join(rundoc.SplitServers(pb), ",")
	if x.t.Bootstrap != "" {
		x.t.Origin["bootstrap-server"] = FieldDriver + "." + prod.from("bootstrap.servers")
	}
	out := map[string]string{}
	var keys []string
	for k := range prod.props {
		keys = append(keys, k)
	}
	for k := range cons.props {
		if _, ok := prod.props[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "bootstrap.servers" {
			continue
		}
		if rundoc.ConnectionProp(k) {
			// How to reach and log in: both kinds of client, one value.
			pv, pok := prod.props[k]
			cv, cok := cons.props[k]
			if pok != cok || pv != cv {
				field := cons.from(k)
				if !cok {
					field = prod.from(k)
				}
				x.derr(field, "%s differs between the producers and the consumers: kbench's clients log in one way (give it in commonConfig)", k)
				continue
			}
			out[k] = pv
			continue
		}
		x.property(k, prod, cons, out)
	}
	if len(out) > 0 {
		x.set("producer-props", out, FieldDriver)
	}
}

// ombSets are the properties OMB's Kafka driver sets itself, whatever
// the file says: it never applies the file's.
var ombSets = map[string]string{
	"key.serializer":     "OMB sets its own (String keys), as kbench sends raw bytes",
	"value.serializer":   "OMB sets its own (byte[] values), as kbench sends raw bytes",
	"key.deserializer":   "OMB sets its own, as kbench reads raw bytes",
	"value.deserializer": "OMB sets its own, as kbench reads raw bytes",
	"group.id":           "OMB names each subscription's group itself, as kbench does",
}

// property places one client property, given to the producers, the
// consumers or both, in out (applied) or NotApplied.
func (x *translator) property(k string, prod, cons *role, out map[string]string) {
	pv, pok := prod.props[k]
	cv, cok := cons.props[k]
	// applies is Applies' word on the role's value: why it is not
	// applied, "" when it is; a value the property never takes is an
	// error of the section it came from.
	applies := func(r *role, v string) string {
		if why, ok := r.applied[k]; ok {
			return why
		}
		why, err := x.opts.Applies(r.consumer, k, v)
		if err != nil {
			x.derr(r.from(k), "%v", err)
			why = invalidValue
		}
		r.applied[k] = why
		return why
	}
	// alsoTakes reports whether the other kind of client applies v too.
	alsoTakes := func(consumer bool, v string) bool {
		why, err := x.opts.Applies(consumer, k, v)
		return why == "" && err == nil
	}
	skip := func(r *role, v, why string) {
		x.t.NotApplied = append(x.t.NotApplied, fmt.Sprintf("%s %s (%s): %s", r.from(k), shown(k, v), r.who(), why))
	}
	// shared is a property of commonConfig that neither kind of client
	// applies, for the same reason: said once, for both.
	shared := func(pWhy, cWhy string) bool {
		return pok && cok && pv == cv && prod.from(k) == "commonConfig" && cons.from(k) == "commonConfig" && reason(k, pWhy) == reason(k, cWhy)
	}
	skipBoth := func(why string) {
		x.t.NotApplied = append(x.t.NotApplied, fmt.Sprintf("commonConfig %s (the producers and the consumers): %s", shown(k, pv), why))
	}
	if why, ok := ombSets[k]; ok {
		switch {
		case shared(why, why):
			skipBoth(why)
		default:
			if pok {
				skip(prod, pv, why)
			}
			if cok {
				skip(cons, cv, why)
			}
		}
		return
	}
	var pWhy, cWhy string
	if pok {
		pWhy = applies(prod, pv)
	}
	if cok {
		cWhy = applies(cons, cv)
	}
	if pWhy == invalidValue || cWhy == invalidValue {
		return // an error of the file
	}
	switch {
	case pok && pWhy == "":
		out[k] = pv
		// The consumers share kbench's one value: do they take it too?
		switch {
		case cok && cWhy == "" && cv != pv:
			skip(cons, cv, fmt.Sprintf("kbench's producers and consumers share one value of %s, the producers' (%s)", k, shown(k, pv)))
		case !cok && alsoTakes(true, pv):
			x.notes = append(x.notes, fmt.Sprintf("%s %s is the producers' only in OMB; the consumers take it too, as kbench's share one value", prod.from(k), shown(k, pv)))
		}
	case cok && cWhy == "":
		out[k] = cv
		if !pok && alsoTakes(false, cv) {
			x.notes = append(x.notes, fmt.Sprintf("%s %s is the consumers' only in OMB; the producers take it too, as kbench's share one value", cons.from(k), shown(k, cv)))
		}
	}
	switch {
	case pok && pWhy != "" && cok && cWhy != "" && shared(pWhy, cWhy):
		skipBoth(reason(k, pWhy))
	default:
		if pok && pWhy != "" {
			skip(prod, pv, reason(k, pWhy))
		}
		if cok && cWhy != "" {
			skip(cons, cv, reason(k, cWhy))
		}
	}
}

// invalidValue marks a property whose value Applies refused as one the
// property never takes: an error of the file, not a property not applied.
const invalidValue = "\x00invalid"

// reason is why a property is not applied; a secret's says nothing of
// its value, which the runner's words might quote.
func reason(k, why string) string {
	if secret(k) {
		return "kbench's client does not take it"
	}
	return why
}

// secret reports whether a property's value is hidden wherever kbench
// writes it (rundoc.RedactProps).
func secret(k string) bool {
	return rundoc.RedactProps(map[string]string{k: "x"})[k] != "x"
}

// shown is k=v as a note says it: a secret's value redacted, a long
// value cut.
func shown(k, v string) string {
	v = rundoc.RedactProps(map[string]string{k: v})[k]
	if len(v) > 100 {
		v = v[:100] + "…"
	}
	return k + "=" + v
}

// notAppliedNotes are the not-applied properties as notes: one line
// each, joined while they fit a note.
func notAppliedNotes(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	const head = "not applied (kbench's client cannot honour them as Java's does): "
	var out []string
	cur := head
	for _, s := range list {
		if len(cur)+len(s)+2 > rundoc.MaxNoteLen-100 && cur != head {
			out = append(out, strings.TrimSuffix(cur, "; "))
			cur = head
		}
		cur += s + "; "
	}
	return append(out, strings.TrimSuffix(cur, "; "))
}

// quoted is a file's text as a message quotes it, cut when long.
func quoted(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return fmt.Sprintf("%q", s)
}
