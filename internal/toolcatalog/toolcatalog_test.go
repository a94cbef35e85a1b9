package toolcatalog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// program writes an executable (or not) file named name in dir.
func program(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParse(t *testing.T) {
	dir := t.TempDir()
	prod := program(t, dir, "kafka-producer-perf-test.sh", 0o755)
	cons := program(t, dir, "kafka-consumer-perf-test", 0o755)
	wrapper := program(t, dir, "run-java-thing", 0o755)
	e2e := program(t, dir, "kafka-e2e-latency.sh", 0o755)
	plain := program(t, dir, "copy-kafka-producer-perf-test.sh", 0o644)

	s, err := Parse([]string{"p=" + prod, " c = " + cons, "w=consumer-perf-test:" + wrapper, "e=" + e2e, "l=e2e-latency:" + wrapper})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Names(); !slices.Equal(got, []string{"c", "e", "l", "p", "w"}) {
		t.Errorf("names %v", got)
	}
	for name, want := range map[string]Kind{"p": ProducerPerfTest, "c": ConsumerPerfTest, "w": ConsumerPerfTest, "e": E2ELatency, "l": E2ELatency} {
		if tool, ok := s.Get(name); !ok || tool.Kind != want || !filepath.IsAbs(tool.Path) {
			t.Errorf("%s: %+v, want kind %s with an absolute path", name, tool, want)
		}
	}
	if got := s.Offered(); got != "c:consumer-perf-test,e:e2e-latency,l:e2e-latency,p:producer-perf-test,w:consumer-perf-test" {
		t.Errorf("offered %q", got)
	}
	if got := ParseOffered(s.Offered()); len(got) != 5 || got["w"] != ConsumerPerfTest || got["l"] != E2ELatency {
		t.Errorf("offered read back as %v", got)
	}
	back, err := FromEnv(func(k string) string {
		if k == EnvVar {
			return s.Env()
		}
		return ""
	})
	if err != nil || !slices.Equal(back.Names(), s.Names()) {
		t.Fatalf("through the environment: %v %v", back.Names(), err)
	}
	if tool, _ := back.Get("w"); tool.Path != wrapper || tool.Kind != ConsumerPerfTest {
		t.Errorf("through the environment: %+v", tool)
	}

	for _, tc := range []struct{ value, want string }{
		{"p", "want NAME=PATH"},
		{"=" + prod, "want NAME=PATH"},
		{"a b=" + prod, "must be letters"},
		{"w=" + wrapper, "cannot be told from its name"},
		{"x=" + filepath.Join(dir, "missing-kafka-producer-perf-test"), "no such file"},
		{"x=" + plain, "not executable"},
		{"x=producer-perf-test:" + dir, "not a file"},
		{"x=not-in-path-anywhere-kafka-producer-perf-test", "not a program in PATH"},
	} {
		_, err := Parse([]string{tc.value})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.value, err, tc.want)
		}
	}
	if _, err := Parse([]string{"p=" + prod, "p=" + cons}); err == nil || !strings.Contains(err.Error(), "named twice") {
		t.Errorf("a name twice: %v", err)
	}
	if s, err := Parse(nil); s != nil || err != nil || s.Names() != nil || s.Env() != "" {
		t.Errorf("no values: %v %v", s, err)
	}
}

func TestArgs(t *testing.T) {
	p := rundoc.DefaultSpec(rundoc.Producer)
	p.Tool, p.Topic, p.NumRecords, p.RecordSize, p.Throughput = "p", "t1", 1000, 100, 250.5
	p.BootstrapServer = "k1:9092,k2:9092"
	p.Props = map[string]string{"acks": "all", "linger.ms": "5", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
		"sasl.username": "alice", "sasl.password": `s3cr"et`}
	p.PrintMetrics = true
	args, err := Args(ProducerPerfTest, "", p, "/run/7/"+ConfigFileName)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--topic", "t1", "--num-records", "1000", "--record-size", "100", "--throughput", "250.5",
		"--producer-props", "bootstrap.servers=k1:9092,k2:9092", "acks=all", "linger.ms=5", "sasl.mechanism=SCRAM-SHA-256", "security.protocol=SASL_PLAINTEXT",
		"--producer.config", "/run/7/" + ConfigFileName, "--print-metrics"}
	if !slices.Equal(args, want) {
		t.Errorf("producer args\n got %q\nwant %q", args, want)
	}
	if strings.Contains(strings.Join(args, " "), "s3cr") || strings.Contains(strings.Join(args, " "), "alice") {
		t.Errorf("credentials on the command line: %q", args)
	}
	conf := ConfigProps(ProducerPerfTest, p.Props)
	wantJAAS := `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cr\"et";`
	if len(conf) != 1 || conf["sasl.jaas.config"] != wantJAAS {
		t.Errorf("producer's file: %q", conf)
	}
	entries, err := rundoc.ParseJAAS(conf["sasl.jaas.config"])
	if err != nil || entries[0].Option("password")[0] != `s3cr"et` {
		t.Errorf("the JAAS text does not read back: %v %v", entries, err)
	}

	c := rundoc.DefaultSpec(rundoc.Consumer)
	c.Tool, c.Topic, c.NumRecords, c.Group, c.ShowDetailedStats, c.FromLatest = "c", "t2", 500, "g1", true, true
	c.Props = map[string]string{"bootstrap.servers": "k3:9093", "fetch.min.bytes": "1", "sasl.jaas.config": `x required password="p";`}
	args, err = Args(ConsumerPerfTest, "", c, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"--bootstrap-server", "k3:9093", "--topic", "t2", "--messages", "500", "--timeout", "10000", "--fetch-size", "1048576",
		"--reporting-interval", "5000", "--group", "g1", "--from-latest", "--show-detailed-stats", "--consumer.config", "cfg"}
	if !slices.Equal(args, want) {
		t.Errorf("consumer args\n got %q\nwant %q", args, want)
	}
	if conf := ConfigProps(ConsumerPerfTest, c.Props); len(conf) != 2 || conf["fetch.min.bytes"] != "1" || conf["sasl.jaas.config"] == "" {
		t.Errorf("consumer's file: %q", conf)
	}

	e := rundoc.DefaultSpec(rundoc.E2E)
	e.Tool, e.Topic, e.NumRecords, e.RecordSize = "e", "lat", 20000, 512
	e.BootstrapServer = "k1:9092"
	e.Props = map[string]string{"acks": "1", "client.id": "lat-bench", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
		"sasl.username": "bob", "sasl.password": "pw-e2e"}
	args, err = Args(E2ELatency, "", e, "/run/8/"+ConfigFileName)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"k1:9092", "lat", "20000", "1", "512", "/run/8/" + ConfigFileName}
	if !slices.Equal(args, want) {
		t.Errorf("e2e args\n got %q\nwant %q", args, want)
	}
	// Its one file serves its producer, consumer and admin client: every
	// property but acks (its argument) and the target's servers.
	conf = ConfigProps(E2ELatency, e.Props)
	if len(conf) != 4 || conf["client.id"] != "lat-bench" || conf["security.protocol"] != "SASL_SSL" || conf["sasl.mechanism"] != "PLAIN" ||
		!strings.Contains(conf["sasl.jaas.config"], `PlainLoginModule required username="bob" password="pw-e2e";`) {
		t.Errorf("e2e's file: %q", conf)
	}
	// Without acks: all, as kbench's e2e runs; without a file: five
	// arguments.
	e.Props = nil
	if args, err := Args(E2ELatency, "", e, ""); err != nil || !slices.Equal(args, []string{"k1:9092", "lat", "20000", "all", "512"}) {
		t.Errorf("e2e args without properties: %q %v", args, err)
	}
	for _, acks := range []string{"0", "-1", "2"} {
		e.Props = map[string]string{"acks": acks}
		if _, err := Args(E2ELatency, "", e, ""); err == nil || !strings.Contains(err.Error(), "acks 1 or all") {
			t.Errorf("acks=%s: %v, want refused", acks, err)
		}
	}

	noTarget := rundoc.DefaultSpec(rundoc.Producer)
	if _, err := Args(ProducerPerfTest, "", noTarget, ""); err == nil {
		t.Errorf("a run without a target got arguments")
	}

	// The share group's consumers: the consumer's template without
	// --from-latest, which the tool does not take.
	args, err = Args(ShareConsumerPerfTest, "", c, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"--bootstrap-server", "k3:9093", "--topic", "t2", "--messages", "500", "--timeout", "10000", "--fetch-size", "1048576",
		"--reporting-interval", "5000", "--group", "g1", "--show-detailed-stats", "--consumer.config", "cfg"}
	if !slices.Equal(args, want) {
		t.Errorf("share consumer args\n got %q\nwant %q", args, want)
	}
}

// TestArgsKafka42: a tool declared 4.2 or later gets KIP-1147's flag
// names and EndToEndLatency's named arguments; one declared older, or
// not at all, the names every version takes.
func TestArgsKafka42(t *testing.T) {
	p := rundoc.DefaultSpec(rundoc.Producer)
	p.Topic, p.NumRecords, p.RecordSize, p.Throughput, p.BootstrapServer = "t1", 1000, 100, -1, "k1:9092"
	p.Props = map[string]string{"acks": "all"}
	c := rundoc.DefaultSpec(rundoc.Consumer)
	c.Topic, c.NumRecords, c.BootstrapServer = "t2", 500, "k3:9093"
	e := rundoc.DefaultSpec(rundoc.E2E)
	e.Topic, e.NumRecords, e.RecordSize, e.BootstrapServer = "lat", 20000, 512, "k1:9092"
	for _, tc := range []struct {
		kind Kind
		v    Version
		spec rundoc.Spec
		want string
	}{
		{ProducerPerfTest, "4.2", p, "--topic t1 --num-records 1000 --record-size 100 --throughput -1 --command-property bootstrap.servers=k1:9092 acks=all --command-config f"},
		{ProducerPerfTest, "4.1", p, "--topic t1 --num-records 1000 --record-size 100 --throughput -1 --producer-props bootstrap.servers=k1:9092 acks=all --producer.config f"},
		{ConsumerPerfTest, "4.2", c, "--bootstrap-server k3:9093 --topic t2 --num-records 500 --timeout 10000 --fetch-size 1048576 --reporting-interval 5000 --command-config f"},
		{ShareConsumerPerfTest, "5.0", c, "--bootstrap-server k3:9093 --topic t2 --num-records 500 --timeout 10000 --fetch-size 1048576 --reporting-interval 5000 --command-config f"},
		{ShareConsumerPerfTest, "", c, "--bootstrap-server k3:9093 --topic t2 --messages 500 --timeout 10000 --fetch-size 1048576 --reporting-interval 5000 --consumer.config f"},
		{E2ELatency, "4.2", e, "--bootstrap-server k1:9092 --topic lat --num-records 20000 --producer-acks all --record-size 512 --command-config f"},
		{E2ELatency, "3.9", e, "k1:9092 lat 20000 all 512 f"},
	} {
		args, err := Args(tc.kind, tc.v, tc.spec, "f")
		if err != nil {
			t.Fatalf("%s@%s: %v", tc.kind, tc.v, err)
		}
		if got := strings.Join(args, " "); got != tc.want {
			t.Errorf("%s@%s\n got %s\nwant %s", tc.kind, tc.v, got, tc.want)
		}
	}
}

func TestWriteConfig(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"sasl.jaas.config": `m required password="a\b";`, "k": " lead\nline", "a=b": "c"}
	path, err := WriteConfig(dir, props)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v, want 0600", fi.Mode(), err)
	}
	data, _ := os.ReadFile(path)
	back, err := rundoc.ParseProperties(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if back["sasl.jaas.config"] != props["sasl.jaas.config"] {
		t.Errorf("read back %q", back)
	}
	if _, err := WriteConfig(dir, props); err == nil {
		t.Errorf("an existing file was overwritten")
	}
	if p, err := WriteConfig(t.TempDir(), nil); p != "" || err != nil {
		t.Errorf("no props: %q %v", p, err)
	}
}

// TestParseVersions: NAME=KIND@VERSION:PATH declares the tool's Kafka
// version, which travels to a run's child with the tool; a share consumer
// tool is told from its name although it ends like the consumer's.
func TestParseVersions(t *testing.T) {
	dir := t.TempDir()
	share := program(t, dir, "kafka-share-consumer-perf-test.sh", 0o755)
	prod := program(t, dir, "kafka-producer-perf-test.sh", 0o755)
	s, err := Parse([]string{"s=" + share, "p42=producer-perf-test@4.2:" + prod, "p421=producer-perf-test@4.2.1:" + prod, "p39=producer-perf-test@3.9:" + prod})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Tool{
		"s":    {Kind: ShareConsumerPerfTest},
		"p42":  {Kind: ProducerPerfTest, Version: "4.2"},
		"p421": {Kind: ProducerPerfTest, Version: "4.2"},
		"p39":  {Kind: ProducerPerfTest, Version: "3.9"},
	} {
		if tool, _ := s.Get(name); tool.Kind != want.Kind || tool.Version != want.Version {
			t.Errorf("%s: %+v, want kind %s version %q", name, tool, want.Kind, want.Version)
		}
	}
	back, err := FromEnv(func(string) string { return s.Env() })
	if err != nil {
		t.Fatal(err)
	}
	if tool, _ := back.Get("p42"); tool.Version != "4.2" || tool.Kind != ProducerPerfTest {
		t.Errorf("through the environment: %+v", tool)
	}
	for _, v := range []string{"x=producer-perf-test@four:" + prod, "x=producer-perf-test@4:" + prod, "x=producer-perf-test@4.2.1.0:" + prod, "x=producer-perf-test@:" + prod} {
		if _, err := Parse([]string{v}); err == nil || !strings.Contains(err.Error(), "is not a Kafka version") {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, tc := range []struct {
		v    Version
		want bool
	}{{"", false}, {"3.9", false}, {"4.1", false}, {"4.2", true}, {"4.10", true}, {"5.0", true}} {
		if got := tc.v.NewFlagNames(); got != tc.want {
			t.Errorf("Version(%q).NewFlagNames() = %v", tc.v, got)
		}
	}
}

func TestCheckSpec(t *testing.T) {
	var errs rundoc.FieldErrors
	CheckSpec(ProducerPerfTest, "p", []string{"topic", "mode", "props", "bootstrap-server", "num-records", "key-size"}, &errs)
	if len(errs) != 2 || errs[0].Field != "key-size" || errs[1].Field != "mode" || !strings.Contains(errs[0].Msg, "kafka-producer-perf-test.sh") {
		t.Errorf("errors %v", errs)
	}
	errs = nil
	CheckSpec(E2ELatency, "e", []string{"topic", "num-records", "record-size", "producer-props", "throughput", "mode", "print-metrics"}, &errs)
	if len(errs) != 3 || errs[0].Field != "mode" || errs[1].Field != "print-metrics" || errs[2].Field != "throughput" ||
		!strings.Contains(errs[0].Msg, "kafka-e2e-latency.sh") {
		t.Errorf("e2e errors %v", errs)
	}
}

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		kind     Kind
		workload rundoc.Workload
		script   string
	}{
		{ProducerPerfTest, rundoc.Producer, "kafka-producer-perf-test.sh"},
		{ConsumerPerfTest, rundoc.Consumer, "kafka-consumer-perf-test.sh"},
		{E2ELatency, rundoc.E2E, "kafka-e2e-latency.sh"},
		{ShareConsumerPerfTest, rundoc.Consumer, "kafka-share-consumer-perf-test.sh"},
	} {
		// Consumer runs are the consumer's by default, not the share group's.
		wantKind := tc.kind
		if tc.kind == ShareConsumerPerfTest {
			wantKind = ConsumerPerfTest
		}
		if tc.kind.Workload() != tc.workload || KindOfWorkload(tc.workload) != wantKind || tc.kind.Script() != tc.script {
			t.Errorf("%s: workload %s, script %s; KindOfWorkload(%s) = %s", tc.kind, tc.kind.Workload(), tc.kind.Script(), tc.workload, KindOfWorkload(tc.workload))
		}
		if k, ok := KindFromPath("/opt/kafka/bin/" + tc.script); !ok || k != tc.kind {
			t.Errorf("KindFromPath(%s) = %s %v", tc.script, k, ok)
		}
	}
}
