package runner

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestE2EKafkaMode: Kafka's mode prints the tool's lines (topic
// creation when it creates the topic, progress for records 0, 1000 and
// 2000, the average and percentiles), receives every record once, and
// reports the e2e metrics; a second run on the topic creates nothing.
func TestE2EKafkaMode(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	opts, out := testOptions(t)
	spec := mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "e2e-kafka", "--num-records", "2001", "--record-size", "20", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	want := regexp.MustCompile(`^Topic "e2e-kafka" does not exist\. Will create topic with 1 partition\(s\) and replication factor = 1\n` +
		`0\t\d+\.\d+(E-?\d+)?\n1000\t\d+\.\d+(E-?\d+)?\n2000\t\d+\.\d+(E-?\d+)?\n` +
		`Avg latency: \d+\.\d{4} ms\nPercentiles: 50th = \d+, 99th = \d+, 99\.9th = \d+\n$`)
	if !want.MatchString(out.String()) {
		t.Errorf("output is not the tool's:\n%s", out)
	}
	if res.Output != out.String() {
		t.Errorf("result.json's output %q differs from stdout %q", res.Output, out)
	}
	for name, v := range map[string]float64{"records-sent": 2001, "records-received": 2001, "records-lost": 0, "records-duplicated": 0} {
		if got := metric(t, res, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if p50, p99, mx := metric(t, res, "e2e-latency-p50"), metric(t, res, "e2e-latency-p99"), metric(t, res, "e2e-latency-max"); !(p50 > 0 && p50 <= p99 && p99 <= mx) {
		t.Errorf("e2e-latency p50 %v, p99 %v, max %v: not ordered", p50, p99, mx)
	}
	if res.Environment.Config.Mode != "kafka" {
		t.Errorf("config mode %q, want kafka", res.Environment.Config.Mode)
	}
	checkHistograms(t, res, 2001, rundoc.HistE2ELatency)
	// The output imports as the tool's would: an e2e run whose average
	// is kbench's own (exact nanoseconds printed to 0.0001 ms against the
	// histogram's 3 significant digits).
	imp, err := kafkafmt.ParseOutput(strings.NewReader(out.String()))
	if err != nil {
		t.Fatalf("importing kbench's own output: %v", err)
	}
	got := map[string]float64{}
	for _, m := range imp.Metrics {
		got[m.Name] = m.Value
	}
	if avg := metric(t, res, "e2e-latency-avg"); imp.Tool != kafkafmt.ToolE2E || math.Abs(got["e2e-latency-avg"]-avg) > 0.01*avg+0.0001 {
		t.Errorf("imported %s %v, kbench's own e2e-latency-avg %v", imp.Tool, got, avg)
	}
	if !(got["e2e-latency-p50"] <= got["e2e-latency-p99"] && got["e2e-latency-p99"] <= got["e2e-latency-p999"]) {
		t.Errorf("imported percentiles not ordered: %v", got)
	}

	opts, out = testOptions(t)
	spec = mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "e2e-kafka", "--num-records", "3", "--producer-props", "acks=1", "--profile", "none")
	if _, err := Run(context.Background(), spec, opts); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if strings.Contains(out.String(), "does not exist") || !strings.HasPrefix(out.String(), "0\t") {
		t.Errorf("second run on an existing topic printed:\n%s", out)
	}
}

// TestE2ERateLinger is the physics of linger.ms: at 2,000 records/s of
// 100 B a batch (Kafka's default batch.size, 16384 bytes) holds about 100
// records after 50 ms, so it never fills first and every batch waits the
// whole linger; records join it uniformly over that wait, so their
// latency is spread evenly over 0–50 ms plus the round trip: p50 near
// 25 ms, p99 near 50 ms, and never below (a slow machine adds to both),
// and every record is received once.
func TestE2ERateLinger(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a paced run of 2.5 s")
	}
	b := startBroker(t, embeddedbroker.Options{})
	opts, out := testOptions(t)
	spec := mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "e2e-rate", "--throughput", "2000",
		"--num-records", "5000", "--record-size", "100", "--producer-props", "linger.ms=50", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for name, v := range map[string]float64{"records-sent": 5000, "records-received": 5000, "records-lost": 0, "records-duplicated": 0} {
		if got := metric(t, res, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	// Lower bounds only: linger.ms puts a floor under the latency that no
	// machine lowers, while a loaded machine raises both figures by as
	// much as it likes (that is not the behaviour under test).
	p50, p99 := metric(t, res, "e2e-latency-p50"), metric(t, res, "e2e-latency-p99")
	t.Logf("e2e-latency-p50 %.1f ms, p99 %.1f ms (linger.ms=50)", p50, p99)
	if p50 < 15 {
		t.Errorf("e2e-latency-p50 = %v ms, want at least 15 (records wait half of linger.ms=50 on average)", p50)
	}
	if p99 < 35 || p99 < p50 {
		t.Errorf("e2e-latency-p99 = %v ms (p50 %v), want at least 35 (the first record of a batch waits all of linger.ms=50)", p99, p50)
	}
	if in := metric(t, res, "e2e-latency-intended-p50"); in < p50 {
		t.Errorf("e2e-latency-intended-p50 %v < e2e-latency-p50 %v: a record cannot be sent before it is due", in, p50)
	}
	metric(t, res, "publish-latency-p99")
	metric(t, res, "consume-rate")
	checkHistograms(t, res, 5000, rundoc.HistE2ELatency, rundoc.HistE2ELatencyIntended, rundoc.HistPublishLatency, rundoc.HistPublishDelay)
	checkIntervalLog(t, opts.OutDir, res)
	if len(res.Series) == 0 {
		t.Error("no interval series")
	}
	if res.Environment.Config.Mode != "rate" {
		t.Errorf("config mode %q, want rate", res.Environment.Config.Mode)
	}
}

// TestE2ERateUnthrottled: --mode rate with --throughput -1 sends as fast
// as the producer can while the consumer reads (how a sweep measures rate
// mode's maximum): every record is received once, the rates are reported,
// and there is no schedule, so no intended-time latency.
func TestE2ERateUnthrottled(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	opts, out := testOptions(t)
	spec := mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "e2e-unthrottled", "--mode", "rate",
		"--num-records", "20000", "--record-size", "100", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for name, v := range map[string]float64{"records-sent": 20000, "records-received": 20000, "records-lost": 0, "records-duplicated": 0} {
		if got := metric(t, res, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if sent, got := metric(t, res, "record-send-rate"), metric(t, res, "consume-rate"); !(got > 0 && got == sent) {
		t.Errorf("consume-rate %v, record-send-rate %v: want equal and positive (one window, every record received)", got, sent)
	}
	metric(t, res, "e2e-latency-p99")
	checkHistograms(t, res, 20000, rundoc.HistE2ELatency, rundoc.HistPublishLatency)
	for _, m := range res.Metrics {
		if strings.HasPrefix(m.Name, "e2e-latency-intended") {
			t.Errorf("unthrottled run reports %s: there is no schedule", m.Name)
		}
	}
	if res.Environment.Config.Mode != "rate" {
		t.Errorf("config mode %q, want rate", res.Environment.Config.Mode)
	}
	if !strings.Contains(strings.Join(res.Measurement.Notes, " "), "unthrottled") {
		t.Errorf("notes do not say the producer was unthrottled: %q", res.Measurement.Notes)
	}
}

// TestE2EAcks: Kafka's mode takes acks 1 or all, as the tool, with its
// words; rate mode takes what the producer does.
func TestE2EAcks(t *testing.T) {
	for _, acks := range []string{"0", "-1"} {
		_, err := rundoc.ParseArgs(rundoc.E2E, []string{"--producer-props", "acks=" + acks}, Validate)
		var fe *rundoc.FieldError
		if !errors.As(err, &fe) || fe.Field != "producer-props" || !strings.Contains(fe.Msg, "Latency testing requires synchronous acknowledgement. Please use 1 or all") {
			t.Errorf("acks=%s: %v, want the tool's refusal on producer-props", acks, err)
		}
	}
	for _, args := range [][]string{{"--producer-props", "acks=1"}, {"--producer-props", "acks=all"}, {"--throughput", "10", "--producer-props", "acks=-1", "fetch.max.wait.ms=100"}} {
		if _, err := rundoc.ParseArgs(rundoc.E2E, args, Validate); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestJavaRandom: the values are the tool's, drawn by java.util.Random(0)
// (numbers printed by OpenJDK 17).
func TestJavaRandom(t *testing.T) {
	r := newJavaRandom(0)
	var got []int32
	for range 12 {
		got = append(got, r.nextInt(26))
	}
	want := []int32{18, 18, 23, 21, 13, 9, 7, 15, 3, 16, 3, 23}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Random(0).nextInt(26) × 12 = %v, want %v", got, want)
		}
	}
	if v := newJavaRandom(0).next(32); v != -1155484576 {
		t.Errorf("Random(0).nextInt() = %d, want -1155484576", v)
	}
}

// TestE2ECount: a record received twice is counted once and as a
// duplicate; the count check names what is missing or repeated.
func TestE2ECount(t *testing.T) {
	es := newE2EStats()
	es.receive(0, 0, 10, time.Millisecond, time.Millisecond)
	es.receive(0, 200, 10, time.Millisecond, time.Millisecond)
	es.receive(0, 0, 10, time.Millisecond, time.Millisecond)
	if es.received != 2 || es.dups != 1 || es.hist.count() != 2 {
		t.Fatalf("received %d, dups %d, timed %d; want 2, 1, 2", es.received, es.dups, es.hist.count())
	}
	err := e2eCountError(3, es)
	if err == nil || !strings.Contains(err.Error(), "3 records acknowledged, 2 received (1 missing), 1 received more than once") {
		t.Errorf("count error = %v", err)
	}
	ok := newE2EStats()
	ok.receive(0, 0, 10, time.Millisecond, 0)
	if err := e2eCountError(1, ok); err != nil {
		t.Errorf("one sent, one received: %v", err)
	}
	// With two subscriptions each record is due twice, once to each.
	subs := newE2EStats()
	subs.subs = 2
	subs.receive(0, 5, 10, time.Millisecond, 0)
	subs.receive(1, 5, 10, time.Millisecond, 0)
	subs.receive(1, 5, 10, time.Millisecond, 0)
	subs.receive(0, 6, 10, time.Millisecond, 0)
	if subs.received != 3 || subs.dups != 1 {
		t.Fatalf("two subscriptions: received %d, dups %d; want 3, 1", subs.received, subs.dups)
	}
	if err := e2eCountError(2, subs); err == nil || !strings.Contains(err.Error(), "2 records acknowledged (each to be received by 2 subscriptions), 3 received (1 missing)") {
		t.Errorf("two subscriptions' count error = %v", err)
	}
}

// TestE2EStamp: what the producer writes, the consumer reads.
func TestE2EStamp(t *testing.T) {
	// Two producers' stampers share the run's numbering.
	numbers := &atomic.Uint64{}
	s, other := e2eStamper{seq: numbers}, e2eStamper{seq: numbers}
	payload := []byte(strings.Repeat("A", 30))
	a := s.stamp(payload, 7*time.Millisecond, 5*time.Millisecond)
	bb := other.stamp(payload, 9*time.Millisecond, 6*time.Millisecond)
	seq, intended, sent, ok := readStamp(a)
	if !ok || seq != 0 || intended != 5*time.Millisecond || sent != 7*time.Millisecond || string(a[24:]) != "AAAAAA" {
		t.Errorf("first stamp read %d %v %v %v %q", seq, intended, sent, ok, a[24:])
	}
	if seq, _, _, _ := readStamp(bb); seq != 1 {
		t.Errorf("second record's sequence %d, want 1", seq)
	}
	if _, _, _, ok := readStamp(payload[:10]); ok {
		t.Error("a 10-byte value read as stamped")
	}
}
