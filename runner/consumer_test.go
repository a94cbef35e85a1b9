package runner

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/runner/embedded"
)

// runConsumer runs the consumer workload and fails the test unless the run
// completed.
func runConsumer(t *testing.T, args ...string) (*Result, string) {
	t.Helper()
	opts, out := testOptions(t)
	spec := mustParse(t, Consumer, append([]string{"--profile", "none", "--timeout", "30000"}, args...)...)
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
	b := startBroker(t, embedded.Options{})
	const size = 100
	tests := []struct {
		partitions     int
		have, messages int64
		warmup         int64
	}{
		{partitions: 6, have: 150000, messages: 100000},
		{partitions: 1, have: 80000, messages: 50000},
		{partitions: 6, have: 150000, messages: 100000, warmup: 10007},
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
	b := startBroker(t, embedded.Options{})
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
	b := startBroker(t, embedded.Options{})
	const backlog = 60000
	for _, mode := range []string{ModeGroup, ModeAssign} {
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
