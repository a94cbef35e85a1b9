package embeddedbroker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func TestStartServesKafkaOnTheAskedAddress(t *testing.T) {
	b, err := Start(Options{Listen: "127.0.0.1:0", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !strings.HasPrefix(b.Addr(), "127.0.0.1:") || strings.HasSuffix(b.Addr(), ":0") {
		t.Fatalf("Addr = %q, want the bound loopback port", b.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: "auto", RequiredAcks: kafka.RequireAll, AllowAutoTopicCreation: true,
		Transport: &kafka.Transport{}}
	defer w.Close()
	var err2 error
	for i := 0; i < 20; i++ { // the first write may race the topic's creation
		if err2 = w.WriteMessages(ctx, kafka.Message{Value: []byte("x")}); err2 == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err2 != nil {
		t.Fatalf("write to an auto-created topic: %v", err2)
	}
	conn, err := kafka.DialContext(ctx, "tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	parts, err := conn.ReadPartitions("auto")
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Errorf("auto-created topic has %d partitions, want 3", len(parts))
	}
}

func TestStartRejectsBadAddress(t *testing.T) {
	if _, err := Start(Options{Listen: "no-port"}); err == nil {
		t.Error("a listen address without a port was accepted")
	}
}

// TestSeveralBrokersTakeReplicas: a cluster of three brokers tells
// clients of all three, the first on the asked address, and takes a
// topic of three replicas (OMB's stock replicationFactor) but not of
// four; a one-broker cluster refuses three.
func TestSeveralBrokersTakeReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	create := func(b *Broker, topic string, replicas int) error {
		client := &kafka.Client{Addr: kafka.TCP(b.Addr()), Transport: &kafka.Transport{}}
		resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
			Topic: topic, NumPartitions: 2, ReplicationFactor: replicas,
			ConfigEntries: []kafka.ConfigEntry{{ConfigName: "min.insync.replicas", ConfigValue: "2"}}}}})
		if err != nil {
			return err
		}
		return resp.Errors[topic]
	}

	three, err := Start(Options{Brokers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer three.Close()
	addrs := three.Addrs()
	if len(addrs) != 3 || addrs[0] != three.Addr() {
		t.Fatalf("Addrs = %q, want three with Addr %q first", addrs, three.Addr())
	}
	if err := create(three, "r3", 3); err != nil {
		t.Fatalf("replication factor 3 on three brokers: %v", err)
	}
	conn, err := kafka.DialContext(ctx, "tcp", three.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	parts, err := conn.ReadPartitions("r3")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if len(p.Replicas) != 3 {
			t.Errorf("partition %d has %d replicas, want 3", p.ID, len(p.Replicas))
		}
	}
	if err := create(three, "r4", 4); err == nil {
		t.Error("replication factor 4 on three brokers was accepted")
	}

	one, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if err := create(one, "r3", 3); err == nil {
		t.Error("replication factor 3 on one broker was accepted")
	}
	if _, err := Start(Options{Brokers: MaxBrokers + 1}); err == nil {
		t.Errorf("%d brokers were accepted", MaxBrokers+1)
	}
}
