package kafkafmt

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestProducerInterval(t *testing.T) {
	tests := []struct {
		records                                 int64
		recordsPerSec, mbPerSec, avgLat, maxLat float64
		want                                    string
	}{
		{64651, 12917.1, 12.61, 1874.0, 2345.0,
			"64651 records sent, 12917.1 records/sec (12.61 MB/sec), 1874.0 ms avg latency, 2345.0 ms max latency.\n"},
		// Half-up where Go's %.1f/%.2f would round down.
		{8, 0.25, 0.125, 0.45, 3,
			"8 records sent, 0.3 records/sec (0.13 MB/sec), 0.5 ms avg latency, 3.0 ms max latency.\n"},
		{0, math.NaN(), math.NaN(), math.NaN(), 0,
			"0 records sent, NaN records/sec (NaN MB/sec), NaN ms avg latency, 0.0 ms max latency.\n"},
		{1, math.Inf(1), math.Inf(1), 12, 12,
			"1 records sent, Infinity records/sec (Infinity MB/sec), 12.0 ms avg latency, 12.0 ms max latency.\n"},
		{-5, -1.25, -0.005, -0.05, -1,
			"-5 records sent, -1.3 records/sec (-0.01 MB/sec), -0.1 ms avg latency, -1.0 ms max latency.\n"},
	}
	for _, tt := range tests {
		got := ProducerInterval(tt.records, tt.recordsPerSec, tt.mbPerSec, tt.avgLat, tt.maxLat)
		if got != tt.want {
			t.Errorf("ProducerInterval(%d, %v, %v, %v, %v)\ngot  %q\nwant %q",
				tt.records, tt.recordsPerSec, tt.mbPerSec, tt.avgLat, tt.maxLat, got, tt.want)
		}
	}
}

func TestProducerSummary(t *testing.T) {
	tests := []struct {
		in   ProducerTotals
		want string
	}{
		{ProducerTotals{Records: 1000000, RecordsPerSec: 99980.004, MBPerSec: 97.63672265625, AvgLatencyMs: 3.0125,
			MaxLatencyMs: 311, P50: 2, P95: 7, P99: 12, P999: 295},
			"1000000 records sent, 99980.004000 records/sec (97.64 MB/sec), 3.01 ms avg latency, 311.00 ms max latency, 2 ms 50th, 7 ms 95th, 12 ms 99th, 295 ms 99.9th.\n"},
		{ProducerTotals{Records: 3, RecordsPerSec: 0.0000005, MBPerSec: 0.125, AvgLatencyMs: 2.675, MaxLatencyMs: 4},
			"3 records sent, 0.000001 records/sec (0.13 MB/sec), 2.68 ms avg latency, 4.00 ms max latency, 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th.\n"},
		{ProducerTotals{Records: 500, RecordsPerSec: 1.0 / 3, MBPerSec: 1e-3, AvgLatencyMs: 1, MaxLatencyMs: 9, P50: 1, P95: 2, P99: 3, P999: 9, SteadyState: true},
			"500 steady state records sent, 0.333333 records/sec (0.00 MB/sec), 1.00 ms avg latency, 9.00 ms max latency, 1 ms 50th, 2 ms 95th, 3 ms 99th, 9 ms 99.9th.\n"},
		{ProducerTotals{Records: 10, RecordsPerSec: math.Inf(1), MBPerSec: math.Inf(1), AvgLatencyMs: 0.5, MaxLatencyMs: 1, P50: -1, P95: math.MaxInt64},
			"10 records sent, Infinity records/sec (Infinity MB/sec), 0.50 ms avg latency, 1.00 ms max latency, -1 ms 50th, 9223372036854775807 ms 95th, 0 ms 99th, 0 ms 99.9th.\n"},
	}
	for _, tt := range tests {
		if got := ProducerSummary(tt.in); got != tt.want {
			t.Errorf("ProducerSummary(%+v)\ngot  %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// summaryShape is the shape of Kafka's printTotal line.
var summaryShape = regexp.MustCompile(`^-?\d+( steady state)? records sent, ` +
	`(-?\d+\.\d{6}|NaN|-?Infinity) records/sec \((-?\d+\.\d{2}|NaN|-?Infinity) MB/sec\), ` +
	`(-?\d+\.\d{2}|NaN|-?Infinity) ms avg latency, (-?\d+\.\d{2}|NaN|-?Infinity) ms max latency, ` +
	`-?\d+ ms 50th, -?\d+ ms 95th, -?\d+ ms 99th, -?\d+ ms 99\.9th\.\n$`)

func TestProducerSummaryShape(t *testing.T) {
	inputs := []ProducerTotals{
		{},
		{Records: 1, RecordsPerSec: 1, MBPerSec: 1, AvgLatencyMs: 1, MaxLatencyMs: 1, P50: 1, P95: 1, P99: 1, P999: 1},
		{Records: 123456789, RecordsPerSec: 98765.4321, MBPerSec: 1234.5678, AvgLatencyMs: 0.001, MaxLatencyMs: 60000, P50: 3, P95: 40, P99: 400, P999: 4000, SteadyState: true},
		{Records: 2, RecordsPerSec: math.NaN(), MBPerSec: math.Inf(1), AvgLatencyMs: math.Inf(-1), MaxLatencyMs: 1e300},
		ProducerCounters{Records: 77, Bytes: 77 * 100, TotalLatencyMs: 1000, MaxLatencyMs: 50, ElapsedMs: 3}.Totals(1, 2, 3, 4),
	}
	for _, in := range inputs {
		if got := ProducerSummary(in); !summaryShape.MatchString(got) {
			t.Errorf("ProducerSummary(%+v) = %q, does not match %v", in, got, summaryShape)
		}
	}
}

func TestProducerCounters(t *testing.T) {
	c := ProducerCounters{Records: 50011, Bytes: 50011 * 512, TotalLatencyMs: 137531, MaxLatencyMs: 711, ElapsedMs: 5001}
	if got, want := c.IntervalLine(),
		"50011 records sent, 10000.2 records/sec (4.88 MB/sec), 2.8 ms avg latency, 711.0 ms max latency.\n"; got != want {
		t.Errorf("IntervalLine() got %q, want %q", got, want)
	}
	if got, want := ProducerSummary(c.Totals(2, 9, 31, 700)),
		"50011 records sent, 10000.199960 records/sec (4.88 MB/sec), 2.75 ms avg latency, 711.00 ms max latency, 2 ms 50th, 9 ms 95th, 31 ms 99th, 700 ms 99.9th.\n"; got != want {
		t.Errorf("Totals() summary got %q, want %q", got, want)
	}
	// A zero-length window divides by zero like Java does.
	z := ProducerCounters{Records: 1, Bytes: 10, TotalLatencyMs: 3, MaxLatencyMs: 3}
	if got, want := z.IntervalLine(),
		"1 records sent, Infinity records/sec (Infinity MB/sec), 3.0 ms avg latency, 3.0 ms max latency.\n"; got != want {
		t.Errorf("zero window IntervalLine() got %q, want %q", got, want)
	}
}

func TestPercentiles(t *testing.T) {
	lat := []int64{9, 1, 8, 2, 7, 3, 6, 4, 5, 10}
	got := Percentiles(lat, 0.5, 0.95, 0.99, 0.999)
	want := []int64{6, 10, 10, 10}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Percentiles()[%d] got %d, want %d", i, got[i], want[i])
		}
	}
	if lat[0] != 9 {
		t.Errorf("Percentiles modified its input: got %v, want it unsorted", lat)
	}
	if got := Percentiles(nil, 0.5); got[0] != 0 {
		t.Errorf("Percentiles(nil) got %v, want [0]", got)
	}
}

func TestProducerNotices(t *testing.T) {
	if got, want := ProducerWarmupNotice(1000),
		"Warmup first 1000 records. Steady state results will print after the complete test summary.\n"; got != want {
		t.Errorf("ProducerWarmupNotice got %q, want %q", got, want)
	}
	if got, want := ProducerSteadyStateNotice(), "In steady state.\n"; got != want {
		t.Errorf("ProducerSteadyStateNotice got %q, want %q", got, want)
	}
}

func TestConsumerHeader(t *testing.T) {
	tests := []struct {
		detailed bool
		want     string
	}{
		{false, "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n"},
		{true, "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n"},
	}
	for _, tt := range tests {
		if got := ConsumerHeader(tt.detailed); got != tt.want {
			t.Errorf("ConsumerHeader(%v) got %q, want %q", tt.detailed, got, tt.want)
		}
	}
}

func TestConsumerSummaryRow(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	start := time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.UTC)
	end := start.Add(12345 * time.Millisecond)
	tests := []struct {
		name string
		in   ConsumerRow
		want string
	}{
		{"plain", ConsumerRow{Start: start, End: end, MB: 95.3674, MBPerSec: 7.7252, Messages: 100000, MessagesPerSec: 8100.4455,
			RebalanceMs: 3012, FetchMs: 9333, FetchMBPerSec: 10.2183, FetchMessagesPerSec: 10714.6684},
			"2024-05-06 07:08:09:010, 2024-05-06 07:08:21:355, 95.3674, 7.7252, 100000, 8100.4455, 3012, 9333, 10.2183, 10714.6684\n"},
		{"half-up and zone", ConsumerRow{Start: start, End: end, MB: 0.00005, MBPerSec: 0.12345, Messages: 0, MessagesPerSec: 2.00005,
			FetchMBPerSec: math.NaN(), FetchMessagesPerSec: math.Inf(-1), Loc: ist},
			"2024-05-06 12:38:09:010, 2024-05-06 12:38:21:355, 0.0001, 0.1235, 0, 2.0001, 0, 0, NaN, -Infinity\n"},
	}
	for _, tt := range tests {
		if got := ConsumerSummaryRow(tt.in); got != tt.want {
			t.Errorf("%s: ConsumerSummaryRow\ngot  %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestConsumerCountersRow(t *testing.T) {
	c := ConsumerCounters{StartMs: 1_700_000_000_000, EndMs: 1_700_000_012_345, Bytes: 100_000 * 1000, Messages: 100_000, RebalanceMs: 3012}
	got := ConsumerSummaryRow(c.Row(time.UTC))
	want := "2023-11-14 22:13:20:000, 2023-11-14 22:13:32:345, 95.3674, 7.7252, 100000, 8100.4455, 3012, 9333, 10.2183, 10714.6684\n"
	if got != want {
		t.Errorf("ConsumerCounters.Row\ngot  %q\nwant %q", got, want)
	}
	// No time elapsed: Java divides by zero and prints NaN/Infinity.
	z := ConsumerCounters{StartMs: 0, EndMs: 0, Bytes: 0, Messages: 0}
	if got, want := ConsumerSummaryRow(z.Row(time.UTC)),
		"1970-01-01 00:00:00:000, 1970-01-01 00:00:00:000, 0.0000, NaN, 0, NaN, 0, 0, NaN, NaN\n"; got != want {
		t.Errorf("zero ConsumerCounters.Row\ngot  %q\nwant %q", got, want)
	}
}

func TestConsumerDetailedRow(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 14, 10_000_000, time.UTC)
	tests := []struct {
		name string
		in   ConsumerIntervalRow
		want string
	}{
		{"plain", ConsumerIntervalRow{Time: at, TotalMB: 47.6837, MBPerSec: 9.5367, TotalMessages: 50000, MessagesPerSec: 10000,
			RebalanceMs: 0, FetchMs: 5000, FetchMBPerSec: 9.5367, FetchMessagesPerSec: 10000},
			"2024-05-06 07:08:14:010, 0, 47.6837, 9.5367, 50000, 10000.0000, 0, 5000, 9.5367, 10000.0000\n"},
		{"thread id and rounding", ConsumerIntervalRow{Time: at, ThreadID: 3, TotalMB: 0.00015, MBPerSec: 1e-7, TotalMessages: 1, MessagesPerSec: 0.12345,
			RebalanceMs: 5000, FetchMs: 0},
			"2024-05-06 07:08:14:010, 3, 0.0002, 0.0000, 1, 0.1235, 5000, 0, 0.0000, 0.0000\n"},
	}
	for _, tt := range tests {
		if got := ConsumerDetailedRow(tt.in); got != tt.want {
			t.Errorf("%s: ConsumerDetailedRow\ngot  %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestConsumerIntervalCountersRow(t *testing.T) {
	tests := []struct {
		name string
		in   ConsumerIntervalCounters
		want string
	}{
		{"interval rates, running totals",
			ConsumerIntervalCounters{StartMs: 1_700_000_005_000, EndMs: 1_700_000_010_001, Bytes: 2 * 52_428_800, LastBytes: 52_428_800,
				Messages: 102_400, LastMessages: 51_200, RebalanceMs: 1},
			"2023-11-14 22:13:30:001, 0, 100.0000, 9.9980, 102400, 10237.9524, 1, 5000, 10.0000, 10240.0000\n"},
		{"rebalance takes the whole interval",
			ConsumerIntervalCounters{StartMs: 1_700_000_000_000, EndMs: 1_700_000_003_000, Bytes: 1024, Messages: 1, RebalanceMs: 3000},
			"2023-11-14 22:13:23:000, 0, 0.0010, 0.0003, 1, 0.3333, 3000, 0, 0.0000, 0.0000\n"},
	}
	for _, tt := range tests {
		if got := ConsumerDetailedRow(tt.in.Row(time.UTC)); got != tt.want {
			t.Errorf("%s: ConsumerIntervalCounters.Row\ngot  %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestConsumerTimeoutWarning(t *testing.T) {
	want := "WARNING: Exiting before consuming the expected number of messages: timeout (10000 ms) exceeded. You can use the --timeout option to increase the timeout.\n"
	if got := ConsumerTimeoutWarning(10000); got != want {
		t.Errorf("ConsumerTimeoutWarning got %q, want %q", got, want)
	}
}

func TestPrintMetrics(t *testing.T) {
	tests := []struct {
		name string
		in   []Metric
		want string
	}{
		{"none", nil, ""},
		{"sorted and padded", []Metric{
			{Group: "producer-metrics", Name: "record-send-rate", Tags: []Tag{{"client-id", "perf"}}, Value: 0.125},
			{Group: "app-info", Name: "version", Tags: []Tag{{"client-id", "perf"}}, Value: "3.9.0"},
			{Group: "producer-metrics", Name: "batch-size-max", Tags: []Tag{{"client-id", "perf"}}, Value: 16384.0},
			{Group: "app-info", Name: "start-time-ms", Tags: []Tag{{"client-id", "perf"}}, Value: int64(1700000000000)},
		}, "\n" +
			"Metric Name                                          Value\n" +
			"app-info:start-time-ms:{client-id=perf}            : 1700000000000\n" +
			"app-info:version:{client-id=perf}                  : 3.9.0\n" +
			"producer-metrics:batch-size-max:{client-id=perf}   : 16384.000\n" +
			"producer-metrics:record-send-rate:{client-id=perf} : 0.125\n"},
		{"short names keep the header whole", []Metric{{Group: "g", Name: "n", Value: 2.0005}}, "\n" +
			"Metric Name   Value\n" +
			"g:n:{} : 2.001\n"},
		{"tag order as given, several tags", []Metric{
			{Group: "producer-topic-metrics", Name: "record-send-total", Tags: []Tag{{"client-id", "c"}, {"topic", "t"}}, Value: 3.0},
		}, "\n" +
			"Metric Name                                                       Value\n" +
			"producer-topic-metrics:record-send-total:{client-id=c, topic=t} : 3.000\n"},
		{"value kinds", []Metric{
			{Group: "a", Name: "nan", Value: math.NaN()},
			{Group: "a", Name: "inf", Value: math.Inf(-1)},
			{Group: "a", Name: "null", Value: nil},
			{Group: "a", Name: "bool", Value: true},
			{Group: "a", Name: "float", Value: float32(1.5e10)},
			{Group: "a", Name: "int", Value: -7},
			{Group: "a", Name: "uint", Value: uint64(math.MaxUint64)},
			{Group: "a", Name: "stringer", Value: 1500 * time.Millisecond},
		}, "\n" +
			"Metric Name     Value\n" +
			"a:bool:{}     : true\n" +
			"a:float:{}    : 1.5E10\n" +
			"a:inf:{}      : -Infinity\n" +
			"a:int:{}      : -7\n" +
			"a:nan:{}      : NaN\n" +
			"a:null:{}     : null\n" +
			"a:stringer:{} : 1.5s\n" +
			"a:uint:{}     : 18446744073709551615\n"},
		{"duplicate merged name keeps the last value", []Metric{
			{Group: "g", Name: "dup", Value: 1.0},
			{Group: "g", Name: "dup", Value: 2.0},
		}, "\n" +
			"Metric Name   Value\n" +
			"g:dup:{} : 2.000\n"},
		{"UTF-16 width and order", []Metric{
			{Group: "g", Name: "\U0001F600", Value: 1.0},
			{Group: "g", Name: "\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21", Value: 2.0},
		}, "\n" +
			"Metric Name      Value\n" +
			"g:\U0001F600:{}        : 1.000\n" +
			"g:\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21\uFF21:{} : 2.000\n"},
	}
	for _, tt := range tests {
		if got := PrintMetrics(tt.in); got != tt.want {
			t.Errorf("%s: PrintMetrics\ngot:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

func TestMergedName(t *testing.T) {
	m := Metric{Group: "consumer-fetch-manager-metrics", Name: "records-lag-max", Tags: []Tag{{"client-id", "perf-consumer-client"}}}
	if got, want := m.MergedName(), "consumer-fetch-manager-metrics:records-lag-max:{client-id=perf-consumer-client}"; got != want {
		t.Errorf("MergedName got %q, want %q", got, want)
	}
	if got, want := (Metric{Group: "g", Name: "n"}).MergedName(), "g:n:{}"; got != want {
		t.Errorf("MergedName without tags got %q, want %q", got, want)
	}
	if strings.Contains(PrintMetrics([]Metric{{Group: "g", Name: "n", Value: 1.0}}), "1.0\n") {
		t.Errorf("PrintMetrics of a double got %%s formatting, want %%.3f")
	}
}
