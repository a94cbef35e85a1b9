package runner

import (
	"slices"

	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// catalogEntry is one metric a workload can report: its name, unit and
// direction, as the run writes them into result.json.
type catalogEntry struct {
	name, unit string
	better     rundoc.Better
}

const (
	higher = rundoc.HigherIsBetter
	lower  = rundoc.LowerIsBetter
)

// latencyEntries are the figures latencyHist.metrics reports under prefix.
func latencyEntries(prefix string) []catalogEntry { return quantileEntries(prefix, latencyQuantiles) }

// quantileEntries are the figures latencyHist.metricsAt reports under
// prefix for the percentiles qs.
func quantileEntries(prefix string, qs []latencyQuantile) []catalogEntry {
	out := []catalogEntry{{prefix + "-avg", "ms", lower}}
	for _, q := range qs {
		out = append(out, catalogEntry{prefix + "-" + q.suffix, "ms", lower})
	}
	return append(out, catalogEntry{prefix + "-max", "ms", lower})
}

// processEntries are the figures window.processMetrics reports.
var processEntries = []catalogEntry{
	{"process-cpu-avg", "%", lower}, {"process-cpu-seconds", "s", lower},
	{"process-cpu-p99", "%", lower}, {"process-cpu-max", "%", lower},
	{"cpu-seconds-per-gib", "s/GiB", lower}, {"cpu-seconds-per-million-records", "s", lower},
	{"gc-count", "cycles", lower}, {"gc-pause-total", "ms", lower}, {"heap-peak", "MiB", lower},
	{"syscw", "syscalls", lower}, {"syscr", "syscalls", lower},
	{"wchar", "bytes", ""}, {"rchar", "bytes", ""},
	{"bytes-per-write-syscall", "bytes", higher}, {"bytes-per-read-syscall", "bytes", higher},
	{"syscw-rate", "syscalls/s", ""},
	// harness.go: whether kbench itself limited the run.
	{"harness-cpu-saturation", "%", ""}, {"harness-limited", "flag", ""},
}

// catalog is every metric each workload can report. A run reports a
// subset (some figures need a throttle, a mode or /proc); a test runs
// each workload and checks that what it reports is listed here with the
// same unit and direction, so the two cannot drift apart.
var catalog = map[rundoc.Workload][]catalogEntry{
	rundoc.Producer: slices.Concat([]catalogEntry{
		{"records-sent", "records", ""},
		{"record-send-rate", "records/s", higher},
		{"mb-per-sec", "MB/s", higher},
	}, latencyEntries("record-latency"), latencyEntries("record-latency-intended"), latencyEntries("publish-delay"), []catalogEntry{
		{"record-error-total", "records", lower},
		{"request-rate", "requests/s", ""},
		{"request-latency-avg", "ms", lower},
		{"request-latency-max", "ms", lower},
		{"records-per-request-avg", "records", ""},
		{"batch-size-avg", "bytes", ""},
		{"record-retry-total", "retries", lower},
		{"record-bytes", "bytes", ""},
		{"bytes-on-wire", "bytes", lower},
		{"compression-rate-avg", "ratio", lower},
		{"wire-bytes-per-record-byte", "ratio", lower},
		{"bufferpool-wait-ratio", "ratio", ""},
	}, processEntries),
	rundoc.Consumer: slices.Concat([]catalogEntry{
		{"records-consumed-total", "records", ""},
		{"records-consumed-rate", "records/s", higher},
		{"bytes-consumed-total", "bytes", ""},
		{"bytes-consumed-rate", "bytes/s", higher},
		{"mb-per-sec", "MB/s", higher},
		{"rebalance-time", "ms", lower},
		{"fetch-time", "ms", ""},
		{"fetch-records-per-sec", "records/s", higher},
		{"fetch-mb-per-sec", "MB/s", higher},
		{"fetch-total", "fetches", ""},
		{"fetch-rate", "fetches/s", ""},
		{"fetch-latency-avg", "ms", lower},
		{"fetch-latency-max", "ms", lower},
		{"fetch-size-avg", "bytes", ""},
		{"fetch-size-max", "bytes", ""},
		{"records-per-request-avg", "records", ""},
		{"records-lag-max", "records", lower},
	}, processEntries),
	// e2e.go: both modes report e2e-latency and the counts; rate mode
	// adds the intended-time latency, publish latency and rates.
	rundoc.E2E: slices.Concat(quantileEntries("e2e-latency", e2eQuantiles), quantileEntries("e2e-latency-intended", e2eQuantiles),
		latencyEntries("publish-latency"), latencyEntries("publish-delay"), []catalogEntry{
			{"records-sent", "records", ""},
			{"records-received", "records", ""},
			{"records-lost", "records", lower},
			{"records-duplicated", "records", lower},
			{"record-send-rate", "records/s", higher},
			{"consume-rate", "records/s", higher},
			// backlog.go: rate mode with --backlog-bytes.
			{"backlog-build-time", "s", ""},
			{"backlog-records", "records", ""},
			{"backlog-bytes", "bytes", ""},
			{"backlog-drain-time", "s", lower},
			{"backlog-drain-rate", "records/s", higher},
		}, processEntries),
	rundoc.Writepath: slices.Concat([]catalogEntry{
		{"requests-sent", "requests", ""},
		{"requests-per-sec", "requests/s", higher},
		{"records-per-sec", "records/s", higher},
		{"mb-per-sec", "MB/s", higher},
		{"buffers-per-request", "buffers", ""},
		{"bytes-per-request", "bytes", ""},
	}, latencyEntries("request-latency"), []catalogEntry{
		{"write-syscalls-per-request", "syscalls", lower},
		{"cpu-seconds-per-mb", "s/MB", lower},
	}, processEntries),
}

// Metrics lists the metrics a run of workload can report, in the order a
// run reports them, with their units and directions (Value and Help
// empty): what an import of figures measured elsewhere (a CSV of past
// results) may name. Nil for a workload kbench does not run.
func Metrics(workload rundoc.Workload) []rundoc.Metric {
	entries := catalog[workload]
	if entries == nil {
		return nil
	}
	out := make([]rundoc.Metric, len(entries))
	for i, e := range entries {
		out[i] = rundoc.Metric{Name: e.name, Unit: e.unit, Better: e.better}
	}
	return out
}

// ImportMetrics lists the metrics an import of figures measured
// elsewhere (a CSV of past results, a pasted table) may name for
// workload: kbench's own (Metrics), then the metrics Kafka's Java client
// doing the same work reports, under their own names ("io-wait-ratio",
// "record-queue-time-avg"), with the unit, direction and meaning of
// kafkafmt's catalog. A name both have is kbench's.
func ImportMetrics(workload rundoc.Workload) []rundoc.Metric {
	out := Metrics(workload)
	seen := map[string]bool{}
	for _, m := range out {
		seen[m.Name] = true
	}
	for _, j := range kafkafmt.JavaMetricsOf(workload) {
		if !seen[j.Name] {
			out = append(out, rundoc.Metric{Name: j.Name, Unit: j.Unit, Better: j.Better,
				Help: "Kafka's Java client metric: " + j.Help})
		}
	}
	return out
}
