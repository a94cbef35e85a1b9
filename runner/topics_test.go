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
