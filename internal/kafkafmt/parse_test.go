package kafkafmt

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// impWant is an expected metric: value, unit and direction.
type impWant struct {
	v            float64
	unit, better string
}

// Expected kbench metrics of the fixtures' summaries, as printed.
var (
	impWantProducerTotal = map[string]impWant{
		"records-sent":        {500000, "records", ""},
		"record-send-rate":    {19534.302235, "records/s", "higher"},
		"mb-per-sec":          {9.54, "MB/s", "higher"},
		"record-latency-avg":  {2.06, "ms", "lower"},
		"record-latency-p50":  {2, "ms", "lower"},
		"record-latency-p95":  {6, "ms", "lower"},
		"record-latency-p99":  {14, "ms", "lower"},
		"record-latency-p999": {561, "ms", "lower"},
		"record-latency-max":  {598, "ms", "lower"},
	}
	impWantProducerSteady = map[string]impWant{
		"records-sent":        {350000, "records", ""},
		"record-send-rate":    {19885.233794, "records/s", "higher"},
		"mb-per-sec":          {9.71, "MB/s", "higher"},
		"record-latency-avg":  {1.90, "ms", "lower"},
		"record-latency-p50":  {2, "ms", "lower"},
		"record-latency-p95":  {5, "ms", "lower"},
		"record-latency-p99":  {11, "ms", "lower"},
		"record-latency-p999": {77, "ms", "lower"},
		"record-latency-max":  {77, "ms", "lower"},
	}
	impWantConsumerSummary = map[string]impWant{
		"records-consumed-total": {1000000, "records", ""},
		"records-consumed-rate":  {31579.6122, "records/s", "higher"},
		"bytes-consumed-total":   {99999967, "bytes", ""}, // round(95.3674 × 1048576)
		"mb-per-sec":             {3.0117, "MB/s", "higher"},
		"rebalance-time":         {3021, "ms", "lower"},
		"fetch-time":             {28645, "ms", ""},
		"fetch-records-per-sec":  {34910.1065, "records/s", "higher"},
		"fetch-mb-per-sec":       {3.3293, "MB/s", "higher"},
	}
	// kafka-share-consumer-perf-test's group row (impShareFinal).
	impWantShare = map[string]impWant{
		"records-consumed-total": {100000, "records", ""},
		"records-consumed-rate":  {9677.7315, "records/s", "higher"},
		"bytes-consumed-total":   {99999967, "bytes", ""}, // round(95.3674 × 1048576)
		"mb-per-sec":             {9.2294, "MB/s", "higher"},
		"fetch-time":             {10333, "ms", ""},
	}
	// The detailed rows add up to 231424 messages, 22.0703 MB, 8036 ms of
	// rebalance and 22012 ms of fetching.
	impWantConsumerDetailed = map[string]impWant{
		"records-consumed-total": {231424, "records", ""},
		"records-consumed-rate":  {231424 / 30.048, "records/s", "higher"},
		"bytes-consumed-total":   {23142387, "bytes", ""}, // round(22.0703 × 1048576)
		"mb-per-sec":             {22.0703 / 30.048, "MB/s", "higher"},
		"rebalance-time":         {8036, "ms", "lower"},
		"fetch-time":             {22012, "ms", ""},
		"fetch-records-per-sec":  {231424 / 22.012, "records/s", "higher"},
		"fetch-mb-per-sec":       {22.0703 / 22.012, "MB/s", "higher"},
	}
	impWantProducerMetrics = map[string]impWant{
		"app-info:start-time-ms":                               {1735732800011, "", ""},
		"kafka-metrics-count:count":                            {112, "", ""},
		"producer-metrics:batch-size-avg":                      {16201.37, "bytes", ""},
		"producer-metrics:compression-rate-avg":                {math.NaN(), "ratio", "lower"},
		"producer-metrics:record-error-rate":                   {0, "records/s", "lower"},
		"producer-metrics:record-send-rate":                    {19872.346, "records/s", "higher"},
		"producer-metrics:record-send-total":                   {500000, "records", ""},
		"producer-metrics:request-latency-avg":                 {2.251, "ms", "lower"},
		"producer-metrics:request-latency-max":                 {533, "ms", "lower"},
		"producer-metrics:txn-commit-time-ns-total":            {0, "ns", "lower"},
		"producer-node-metrics:request-rate{node-id=node--1}":  {0.033, "requests/s", ""},
		"producer-node-metrics:request-rate{node-id=node-1}":   {120.45, "requests/s", ""},
		"producer-topic-metrics:byte-total{topic=bench}":       {256000000, "bytes", ""},
		"producer-topic-metrics:record-send-rate{topic=bench}": {19872.346, "records/s", "higher"},
	}
	impWantConsumerMetrics = map[string]impWant{
		"consumer-coordinator-metrics:last-rebalance-seconds-ago":              {31, "s", ""},
		"consumer-coordinator-metrics:rebalance-latency-avg":                   {3012, "ms", "lower"},
		"consumer-fetch-manager-metrics:bytes-consumed-rate{topic=bench}":      {3157960.12, "bytes/s", "higher"},
		"consumer-fetch-manager-metrics:bytes-consumed-rate":                   {3157960.12, "bytes/s", "higher"},
		"consumer-fetch-manager-metrics:fetch-latency-avg":                     {12.5, "ms", "lower"},
		"consumer-fetch-manager-metrics:records-consumed-total":                {1000000, "records", ""},
		"consumer-fetch-manager-metrics:records-lag-max":                       {math.Inf(-1), "records", "lower"},
		"consumer-fetch-manager-metrics:records-lag{topic=bench, partition=0}": {0, "records", "lower"},
		"consumer-fetch-manager-metrics:records-lag{topic=bench, partition=1}": {12, "records", "lower"},
		"consumer-metrics:connection-count":                                    {2, "connections", ""},
		"consumer-metrics:last-poll-seconds-ago":                               {1, "s", ""},
	}
)

func impMerge(ms ...map[string]impWant) map[string]impWant {
	out := map[string]impWant{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// impWantInterval is an expected interval; T within 1e-6 s.
type impWantInterval = ImportedInterval

// The figures of the EndToEndLatency fixtures of impE2ENanos, as printed,
// and of its first 999 records (e2e_latency_summary.txt).
var (
	impWantE2E = map[string]impWant{
		"e2e-latency-avg":  {1.5614, "ms", "lower"},
		"e2e-latency-p50":  {1, "ms", "lower"},
		"e2e-latency-p99":  {24, "ms", "lower"},
		"e2e-latency-p999": {26, "ms", "lower"},
	}
	impWantE2E999 = map[string]impWant{
		"e2e-latency-avg":  {1.6722, "ms", "lower"},
		"e2e-latency-p50":  {1, "ms", "lower"},
		"e2e-latency-p99":  {23, "ms", "lower"},
		"e2e-latency-p999": {187, "ms", "lower"},
	}
	// impWantE2ENotes are in the notes of every EndToEndLatency import.
	impWantE2ENotes = []string{"round trip of each record, one at a time", "one record in flight",
		"acks given to the tool", "whole milliseconds as the tool prints them"}
)

// Intervals of impWindows: T is the end of each window, as in kbench's
// own series, since the start of the first: it adds up records ÷ printed
// records/sec, the first window's included.
var (
	impWantWindows = []impWantInterval{
		{T: 48120 / 9616.3, Records: 48120, RecordsPerSec: 9616.3, MBPerSec: 4.70, LatencyAvgMs: 3.7, LatencyMaxMs: 598},
		{T: 48120/9616.3 + 99980/19996.0, Records: 99980, RecordsPerSec: 19996.0, MBPerSec: 9.76, LatencyAvgMs: 1.9, LatencyMaxMs: 41},
		{T: 48120/9616.3 + 99980/19996.0 + 100031/20002.2, Records: 100031, RecordsPerSec: 20002.2, MBPerSec: 9.77, LatencyAvgMs: 1.7, LatencyMaxMs: 35},
		{T: 48120/9616.3 + 99980/19996.0 + 100031/20002.2 + 99987/19989.4, Records: 99987, RecordsPerSec: 19989.4, MBPerSec: 9.76, LatencyAvgMs: 2.2, LatencyMaxMs: 77},
		{T: 48120/9616.3 + 99980/19996.0 + 100031/20002.2 + 99987/19989.4 + 100008/20001.6, Records: 100008, RecordsPerSec: 20001.6, MBPerSec: 9.77, LatencyAvgMs: 1.8, LatencyMaxMs: 29},
	}
	impWantSteadyWindows = []impWantInterval{
		{T: 100031 / 20002.2, Records: 100031, RecordsPerSec: 20002.2, MBPerSec: 9.77, LatencyAvgMs: 1.7, LatencyMaxMs: 35},
		{T: 100031/20002.2 + 99987/19989.4, Records: 99987, RecordsPerSec: 19989.4, MBPerSec: 9.76, LatencyAvgMs: 2.2, LatencyMaxMs: 77},
		{T: 100031/20002.2 + 99987/19989.4 + 100008/20001.6, Records: 100008, RecordsPerSec: 20001.6, MBPerSec: 9.77, LatencyAvgMs: 1.8, LatencyMaxMs: 29},
	}
	// The detailed rows: T adds up rebalance.time.ms + fetch.time.ms (the
	// first row's 3021 + 2006 ms, then the differences of the row times),
	// Records are differences of data.consumed.in.nMsg.
	impWantRows = []impWantInterval{
		{T: 5.027, Records: 18432, RecordsPerSec: 3666.6004, MBPerSec: 0.3497},
		{T: 10.028, Records: 53248, RecordsPerSec: 10647.4705, MBPerSec: 1.0154},
		{T: 15.037, Records: 54272, RecordsPerSec: 10834.8972, MBPerSec: 1.0333},
		{T: 20.040, Records: 0, RecordsPerSec: 0, MBPerSec: 0},
		{T: 25.047, Records: 51200, RecordsPerSec: 10225.6840, MBPerSec: 0.9752},
		{T: 30.048, Records: 54272, RecordsPerSec: 10852.2296, MBPerSec: 1.0349},
	}
)

func TestParseOutputFixtures(t *testing.T) {
	tests := []struct {
		file      string
		tool      string
		lines     int
		metrics   map[string]impWant // exactly these
		intervals []impWantInterval  // nil: none
		notes     []string           // substrings of some note each
	}{
		{file: "producer_summary.txt", tool: ToolProducer, lines: 1, metrics: impWantProducerTotal},
		{file: "producer_intervals.txt", tool: ToolProducer, lines: 13, metrics: impWantProducerTotal, intervals: impWantWindows,
			notes: []string{"skipped 7 log lines", "records ÷ records/sec"}},
		{file: "producer_warmup_java.txt", tool: ToolProducer, lines: 27,
			metrics: impMerge(impWantProducerSteady, impWantProducerMetrics), intervals: impWantSteadyWindows,
			notes: []string{"steady-state summary (line 9, 350000 records) is the measured result",
				"overall summary (line 8: 500000 records", "warm-up: the first 150000 records (line 1)",
				"2 periodic lines of the warm-up left out", "text values: app-info:commit-id = b3b1bc5a7d2c9e10; app-info:version = 3.9.0",
				"kept as NaN or ±Infinity: producer-metrics:compression-rate-avg"}},
		{file: "producer_warmup_kbench.txt", tool: ToolProducer, lines: 5, metrics: impWantProducerSteady, intervals: impWantSteadyWindows,
			notes: []string{"steady-state summary (line 5, 350000 records) is the measured result"}},
		{file: "producer_old_max_latency.txt", tool: ToolProducer, lines: 6, metrics: impWantProducerTotal, intervals: impWantWindows},
		{file: "producer_summary_1decimal.txt", tool: ToolProducer, lines: 1,
			metrics: impMerge(impWantProducerTotal, map[string]impWant{"record-send-rate": {19534.3, "records/s", "higher"}})},
		{file: "producer_crlf.txt", tool: ToolProducer, lines: 8, metrics: impWantProducerTotal, intervals: impWantWindows},
		{file: "producer_decimal_comma.txt", tool: ToolProducer, lines: 6, metrics: impWantProducerTotal, intervals: impWantWindows},
		{file: "producer_metrics.txt", tool: ToolProducer, lines: 24, metrics: impMerge(impWantProducerTotal, impWantProducerMetrics),
			intervals: impWantWindows, notes: []string{"14 --print-metrics values imported"}},
		{file: "consumer_summary.txt", tool: ToolConsumer, lines: 14, metrics: impWantConsumerSummary,
			notes: []string{"skipped 11 log lines", "WARNING: option [threads]", "bytes-consumed-total is derived"}},
		{file: "consumer_hide_header.txt", tool: ToolConsumer, lines: 1, metrics: impWantConsumerSummary},
		{file: "consumer_notices_4.2.txt", tool: ToolConsumer, lines: 4, metrics: impWantConsumerSummary,
			notes: []string{"Warning: --messages is deprecated. Use --num-records instead.", "Warning: --consumer.config is deprecated. Use --command-config instead."}},
		{file: "producer_notices_4.2.txt", tool: ToolProducer, lines: 8, metrics: impWantProducerTotal, intervals: impWantWindows,
			notes: []string{"Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.",
				"Option --producer.config has been deprecated"}},
		{file: "consumer_summary_metrics.txt", tool: ToolConsumer, lines: 15, metrics: impMerge(impWantConsumerSummary, impWantConsumerMetrics)},
		{file: "consumer_decimal_comma.txt", tool: ToolConsumer, lines: 15, metrics: impMerge(impWantConsumerSummary, impWantConsumerMetrics)},
		{file: "consumer_detailed.txt", tool: ToolConsumer, lines: 22, metrics: impMerge(impWantConsumerDetailed, impWantConsumerMetrics),
			intervals: impWantRows, notes: []string{"no summary row", "timeout (10000 ms) exceeded", "skipped 1 log lines"}},
		{file: "consumer_detailed_hide_header.txt", tool: ToolConsumer, lines: 6, metrics: impWantConsumerDetailed, intervals: impWantRows},
		{file: "consumer_0.10_detailed.txt", tool: ToolConsumer, lines: 7, intervals: impWantRows,
			metrics: map[string]impWant{"records-consumed-total": {231424, "records", ""}, "bytes-consumed-total": {23142387, "bytes", ""}},
			notes:   []string{"no rates"}},
		{file: "consumer_old_threads.txt", tool: ToolConsumer, lines: 10,
			metrics: map[string]impWant{
				// Thread t reads (10+t)/10 of thread 0's 125952 messages.
				"records-consumed-total": {125952 + 138547 + 151142, "records", ""},
				"bytes-consumed-total":   {math.Round((12.0117 + 13.2129 + 14.4140) * 1048576), "bytes", ""},
			},
			intervals: []impWantInterval{
				// Every thread's first row ends at the first date, having
				// started the first row's records ÷ nMsg.sec before.
				{T: 18432 / 3666.6004, Records: 18432, RecordsPerSec: 3666.6004, MBPerSec: 0.3497},
				{T: 18432 / 3666.6004, Records: 20275, RecordsPerSec: 4033.2206, MBPerSec: 0.3846},
				{T: 18432 / 3666.6004, Records: 22118, RecordsPerSec: 4399.8409, MBPerSec: 0.4196},
				{T: 18432/3666.6004 + 5.001, Records: 53248, RecordsPerSec: 10647.4705, MBPerSec: 1.0154},
				{T: 18432/3666.6004 + 5.001, Records: 58573, RecordsPerSec: 11712.2575, MBPerSec: 1.1170},
				{T: 18432/3666.6004 + 5.001, Records: 63898, RecordsPerSec: 12777.0446, MBPerSec: 1.2185},
				{T: 18432/3666.6004 + 10.010, Records: 54272, RecordsPerSec: 10834.8972, MBPerSec: 1.0333},
				{T: 18432/3666.6004 + 10.010, Records: 59699, RecordsPerSec: 11918.3470, MBPerSec: 1.1366},
				{T: 18432/3666.6004 + 10.010, Records: 65126, RecordsPerSec: 13001.7968, MBPerSec: 1.2399},
			},
			notes: []string{"several consumer threads"}},
		{file: "consumer_old_summary.txt", tool: ToolConsumer, lines: 2,
			metrics: map[string]impWant{
				"records-consumed-total": impWantConsumerSummary["records-consumed-total"],
				"records-consumed-rate":  impWantConsumerSummary["records-consumed-rate"],
				"bytes-consumed-total":   impWantConsumerSummary["bytes-consumed-total"],
				"mb-per-sec":             impWantConsumerSummary["mb-per-sec"],
			},
			notes: []string{"no rebalance or fetch figures"}},
		{file: "e2e_latency.txt", tool: ToolE2E, lines: 12, metrics: impWantE2E,
			notes: append([]string{"skipped 5 log lines", `line 6: Topic "lat" does not exist. Will create topic with 1 partition(s) and replication factor = 1`,
				"4 progress lines (the round trips of records 0 to 3000, every 1000th) ran from 1.1896300000000002 to 187.654321 ms",
				"at least 3001 records were sent"}, impWantE2ENotes...)},
		{file: "e2e_latency_positional_4.2.txt", tool: ToolE2E, lines: 7, metrics: impWantE2E,
			notes: append([]string{"WARNING: Positional argument usage is deprecated"}, impWantE2ENotes...)},
		{file: "share_consumer_summary.txt", tool: ToolShareConsumer, lines: 2, metrics: impWantShare,
			notes: []string{"a share group's run (KIP-932): fetch-time is the share tool's fetch.time.ms, its whole run"}},
		{file: "share_consumer_detailed_4.2.txt", tool: ToolShareConsumer, lines: 8, metrics: impWantShare,
			intervals: []impWantInterval{
				{T: 5.010, Records: 49000, RecordsPerSec: 9780.4391, MBPerSec: 9.3273},
				{T: 10.017, Records: 51000, RecordsPerSec: 10185.7400, MBPerSec: 9.7137},
			},
			notes: []string{"Warning: --messages is deprecated. Use --num-records instead.", "Warning: --consumer.config is deprecated",
				"the consumer stopped before reading --messages records",
				"share consumer 1 (client id perf-share-consumer-client): 50000 records, 4838.8658 records/s, 4.6147 MB/s over 10333 ms"}},
		{file: "share_consumer_threads_4.1.txt", tool: ToolShareConsumer, lines: 11, metrics: impWantShare,
			notes: []string{"skipped 5 log lines", "share consumer 1: 50000 records", "share consumer 2: 50000 records",
				"2 progress lines of 2 share consumers, each on its own reporting timer: no interval series"}},
		{file: "e2e_latency_scala.txt", tool: ToolE2E, lines: 7, metrics: impWantE2E, notes: impWantE2ENotes},
		{file: "e2e_latency_copied.txt", tool: ToolE2E, lines: 6, metrics: impWantE2E, notes: []string{"4 progress lines"}},
		{file: "e2e_latency_decimal_comma.txt", tool: ToolE2E, lines: 6, metrics: impWantE2E},
		{file: "e2e_latency_summary.txt", tool: ToolE2E, lines: 2, metrics: impWantE2E999, notes: []string{"no progress lines"}},
		{file: "consumer_0.8.txt", tool: ToolConsumer, lines: 2,
			metrics: map[string]impWant{
				"records-consumed-total": impWantConsumerSummary["records-consumed-total"],
				"records-consumed-rate":  impWantConsumerSummary["records-consumed-rate"],
				"bytes-consumed-total":   impWantConsumerSummary["bytes-consumed-total"],
				"mb-per-sec":             impWantConsumerSummary["mb-per-sec"],
			},
			notes: []string{"fetch.size was 1048576 bytes"}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			im, err := ParseOutput(strings.NewReader(impReadFixture(t, tt.file)))
			if err != nil {
				t.Fatal(err)
			}
			impCheck(t, im, tt.tool, tt.lines, tt.metrics, tt.intervals, tt.notes)
		})
	}
	for _, f := range impFixtures() {
		if !seen[f.name] {
			t.Errorf("fixture %s has no test case", f.name)
		}
	}
}

// impCheck compares im with the expectations.
func impCheck(t *testing.T, im *Imported, tool string, lines int, metrics map[string]impWant, intervals []impWantInterval, notes []string) {
	t.Helper()
	if im.Tool != tool || im.Lines != lines {
		t.Errorf("Tool, Lines = %q, %d, want %q, %d", im.Tool, im.Lines, tool, lines)
	}
	got := map[string]ImportedMetric{}
	for _, m := range im.Metrics {
		if _, dup := got[m.Name]; dup {
			t.Errorf("metric %s twice", m.Name)
		}
		got[m.Name] = m
	}
	for name, w := range metrics {
		m, ok := got[name]
		if !ok {
			t.Errorf("metric %s missing", name)
			continue
		}
		if !impSameFloat(m.Value, w.v, 1e-9) || m.Unit != w.unit || m.Better != w.better {
			t.Errorf("%s = %v %q %q, want %v %q %q", name, m.Value, m.Unit, m.Better, w.v, w.unit, w.better)
		}
	}
	for name, m := range got {
		if _, ok := metrics[name]; !ok {
			t.Errorf("unexpected metric %s = %v", name, m.Value)
		}
	}
	if len(im.Intervals) != len(intervals) {
		t.Errorf("%d intervals, want %d", len(im.Intervals), len(intervals))
	} else {
		for i, w := range intervals {
			g := im.Intervals[i]
			if math.Abs(g.T-w.T) > 1e-6 || g.Records != w.Records || g.RecordsPerSec != w.RecordsPerSec || g.MBPerSec != w.MBPerSec ||
				g.LatencyAvgMs != w.LatencyAvgMs || g.LatencyMaxMs != w.LatencyMaxMs {
				t.Errorf("interval %d = %+v, want %+v", i, g, w)
			}
		}
	}
	for _, n := range notes {
		found := false
		for _, got := range im.Notes {
			found = found || strings.Contains(got, n)
		}
		if !found {
			t.Errorf("no note contains %q; notes:\n%s", n, strings.Join(im.Notes, "\n"))
		}
	}
}

// impSameFloat compares with a relative tolerance; NaN equals NaN.
func impSameFloat(a, b, rel float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestParseOutputGoldenFiles imports the renderers' own golden files.
func TestParseOutputGoldenFiles(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	im, err := ParseOutput(strings.NewReader(read("producer.golden")))
	if err != nil {
		t.Fatal(err)
	}
	impCheck(t, im, ToolProducer, 6, map[string]impWant{
		"records-sent":        {500000, "records", ""},
		"record-send-rate":    {18668.558414, "records/s", "higher"},
		"mb-per-sec":          {18.23, "MB/s", "higher"},
		"record-latency-avg":  {2.28, "ms", "lower"},
		"record-latency-p50":  {2, "ms", "lower"},
		"record-latency-p95":  {5, "ms", "lower"},
		"record-latency-p99":  {9, "ms", "lower"},
		"record-latency-p999": {287, "ms", "lower"},
		"record-latency-max":  {311, "ms", "lower"},
	}, []impWantInterval{
		{T: 64651 / 12917.3, Records: 64651, RecordsPerSec: 12917.3, MBPerSec: 12.61, LatencyAvgMs: 1.9, LatencyMaxMs: 311},
		{T: 64651/12917.3 + 100016/20003.2, Records: 100016, RecordsPerSec: 20003.2, MBPerSec: 19.53, LatencyAvgMs: 2.5, LatencyMaxMs: 45},
		{T: 64651/12917.3 + 100016/20003.2 + 99970/19990.0, Records: 99970, RecordsPerSec: 19990.0, MBPerSec: 19.52, LatencyAvgMs: 2.6, LatencyMaxMs: 60},
		{T: 64651/12917.3 + 100016/20003.2 + 99970/19990.0 + 100012/20002.4, Records: 100012, RecordsPerSec: 20002.4, MBPerSec: 19.53, LatencyAvgMs: 2.0, LatencyMaxMs: 38},
		{T: 64651/12917.3 + 100016/20003.2 + 99970/19990.0 + 100012/20002.4 + 99995/19987.0, Records: 99995, RecordsPerSec: 19987.0, MBPerSec: 19.52, LatencyAvgMs: 2.3, LatencyMaxMs: 52},
	}, nil)

	im, err = ParseOutput(strings.NewReader(read("consumer.golden")))
	if err != nil {
		t.Fatal(err)
	}
	impCheck(t, im, ToolConsumer, 2, impWantConsumerSummary, nil, nil)

	im, err = ParseOutput(strings.NewReader(read("consumer_detailed.golden")))
	if err != nil {
		t.Fatal(err)
	}
	impCheck(t, im, ToolConsumer, 8, impWantConsumerDetailed, impWantRows, []string{"timeout (10000 ms)"})

	// A --print-metrics block alone is the producer's run, with those
	// values only.
	im, err = ParseOutput(strings.NewReader(read("metrics.golden")))
	if err != nil {
		t.Fatalf("metrics.golden alone: %v", err)
	}
	if im.Tool != ToolProducer || len(im.Metrics) != 16 || !strings.Contains(strings.Join(im.Notes, "\n"), "no kafka-producer-perf-test summary line") {
		t.Errorf("metrics.golden alone: tool %q, %d metrics, notes %q; want the producer's 16 metrics and a note", im.Tool, len(im.Metrics), im.Notes)
	}
	// With a summary it is.
	im, err = ParseOutput(strings.NewReader(ProducerSummary(impTotal.Totals(2, 6, 14, 561)) + read("metrics.golden")))
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Metrics) != 9+16 {
		t.Errorf("%d metrics, want 9 + 16", len(im.Metrics))
	}
}

func TestParseOutputUTF16(t *testing.T) {
	text := impReadFixture(t, "producer_intervals.txt")
	want, err := ParseOutput(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, le := range []bool{true, false} {
		units := utf16.Encode([]rune("\ufeff" + strings.ReplaceAll(text, "\n", "\r\n")))
		b := make([]byte, 0, 2*len(units))
		for _, u := range units {
			if le {
				b = append(b, byte(u), byte(u>>8))
			} else {
				b = append(b, byte(u>>8), byte(u))
			}
		}
		got, err := ParseOutput(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("little endian %v: %v", le, err)
		}
		impCheck(t, got, want.Tool, want.Lines, impWants(want.Metrics), want.Intervals, want.Notes)
	}
}

func impWants(ms []ImportedMetric) map[string]impWant {
	out := map[string]impWant{}
	for _, m := range ms {
		out[m.Name] = impWant{m.Value, m.Unit, m.Better}
	}
	return out
}

// TestParseOutputVariants covers variants not worth a file.
func TestParseOutputVariants(t *testing.T) {
	summary := ProducerSummary(impTotal.Totals(2, 6, 14, 561))
	tests := []struct {
		name   string
		in     string
		check  func(t *testing.T, im *Imported)
		metric string // a metric that must be there
	}{
		{name: "log layouts", in: "2025-01-01 12:00:00,123 WARN Something (a.b.C)\n" +
			"2025-01-01T12:00:00.123Z [main] INFO hello\n" +
			"WARN [Producer clientId=x] message\n" +
			"log4j:WARN No appenders could be found for logger (org.apache.kafka.clients.producer.ProducerConfig).\n" +
			"SLF4J(W): No SLF4J providers were found.\n" +
			"OpenJDK 64-Bit Server VM warning: Options -Xverify:none and -noverify were deprecated in JDK 13\n" +
			"Picked up JAVA_TOOL_OPTIONS: -Dfile.encoding=UTF8\n" +
			"[2025-01-01 12:00:00,123] ERROR Uncaught error (org.apache.kafka.Foo)\n" +
			"java.lang.IllegalStateException: boom\n" +
			"\tat org.apache.kafka.Foo.bar(Foo.java:12)\n" +
			"\t... 3 more\n" +
			summary,
			check: func(t *testing.T, im *Imported) {
				if !impHasNote(im, "skipped 11 log lines") {
					t.Errorf("notes: %q", im.Notes)
				}
			}},
		{name: "exception without log line", in: "org.apache.kafka.common.errors.TimeoutException: Expiring 12 record(s) for bench-0:120001 ms has passed since batch creation\n" +
			"\tat org.apache.kafka.clients.producer.internals.FutureRecordMetadata.valueOrError(FutureRecordMetadata.java:98)\n" + summary,
			check: func(t *testing.T, im *Imported) {
				if !impHasNote(im, "skipped 2 lines of Java exceptions from line 1") {
					t.Errorf("notes: %q", im.Notes)
				}
			}},
		{name: "payload file", in: "Reading payloads from: payloads.txt\nNumber of messages read: 1000\n" + summary,
			check: func(t *testing.T, im *Imported) {
				if !impHasNote(im, "payloads from a file: Reading payloads from: payloads.txt") || !impHasNote(im, "Number of messages read: 1000") {
					t.Errorf("notes: %q", im.Notes)
				}
			}},
		{name: "NaN summary", in: "0 records sent, 0.000000 records/sec (0.00 MB/sec), NaN ms avg latency, 0.00 ms max latency, 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th.\n",
			check: func(t *testing.T, im *Imported) {
				for _, m := range im.Metrics {
					if m.Name == "record-latency-avg" {
						t.Errorf("record-latency-avg = %v, want left out", m.Value)
					}
				}
				if len(im.Metrics) != 8 || !impHasNote(im, "record-latency-avg left out: it is NaN") {
					t.Errorf("metrics %v, notes %q", im.Metrics, im.Notes)
				}
			}},
		{name: "consumer zero fetch time", in: ConsumerHeader(false) +
			"2025-01-01 12:00:00:000, 2025-01-01 12:00:10:000, 0.0000, 0.0000, 0, 0.0000, 10000, 0, NaN, NaN\n",
			check: func(t *testing.T, im *Imported) {
				if len(im.Metrics) != 6 || !impHasNote(im, "fetch-mb-per-sec left out: it is NaN") {
					t.Errorf("metrics %v, notes %q", im.Metrics, im.Notes)
				}
			}},
		{name: "infinite interval", in: "5 records sent, Infinity records/sec (Infinity MB/sec), 1.0 ms avg latency, 1.0 ms max latency.\n" +
			"5 records sent, 1.0 records/sec (0.00 MB/sec), 1.0 ms avg latency, 1.0 ms max latency.\n" + summary,
			check: func(t *testing.T, im *Imported) {
				// The dropped window lasted Kafka's reporting interval,
				// 5 s, the second 5 records ÷ 1 record/s.
				if len(im.Intervals) != 1 || im.Intervals[0].T != 10 || !impHasNote(im, "left out of the intervals: lines 1") {
					t.Errorf("intervals %v, notes %q", im.Intervals, im.Notes)
				}
			}},
		{name: "metric with empty tags and text value with colons", in: summary + "\nMetric Name          Value\ng:n:{}             : a : b\nh:m:{}             :\n",
			check: func(t *testing.T, im *Imported) {
				if !impHasNote(im, "g:n = a : b") || !impHasNote(im, "h:m = ") {
					t.Errorf("notes: %q", im.Notes)
				}
			}},
		{name: "client-id kept when it tells metrics apart", in: summary + PrintMetrics([]Metric{
			{Group: "producer-metrics", Name: "record-send-rate", Tags: []Tag{{"client-id", "a"}}, Value: 1.0},
			{Group: "producer-metrics", Name: "record-send-rate", Tags: []Tag{{"client-id", "b"}}, Value: 2.0},
			{Group: "producer-metrics", Name: "record-send-total", Tags: []Tag{{"client-id", "a"}}, Value: 3.0},
		}), check: func(t *testing.T, im *Imported) {
			want := map[string]float64{"producer-metrics:record-send-rate{client-id=a}": 1, "producer-metrics:record-send-rate{client-id=b}": 2,
				"producer-metrics:record-send-total": 3}
			for _, m := range im.Metrics {
				if v, ok := want[m.Name]; ok && v == m.Value {
					delete(want, m.Name)
				}
			}
			if len(want) > 0 {
				t.Errorf("missing %v in %v", want, im.Metrics)
			}
		}},
		{name: "Float.toString value", in: summary + "\nMetric Name   Value\na:b:{} : 1.5E10\n",
			check: func(t *testing.T, im *Imported) {
				if m := im.Metrics[len(im.Metrics)-1]; m.Name != "a:b" || m.Value != 1.5e10 {
					t.Errorf("got %+v", m)
				}
			}},
		// Kafka 4.2 (KIP-1147): the notices of renamed flags, printed on
		// stdout before the output, as ProducerPerformance and
		// ConsumerPerformance print them.
		{name: "4.2 producer notices", in: "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.\n" +
			"Option --producer.config has been deprecated and will be removed in a future version. Use --command-config instead.\n" +
			"Reading payloads from: /data/payloads.txt\nNumber of records read: 1000\n" + summary,
			check: func(t *testing.T, im *Imported) {
				if im.Tool != ToolProducer || !impHasNote(im, "Option --producer-props has been deprecated") ||
					!impHasNote(im, "Use --command-config instead.") || !impHasNote(im, "Number of records read: 1000") {
					t.Errorf("tool %s, notes %q", im.Tool, im.Notes)
				}
			}},
		{name: "4.2 consumer notices", in: "Warning: --messages is deprecated. Use --num-records instead.\n" +
			"Warning: --consumer.config is deprecated. Use --command-config instead.\n" +
			ConsumerHeader(false) + ConsumerSummaryRow(impConsumer.Row(impUTC)),
			check: func(t *testing.T, im *Imported) {
				if im.Tool != ToolConsumer || !impHasNote(im, "Warning: --messages is deprecated. Use --num-records instead.") ||
					!impHasNote(im, "Warning: --consumer.config is deprecated") {
					t.Errorf("tool %s, notes %q", im.Tool, im.Notes)
				}
			}},
		{name: "4.2 consumer timeout warning", in: ConsumerHeader(false) +
			"WARNING: Exiting before consuming the expected number of records: timeout (10000 ms) exceeded. You can use the --timeout option to increase the timeout.\n" +
			ConsumerSummaryRow(impConsumer.Row(impUTC)),
			check: func(t *testing.T, im *Imported) {
				if im.Tool != ToolConsumer || !impHasNote(im, "the consumer stopped before reading --messages records") {
					t.Errorf("tool %s, notes %q", im.Tool, im.Notes)
				}
			}},
		{name: "consumer pausing warning", in: "WARNING: Pausing all 3 partitions. No data will be consumed this poll.\n" +
			ConsumerSummaryRow(impConsumer.Row(impUTC)),
			check: func(t *testing.T, im *Imported) {
				if im.Tool != ToolConsumer || !impHasNote(im, "paused all its partitions for 1 polls") {
					t.Errorf("tool %s, notes %q", im.Tool, im.Notes)
				}
			}},
		{name: "consumer 0.8 detailed", in: "time, fetch.size, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n" +
			"2025-01-01 12:00:05:150, 0, 1048576, 1.7578, 0.3497, 18432, 3666.6004\n" +
			"2025-01-01 12:00:10:151, 0, 1048576, 6.8359, 1.0154, 71680, 10647.4705\n",
			check: func(t *testing.T, im *Imported) {
				// No durations printed: the first row's is its records
				// ÷ records/s, the next ones the differences of the dates.
				first := 18432 / 3666.6004
				want := []ImportedInterval{{T: first, Records: 18432, RecordsPerSec: 3666.6004, MBPerSec: 0.3497},
					{T: first + 5.001, Records: 53248, RecordsPerSec: 10647.4705, MBPerSec: 1.0154}}
				if len(im.Intervals) != 2 || im.Intervals[0] != want[0] || math.Abs(im.Intervals[1].T-want[1].T) > 1e-9 ||
					im.Intervals[1].Records != want[1].Records || impMetricMap(im)["records-consumed-total"] != 71680 {
					t.Errorf("intervals %+v, metrics %v", im.Intervals, im.Metrics)
				}
			}},
		{name: "consumer custom date format", in: "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n" +
			"12:00:05, 0, 1.0000, 0.2000, 10, 2.0000\n12:00:10, 0, 2.0000, 0.2000, 20, 2.0000\n",
			check: func(t *testing.T, im *Imported) {
				if len(im.Intervals) != 2 || im.Intervals[0].T != 1 || im.Intervals[1].T != 2 || !impHasNote(im, "unknown --date-format") {
					t.Errorf("intervals %v, notes %q", im.Intervals, im.Notes)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im, err := ParseOutput(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, im)
		})
	}
}

// TestSplitShareProgress: rows of several share consumers that landed on
// one line are told apart where a consumer's number meets the next row's
// start time.
func TestSplitShareProgress(t *testing.T) {
	row := func(start string) string {
		return start + ", 2026-02-10 09:27:37:133, 23.8419, 4.7589, 4990.0200, 25000, 5010"
	}
	for _, c := range []struct {
		name string
		line string
		want []int64
	}{
		{"one row", row("2026-02-10 09:27:32:123") + " for share consumer 3", []int64{3}},
		{"two rows on a line", row("2026-02-10 09:27:32:123") + " for share consumer 1" + row("2026-02-10 09:27:32:124") + " for share consumer 2", []int64{1, 2}},
		{"consumer 12, then a row", row("2026-02-10 09:27:32:123") + " for share consumer 12" + row("2026-02-10 09:27:32:124") + " for share consumer 7", []int64{12, 7}},
		{"epoch-millisecond dates", "1770715652123, 1770715657133, 1.0, 1.0, 1.0, 1, 5010 for share consumer 1" +
			"1770715652124, 1770715657138, 1.0, 1.0, 1.0, 1, 5014 for share consumer 2", []int64{1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := splitShareProgress(1, c.line)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range rows {
				got = append(got, r.consumer)
				if r.msgs != 25000 && r.msgs != 1 {
					t.Errorf("row %+v", r)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("consumers %v, want %v", got, c.want)
			}
		})
	}
	for _, bad := range []string{
		row("2026-02-10 09:27:32:123") + " for share consumer ",
		row("2026-02-10 09:27:32:123") + " for share consumer 1 and more",
		"for share consumer 1",
	} {
		if _, err := splitShareProgress(1, bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func impHasNote(im *Imported, s string) bool {
	for _, n := range im.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func TestParseOutputErrors(t *testing.T) {
	summary := strings.TrimSuffix(ProducerSummary(impTotal.Totals(2, 6, 14, 561)), "\n")
	window := strings.TrimSuffix(impWindows[0].IntervalLine(), "\n")
	header := strings.TrimSuffix(ConsumerHeader(false), "\n")
	dheader := strings.TrimSuffix(ConsumerHeader(true), "\n")
	row := strings.TrimSuffix(ConsumerSummaryRow(impConsumer.Row(impUTC)), "\n")
	rows := impDetailedRows(0)
	e2eText := impE2EText(impE2ENanos)
	tests := []struct {
		name string
		in   string
		line int
		msg  string // substring of Error()
	}{
		{"empty", "", 0, "no kafka-producer-perf-test, kafka-consumer-perf-test, kafka-share-consumer-perf-test or kafka-e2e-latency output"},
		{"blank and logs only", "\n\n[2025-01-01 12:00:00,123] WARN x (a.B)\n", 0, "no kafka-producer"},
		{"share header only", ShareConsumerHeader + "\n", 1, "no share group row"},
		{"share row of 6 columns", ShareConsumerHeader + "\n" + impShareFinal[:strings.LastIndex(impShareFinal, ", ")] + "\n", 2,
			"expected 7 columns as in kafka-share-consumer-perf-test's header"},
		{"share row with a text count", ShareConsumerHeader + "\n" + strings.Replace(impShareFinal, "100000", "many", 1), 2,
			"column 6 (data.consumed.in.nMsg): expected an integer"},
		{"share progress without its consumer", ShareConsumerHeader + "\n" + strings.TrimSuffix(impShareFinal, "\n") + " for share consumer x\n", 2,
			`expected "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms for share consumer N" rows`},
		{"share row after the group's", ShareConsumerHeader + "\n" + impShareFinal + impShareFinal, 3, "goes on after the share group's row of line 2"},
		{"share header in consumer output", header + "\n" + ShareConsumerHeader + "\n" + row, 2,
			"a kafka-share-consumer-perf-test line in kafka-consumer-perf-test output (recognised on line 1)"},
		{"garbage line", window + "\nhello world\n" + summary, 2, "unrecognized line"},
		{"garbage after summary", summary + "\n\nDone.\n", 3, "unrecognized line"},
		{"truncated summary", window + "\n" + summary[:strings.Index(summary, " 95th")], 2, `line ends early (cut short?): expected " ms 95th, "`},
		{"truncated interval", window[:20], 1, "line ends early"},
		{"record count not a number", "abc" + summary[6:], 1, `expected an integer, the record count, at column 1, found "abc"`},
		{"rate not a number", strings.Replace(summary, "19534.302235", "19534.30x", 1), 1, `expected a number, records/sec, at column 22, found "19534.30x"`},
		{"percentile not an integer", strings.Replace(summary, "14 ms 99th", "14.5 ms 99th", 1), 1, `expected an integer, the 99th percentile`},
		{"record count out of range", "99999999999999999999" + summary[6:], 1, "expected an integer"},
		{"wrong word", strings.Replace(summary, "avg latency", "mean latency", 1), 1, `expected " ms avg latency, " at column`},
		{"trailing text", summary + " extra", 1, "unexpected text after the summary"},
		{"steady-state periodic line", "5 steady state records sent, 1.0 records/sec (0.00 MB/sec), 1.0 ms avg latency, 1.0 ms max latency.", 1, "has no \"steady state\""},
		{"negative records", "-5" + summary[6:], 1, "negative record count"},
		{"periodic lines only", window + "\n" + window + "\n\n", 2, "no final producer summary"},
		{"two summaries", summary + "\n" + summary, 2, "second producer summary (first on line 1)"},
		{"two steady summaries", strings.Replace(summary, " records sent", " steady state records sent", 1) + "\n" +
			strings.Replace(summary, " records sent", " steady state records sent", 1), 2, "second steady-state summary"},
		{"window after summary", summary + "\n" + window, 2, "periodic line after the final summary"},
		{"warm-up notice malformed", "Warmup first many records.\n" + summary, 1, "expected \"Warmup first N records."},
		{"warm-up after results", summary + "\n" + strings.TrimSuffix(ProducerWarmupNotice(5), "\n"), 2, "comes before any result line"},
		{"mixed tools", summary + "\n" + header + "\n" + row, 2, "a kafka-consumer-perf-test line in kafka-producer-perf-test output (recognised on line 1)"},
		{"mixed tools 2", header + "\n" + row + "\n" + summary, 3, "a kafka-producer-perf-test line in kafka-consumer-perf-test output"},
		{"consumer row with missing columns", header + "\n" + row[:strings.LastIndex(row, ", ")], 2, "expected 10 columns as in the header of line 1"},
		{"consumer row with missing columns, no header", strings.Join(strings.Split(row, ", ")[:5], ", "), 1, "expected a consumer row of 10 comma-separated columns"},
		{"consumer number not a number", header + "\n" + strings.Replace(row, "95.3674", "95.36.74", 1), 2, `column 3 (data.consumed.in.MB): expected a number, found "95.36.74"`},
		{"consumer integer not an integer", header + "\n" + strings.Replace(row, "1000000", "1e6", 1), 2, `column 5 (data.consumed.in.nMsg): expected an integer, found "1e6"`},
		{"consumer empty column", header + "\n" + strings.Replace(row, ", 3021,", ", ,", 1), 2, "column 7 (rebalance.time.ms) is empty"},
		{"summary row under detailed header", dheader + "\n" + row, 2, "column 2 (threadId): expected an integer"},
		{"header only", "\n" + header + "\n", 2, "no consumer summary row"},
		{"unknown header", "time, threadId, foo, bar", 1, "unknown consumer header"},
		{"header not first", row + "\n" + header, 2, "consumer header after rows"},
		{"two headers", header + "\n" + header, 2, "second consumer header (first on line 1)"},
		{"row after summary", header + "\n" + row + "\n" + row, 3, "consumer row after the summary row of line 2"},
		{"negative messages", header + "\n" + strings.Replace(row, "1000000", "-1", 1), 2, "a message count of at least 0"},
		{"running total goes down", dheader + "\n" + rows[2] + rows[1], 3, "data.consumed.in.nMsg went down from 125952 to 71680"},
		{"detailed layouts mixed", rows[0] + impOldColumns(rows[1], 6), 2, "row with 6 columns after rows with 10"},
		{"output after metrics", summary + "\n" + impProducerMetrics() + summary, 20, "output goes on after the --print-metrics block of line 3"},
		{"two metrics blocks", summary + "\n" + impProducerMetrics() + "\nMetric Name   Value", 21, "second --print-metrics block"},
		{"duplicate metric", summary + "\na:b:{} : 1\na:b:{} : 2", 3, "metric printed twice (first on line 2)"},
		{"metrics header after metric lines", summary + "\na:b:{} : 1\nMetric Name   Value", 3, "header after metric lines"},
		{"metrics only, no client's", "\nMetric Name   Value\na:b:{} : 1\n", 0, "neither producer nor consumer metrics"},
		{"metrics only, both clients'", "producer-metrics:a:{} : 1\nconsumer-metrics:a:{} : 1\n", 2, "a consumer metric in a block of producer metrics (line 1)"},
		{"empty metrics block only", "\nMetric Name   Value\n", 0, "only an empty --print-metrics block"},
		{"in steady state twice", "In steady state.\nIn steady state.\n" + summary, 2, "second \"In steady state.\""},
		{"line too long", summary + "\n" + strings.Repeat("x", MaxImportLineBytes+1) + "\n", 2, "line longer than 1 MiB"},
		{"e2e progress only", e2eText[:strings.Index(e2eText, "Avg")], 4, `no "Avg latency: … ms" and "Percentiles: …" summary after this line`},
		{"e2e average only", e2eText[:strings.Index(e2eText, "Percentiles")], 5, `no "Percentiles: 50th = …, 99th = …, 99.9th = …" line after the average`},
		{"e2e percentiles cut short", strings.TrimSuffix(e2eText, ", 99.9th = 26\n") + ", 99.9", 6, `line ends early (cut short?): expected ", 99.9th = "`},
		{"e2e percentile out of range", strings.Replace(e2eText, "99.9th = 26", "99.9th = 99999999999999999999", 1), 6, "the 99.9th percentile, at column 44: 99999999999999999999 is out of range"},
		{"e2e percentile not an integer", strings.Replace(e2eText, "99th = 24", "99th = 24.5", 1), 6, `expected ", 99.9th = " at column 33, found ".5, 99.9th = 26"`},
		{"e2e percentile not a number", strings.Replace(e2eText, "50th = 1,", "50th = x,", 1), 6, `expected an integer, the 50th percentile, at column 21, found "x, 99th = …"`},
		{"e2e negative percentile", strings.Replace(e2eText, "99.9th = 26", "99.9th = -2147483622", 1), 6, "the 99.9th percentile is -2147483622 ms: negative"},
		{"e2e average not a number", strings.Replace(e2eText, "1.5614 ms", "1.56.14 ms", 1), 5, `expected a number, the average latency, at column 14, found "1.56.14"`},
		{"e2e average without unit", strings.Replace(e2eText, "1.5614 ms", "1.5614", 1), 5, `line ends early (cut short?): expected " ms"`},
		{"e2e average trailing text", strings.Replace(e2eText, "1.5614 ms", "1.5614 ms (avg)", 1), 5, `unexpected text after "ms"`},
		{"e2e percentiles first", "Percentiles: 50th = 1, 99th = 24, 99.9th = 26\n", 1, `without the "Avg latency: … ms" line`},
		{"e2e two runs", e2eText + e2eText, 7, "progress line after the summary (\"Avg latency\" on line 5): several runs in one file?"},
		{"e2e two summaries", e2eText + e2eText[strings.Index(e2eText, "Avg"):], 7, `second "Avg latency" line (first on line 5)`},
		{"e2e progress goes back", "0\t1.5\n1000\t1.5\n1000\t1.5\n", 3, "record 1000 after record 1000 (line 2)"},
		{"e2e topic line late", e2eText[:strings.Index(e2eText, "Avg")] + E2ETopicCreation("t", 1, 1), 5, "topic creation line comes before any result line"},
		{"e2e line in producer output", summary + "\n" + e2eText, 2, "a kafka-e2e-latency line in kafka-producer-perf-test output (recognised on line 1)"},
		{"producer line in e2e output", e2eText + summary, 7, "a kafka-producer-perf-test line in kafka-e2e-latency output (recognised on line 1)"},
		{"e2e line in consumer output", header + "\n" + row + "\n" + "Avg latency: 1.0 ms", 3, "a kafka-e2e-latency line in kafka-consumer-perf-test output"},
		{"e2e progress value not Java's", "0\t1.5x\n" + e2eText[strings.Index(e2eText, "Avg"):], 1, "unrecognized line"},
		{"e2e failed topic creation", "Creation of topic lat failed\n", 1, `no "Avg latency: … ms" and "Percentiles: …" summary after this line`},
		{"stack frame without exception", "\tat org.apache.kafka.Foo.bar(Foo.java:12)\n" + summary, 1, "unrecognized line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im, err := ParseOutput(strings.NewReader(tt.in))
			if im != nil {
				t.Errorf("an Imported with an error: %+v", im)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *ParseError", err, err)
			}
			if pe.Line != tt.line || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got line %d %q, want line %d with %q", pe.Line, err, tt.line, tt.msg)
			}
			if len(pe.Text) > 204 {
				t.Errorf("Text of %d bytes", len(pe.Text))
			}
		})
	}
}

// impEndlessReader reads n bytes of digits and newlines.
type impEndlessReader struct{ n, at int }

// impDigits is impEndlessReader's text, long enough to fill any read
// with copy: a loop over 64 MiB byte by byte took 20 s under the race
// detector.
var impDigits = strings.Repeat("0123456789\n", 64<<10/11+1)

func (r *impEndlessReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < min(len(p), r.n) {
		c := copy(p[k:min(len(p), r.n)], impDigits[r.at:])
		k += c
		r.at = (r.at + c) % 11 // the phase in the digits' line
	}
	r.n -= k
	return k, nil
}

type impFailingReader struct{}

var errImpRead = errors.New("disk on fire")

func (impFailingReader) Read([]byte) (int, error) { return 0, errImpRead }

func TestParseOutputLimits(t *testing.T) {
	// The input's limit lowered to 4 MiB (still above the line's): the
	// same code refuses what is over it and reads what is not.
	defer func(n int) { maxImportBytes = n }(maxImportBytes)
	maxImportBytes = 4 << 20
	if _, err := ParseOutput(&impEndlessReader{n: maxImportBytes + 1}); !errors.Is(err, ErrImportTooLarge) {
		t.Errorf("4 MiB + 1: %v", err)
	}
	// Exactly the limit is read, then refused as garbage on line 1.
	_, err := ParseOutput(&impEndlessReader{n: maxImportBytes})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Errorf("4 MiB: %v", err)
	}
	if _, err := ParseOutput(io.MultiReader(strings.NewReader("12"), impFailingReader{})); !errors.Is(err, errImpRead) {
		t.Errorf("read error: %v", err)
	}
	// A line of exactly 1 MiB is read (and refused for what it is).
	_, err = ParseOutput(strings.NewReader(strings.Repeat("x", MaxImportLineBytes)))
	if !errors.As(err, &pe) || pe.Line != 1 || !strings.Contains(pe.Msg, "unrecognized") {
		t.Errorf("1 MiB line: %v", err)
	}
}

func TestParseErrorString(t *testing.T) {
	e := &ParseError{Line: 3, Text: "x", Msg: "expected y"}
	if got := e.Error(); got != `line 3: expected y: "x"` {
		t.Errorf("got %q", got)
	}
	e = &ParseError{Msg: "nothing"}
	if got := e.Error(); got != "kafka tool output: nothing" {
		t.Errorf("got %q", got)
	}
}

// TestParseOutputLinearTime feeds long lines built to trip a quadratic
// scan: each must be refused (or read) in about linear time.
func TestParseOutputLinearTime(t *testing.T) {
	const n = MaxImportLineBytes / 4
	lines := []string{
		"a:b:{k=v" + strings.Repeat("} x", n),
		"a:b:{k=v" + strings.Repeat("}  ", n),
		strings.Repeat(" : ", n),
		"a:b:{" + strings.Repeat("k=v, ", n),
		strings.Repeat("records sent, ", n/4),
		"1" + strings.Repeat(", 1", n),
		"[2025-01-01 12:00:00,123] WARN " + strings.Repeat("x", MaxImportLineBytes-40),
		"a.b." + strings.Repeat("c.", n) + "FooException: x",
	}
	for i, l := range lines {
		if len(l) > MaxImportLineBytes {
			l = l[:MaxImportLineBytes]
		}
		start := time.Now()
		_, err := ParseOutput(strings.NewReader(l + "\n" + ProducerSummary(impTotal.Totals(1, 2, 3, 4))))
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("line %d: %v (%v)", i, d, err)
		}
	}
}
