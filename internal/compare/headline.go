package compare

import (
	"slices"
	"sort"
)

// headlineMetrics are the metrics each workload's comparisons test: the
// figures a change to a Kafka client is judged by. Testing every one of
// a run's ~30 figures at α would flag about 30·α of them between
// identical runs (the issue saw syscr "worse, p=0.016" between identical
// 5 vs 5 groups); testing a few chosen figures, with the false discovery
// rate controlled across them (Benjamini-Hochberg), keeps a flag
// meaningful. Every other row is descriptive: its change is shown, not
// judged.
//
// The choice, per workload:
//
//   - producer (kbench's and imported kafka-producer-perf-test results
//     share these names): throughput in both units Kafka's tool prints,
//     record-send-rate (records/s) and mb-per-sec, and the record
//     latency's median and tail, record-latency-p50, -p99 and -p999. Not
//     tested: -avg (the body and tail the percentiles already cover,
//     pulled by outliers), -p95 (between p50 and p99, moving with them),
//     -max (one sample), the intended-time latencies (throttled runs
//     only), request-level and process figures (causes, not outcomes).
//   - consumer (kbench's and imported kafka-consumer-perf-test results):
//     the four rates of Kafka's consumer tool, records-consumed-rate and
//     mb-per-sec over the whole window and fetch-records-per-sec and
//     fetch-mb-per-sec without the group's rebalance time. A consumer
//     has no record latency; fetch-latency-avg/max time the fetch round
//     trip, which mostly measures how long the broker waits for data,
//     and stays descriptive.
//   - writepath (the write-path workload, which exists to compare how a
//     client writes requests to the socket): requests-per-sec and
//     mb-per-sec, request-latency-p50, -p99 and -p999, and the two costs
//     the strategies differ in, write-syscalls-per-request and
//     cpu-seconds-per-mb.
//
// Figures in two units of one quantity (records/s and MB/s) give the
// same p-value; Benjamini-Hochberg then treats them as one, so the
// duplicate costs no power.
var headlineMetrics = map[string][]string{
	"producer":  {"record-send-rate", "mb-per-sec", "record-latency-p50", "record-latency-p99", "record-latency-p999"},
	"consumer":  {"records-consumed-rate", "mb-per-sec", "fetch-records-per-sec", "fetch-mb-per-sec"},
	"writepath": {"requests-per-sec", "mb-per-sec", "request-latency-p50", "request-latency-p99", "request-latency-p999", "write-syscalls-per-request", "cpu-seconds-per-mb"},
}

// HeadlineWorkloads are the workloads with headline metrics, sorted.
func HeadlineWorkloads() []string {
	ws := make([]string, 0, len(headlineMetrics))
	for w := range headlineMetrics {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	return ws
}

// HeadlineMetrics returns the metrics a comparison of runs of workload
// tests ("producer", "consumer", "writepath"; imported Kafka tool
// results carry the workload of their tool). Any other workload (an
// imported profile, an unknown name) gets every workload's headline
// metrics: those are the only names that are ever tested.
func HeadlineMetrics(workload string) []string {
	if ms, ok := headlineMetrics[workload]; ok {
		return slices.Clone(ms)
	}
	var all []string
	for _, w := range HeadlineWorkloads() {
		for _, m := range headlineMetrics[w] {
			if !slices.Contains(all, m) {
				all = append(all, m)
			}
		}
	}
	return all
}
