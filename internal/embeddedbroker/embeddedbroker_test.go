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
