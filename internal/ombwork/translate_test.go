package ombwork_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/ombwork"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/runner"
)

// run translates the testdata files workload and driver (the payload
// file read beside them, as kbench run omb reads it) and builds the
// spec as kbench run does: the contract's checks and the runner's.
func run(t *testing.T, workload, driver string, opts ombwork.Options) (*ombwork.Translation, rundoc.Spec) {
	t.Helper()
	tr, err := translateFiles(t, workload, driver, opts)
	if err != nil {
		t.Fatalf("translate %s with %s: %v", workload, driver, err)
	}
	spec, err := specOf(tr)
	if err != nil {
		t.Fatalf("spec of %s with %s: %v", workload, driver, err)
	}
	return tr, spec
}

func translateFiles(t *testing.T, workload, driver string, opts ombwork.Options) (*ombwork.Translation, error) {
	t.Helper()
	w, err := ombwork.ParseWorkload(readFile(t, workload))
	if err != nil {
		return nil, err
	}
	d, err := ombwork.ParseDriver(readFile(t, driver))
	if err != nil {
		return nil, err
	}
	if w.PayloadFile != "" && opts.Payload == nil && !w.UseRandomizedPayloads {
		opts.Payload = readFile(t, w.PayloadFile)
	}
	opts.Applies = runner.E2ERateApplies
	return ombwork.Translate(w, d, opts)
}

func specOf(tr *ombwork.Translation) (rundoc.Spec, error) {
	params := tr.Params
	if tr.Bootstrap != "" {
		params["bootstrap-server"], _ = json.Marshal(tr.Bootstrap)
	}
	spec, err := rundoc.SpecFromParams(rundoc.E2E, params, runner.Validate)
	return spec, tr.Remap(err)
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTranslateStockLike: the three shapes of OMB workloads (one topic
// from a payload file, many topics with randomized payloads, a backlog
// with keys) and three drivers become the e2e rate-mode spec that runs
// them, field by field.
func TestTranslateStockLike(t *testing.T) {
	payload := readFile(t, "payload-1Kb.data")
	tests := []struct {
		workload, driver string
		check            func(t *testing.T, tr *ombwork.Translation, s rundoc.Spec)
	}{
		{"workload-1-topic-16-partitions-1kb.yaml", "driver-kafka-latency.yaml", func(t *testing.T, tr *ombwork.Translation, s rundoc.Spec) {
			if !s.E2ERateMode() || s.Topics != 1 || s.Partitions != 16 || s.Threads != 1 || s.Subscriptions != 1 || s.ConsumersPerSubscription != 1 || !s.GroupsPerTopic {
				t.Errorf("shape: %d topics of %d, %d producers, %d×%d consumers, per topic %v", s.Topics, s.Partitions, s.Threads, s.Subscriptions, s.ConsumersPerSubscription, s.GroupsPerTopic)
			}
			if s.RecordSize != 1024 || !bytes.Equal(s.Payload, payload) || s.Throughput != 50000 {
				t.Errorf("records: %d bytes, payload given %v, %v/s", s.RecordSize, bytes.Equal(s.Payload, payload), s.Throughput)
			}
			// 15 minutes, and OMB's default warm-up of one.
			if s.Duration != 900 || s.Warmup != 60 || s.KeySize != 0 || s.BacklogBytes != 0 {
				t.Errorf("duration %v, warm-up %v, key size %d, backlog %d", s.Duration, s.Warmup, s.KeySize, s.BacklogBytes)
			}
			if s.ReplicationFactor != 3 || s.TopicConfig["min.insync.replicas"] != "2" || s.BootstrapServer != "localhost:9092" {
				t.Errorf("topics: %d replicas, configs %v, target %q", s.ReplicationFactor, s.TopicConfig, s.BootstrapServer)
			}
			wantProps := map[string]string{"acks": "all", "linger.ms": "1", "batch.size": "131072", "auto.offset.reset": "earliest", "max.partition.fetch.bytes": "10485760"}
			for k, v := range wantProps {
				if s.Props[k] != v {
					t.Errorf("property %s = %q, want %q", k, s.Props[k], v)
				}
			}
			if len(s.Props) != len(wantProps) {
				t.Errorf("properties %v, want only %v", s.Props, wantProps)
			}
			if len(tr.NotApplied) != 1 || !strings.Contains(tr.NotApplied[0], "consumerConfig enable.auto.commit=false (the consumers): kbench's consumers commit no offsets") {
				t.Errorf("not applied: %q", tr.NotApplied)
			}
			notes := strings.Join(s.Notes, "\n")
			for _, want := range []string{`workload "1 producer / 1 consumer on 1 topic / 16 partitions" with driver "Kafka"`, "warmupDurationMinutes not given: OMB's default of 1 minute",
				"payloadFile \"payload-1Kb.data\": its 1024 bytes", "not applied (kbench's client cannot honour them as Java's does): consumerConfig enable.auto.commit=false"} {
				if !strings.Contains(notes, want) {
					t.Errorf("notes lack %q:\n%s", want, notes)
				}
			}
		}},
		{"workload-100-topics-1kb-4p-4c.yaml", "driver-kafka-throughput.yaml", func(t *testing.T, tr *ombwork.Translation, s rundoc.Spec) {
			if s.Topics != 100 || s.Partitions != 1 || s.Threads != 4 || s.Subscriptions != 1 || s.ConsumersPerSubscription != 4 || s.Throughput != 500000 {
				t.Errorf("shape: %d topics of %d, %d producers, %d×%d consumers, %v/s", s.Topics, s.Partitions, s.Threads, s.Subscriptions, s.ConsumersPerSubscription, s.Throughput)
			}
			if s.PayloadRandomRatio == nil || *s.PayloadRandomRatio != 0.5 || s.PayloadPool != 1000 || s.Payload != nil {
				t.Errorf("payload: ratio %v, pool %d, given %d bytes", s.PayloadRandomRatio, s.PayloadPool, len(s.Payload))
			}
			if s.Duration != 300 || s.Warmup != 60 || s.BootstrapServer != "kafka-1:9092,kafka-2:9092" {
				t.Errorf("duration %v, warm-up %v, target %q", s.Duration, s.Warmup, s.BootstrapServer)
			}
			if s.Props["request.timeout.ms"] != "1200000" || s.Props["compression.type"] != "lz4" || s.TopicConfig["retention.ms"] != "3600000" {
				t.Errorf("props %v, topic configs %v", s.Props, s.TopicConfig)
			}
			na := strings.Join(tr.NotApplied, "\n")
			for _, want := range []string{
				"commonConfig default.api.timeout.ms=1200000 (the producers and the consumers): kbench's client does not take it",
				"commonConfig request.timeout.ms=1200000 (the consumers): kbench's e2e consumers do not apply it",
			} {
				if !strings.Contains(na, want) {
					t.Errorf("not applied lacks %q:\n%s", want, na)
				}
			}
		}},
		{"workload-backlog-keys.yaml", "driver-kafka-latency.yaml", func(t *testing.T, tr *ombwork.Translation, s rundoc.Spec) {
			if s.BacklogBytes != 2<<30 || s.BacklogDrainRatio != 0.9 || !s.DurationAfterDrain || s.Duration != 180 || s.Warmup != 60 {
				t.Errorf("backlog %d bytes, ratio %v, after drain %v, duration %v, warm-up %v", s.BacklogBytes, s.BacklogDrainRatio, s.DurationAfterDrain, s.Duration, s.Warmup)
			}
			if s.KeySize != 10 || s.KeyCount != 10000 || s.KeyOrder != rundoc.KeyOrderRoundRobin {
				t.Errorf("keys: %d bytes, %d of them, %q", s.KeySize, s.KeyCount, s.KeyOrder)
			}
			if s.Topics != 2 || s.Threads != 2 || s.Subscriptions != 2 || s.ConsumersPerSubscription != 2 || s.Throughput != 200000 {
				t.Errorf("shape: %d topics, %d producers, %d×%d consumers, %v/s", s.Topics, s.Threads, s.Subscriptions, s.ConsumersPerSubscription, s.Throughput)
			}
		}},
		{"workload-max-rate.yaml", "driver-kafka-latency.yaml", func(t *testing.T, tr *ombwork.Translation, s rundoc.Spec) {
			if !tr.Unthrottled || s.Throughput != -1 || !s.E2ERateMode() || s.Warmup != 0 || s.Duration != 60 {
				t.Errorf("unthrottled %v, throughput %v, rate mode %v, warm-up %v, duration %v", tr.Unthrottled, s.Throughput, s.E2ERateMode(), s.Warmup, s.Duration)
			}
			if s.KeyOrder != rundoc.KeyOrderRandom || s.KeyCount != 10000 {
				t.Errorf("keys %q, %d", s.KeyOrder, s.KeyCount)
			}
			if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "producerRate 0: OMB searches for the highest rate its consumers keep up with; kbench runs unthrottled instead") {
				t.Errorf("the notes do not say the run is unthrottled:\n%s", notes)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.workload+"+"+tt.driver, func(t *testing.T) {
			tr, spec := run(t, tt.workload, tt.driver, ombwork.Options{})
			tt.check(t, tr, spec)
		})
	}
}

// TestTranslateOverridesAndSecrets: --duration and --warmup replace OMB's
// whole minutes; a driver's SASL password reaches the spec's properties
// (the run logs in with it) but never a note, and the stored spec holds
// it redacted; enable.idempotence=true, a serializer, read_committed and
// a producer property among the consumer's are listed as not applied.
func TestTranslateOverridesAndSecrets(t *testing.T) {
	dur, warm := 7.5, 0.0
	tr, spec := run(t, "workload-1-topic-16-partitions-1kb.yaml", "driver-kafka-exactly-once.yaml", ombwork.Options{Duration: &dur, Warmup: &warm})
	if spec.Duration != 7.5 || spec.Warmup != 0 {
		t.Errorf("duration %v, warm-up %v", spec.Duration, spec.Warmup)
	}
	if !strings.Contains(spec.Props["sasl.jaas.config"], "s3cret-pw") || spec.Props["security.protocol"] != "SASL_SSL" {
		t.Errorf("the login's properties did not reach the spec: %v", spec.Props)
	}
	for _, n := range append(tr.NotApplied, spec.Notes...) {
		if strings.Contains(n, "s3cret-pw") {
			t.Errorf("a note holds the password: %q", n)
		}
	}
	public, secrets := rundoc.SplitSecrets(spec)
	if _, ok := public.Props["sasl.jaas.config"]; ok || !strings.Contains(secrets["sasl.jaas.config"], "s3cret-pw") {
		t.Errorf("SplitSecrets kept the JAAS line in the public spec: %v", public.Props)
	}
	na := strings.Join(tr.NotApplied, "\n")
	for _, want := range []string{
		"producerConfig enable.idempotence=true (the producers): kafka-go has no idempotent producer",
		"producerConfig key.serializer=org.apache.kafka.common.serialization.StringSerializer (the producers): OMB sets its own",
		"consumerConfig isolation.level=read_committed (the consumers): kbench's consumers read uncommitted",
		"consumerConfig linger.ms=5 (the consumers): a property of the other kind of client",
	} {
		if !strings.Contains(na, want) {
			t.Errorf("not applied lacks %q:\n%s", want, na)
		}
	}
	if spec.Props["retries"] != "2147483647" || spec.Props["max.in.flight.requests.per.connection"] != "1" {
		t.Errorf("the producer's properties it applies: %v", spec.Props)
	}
	notes := strings.Join(spec.Notes, "\n")
	if !strings.Contains(notes, "duration: 7.5 s, given in place of testDurationMinutes 15") || !strings.Contains(notes, "warm-up: 0 s, given in place of warmupDurationMinutes 1") {
		t.Errorf("the notes do not say what replaced OMB's minutes:\n%s", notes)
	}
}

// TestTranslateErrorsNameFields: what kbench cannot honour, or a file
// that is not OMB's, is an error naming the file's field.
func TestTranslateErrorsNameFields(t *testing.T) {
	const base = "topics: 1\npartitionsPerTopic: 2\nmessageSize: 100\nuseRandomizedPayloads: true\nrandomBytesRatio: 0.5\nrandomizedPayloadPoolSize: 10\n" +
		"subscriptionsPerTopic: 1\nconsumerPerSubscription: 1\nproducersPerTopic: 1\nproducerRate: 1000\ntestDurationMinutes: 1\n"
	const driver = "driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver\nreplicationFactor: 1\n"
	with := func(doc, line string) string {
		key, _, _ := strings.Cut(line, ":")
		var out []string
		for _, l := range strings.Split(doc, "\n") {
			if k, _, _ := strings.Cut(l, ":"); k != key || l == "" {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n") + line + "\n"
	}
	tests := []struct {
		name, workload, driver string
		opts                   ombwork.Options
		field, msg             string
	}{
		{"unknown workload field", base + "consumerBacklogSize: 3\n", driver, ombwork.Options{}, "omb-workload.consumerBacklogSize", "is not a field"},
		{"unknown driver field", base, driver + "reset: true\n", ombwork.Options{}, "omb-driver.reset", "is not a field"},
		{"not a number", with(base, "topics: many"), driver, ombwork.Options{}, "omb-workload.topics", "whole number"},
		{"a fraction", with(base, "partitionsPerTopic: 1.5"), driver, ombwork.Options{}, "omb-workload.partitionsPerTopic", "whole number"},
		{"over Java's int", with(base, "producerRate: 3000000000"), driver, ombwork.Options{}, "omb-workload.producerRate", "between"},
		{"no topics", with(base, "topics: 0"), driver, ombwork.Options{}, "omb-workload.topics", "at least 1"},
		{"no subscription", with(base, "subscriptionsPerTopic: 0"), driver, ombwork.Options{}, "omb-workload.subscriptionsPerTopic", "kbench run producer"},
		{"too small for the stamp", with(base, "messageSize: 10"), driver, ombwork.Options{}, "omb-workload.messageSize", "24 bytes"},
		{"an empty pool", with(base, "randomizedPayloadPoolSize: 0"), driver, ombwork.Options{}, "omb-workload.randomizedPayloadPoolSize", "at least 1"},
		{"ratio over 1", with(base, "randomBytesRatio: 2"), driver, ombwork.Options{}, "omb-workload.randomBytesRatio", "between"},
		{"unknown key distributor", with(base, "keyDistributor: KEY_SORTED"), driver, ombwork.Options{}, "omb-workload.keyDistributor", "NO_KEY"},
		{"no payload", with(base, "useRandomizedPayloads: false"), driver, ombwork.Options{}, "omb-workload.payloadFile", "must be given"},
		{"a payload file unread", with(with(base, "useRandomizedPayloads: false"), "payloadFile: p.data"), driver,
			ombwork.Options{NoPayload: "give its contents as the payload parameter"}, "omb-workload.payloadFile", "payload parameter"},
		{"a payload of another size", with(with(base, "useRandomizedPayloads: false"), "payloadFile: p.data"), driver,
			ombwork.Options{Payload: make([]byte, 99)}, "omb-workload.payloadFile", "99 bytes, and messageSize 100"},
		{"a backlog while searching", with(with(base, "producerRate: 0"), "consumerBacklogSizeGB: 1"), driver, ombwork.Options{}, "omb-workload.consumerBacklogSizeGB", "producerRate"},
		{"a drain ratio of 0", with(with(base, "consumerBacklogSizeGB: 1"), "backlogDrainRatio: 0"), driver, ombwork.Options{}, "omb-workload.backlogDrainRatio", "above 0"},
		{"without end", with(base, "testDurationMinutes: 0"), driver, ombwork.Options{}, "omb-workload.testDurationMinutes", "without end"},
		{"too many producers", with(with(base, "topics: 300"), "producersPerTopic: 4"), driver, ombwork.Options{}, "omb-workload.producersPerTopic", "1200 producers"},
		{"too many consumers", with(with(base, "topics: 300"), "consumerPerSubscription: 10"), driver, ombwork.Options{}, "omb-workload.consumerPerSubscription", "3000 consumers"},
		{"a list", base + "extra:\n  - 1\n", driver, ombwork.Options{}, "omb-workload.extra", "a list"},
		{"an alias", "topics: &t 1\n" + strings.TrimPrefix(base, "topics: 1\n") + "partitions: *t\n", driver, ombwork.Options{}, "omb-workload.topics", "anchor"},
		{"not a mapping", "- topics\n", driver, ombwork.Options{}, "omb-workload", "mapping"},
		{"not YAML", "topics: [1\n", driver, ombwork.Options{}, "omb-workload", "not YAML"},
		{"twice", base + "topics: 2\n", driver, ombwork.Options{}, "omb-workload", "not YAML"},
		{"another driver", base, "driverClass: io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver\nreplicationFactor: 1\n", ombwork.Options{}, "omb-driver.driverClass", "Kafka"},
		{"no driver class", base, "replicationFactor: 1\n", ombwork.Options{}, "omb-driver.driverClass", "must be given"},
		{"no replication factor", base, "driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver\n", ombwork.Options{}, "omb-driver.replicationFactor", "must be given"},
		{"too many replicas", base, with(driver, "replicationFactor: 40"), ombwork.Options{}, "omb-driver.replicationFactor", "at most 16"},
		{"not properties", base, driver + "producerConfig: 5\n", ombwork.Options{}, "omb-driver.producerConfig", "Java properties"},
		{"a bad value", base, driver + "producerConfig: |\n  acks=7\n", ombwork.Options{}, "omb-driver.producerConfig", "acks"},
		{"two clusters", base, driver + "producerConfig: |\n  bootstrap.servers=a:9092\nconsumerConfig: |\n  bootstrap.servers=b:9092\n", ombwork.Options{}, "omb-driver.consumerConfig", "one cluster"},
		{"two logins", base, driver + "commonConfig: |\n  bootstrap.servers=a:9092\nproducerConfig: |\n  security.protocol=SSL\n", ombwork.Options{}, "omb-driver.producerConfig", "log in one way"},
		{"a bad topic config", base, driver + "topicConfig: |\n  -x=1\n", ombwork.Options{}, "omb-driver.topicConfig", "'-'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ombwork.ParseWorkload([]byte(tt.workload))
			var d *ombwork.Driver
			if err == nil {
				d, err = ombwork.ParseDriver([]byte(tt.driver))
			}
			if err == nil {
				opts := tt.opts
				opts.Applies = runner.E2ERateApplies
				var tr *ombwork.Translation
				if tr, err = ombwork.Translate(w, d, opts); err == nil {
					_, err = specOf(tr)
				}
			}
			var fes rundoc.FieldErrors
			var fe *rundoc.FieldError
			switch {
			case errors.As(err, &fes):
				for _, e := range fes {
					if e.Field == tt.field && strings.Contains(e.Msg, tt.msg) {
						return
					}
				}
			case errors.As(err, &fe) && fe.Field == tt.field && strings.Contains(fe.Msg, tt.msg):
				return
			}
			t.Errorf("error %v, want one on %s saying %q", err, tt.field, tt.msg)
		})
	}
}

// TestTranslateRemapsSpecErrors: an error the spec's own checks find in
// a translated param names the file's field it came from.
func TestTranslateRemapsSpecErrors(t *testing.T) {
	tr, err := translateFiles(t, "workload-1-topic-16-partitions-1kb.yaml", "driver-kafka-latency.yaml", ombwork.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.Params["duration"] = json.RawMessage(`1e9`) // over 7 days, as 20,000,000 minutes would be
	_, err = specOf(tr)
	var fes rundoc.FieldErrors
	if !errors.As(err, &fes) || !fes.Has("omb-workload.testDurationMinutes") {
		t.Errorf("%v, want an error on omb-workload.testDurationMinutes", err)
	}
}

// TestParseLimits: files over their size caps are refused before they
// are parsed, naming the file.
func TestParseLimits(t *testing.T) {
	big := bytes.Repeat([]byte("# comment\n"), ombwork.MaxWorkloadBytes/10+1)
	var fe *rundoc.FieldError
	if _, err := ombwork.ParseWorkload(big); !errors.As(err, &fe) || fe.Field != "omb-workload" {
		t.Errorf("a workload of %d bytes: %v", len(big), err)
	}
	big = bytes.Repeat([]byte("# comment\n"), ombwork.MaxDriverBytes/10+1)
	if _, err := ombwork.ParseDriver(big); !errors.As(err, &fe) || fe.Field != "omb-driver" {
		t.Errorf("a driver of %d bytes: %v", len(big), err)
	}
	if _, err := ombwork.ParseWorkload([]byte("# nothing\n")); !errors.As(err, &fe) || fe.Field != "omb-workload" {
		t.Errorf("an empty workload: %v", err)
	}
}
