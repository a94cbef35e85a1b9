package kafkafmt

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var impUpdate = flag.Bool("update-import", false, "rewrite testdata/import/ from impFixtures")

// impFixture is one real-looking output of a Kafka perf tool. The
// tool's own lines come from this package's renderers, so they have the
// format kbench prints (and Kafka's, which the renderers' tests check);
// log lines and old-version variants are written here.
type impFixture struct {
	name string
	text string
}

// Log lines as Kafka's tools print them on stderr, with log4j's
// "[%d] %p %m (%c)%n" (config/tools-log4j.properties).
const (
	impSLF4J = "SLF4J: Class path contains multiple SLF4J bindings.\n" +
		"SLF4J: Found binding in [jar:file:/opt/kafka/libs/slf4j-reload4j-1.7.36.jar!/org/slf4j/impl/StaticLoggerBinder.class]\n" +
		"SLF4J: Found binding in [jar:file:/opt/hadoop/share/slf4j-log4j12-1.7.30.jar!/org/slf4j/impl/StaticLoggerBinder.class]\n" +
		"SLF4J: See http://www.slf4j.org/codes.html#multiple_bindings for an explanation.\n" +
		"SLF4J: Actual binding is of type [org.slf4j.impl.Reload4jLoggerFactory]\n"
	impMetadataWarn   = "[2025-01-01 12:00:00,123] WARN [Producer clientId=perf-producer-client] Error while fetching metadata with correlation id 1 : {bench=LEADER_NOT_AVAILABLE} (org.apache.kafka.clients.NetworkClient)\n"
	impCloseInfo      = "[2025-01-01 12:00:52,901] INFO [Producer clientId=perf-producer-client] Closing the Kafka producer with timeoutMillis = 9223372036854775807 ms. (org.apache.kafka.clients.producer.KafkaProducer)\n"
	impConsumerConfig = "[2025-01-01 12:00:00,012] INFO ConsumerConfig values: \n" +
		"\tallow.auto.create.topics = true\n" +
		"\tauto.commit.interval.ms = 5000\n" +
		"\tauto.offset.reset = earliest\n" +
		"\tbootstrap.servers = [localhost:9092]\n" +
		" (org.apache.kafka.clients.consumer.ConsumerConfig)\n"
	impOffsetWarn = "[2025-01-01 12:00:17,301] WARN [Consumer clientId=perf-consumer-client, groupId=perf-consumer-12345] Offset commit failed on partition bench-0 at offset 0: The coordinator is loading and hence can't process requests. (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)\n"
)

// Counters of the fixtures.
var (
	impWindows = []ProducerCounters{
		{Records: 48120, Bytes: 48120 * 512, TotalLatencyMs: 178044, MaxLatencyMs: 598, ElapsedMs: 5004},
		{Records: 99980, Bytes: 99980 * 512, TotalLatencyMs: 189962, MaxLatencyMs: 41, ElapsedMs: 5000},
		{Records: 100031, Bytes: 100031 * 512, TotalLatencyMs: 170052, MaxLatencyMs: 35, ElapsedMs: 5001},
		{Records: 99987, Bytes: 99987 * 512, TotalLatencyMs: 219971, MaxLatencyMs: 77, ElapsedMs: 5002},
		{Records: 100008, Bytes: 100008 * 512, TotalLatencyMs: 180014, MaxLatencyMs: 29, ElapsedMs: 5000},
	}
	// impTotal is the run of impWindows plus 51874 records after
	// the last window.
	impTotal = ProducerCounters{Records: 500000, Bytes: 500000 * 512, TotalLatencyMs: 1032201, MaxLatencyMs: 598, ElapsedMs: 25596}
	impUTC   = time.UTC
)

// impProducerText renders windows and a summary.
func impProducerText(windows []ProducerCounters, total ProducerTotals) string {
	var b strings.Builder
	for _, w := range windows {
		b.WriteString(w.IntervalLine())
	}
	b.WriteString(ProducerSummary(total))
	return b.String()
}

// impProducerMetrics is a --print-metrics block of a producer.
func impProducerMetrics() string {
	client := []Tag{{"client-id", "perf-producer-client"}}
	node := func(id string) []Tag { return []Tag{{"client-id", "perf-producer-client"}, {"node-id", id}} }
	topic := []Tag{{"client-id", "perf-producer-client"}, {"topic", "bench"}}
	return PrintMetrics([]Metric{
		{Group: "app-info", Name: "commit-id", Tags: client, Value: "b3b1bc5a7d2c9e10"},
		{Group: "app-info", Name: "start-time-ms", Tags: client, Value: int64(1735732800011)},
		{Group: "app-info", Name: "version", Tags: client, Value: "3.9.0"},
		{Group: "kafka-metrics-count", Name: "count", Tags: client, Value: 112.0},
		{Group: "producer-metrics", Name: "batch-size-avg", Tags: client, Value: 16201.37},
		{Group: "producer-metrics", Name: "compression-rate-avg", Tags: client, Value: math.NaN()},
		{Group: "producer-metrics", Name: "record-error-rate", Tags: client, Value: 0.0},
		{Group: "producer-metrics", Name: "record-send-rate", Tags: client, Value: 19872.3456},
		{Group: "producer-metrics", Name: "record-send-total", Tags: client, Value: 500000.0},
		{Group: "producer-metrics", Name: "request-latency-avg", Tags: client, Value: 2.2514},
		{Group: "producer-metrics", Name: "request-latency-max", Tags: client, Value: 533.0},
		{Group: "producer-metrics", Name: "txn-commit-time-ns-total", Tags: client, Value: float32(0)},
		{Group: "producer-node-metrics", Name: "request-rate", Tags: node("node--1"), Value: 0.0333},
		{Group: "producer-node-metrics", Name: "request-rate", Tags: node("node-1"), Value: 120.45},
		{Group: "producer-topic-metrics", Name: "byte-total", Tags: topic, Value: 256000000.0},
		{Group: "producer-topic-metrics", Name: "record-send-rate", Tags: topic, Value: 19872.3456},
	})
}

// impConsumerMetrics is a --print-metrics block of a consumer.
func impConsumerMetrics() string {
	client := []Tag{{"client-id", "perf-consumer-client"}}
	topic := []Tag{{"client-id", "perf-consumer-client"}, {"topic", "bench"}}
	part := func(p string) []Tag {
		return []Tag{{"client-id", "perf-consumer-client"}, {"topic", "bench"}, {"partition", p}}
	}
	return PrintMetrics([]Metric{
		{Group: "consumer-coordinator-metrics", Name: "rebalance-latency-avg", Tags: client, Value: 3012.0},
		{Group: "consumer-coordinator-metrics", Name: "last-rebalance-seconds-ago", Tags: client, Value: 31.0},
		{Group: "consumer-fetch-manager-metrics", Name: "bytes-consumed-rate", Tags: client, Value: 3157960.12},
		{Group: "consumer-fetch-manager-metrics", Name: "bytes-consumed-rate", Tags: topic, Value: 3157960.12},
		{Group: "consumer-fetch-manager-metrics", Name: "fetch-latency-avg", Tags: client, Value: 12.5},
		{Group: "consumer-fetch-manager-metrics", Name: "records-consumed-total", Tags: client, Value: 1000000.0},
		{Group: "consumer-fetch-manager-metrics", Name: "records-lag-max", Tags: client, Value: math.Inf(-1)},
		{Group: "consumer-fetch-manager-metrics", Name: "records-lag", Tags: part("0"), Value: 0.0},
		{Group: "consumer-fetch-manager-metrics", Name: "records-lag", Tags: part("1"), Value: 12.0},
		{Group: "consumer-metrics", Name: "connection-count", Tags: client, Value: 2.0},
		{Group: "consumer-metrics", Name: "last-poll-seconds-ago", Tags: client, Value: 1},
	})
}

// impOldColumns keeps the first n comma-separated columns of a rendered row,
// as Kafka before 2.0 printed only those.
func impOldColumns(row string, n int) string {
	f := strings.Split(strings.TrimSuffix(row, "\n"), ", ")
	return strings.Join(f[:n], ", ") + "\n"
}

// impDecimalCommas rewrites the decimal points of numbers, as a JVM with a
// German locale prints them.
func impDecimalCommas(s string) string {
	return regexp.MustCompile(`(?m)(\d)\.(\d+)([ )]|$)`).ReplaceAllString(s, "$1,$2$3")
}

// Consumer runs of the fixtures.
var (
	impConsumer = ConsumerCounters{StartMs: 1735732800123, EndMs: 1735732831789, Bytes: 1_000_000 * 100, Messages: 1_000_000, RebalanceMs: 3021}
	// impDetailedEnds etc. describe --show-detailed-stats intervals.
	impDetailedEnds = []int64{1735732805150, 1735732810151, 1735732815160, 1735732820163, 1735732825170, 1735732830171}
	impDetailedMsgs = []int64{18_432, 71_680, 125_952, 125_952, 177_152, 231_424}
	impDetailedReb  = []int64{3021, 0, 0, 5003, 12, 0}
)

// impDetailedRows renders the fixture's detailed rows.
// Thread t reads (10+t)/10 times the messages of thread 0.
func impDetailedRows(thread int) []string {
	start, last := int64(1735732800123), int64(0)
	var rows []string
	for i, end := range impDetailedEnds {
		msgs := impDetailedMsgs[i] * int64(10+thread) / 10
		c := ConsumerIntervalCounters{ThreadID: thread, StartMs: start, EndMs: end, Bytes: msgs * 100, LastBytes: last * 100,
			Messages: msgs, LastMessages: last, RebalanceMs: impDetailedReb[i]}
		rows = append(rows, ConsumerDetailedRow(c.Row(impUTC)))
		start, last = end, msgs
	}
	return rows
}

// impFixtures are the files of testdata/import/.
func impFixtures() []impFixture {
	total := impTotal.Totals(2, 6, 14, 561)
	var windows strings.Builder
	for _, w := range impWindows {
		windows.WriteString(w.IntervalLine())
	}

	// Warm-up: 150000 records, two windows before the steady state, then
	// the steady-state windows and both summaries.
	warm := impWindows[:2]
	steadyWindows := impWindows[2:]
	steadyTotal := ProducerCounters{Records: 350000, Bytes: 350000 * 512, TotalLatencyMs: 665012, MaxLatencyMs: 77, ElapsedMs: 17601}
	st := steadyTotal.Totals(2, 5, 11, 77)
	st.SteadyState = true
	var java strings.Builder
	java.WriteString(ProducerWarmupNotice(150000))
	for _, w := range warm {
		java.WriteString(w.IntervalLine())
	}
	java.WriteString(ProducerSteadyStateNotice())
	for _, w := range steadyWindows {
		java.WriteString(w.IntervalLine())
	}
	java.WriteString(ProducerSummary(total))
	java.WriteString(ProducerSummary(st))
	java.WriteString(impProducerMetrics())

	var kbench strings.Builder
	kbench.WriteString(ProducerWarmupNotice(150000))
	for _, w := range steadyWindows {
		kbench.WriteString(w.IntervalLine())
	}
	kbench.WriteString(ProducerSummary(st))

	// Kafka before 2.x: " max latency." on periodic lines.
	old := strings.ReplaceAll(windows.String(), " ms max latency.", " max latency.") + ProducerSummary(total)

	// Late-2024 trunk printed the summary's records/sec with %.1f.
	oneDecimal := strings.Replace(ProducerSummary(total), JavaFixed(total.RecordsPerSec, 6), JavaFixed(total.RecordsPerSec, 1), 1)

	intervals := impSLF4J + impMetadataWarn + windows.String() + impCloseInfo + ProducerSummary(total)

	// Windows: CRLF, a UTF-8 byte order mark, trailing spaces, blank
	// lines.
	var crlf strings.Builder
	crlf.WriteString("\ufeff")
	for i, l := range strings.SplitAfter(impProducerText(impWindows, total), "\n") {
		if l == "" {
			continue
		}
		if i == 2 {
			crlf.WriteString("\r\n")
		}
		crlf.WriteString(strings.TrimSuffix(l, "\n") + "   \r\n")
	}
	crlf.WriteString("\r\n")

	row := ConsumerSummaryRow(impConsumer.Row(impUTC))
	rows := impDetailedRows(0)

	var detailed strings.Builder
	detailed.WriteString(ConsumerHeader(true))
	for i, r := range rows {
		if i == 3 {
			detailed.WriteString(impOffsetWarn)
		}
		detailed.WriteString(r)
	}
	detailed.WriteString(ConsumerTimeoutWarning(10000))
	detailed.WriteString(impConsumerMetrics())

	// The old (ZooKeeper) consumer of Kafka 0.9 to 1.x with --threads 3:
	// rows of 6 columns, interleaved.
	var threads strings.Builder
	threads.WriteString("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n")
	perThread := [][]string{impDetailedRows(0), impDetailedRows(1), impDetailedRows(2)}
	for i := range 3 {
		for th := range 3 {
			threads.WriteString(impOldColumns(perThread[th][i], 6))
		}
	}

	// Kafka 0.9/0.10 --show-detailed-stats: the header has no threadId,
	// the rows do.
	var v010 strings.Builder
	v010.WriteString("time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n")
	for _, r := range rows {
		v010.WriteString(impOldColumns(r, 6))
	}

	// Kafka 0.8: a fetch.size column.
	f := strings.Split(impOldColumns(row, 6), ", ")
	v08row := strings.Join(append(f[:2:2], append([]string{"1048576"}, f[2:]...)...), ", ")

	return []impFixture{
		{"producer_summary.txt", ProducerSummary(total)},
		{"producer_intervals.txt", intervals},
		{"producer_warmup_java.txt", java.String()},
		{"producer_warmup_kbench.txt", kbench.String()},
		{"producer_old_max_latency.txt", old},
		{"producer_summary_1decimal.txt", oneDecimal},
		{"producer_crlf.txt", crlf.String()},
		{"producer_decimal_comma.txt", impDecimalCommas(windows.String() + ProducerSummary(total))},
		{"producer_metrics.txt", impProducerText(impWindows, total) + impProducerMetrics()},
		// Kafka 4.2 run with KIP-1147's deprecated names: the notices come
		// first, on stdout (ProducerPerformance's println).
		{"producer_notices_4.2.txt", impProducerDeprecations + windows.String() + ProducerSummary(total)},
		{"consumer_summary.txt", impSLF4J + impConsumerConfig + "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test\n" +
			ConsumerHeader(false) + row},
		{"consumer_hide_header.txt", row},
		// Kafka 4.2's ConsumerPerformance with --messages and
		// --consumer.config: its notices before the header.
		{"consumer_notices_4.2.txt", impShareDeprecations + ConsumerHeader(false) + row},
		{"consumer_summary_metrics.txt", ConsumerHeader(false) + row + impConsumerMetrics()},
		{"consumer_detailed.txt", detailed.String()},
		{"consumer_detailed_hide_header.txt", strings.Join(rows, "")},
		{"consumer_old_threads.txt", threads.String()},
		{"consumer_0.10_detailed.txt", v010.String()},
		{"consumer_old_summary.txt", "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n" + impOldColumns(row, 6)},
		{"consumer_0.8.txt", "start.time, end.time, fetch.size, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n" + v08row},
		{"consumer_decimal_comma.txt", impDecimalCommas(ConsumerHeader(false) + row + impConsumerMetrics())},
		{"e2e_latency.txt", impSLF4J + E2ETopicCreation("lat", 1, 1) + impE2EText(impE2ENanos)},
		{"e2e_latency_positional_4.2.txt", impE2EPositionalWarning + impE2EText(impE2ENanos)},
		{"e2e_latency_scala.txt", impE2EScala(impE2EText(impE2ENanos))},
		{"e2e_latency_copied.txt", impE2ECopied(impE2EText(impE2ENanos))},
		// Only the average's %.4f follows the locale; Double.toString of
		// the progress lines does not.
		{"e2e_latency_decimal_comma.txt", regexp.MustCompile(`(Avg latency: \d+)\.`).ReplaceAllString(impE2EText(impE2ENanos), "$1,")},
		{"e2e_latency_summary.txt", E2ESummary(impE2ENanos[:999])},
		{"share_consumer_summary.txt", ShareConsumerHeader + "\n" + impShareFinal},
		{"share_consumer_detailed_4.2.txt", impShareDeprecations + ShareConsumerHeader + "\n" + impShareProgress1 +
			impShareConsumer("1 having client id perf-share-consumer-client") + impShareTimeout + impShareFinal},
		{"share_consumer_threads_4.1.txt", impSLF4J + ShareConsumerHeader + "\n" + impShareProgress2 +
			impShareConsumer("1") + impShareConsumer("2") + impShareFinal},
	}
}

// impProducerDeprecations are Kafka 4.2's ProducerPerformance notices of
// --producer-props and --producer.config (KIP-1147), as its println
// calls write them.
const impProducerDeprecations = "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.\n" +
	"Option --producer.config has been deprecated and will be removed in a future version. Use --command-config instead.\n"

// kafka-share-consumer-perf-test (ShareConsumerPerformance), as Kafka 4.1
// and 4.2 print it, written from its printf formats: the group's row
// "%s, %s, %.4f, %.4f, %.4f, %d, %d%n" (start, end, MB, MB/s, records/s,
// records, end − start in ms), --show-consumer-stats rows "Share consumer
// %s having client id %s consumption metrics- …" (4.2; 4.1 without the
// client id), --show-detailed-stats rows "… for share consumer %d" (the
// consumer's MB and records so far, the interval's rates and length).
const (
	impShareFinal        = "2026-02-10 09:27:32:123, 2026-02-10 09:27:42:456, 95.3674, 9.2294, 9677.7315, 100000, 10333\n"
	impShareDeprecations = "Warning: --messages is deprecated. Use --num-records instead.\n" +
		"Warning: --consumer.config is deprecated. Use --command-config instead.\n"
	impShareTimeout = "WARNING: Exiting before consuming the expected number of records: timeout (10000 ms) exceeded. " +
		"You can use the --timeout option to increase the timeout.\n"
	// One consumer: three windows of 5 s and a last one.
	impShareProgress1 = "2026-02-10 09:27:32:123, 2026-02-10 09:27:37:133, 46.7300, 9.3273, 9780.4391, 49000, 5010 for share consumer 1\n" +
		"2026-02-10 09:27:37:133, 2026-02-10 09:27:42:140, 95.3674, 9.7137, 10185.7400, 100000, 5007 for share consumer 1\n"
	// Two consumers: their threads print at once, so the second one's row
	// may land on the first one's line.
	impShareProgress2 = "2026-02-10 09:27:32:123, 2026-02-10 09:27:37:133, 23.8419, 4.7589, 4990.0200, 25000, 5010 for share consumer 1" +
		"2026-02-10 09:27:32:124, 2026-02-10 09:27:37:138, 23.8419, 4.7551, 4986.0391, 25000, 5014 for share consumer 2\n\n"
)

// impShareConsumer is a --show-consumer-stats row of consumer who.
func impShareConsumer(who string) string {
	return "Share consumer " + who + " consumption metrics- 2026-02-10 09:27:32:123, 2026-02-10 09:27:42:456, 47.6837, 4.6147, 4838.8658, 50000, 10333\n"
}

// impE2ENanos are the round trips, in nanoseconds, of an EndToEndLatency
// run of 3500 records: about 1.2 ms with a slow record every 80 (and
// a slower first), so the three percentiles differ.
var impE2ENanos = func() []int64 {
	out := make([]int64, 3500)
	for i := range out {
		out[i] = 1_150_000 + int64(i%97)*1_321
		if i%80 == 0 {
			out[i] = 23_456_789 + int64(i)*1_000
		}
	}
	out[0] = 187_654_321
	return out
}()

// impE2EText renders an EndToEndLatency run of these round trips.
func impE2EText(nanos []int64) string {
	var b strings.Builder
	for i, e := range nanos {
		if i%E2EProgressEvery == 0 {
			b.WriteString(E2EProgress(int64(i), e))
		}
	}
	b.WriteString(E2ESummary(nanos))
	return b.String()
}

// impE2EPositionalWarning is what Kafka 4.2's tool prints on stdout when
// given the positional arguments of older versions.
const impE2EPositionalWarning = "WARNING: Positional argument usage is deprecated and will be removed in Apache Kafka 5.0. " +
	"Please use named arguments instead: --bootstrap-server, --topic, --num-records, --producer-acks, --record-size, --command-config\n"

// impE2EScala is the output of the Scala tool (kafka.tools.EndToEndLatency
// before 3.x): println of a format ending in \n leaves a blank line after
// the average.
func impE2EScala(text string) string {
	return strings.Replace(text, " ms\nPercentiles", " ms\n\nPercentiles", 1)
}

// impE2ECopied is the output as copied from a terminal on Windows: tabs
// turned into spaces, CRLF line ends.
func impE2ECopied(text string) string {
	text = strings.ReplaceAll(text, "\t", "    ")
	return strings.ReplaceAll(text, "\n", "\r\n")
}

// TestImportFixturesCurrent checks testdata/import/ holds what
// impFixtures renders (go test -update-import rewrites it).
func TestImportFixturesCurrent(t *testing.T) {
	dir := filepath.Join("testdata", "import")
	for _, f := range impFixtures() {
		path := filepath.Join(dir, f.name)
		if *impUpdate {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(f.text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestImportFixturesCurrent -update-import writes it)", err)
		}
		if string(b) != f.text {
			t.Errorf("%s differs from impFixtures (go test -run TestImportFixturesCurrent -update-import rewrites it)", path)
		}
	}
}

// impReadFixture reads one file of testdata/import/.
func impReadFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
