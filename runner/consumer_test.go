package runner

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/kafkafmt"
)

// runConsumer runs the consumer workload and fails the test unless the run
// completed.
func runConsumer(t *testing.T, args ...string) (*rundoc.Result, string) {
	t.Helper()
	opts, out := testOptions(t)
	spec := mustParse(t, rundoc.Consumer, append([]string{"--profile", "none", "--timeout", "30000"}, args...)...)
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("consumer %q: %v", args, err)
	}
	if !res.Complete {
		t.Fatalf("consumer %q: result not complete: %s", args, res.Error)
	}
	return res, out.String()
}

// consumerSummary is Kafka's consumer summary row, split into its columns.
type consumerSummary struct {
	start, end                     time.Time
	mb, mbPerSec                   string
	msgs                           int64
	msgsPerSec                     string
	rebalanceMs, fetchMs           int64
	fetchMBPerSec, fetchMsgsPerSec string
}

func parseConsumerSummary(t *testing.T, out string) consumerSummary {
	t.Helper()
	line := consumerRowRe.FindString(out)
	if line == "" {
		t.Fatalf("no Kafka consumer summary row in:\n%s", out)
	}
	f := strings.Split(line, ", ")
	date := func(s string) time.Time {
		// Kafka's "yyyy-MM-dd HH:mm:ss:SSS" in the local zone.
		tm, err := time.ParseInLocation("2006-01-02 15:04:05.000", s[:19]+"."+s[20:], time.Local)
		if err != nil {
			t.Fatalf("date %q: %v", s, err)
		}
		return tm
	}
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("integer %q in %q: %v", s, line, err)
		}
		return n
	}
	return consumerSummary{start: date(f[0]), end: date(f[1]), mb: f[2], mbPerSec: f[3], msgs: num(f[4]), msgsPerSec: f[5],
		rebalanceMs: num(f[6]), fetchMs: num(f[7]), fetchMBPerSec: f[8], fetchMsgsPerSec: f[9]}
}

// TestAssignConsumerStopsAtMessages: a topic holding more records than
// --messages is read up to exactly --messages in mode assign, on one
// partition and on six read in parallel, with and without warm-up, and
// every figure counts only those records.
func TestAssignConsumerStopsAtMessages(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	const size = 100
	tests := []struct {
		partitions     int
		have, messages int64
		warmup         int64
	}{
		{partitions: 6, have: 50000, messages: 30000},
		{partitions: 1, have: 30000, messages: 20000},
		{partitions: 6, have: 50000, messages: 30000, warmup: 3007},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("partitions=%d/warmup=%d", tt.partitions, tt.warmup), func(t *testing.T) {
			topic := fmt.Sprintf("exact-%d-%d", tt.partitions, tt.warmup)
			common := []string{"--bootstrap-server", b.Addr(), "--topic", topic, "--partitions", fmt.Sprint(tt.partitions),
				"--record-size", fmt.Sprint(size), "--mode", "assign"}
			// The first run fills the topic (prefill) and reads all of it.
			first, _ := runConsumer(t, append(common, "--messages", fmt.Sprint(tt.have))...)
			if first.Measurement.PrefillRecords != tt.have {
				t.Fatalf("prefill = %d, want %d", first.Measurement.PrefillRecords, tt.have)
			}
			res, out := runConsumer(t, append(common, "--messages", fmt.Sprint(tt.messages), "--warmup-records", fmt.Sprint(tt.warmup))...)
			if res.Measurement.PrefillRecords != 0 {
				t.Fatalf("second run prefilled %d records", res.Measurement.PrefillRecords)
			}
			want := tt.messages - tt.warmup
			if got := res.Measurement.WarmupRecords; got != tt.warmup {
				t.Errorf("warm-up records = %d, want %d", got, tt.warmup)
			}
			if got := metric(t, res, "records-consumed-total"); got != float64(want) {
				t.Errorf("records-consumed-total = %v, want %d", got, want)
			}
			if got := res.Measurement.MeasuredRecords; got != want {
				t.Errorf("measured records = %d, want %d", got, want)
			}
			if got := metric(t, res, "bytes-consumed-total"); got != float64(want*size) {
				t.Errorf("bytes-consumed-total = %v, want %d records × %d B", got, want, size)
			}
			if row := parseConsumerSummary(t, out); row.msgs != want {
				t.Errorf("Kafka's line says %d messages, want %d", row.msgs, want)
			}
			// Figures derived from the fetches count the same records.
			fetches := metric(t, res, "fetch-total")
			if got := metric(t, res, "records-per-request-avg") * fetches; math.Abs(got-float64(want)) > 1e-6*float64(want) {
				t.Errorf("records-per-request-avg × fetch-total = %v, want %d", got, want)
			}
			if got := metric(t, res, "fetch-size-avg") * fetches; math.Abs(got-float64(want*size)) > 1e-6*float64(want*size) {
				t.Errorf("fetch-size-avg × fetch-total = %v, want %d", got, want*size)
			}
			if got, lim := metric(t, res, "fetch-size-max"), metric(t, res, "bytes-consumed-total"); got > lim {
				t.Errorf("fetch-size-max %v above all bytes consumed %v", got, lim)
			}
		})
	}
}

// TestAssignPartitionBudget drives one partition reader directly: it
// starts inside a record batch (the broker answers from the batch's first
// record, which Batch.Read does not skip), stops exactly when the shared
// budget runs out, and a later read continues after the last record
// counted, so every record is counted once.
func TestAssignPartitionBudget(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	const size, total, from = 100, 3000, 500
	// The prefill writes batches of 1,000 records.
	runConsumer(t, "--bootstrap-server", b.Addr(), "--topic", "budget", "--partitions", "1", "--record-size", fmt.Sprint(size),
		"--mode", "assign", "--messages", fmt.Sprint(total))
	conn, err := kafka.DialLeader(context.Background(), "tcp", b.Addr(), "budget", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Seek(from, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
		t.Fatal(err)
	}
	p := &partitionReader{conn: conn, buf: make([]byte, 1024), next: from, last: total}
	a := &assignConsumer{parts: []*partitionReader{p}, maxWait: time.Second, maxByte: 1 << 20}
	stats := &consumeStats{}
	var counted int64
	for _, want := range []int64{1, 333, 1000, 999, 1 << 40} {
		var budget atomic.Int64
		budget.Store(want)
		if err := a.readPartition(context.Background(), p, stats, &budget); err != nil {
			t.Fatal(err)
		}
		got := stats.records.Load() - counted
		if left := int64(total-from) - counted; want > left {
			want = left // the partition holds no more
		}
		if got != want {
			t.Errorf("budget %d: counted %d records, want %d", budget.Load()+got, got, want)
		}
		counted += got
		if stats.bytes.Load() != counted*size {
			t.Errorf("bytes = %d after %d records of %d B", stats.bytes.Load(), counted, size)
		}
	}
	if counted != total-from || p.next != total {
		t.Errorf("counted %d records and stopped at offset %d; want %d up to %d", counted, p.next, total-from, total)
	}
	if stats.lagMax != total-from {
		t.Errorf("lag max = %d, want %d: the backlog at the first fetch", stats.lagMax, total-from)
	}
}

// TestGroupConsumerLagMax: a consumer that starts far behind reports its
// starting backlog as records-lag-max, not the lag left at the end.
func TestGroupConsumerLagMax(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	const backlog = 60000
	for _, mode := range []string{rundoc.ModeGroup, rundoc.ModeAssign} {
		t.Run(mode, func(t *testing.T) {
			res, _ := runConsumer(t, "--bootstrap-server", b.Addr(), "--topic", "lag-"+mode, "--partitions", "1",
				"--record-size", "64", "--messages", fmt.Sprint(backlog), "--mode", mode)
			if res.Measurement.PrefillRecords != backlog {
				t.Fatalf("prefill = %d, want %d", res.Measurement.PrefillRecords, backlog)
			}
			// The first fetch of the window starts at offset 0 with the
			// whole prefill below the high watermark.
			if got := metric(t, res, "records-lag-max"); got != backlog {
				t.Errorf("records-lag-max = %v, want the starting backlog %d", got, backlog)
			}
		})
	}
}

// kafkaLineNoteRe reads the note that explains the consumer line's
// whole-millisecond figures.
var kafkaLineNoteRe = regexp.MustCompile(`^Kafka's line uses whole-millisecond start and end times, as Kafka's tool does: ` +
	`([\d,]+) ms → ([\d,.]+) records/s, rebalance ([\d,]+) ms, fetch ([\d,]+) ms → ([\d,.]+|Infinity|NaN) records/s; ` +
	`measured: ([\d,.]+) ms → ([\d,.]+) records/s, rebalance ([\d,.]+) ms, fetch ([\d,.]+) ms → ([\d,.]+) records/s ` +
	`\(the metrics and result\.json hold these\)\.$`)

// TestConsumerKafkaLineNote: result.json's measurement explains, with the
// run's own numbers, why Kafka's consumer line differs from the metrics.
func TestConsumerKafkaLineNote(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	res, out := runConsumer(t, "--bootstrap-server", b.Addr(), "--topic", "note", "--partitions", "2",
		"--record-size", "100", "--messages", "30000", "--mode", "group")
	row := parseConsumerSummary(t, out)
	if len(res.Measurement.OutputNotes) != 1 {
		t.Fatalf("output notes = %q, want one about Kafka's line", res.Measurement.OutputNotes)
	}
	m := kafkaLineNoteRe.FindStringSubmatch(res.Measurement.OutputNotes[0])
	if m == nil {
		t.Fatalf("note %q does not have the expected shape", res.Measurement.OutputNotes[0])
	}
	plain := func(s string) string { return strings.ReplaceAll(s, ",", "") }
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(plain(s), 64)
		if err != nil {
			t.Fatalf("number %q: %v", s, err)
		}
		return v
	}
	// Kafka's side is the line's own figures.
	if got, want := num(m[1]), float64(row.end.Sub(row.start).Milliseconds()); got != want {
		t.Errorf("note's Kafka window %v ms, the line's %v ms", got, want)
	}
	if plain(m[2]) != row.msgsPerSec {
		t.Errorf("note's Kafka rate %s, the line's %s", m[2], row.msgsPerSec)
	}
	if num(m[3]) != float64(row.rebalanceMs) || num(m[4]) != float64(row.fetchMs) {
		t.Errorf("note's Kafka rebalance/fetch %s/%s ms, the line's %d/%d", m[3], m[4], row.rebalanceMs, row.fetchMs)
	}
	if plain(m[5]) != row.fetchMsgsPerSec {
		t.Errorf("note's Kafka fetch rate %s, the line's %s", m[5], row.fetchMsgsPerSec)
	}
	// The measured side is the metrics, at the note's precision.
	near := func(what string, got, want float64, decimals int) {
		t.Helper()
		if math.Abs(got-want) > 0.5*math.Pow10(-decimals)*1.0001 {
			t.Errorf("note's measured %s = %v, metrics say %v", what, got, want)
		}
	}
	rebalance, fetch := metric(t, res, "rebalance-time"), metric(t, res, "fetch-time")
	near("window", num(m[6]), rebalance+fetch, 3)
	near("rate", num(m[7]), metric(t, res, "records-consumed-rate"), 4)
	near("rebalance", num(m[8]), rebalance, 3)
	near("fetch time", num(m[9]), fetch, 3)
	near("fetch rate", num(m[10]), metric(t, res, "fetch-records-per-sec"), 4)
	if rebalance <= 0 {
		t.Errorf("mode group measured no rebalance time")
	}
	// The line truncates the precise figures, never rounds them up.
	if float64(row.rebalanceMs) != math.Floor(rebalance) {
		t.Errorf("line's rebalance %d ms, measured %v ms", row.rebalanceMs, rebalance)
	}
	// kafkafmt computes Kafka's side from the same counters.
	k := kafkafmt.ConsumerCounters{StartMs: row.start.UnixMilli(), EndMs: row.end.UnixMilli(), Messages: row.msgs, RebalanceMs: row.rebalanceMs}.Row(nil)
	if got := kafkafmt.JavaFixed(k.MessagesPerSec, 4); got != row.msgsPerSec {
		t.Errorf("recomputed Kafka rate %s, line %s", got, row.msgsPerSec)
	}
}
