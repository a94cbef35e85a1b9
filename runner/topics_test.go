package runner

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestProducerTopics: --topics 3 sends the records over three topics,
// TOPIC-0000 to -0002, about a third each, and every record the run
// counts is in the broker (their high watermarks add up to records-sent);
// the same topics existing already refuse the next run, naming them; a
// run deletes the topics it created.
func TestProducerTopics(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	spec := func(topic string) rundoc.Spec {
		return mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", topic, "--topics", "3", "--partitions", "2",
			"--num-records", "3000", "--record-size", "100", "--profile", "none")
	}
	opts, _ := testOptions(t)
	opts.keepTopics = true
	res, err := Run(context.Background(), spec("fan"), opts)
	if err != nil {
		t.Fatalf("producer over 3 topics: %v", err)
	}
	sent := metric(t, res, "records-sent")
	var total int64
	for _, topic := range []string{"fan-0000", "fan-0001", "fan-0002"} {
		n := highWatermarks(t, b.Addr(), topic)
		if math.Abs(float64(n)-sent/3) > sent/6 {
			t.Errorf("%s holds %d records, want about a third of %v", topic, n, sent)
		}
		total += n
	}
	if float64(total) != sent || sent != 3000 {
		t.Errorf("the topics hold %d records, the run counts %v, want 3000", total, sent)
	}
	if got, _ := res.Environment.Config.Get("topics"); got != "3" {
		t.Errorf("config topics = %q, want 3", got)
	}

	again, _ := testOptions(t)
	_, err = Run(context.Background(), spec("fan"), again)
	var fe *rundoc.FieldError
	if !errors.As(err, &fe) || fe.Field != "topics" || !strings.Contains(err.Error(), "fan-0000") {
		t.Errorf("a second run of the same topics: %v, want a topics error naming fan-0000", err)
	}

	dropped, _ := testOptions(t)
	if _, err := Run(context.Background(), spec("gone"), dropped); err != nil {
		t.Fatalf("producer over 3 topics: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(b.Addr()), Transport: tr}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"gone-0000", "gone-0002"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range md.Topics {
		if tp.Error == nil {
			t.Errorf("topic %s still exists after its run", tp.Name)
		}
	}
}

// TestTopicsOnTheEmbeddedBroker: more topics than the embedded broker
// takes are refused before anything starts.
func TestTopicsOnTheEmbeddedBroker(t *testing.T) {
	spec := mustParse(t, rundoc.Producer, "--topics", "65", "--num-records", "10", "--profile", "none")
	_, err := Run(context.Background(), spec, Options{})
	var fe *rundoc.FieldError
	if !errors.As(err, &fe) || fe.Field != "topics" || !strings.Contains(err.Error(), "64") {
		t.Errorf("65 topics on the embedded broker: %v, want a topics error naming the limit", err)
	}
}

// TestE2ESubscriptions: rate mode over 2 topics with 2 subscriptions of
// 2 consumers each: every record is in the broker, each subscription
// receives each record once (so twice as many receipts as records, each
// timed), and the run's topics are the ones of --topics.
func TestE2ESubscriptions(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: consumer groups join, then a paced run of 1 s")
	}
	b := startBroker(t, embeddedbroker.Options{})
	opts, _ := testOptions(t)
	opts.keepTopics = true
	spec := mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "subs", "--topics", "2", "--partitions", "2",
		"--subscriptions", "2", "--consumers-per-subscription", "2", "--throughput", "4000", "--num-records", "4000", "--record-size", "100", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var total int64
	for _, topic := range []string{"subs-0000", "subs-0001"} {
		n := highWatermarks(t, b.Addr(), topic)
		if n < 1500 || n > 2500 {
			t.Errorf("%s holds %d records, want about half of 4000", topic, n)
		}
		total += n
	}
	if total != 4000 || metric(t, res, "records-sent") != 4000 {
		t.Errorf("the topics hold %d records, the run sent %v; want 4000", total, metric(t, res, "records-sent"))
	}
	if got, lost, dup := metric(t, res, "records-received"), metric(t, res, "records-lost"), metric(t, res, "records-duplicated"); got != 8000 || lost != 0 || dup != 0 {
		t.Errorf("received %v, lost %v, duplicated %v; want 8000 (4000 per subscription), 0, 0", got, lost, dup)
	}
	// Every receipt is timed; every record's publish once.
	for _, h := range res.Histograms {
		want := map[string]int64{rundoc.HistE2ELatency: 8000, rundoc.HistE2ELatencyIntended: 8000}[h.Kind]
		if want == 0 {
			want = 4000
		}
		if h.Count != want {
			t.Errorf("histogram %s holds %d values, want %d", h.Kind, h.Count, want)
		}
	}
	if notes := strings.Join(res.Measurement.Notes, "\n"); !strings.Contains(notes, "2 subscription(s), each a consumer group of 2 kafka-go Reader(s)") {
		t.Errorf("notes do not say how it consumed:\n%s", notes)
	}
}

// TestTopicShape: --replication-factor and --topic-config reach the
// topics the run creates (OMB's driver replicationFactor and
// topicConfig): on a cluster of three brokers each partition has three
// replicas and the topic holds the configs given; on the embedded
// broker the run starts it as three brokers, which a factor of 3 needs.
func TestTopicShape(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{Brokers: 3})
	opts, _ := testOptions(t)
	opts.keepTopics = true
	spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "shaped", "--topics", "2", "--partitions", "2",
		"--replication-factor", "3", "--topic-config", "min.insync.replicas=2", "retention.ms=600000",
		"--num-records", "100", "--record-size", "100", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, _ := res.Environment.Config.Get("replication.factor"); got != "3" {
		t.Errorf("config replication.factor = %q, want 3", got)
	}
	if got, _ := res.Environment.Config.Get("topic.min.insync.replicas"); got != "2" {
		t.Errorf("config topic.min.insync.replicas = %q, want 2", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	parts, err := conn.ReadPartitions("shaped-0001")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if len(p.Replicas) != 3 {
			t.Errorf("shaped-0001 partition %d has %d replicas, want 3", p.ID, len(p.Replicas))
		}
	}
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(b.Addr()), Transport: tr}
	dc, err := client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: "shaped-0000", ConfigNames: []string{"min.insync.replicas", "retention.ms"}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range dc.Resources {
		for _, e := range r.ConfigEntries {
			got[e.ConfigName] = e.ConfigValue
		}
	}
	if got["min.insync.replicas"] != "2" || got["retention.ms"] != "600000" {
		t.Errorf("shaped-0000's configs are %v, want min.insync.replicas=2 and retention.ms=600000", got)
	}

	embedded, _ := testOptions(t)
	spec = mustParse(t, rundoc.Producer, "--topics", "1", "--replication-factor", "3", "--topic-config", "min.insync.replicas=2",
		"--num-records", "100", "--record-size", "100", "--profile", "none")
	res, err = Run(context.Background(), spec, embedded)
	if err != nil {
		t.Fatalf("replication factor 3 on the embedded broker: %v", err)
	}
	if !strings.Contains(res.Environment.Broker, "3 brokers") {
		t.Errorf("broker %q does not say it ran as 3 brokers", res.Environment.Broker)
	}
}
