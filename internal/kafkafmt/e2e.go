package kafkafmt

import (
	"strconv"
	"strings"
)

// The lines of Kafka's EndToEndLatency tool
// (org.apache.kafka.tools.EndToEndLatency, kafka-e2e-latency.sh), so that
// `kbench run e2e` output pastes beside Java's.

// E2ETopicCreation is the line the tool prints before it creates a
// missing topic, ending in "\n".
func E2ETopicCreation(topic string, partitions, replicationFactor int) string {
	return "Topic \"" + topic + "\" does not exist. Will create topic with " + strconv.Itoa(partitions) +
		" partition(s) and replication factor = " + strconv.Itoa(replicationFactor) + "\n"
}

// E2EProgressEvery is how often the tool prints a progress line: for
// records 0, 1000, 2000, …
const E2EProgressEvery = 1000

// E2EProgress is the progress line of record i (0-based) whose round trip
// took elapsedNanos: i, a tab and the milliseconds as Java's
// Double.toString prints elapsed / 1000.0 / 1000.0 (two divisions, as the
// tool computes it: one division by 1e6 can differ in the last bit).
func E2EProgress(i int64, elapsedNanos int64) string {
	return strconv.FormatInt(i, 10) + "\t" + JavaDouble(float64(elapsedNanos)/1000.0/1000.0) + "\n"
}

// E2ESummary is the tool's two closing lines for the round trips of
// every record, in the order they were sent, in nanoseconds:
//
//	Avg latency: %.4f ms
//	Percentiles: 50th = %d, 99th = %d, 99.9th = %d
//
// computed as Java does: the average from a double sum of the
// nanoseconds, the percentiles from whole milliseconds (each round trip
// truncated), sorted, at index (int)(n × q). Empty without records (the
// tool fails before printing them).
func E2ESummary(elapsedNanos []int64) string {
	n := len(elapsedNanos)
	if n == 0 {
		return ""
	}
	total := 0.0
	ms := make([]int64, n)
	for i, e := range elapsedNanos {
		total += float64(e)
		ms[i] = e / 1000 / 1000
	}
	ps := Percentiles(ms, 0.5, 0.99, 0.999)
	at := func(i int) string { return strconv.FormatInt(int64(int32(ps[i])), 10) }
	var b strings.Builder
	b.WriteString("Avg latency: ")
	b.WriteString(JavaFixed(total/float64(n)/1000.0/1000.0, 4))
	b.WriteString(" ms\nPercentiles: 50th = ")
	b.WriteString(at(0))
	b.WriteString(", 99th = ")
	b.WriteString(at(1))
	b.WriteString(", 99.9th = ")
	b.WriteString(at(2))
	b.WriteString("\n")
	return b.String()
}
