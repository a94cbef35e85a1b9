package embeddedbroker

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batch is a record batch header (magic 2) claiming n records, with body
// bytes after the header.
func batch(n int32, body int) []byte {
	b := make([]byte, 61+body)
	binary.BigEndian.PutUint32(b[8:12], uint32(49+body))
	b[16] = 2
	binary.BigEndian.PutUint32(b[57:61], uint32(n))
	return b
}

func TestProducedRecords(t *testing.T) {
	two := append(batch(3, 10), batch(5, 0)...)
	for _, tc := range []struct {
		name    string
		records [][]byte
		want    int
	}{
		{"two batches in one partition", [][]byte{two}, 8},
		{"two partitions", [][]byte{batch(2, 4), batch(7, 1)}, 9},
		{"truncated second batch", [][]byte{append(batch(3, 0), batch(4, 10)[:30]...)}, 3},
		{"length past the end", [][]byte{batch(3, 10)[:40]}, 0},
		{"magic 1", [][]byte{func() []byte { b := batch(3, 0); b[16] = 1; return b }()}, 0},
		{"empty", [][]byte{nil}, 0},
	} {
		req := kmsg.NewPtrProduceRequest()
		topic := kmsg.NewProduceRequestTopic()
		for i, r := range tc.records {
			p := kmsg.NewProduceRequestTopicPartition()
			p.Partition, p.Records = int32(i), r
			topic.Partitions = append(topic.Partitions, p)
		}
		req.Topics = append(req.Topics, topic)
		if got := producedRecords(req); got != tc.want {
			t.Errorf("%s: %d records, want %d", tc.name, got, tc.want)
		}
	}
}

// TestThrottleHold: requests wait their own service time behind the
// records before them; an idle broker starts afresh.
func TestThrottleHold(t *testing.T) {
	th := &produceThrottle{rate: 1000}
	t0 := time.Unix(1000, 0)
	for _, step := range []struct {
		at   time.Duration
		n    int
		want time.Duration
	}{
		{0, 100, 100 * time.Millisecond},
		{0, 100, 200 * time.Millisecond},                    // queued behind the first
		{50 * time.Millisecond, 50, 200 * time.Millisecond}, // free at 200 ms, +50 ms
		{time.Second, 10, 10 * time.Millisecond},            // idle since 250 ms
	} {
		if got := th.hold(t0.Add(step.at), step.n); got != step.want {
			t.Errorf("at %v, %d records: hold %v, want %v", step.at, step.n, got, step.want)
		}
	}
}

// TestProduceRateCapsTheBroker: through a real client, records reach a
// throttled broker no faster than its rate (a lower bound on the time,
// which a slow machine only lengthens), and every one is stored.
func TestProduceRateCapsTheBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	b, err := Start(Options{Listen: "127.0.0.1:0", ProduceRate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: "capped", RequiredAcks: kafka.RequireAll, AllowAutoTopicCreation: true,
		BatchSize: 100, BatchTimeout: time.Millisecond, Transport: &kafka.Transport{}}
	defer w.Close()
	// The topic first, outside the timing.
	for i := 0; ; i++ {
		if err = w.WriteMessages(ctx, kafka.Message{Value: []byte("x")}); err == nil || i == 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]kafka.Message, 600)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: []byte("y")}
	}
	start := time.Now()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 550*time.Millisecond {
		t.Errorf("600 records took %v at a cap of 1000 records/s, want at least 0.6 s", took)
	}
	conn, err := kafka.DialLeader(ctx, "tcp", b.Addr(), "capped", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if last, err := conn.ReadLastOffset(); err != nil || last != 601 {
		t.Errorf("high watermark %d (%v), want 601", last, err)
	}
}

// TestRequestRecords: a whole Produce request, as a client frames it
// (size, header with client id, flexible tags from v9), is counted; other
// requests and garbage count none.
func TestRequestRecords(t *testing.T) {
	for _, version := range []int16{3, 7, 9, 11} {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(version)
		req.Acks = -1
		topic := kmsg.NewProduceRequestTopic()
		topic.Topic = "t"
		p := kmsg.NewProduceRequestTopicPartition()
		p.Records = append(batch(3, 10), batch(4, 0)...)
		topic.Partitions = append(topic.Partitions, p)
		req.Topics = append(req.Topics, topic)
		framed := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kbench")).AppendRequest(nil, req, 7)
		if got := requestRecords(framed[4:]); got != 7 {
			t.Errorf("Produce v%d: %d records, want 7", version, got)
		}
		if got := requestRecords(framed[4 : len(framed)-20]); got != 0 {
			t.Errorf("Produce v%d cut short: %d records, want 0", version, got)
		}
	}
	meta := kmsg.NewPtrMetadataRequest()
	if got := requestRecords(kmsg.NewRequestFormatter().AppendRequest(nil, meta, 1)[4:]); got != 0 {
		t.Errorf("Metadata: %d records", got)
	}
	for _, b := range [][]byte{nil, {0, 0}, {0, 0, 0, 7, 0, 0, 0, 1, 0x7f, 0xff}} {
		if got := requestRecords(b); got != 0 {
			t.Errorf("%x: %d records", b, got)
		}
	}
}
