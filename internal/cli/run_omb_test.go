package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// ombFiles writes a workload and a driver in OMB's format into a new
// directory and returns their paths.
func ombFiles(t *testing.T, workload, driver string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	w, d := filepath.Join(dir, "workload.yaml"), filepath.Join(dir, "driver.yaml")
	for path, text := range map[string]string{w: workload, d: driver} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return w, d
}

const ombTestDriver = `name: Kafka
driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver
replicationFactor: 3
topicConfig: |
  min.insync.replicas=2
commonConfig: |
  bootstrap.servers=BOOTSTRAP
producerConfig: |
  acks=all
  linger.ms=1
  enable.idempotence=true
consumerConfig: |
  auto.offset.reset=earliest
  enable.auto.commit=false
`

// TestRunOMBBadInput: a bad workload or driver is bad usage (exit 2),
// every bad field on a line of its own after its file's name; so are a
// missing file and a flag kbench run omb does not take.
func TestRunOMBBadInput(t *testing.T) {
	w, d := ombFiles(t, "topics: 0\npartitionsPerTopic: 1\nmessageSize: 100\nsubscriptionsPerTopic: 1\nconsumerPerSubscription: 1\nproducersPerTopic: 1\n"+
		"payloadFile: missing.data\nproducerRate: 100\ntestDurationMinutes: 1\nnoSuchField: 1\n",
		strings.Replace(ombTestDriver, "replicationFactor: 3", "replicationFactor: 40", 1))
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "omb", w, d}, &stdout, &stderr)
	out := stderr.String()
	if code != 2 || !strings.Contains(out, "kbench run omb: "+w+": noSuchField: ") {
		t.Fatalf("exit %d, stderr:\n%s\nwant 2 and the unknown field named after its file", code, out)
	}
	for _, args := range [][]string{
		{"run", "omb", w},
		{"run", "omb", w, d, "--threads", "2"},
		{"run", "omb", w, d, "--spec", "x.json"},
		{"run", "omb", filepath.Join(t.TempDir(), "none.yaml"), d},
	} {
		stderr.Reset()
		if code := Main(args, &stdout, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), "kbench run omb: ") {
			t.Errorf("kbench %q: exit %d, stderr %q; want 2", args, code, stderr.String())
		}
	}
	w, d = ombFiles(t, "topics: 0\npartitionsPerTopic: 1\nmessageSize: 100\nsubscriptionsPerTopic: 1\nconsumerPerSubscription: 1\nproducersPerTopic: 1\n"+
		"payloadFile: missing.data\nproducerRate: 100\ntestDurationMinutes: 1\n",
		strings.Replace(ombTestDriver, "replicationFactor: 3", "replicationFactor: 40", 1))
	stderr.Reset()
	if code := Main([]string{"run", "omb", w, d}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{w + ": topics: must be at least 1", w + ": payloadFile: \"missing.data\": open missing.data", "(give the file with --payload FILE)",
		d + ": replicationFactor: must be at most 16"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	stdout.Reset()
	if code := Main([]string{"run", "omb", "--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "kbench run omb WORKLOAD.yaml DRIVER.yaml") {
		t.Errorf("--help: exit %d, %q", code, stdout.String())
	}
}

// TestRunOMBOnTheEmbeddedBroker is a real OMB workload run through
// kbench run omb: two topics of replication factor 3 on an in-process
// embedded broker of three brokers, two producers per topic at a fixed
// rate, a subscription of two consumers per topic, randomized payloads
// and round-robin keys, with the warm-up and duration given in seconds.
// Every record is received once per subscription, the topics hold the
// driver's config, and the notes say what the driver asked for that
// kafka-go does not do.
func TestRunOMBOnTheEmbeddedBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a whole run of about 2 s")
	}
	b, err := embeddedbroker.Start(embeddedbroker.Options{Brokers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	w, d := ombFiles(t, `name: kbench's test
topics: 2
partitionsPerTopic: 3
keyDistributor: KEY_ROUND_ROBIN
messageSize: 256
useRandomizedPayloads: true
randomBytesRatio: 0.5
randomizedPayloadPoolSize: 50
subscriptionsPerTopic: 1
consumerPerSubscription: 2
producersPerTopic: 2
producerRate: 2000
consumerBacklogSizeGB: 0
testDurationMinutes: 15
`, strings.Replace(ombTestDriver, "BOOTSTRAP", b.Addr(), 1))
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "omb", w, d, "--duration", "1", "--warmup", "0.5", "--profile", "none", "--topic", "omb-test", "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res rundoc.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	metric := func(name string) float64 {
		m, ok := res.Metric(name)
		if !ok {
			t.Fatalf("no metric %s", name)
		}
		return m.Value
	}
	if !res.Complete || metric("records-sent") == 0 || metric("records-received") != metric("records-sent") || metric("records-lost") != 0 || metric("records-duplicated") != 0 {
		t.Errorf("complete %v: sent %v, received %v, lost %v, duplicated %v", res.Complete, metric("records-sent"), metric("records-received"), metric("records-lost"), metric("records-duplicated"))
	}
	if res.Measurement.WarmupRecords == 0 {
		t.Errorf("no warm-up records")
	}
	for k, want := range map[string]string{"replication.factor": "3", "topic.min.insync.replicas": "2", "topics": "2", "threads": "2", "warmup": "0.5 s"} {
		if got, _ := res.Environment.Config.Get(k); got != want {
			t.Errorf("config %s = %q, want %q", k, got, want)
		}
	}
	if res.Spec.Topic != "omb-test" || res.Spec.KeyOrder != rundoc.KeyOrderRoundRobin || res.Spec.Throughput != 2000 {
		t.Errorf("spec: topic %q, key order %q, throughput %v", res.Spec.Topic, res.Spec.KeyOrder, res.Spec.Throughput)
	}
	notes := strings.Join(res.Measurement.Notes, "\n")
	for _, want := range []string{`workload "kbench's test" with driver "Kafka"`, "producerConfig enable.idempotence=true (the producers): kafka-go has no idempotent producer",
		"consumerConfig enable.auto.commit=false (the consumers)", "duration: 1 s, given in place of testDurationMinutes 15", "2 groups of 2 kafka-go Reader(s)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// TestRunOMBDocsExamples: the README's example workload and driver
// (docs/omb) translate into a run on the embedded broker: 16 partitions
// of one topic at 10,000 records/s, three brokers for three replicas,
// and the idempotent producer listed as not applied.
func TestRunOMBDocsExamples(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "omb")
	spec, err := ombSpec(filepath.Join(dir, "1-topic-16-partitions-1kb-10k.yaml"), filepath.Join(dir, "kafka-latency-embedded.yaml"), map[string]string{"duration": "30"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Topics != 1 || spec.Partitions != 16 || spec.Throughput != 10000 || spec.RecordSize != 1024 || spec.ReplicationFactor != 3 ||
		spec.BootstrapServer != "" || spec.Duration != 30 {
		t.Errorf("spec %+v", spec)
	}
	if !strings.Contains(strings.Join(spec.Notes, "\n"), "enable.idempotence") {
		t.Errorf("notes %q do not list enable.idempotence as not applied", spec.Notes)
	}
}
