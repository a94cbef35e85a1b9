package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestConsumerTopics: --topics 3 prefills three fresh topics with a
// third of --messages each, spread over their partitions, and the
// consumer reads them all, in each
// mode: the topics' high watermarks add up to the records the run
// counts. A run deletes the topics it created.
func TestConsumerTopics(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: three runs of the consumer")
	}
	b := startBroker(t, embeddedbroker.Options{})
	for _, mode := range []string{rundoc.ModeAssign, rundoc.ModeGroup} {
		t.Run(mode, func(t *testing.T) {
			opts, out := testOptions(t)
			opts.keepTopics = true
			topic := "cfan-" + mode
			res, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", topic, "--topics", "3",
				"--partitions", "2", "--mode", mode, "--messages", "3000", "--record-size", "100", "--profile", "none", "--timeout", "30000"), opts)
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for i := range 3 {
				name := fmt.Sprintf("%s-%04d", topic, i)
				ends := partitionEnds(t, b.Addr(), name)
				if len(ends) != 2 || ends[0] != 500 || ends[1] != 500 {
					t.Errorf("%s's partitions end at %v, want a third of 3000 spread over its 2 partitions", name, ends)
				}
				total += highWatermarks(t, b.Addr(), name)
			}
			got := metric(t, res, "records-consumed-total")
			if got != 3000 || total != 3000 || res.Measurement.PrefillRecords != 3000 {
				t.Errorf("read %v records, prefilled %d; the topics hold %d; want 3000", got, res.Measurement.PrefillRecords, total)
			}
			if metric(t, res, "bytes-consumed-total") != 3000*100 {
				t.Errorf("bytes %v for 3000 records of 100 B", metric(t, res, "bytes-consumed-total"))
			}
			if m := consumerRowRe.FindStringSubmatch(out.String()); m == nil || m[1] != "3000" {
				t.Errorf("no Kafka summary row of 3000 records:\n%s", out.String())
			}
			if cfg, _ := res.Environment.Config.Get("topics"); cfg != "3" {
				t.Errorf("config topics = %q, want 3", cfg)
			}
		})
	}

	opts, _ := testOptions(t)
	if _, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "cgone", "--topics", "2",
		"--messages", "200", "--profile", "none", "--timeout", "30000"), opts); err != nil {
		t.Fatal(err)
	}
	assertNoTopics(t, b.Addr(), "cgone-0000", "cgone-0001")
}

// TestConsumerSubscriptions: 3 topics of 2 partitions read by 2
// subscriptions of 2 consumers each, with a warm-up: every record the
// topics hold (their high watermarks) is counted once per subscription,
// the warm-up and the window together; the run says how it read and
// that the count check passed.
func TestConsumerSubscriptions(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: consumer groups join")
	}
	b := startBroker(t, embeddedbroker.Options{})
	opts, out := testOptions(t)
	opts.keepTopics = true
	res, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "csubs", "--topics", "3", "--partitions", "2",
		"--subscriptions", "2", "--consumers-per-subscription", "2", "--group", "csubs-group",
		"--messages", "3000", "--warmup-records", "300", "--record-size", "100", "--profile", "none", "--timeout", "30000"), opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var held int64
	for i := range 3 {
		held += highWatermarks(t, b.Addr(), fmt.Sprintf("csubs-%04d", i))
	}
	if held != 3000 {
		t.Errorf("the topics hold %d records, want 3000", held)
	}
	// Each subscription reads all the records: 300 each in the warm-up,
	// the rest in the window.
	if got, warm := metric(t, res, "records-consumed-total"), res.Measurement.WarmupRecords; got+float64(warm) != float64(2*held) || warm != 600 {
		t.Errorf("window %v + warm-up %d receipts, want 2 × %d records (600 in the warm-up)", got, warm, held)
	}
	if got := metric(t, res, "records-consumed-total"); metric(t, res, "bytes-consumed-total") != got*100 {
		t.Errorf("bytes %v for %v records of 100 B", metric(t, res, "bytes-consumed-total"), got)
	}
	if m := consumerRowRe.FindStringSubmatch(out.String()); m == nil || m[1] != "5400" {
		t.Errorf("no Kafka summary row of 5400 receipts:\n%s", out.String())
	}
	notes := strings.Join(res.Measurement.Notes, "\n")
	for _, want := range []string{
		"2 subscription(s), each a consumer group of 2 kafka-go Reader(s)",
		"groups csubs-group-sub0 and on",
		"count check: each of the 2 subscriptions received 3000 records (warm-up included), none of them twice",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if m, ok := res.Metric("rebalance-time"); !ok || !strings.Contains(m.Help, "every group was Stable") {
		t.Errorf("rebalance-time %+v does not say what it times with groups", m)
	}
}

// TestConsumerSubscriptionsDuration: with --duration the subscriptions
// read the topics in laps, each lap new groups, and the run's topics go
// when it ends. The warm-up has the first groups join before the
// window, so that it holds records however long a join takes.
func TestConsumerSubscriptionsDuration(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a --duration run of 1 s with consumer groups")
	}
	prev := durationBacklog
	durationBacklog = 600
	t.Cleanup(func() { durationBacklog = prev })
	b := startBroker(t, embeddedbroker.Options{})
	opts, _ := testOptions(t)
	res, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "clap", "--topics", "3", "--partitions", "2",
		"--subscriptions", "2", "--consumers-per-subscription", "2", "--duration", "1", "--warmup-records", "100", "--record-size", "64", "--profile", "none",
		"--consumer-props", "fetch.max.wait.ms=50"), opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Measurement.PrefillRecords != 700 || res.Measurement.WarmupRecords != 200 {
		t.Errorf("prefilled %d records, warm-up %d receipts; want the backlog of 600 and the warm-up's 100, read by 2 subscriptions",
			res.Measurement.PrefillRecords, res.Measurement.WarmupRecords)
	}
	got := metric(t, res, "records-consumed-total")
	if got <= 0 || metric(t, res, "bytes-consumed-total") != got*64 {
		t.Errorf("%v records, %v bytes of 64 B records", got, metric(t, res, "bytes-consumed-total"))
	}
	if notes := strings.Join(res.Measurement.Notes, "\n"); !strings.Contains(notes, "--duration 1") || !strings.Contains(notes, "lap") {
		t.Errorf("notes do not say how the window was filled:\n%s", notes)
	}
	assertNoTopics(t, b.Addr(), "clap-0000", "clap-0002")
}

// assertNoTopics fails the test when one of topics exists.
func assertNoTopics(t *testing.T, addr string, topics ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addr), Transport: tr}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range md.Topics {
		if tp.Error == nil {
			t.Errorf("topic %s still exists after its run", tp.Name)
		}
	}
}

// TestConsumerTopicsValidate: the runner refuses auto.offset.reset=latest
// with --topics or --subscriptions, as the contract refuses --from-latest,
// and more topics than the embedded broker takes.
func TestConsumerTopicsValidate(t *testing.T) {
	for _, args := range [][]string{
		{"--topics", "2", "--consumer-props", "auto.offset.reset=latest"},
		{"--subscriptions", "2", "--consumer-props", "auto.offset.reset=latest"},
	} {
		_, err := rundoc.ParseArgs(rundoc.Consumer, args, Validate)
		var fe rundoc.FieldErrors
		if !errors.As(err, &fe) || !fe.Has("consumer-props") || !strings.Contains(err.Error(), "auto.offset.reset=latest") {
			t.Errorf("%q: %v, want a consumer-props error naming the property", args, err)
		}
	}
	spec := mustParse(t, rundoc.Consumer, "--topics", "65", "--messages", "10", "--profile", "none")
	_, err := Run(context.Background(), spec, Options{})
	var fe *rundoc.FieldError
	if !errors.As(err, &fe) || fe.Field != "topics" || !strings.Contains(err.Error(), "64") {
		t.Errorf("65 topics on the embedded broker: %v, want a topics error naming the limit", err)
	}
}

// TestSubsCountError: the count check names each subscription that did
// not receive the records it should have.
func TestSubsCountError(t *testing.T) {
	c := &subsConsumer{subs: []*subscription{{id: 0}, {id: 1}, {id: 2}}}
	for _, s := range c.subs {
		s.got.Store(100)
	}
	if err := c.countError(100); err != nil {
		t.Errorf("every subscription has its 100: %v", err)
	}
	c.subs[1].got.Store(99)
	err := c.countError(100)
	if err == nil || !strings.Contains(err.Error(), "subscription 1 received 99") || strings.Contains(err.Error(), "subscription 0") {
		t.Errorf("subscription 1 short: %v", err)
	}
}
