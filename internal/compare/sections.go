package compare

import "strings"

// Sections of a comparison table, in the order they are shown.
const (
	SectionThroughput = "Throughput"
	SectionLatency    = "Latency"
	SectionFetch      = "Fetch"
	SectionNetwork    = "Network and syscalls"
	SectionCPU        = "CPU and GC"
	SectionOther      = "Other"
)

var sectionOrder = []string{SectionThroughput, SectionLatency, SectionFetch, SectionNetwork, SectionCPU, SectionOther}

// Sections returns the section names in the order tables show them.
func Sections() []string { return append([]string(nil), sectionOrder...) }

func sectionRank(s string) int {
	for i, name := range sectionOrder {
		if name == s {
			return i
		}
	}
	return len(sectionOrder)
}

// SectionOf returns the section of a metric. The rules are tried in this
// order and the first that matches wins, so every name lands in exactly
// one section:
//
//  1. Network and syscalls: syscw, syscr, wchar, rchar; names starting
//     "syscw-" or "syscr-" (syscw-rate); bytes-per-…-syscall.
//  2. CPU and GC: names starting process-cpu-, cpu-, gc- or heap-
//     (process-cpu-p99 is CPU, not latency).
//  3. Latency: names containing "latency" (record-latency-p99,
//     request-latency-avg, fetch-latency-max), or ending in a percentile
//     suffix -pNN (-p50, -p95, -p99, -p999).
//  4. Fetch: names starting fetch- (fetch-rate, fetch-size-avg,
//     fetch-records-per-sec, fetch-time), records-per-request,
//     records-lag or rebalance- (the consumer tool's rebalance.time.ms).
//  5. Throughput: names ending -rate or -per-sec (record-send-rate,
//     records-consumed-rate, request-rate, mb-per-sec), or starting
//     records- or bytes-consumed- (records-sent, bytes-consumed-total).
//  6. Other: everything else (batch-size-avg, record-error-total, …).
func SectionOf(metric string) string {
	m := metric
	switch {
	case m == "syscw" || m == "syscr" || m == "wchar" || m == "rchar",
		strings.HasPrefix(m, "syscw-") || strings.HasPrefix(m, "syscr-"),
		strings.HasPrefix(m, "bytes-per-") && strings.HasSuffix(m, "-syscall"),
		strings.Contains(m, "syscalls-per-"), m == "buffers-per-request", m == "bytes-per-request":
		return SectionNetwork
	case hasAnyPrefix(m, "process-cpu-", "cpu-", "gc-", "heap-"):
		return SectionCPU
	case strings.Contains(m, "latency") || percentileSuffix(m):
		return SectionLatency
	case hasAnyPrefix(m, "fetch-", "records-per-request", "records-lag", "rebalance-"):
		return SectionFetch
	case strings.HasSuffix(m, "-rate") || strings.HasSuffix(m, "-per-sec"),
		hasAnyPrefix(m, "records-", "bytes-consumed-"):
		return SectionThroughput
	}
	return SectionOther
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// percentileSuffix reports whether name ends in "-p" and digits.
func percentileSuffix(name string) bool {
	i := strings.LastIndex(name, "-p")
	if i < 0 || i+2 == len(name) {
		return false
	}
	for _, c := range name[i+2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
