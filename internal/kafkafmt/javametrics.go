package kafkafmt

// The metrics Kafka's Java producer and consumer report (their JMX
// attributes, --print-metrics lines, and the tables people paste from
// them), with the unit and direction an import gives them. The meanings
// are those of the "Monitoring" section of Kafka's documentation
// (docs/ops.html: common client metrics, producer, consumer, consumer
// group and fetch manager metrics), said in our words.

import (
	"sort"

	"github.com/kbench/kbench/internal/rundoc"
)

// Java clients a metric belongs to, for [JavaMetricsOf].
const (
	javaCommon   = "common" // every Java client's network layer (Selector)
	javaProducer = "producer"
	javaConsumer = "consumer"
)

// JavaMetric is one metric of Kafka's Java clients.
type JavaMetric struct {
	Name string
	// Unit is kbench's unit name: "ms", "ns", "s", "ratio", "bytes",
	// "bytes/s", "records/s", "records", a count's noun, or "/s" for a
	// count per second of something without a better noun.
	Unit string
	// Better is the direction a benchmark reads it in: higher, lower, or
	// "" when neither is better in general (a ratio of idle time, a
	// count that follows the load).
	Better rundoc.Better
	// Help says what it measures.
	Help string
	// Client is "producer", "consumer" or "common" (both).
	Client string
}

// javaMetrics is the catalog, by name. Several names exist in more than
// one group with one meaning (request-latency-avg in producer-metrics and
// per node); their unit and direction are the same everywhere.
var javaMetrics = func() map[string]JavaMetric {
	m := map[string]JavaMetric{}
	add := func(client string, list []JavaMetric) {
		for _, e := range list {
			e.Client = client
			if old, ok := m[e.Name]; ok && old.Client != client {
				e.Client = javaCommon
			}
			m[e.Name] = e
		}
	}
	add(javaCommon, javaCommonMetrics)
	add(javaProducer, javaProducerMetrics)
	add(javaConsumer, javaConsumerMetrics)
	return m
}()

const (
	jHigher = rundoc.HigherIsBetter
	jLower  = rundoc.LowerIsBetter
)

// javaCommonMetrics are the network layer's, reported by every Java
// client (producer-metrics, consumer-metrics, and per node).
var javaCommonMetrics = []JavaMetric{
	{Name: "connection-close-rate", Unit: "connections/s", Help: "connections closed per second"},
	{Name: "connection-close-total", Unit: "connections", Help: "connections closed"},
	{Name: "connection-creation-rate", Unit: "connections/s", Help: "connections opened per second"},
	{Name: "connection-creation-total", Unit: "connections", Help: "connections opened"},
	{Name: "connection-count", Unit: "connections", Help: "connections open now"},
	{Name: "network-io-rate", Unit: "/s", Help: "reads and writes on all connections per second"},
	{Name: "network-io-total", Unit: "operations", Help: "reads and writes on all connections"},
	{Name: "outgoing-byte-rate", Unit: "bytes/s", Help: "bytes sent to the brokers per second"},
	{Name: "outgoing-byte-total", Unit: "bytes", Help: "bytes sent to the brokers"},
	{Name: "incoming-byte-rate", Unit: "bytes/s", Help: "bytes read from the brokers per second"},
	{Name: "incoming-byte-total", Unit: "bytes", Help: "bytes read from the brokers"},
	{Name: "request-rate", Unit: "requests/s", Help: "requests sent per second"},
	{Name: "request-total", Unit: "requests", Help: "requests sent"},
	{Name: "request-size-avg", Unit: "bytes", Help: "mean size of a request"},
	{Name: "request-size-max", Unit: "bytes", Help: "largest request"},
	{Name: "response-rate", Unit: "responses/s", Help: "responses received per second"},
	{Name: "response-total", Unit: "responses", Help: "responses received"},
	{Name: "request-latency-avg", Unit: "ms", Better: jLower, Help: "mean time from sending a request to its response"},
	{Name: "request-latency-max", Unit: "ms", Better: jLower, Help: "longest time from sending a request to its response"},
	{Name: "select-rate", Unit: "/s", Help: "times per second the network thread asked the OS for ready sockets"},
	{Name: "select-total", Unit: "selects", Help: "times the network thread asked the OS for ready sockets"},
	{Name: "io-wait-ratio", Unit: "ratio", Help: "share of the network thread's time spent waiting for sockets (idle)"},
	{Name: "io-wait-time-ns-avg", Unit: "ns", Help: "mean wait of the network thread for ready sockets"},
	{Name: "io-wait-time-ns-total", Unit: "ns", Help: "time the network thread spent waiting for ready sockets"},
	{Name: "io-waittime-total", Unit: "ns", Help: "time the network thread spent waiting for ready sockets (older name)"},
	{Name: "io-ratio", Unit: "ratio", Help: "share of the network thread's time spent doing I/O"},
	{Name: "io-time-ns-avg", Unit: "ns", Help: "mean time of one round of socket I/O"},
	{Name: "io-time-ns-total", Unit: "ns", Help: "time the network thread spent doing I/O"},
	{Name: "iotime-total", Unit: "ns", Help: "time the network thread spent doing I/O (older name)"},
	{Name: "successful-authentication-rate", Unit: "/s", Help: "successful authentications per second"},
	{Name: "successful-authentication-total", Unit: "authentications", Help: "successful authentications"},
	{Name: "failed-authentication-rate", Unit: "/s", Better: jLower, Help: "failed authentications per second"},
	{Name: "failed-authentication-total", Unit: "authentications", Better: jLower, Help: "failed authentications"},
	{Name: "successful-reauthentication-rate", Unit: "/s", Help: "successful re-authentications per second"},
	{Name: "successful-reauthentication-total", Unit: "authentications", Help: "successful re-authentications"},
	{Name: "failed-reauthentication-rate", Unit: "/s", Better: jLower, Help: "failed re-authentications per second"},
	{Name: "failed-reauthentication-total", Unit: "authentications", Better: jLower, Help: "failed re-authentications"},
	{Name: "successful-authentication-no-reauth-total", Unit: "authentications", Help: "authentications by clients that do not re-authenticate"},
	{Name: "reauthentication-latency-avg", Unit: "ms", Better: jLower, Help: "mean time of a re-authentication"},
	{Name: "reauthentication-latency-max", Unit: "ms", Better: jLower, Help: "longest re-authentication"},
}

// javaProducerMetrics are KafkaProducer's (producer-metrics,
// producer-topic-metrics, producer-node-metrics).
var javaProducerMetrics = []JavaMetric{
	{Name: "record-send-rate", Unit: "records/s", Better: jHigher, Help: "records sent per second"},
	{Name: "record-send-total", Unit: "records", Help: "records sent"},
	{Name: "record-error-rate", Unit: "records/s", Better: jLower, Help: "records per second whose send failed"},
	{Name: "record-error-total", Unit: "records", Better: jLower, Help: "records whose send failed"},
	{Name: "record-retry-rate", Unit: "records/s", Better: jLower, Help: "records sent again per second"},
	{Name: "record-retry-total", Unit: "records", Better: jLower, Help: "records sent again"},
	{Name: "record-queue-time-avg", Unit: "ms", Better: jLower, Help: "mean time a batch waited in the accumulator before it was sent"},
	{Name: "record-queue-time-max", Unit: "ms", Better: jLower, Help: "longest time a batch waited in the accumulator"},
	{Name: "record-size-avg", Unit: "bytes", Help: "mean record size"},
	{Name: "record-size-max", Unit: "bytes", Help: "largest record"},
	{Name: "records-per-request-avg", Unit: "records", Help: "mean records in a produce request"},
	{Name: "batch-size-avg", Unit: "bytes", Help: "mean bytes in a batch sent to one partition"},
	{Name: "batch-size-max", Unit: "bytes", Help: "largest batch sent to one partition"},
	{Name: "batch-split-rate", Unit: "batches/s", Better: jLower, Help: "batches split per second because they were too large"},
	{Name: "batch-split-total", Unit: "batches", Better: jLower, Help: "batches split because they were too large"},
	{Name: "compression-rate-avg", Unit: "ratio", Better: jLower, Help: "mean compressed size of a batch over its uncompressed size"},
	{Name: "compression-rate", Unit: "ratio", Better: jLower, Help: "compressed size of a topic's batches over their uncompressed size"},
	{Name: "byte-rate", Unit: "bytes/s", Better: jHigher, Help: "bytes of a topic's records sent per second"},
	{Name: "byte-total", Unit: "bytes", Help: "bytes of a topic's records sent"},
	{Name: "buffer-available-bytes", Unit: "bytes", Help: "buffer memory not in use"},
	{Name: "buffer-total-bytes", Unit: "bytes", Help: "buffer memory the producer may use (buffer.memory)"},
	{Name: "buffer-exhausted-rate", Unit: "/s", Better: jLower, Help: "sends per second dropped because the buffer was full"},
	{Name: "buffer-exhausted-total", Unit: "records", Better: jLower, Help: "sends dropped because the buffer was full"},
	{Name: "bufferpool-wait-ratio", Unit: "ratio", Better: jLower, Help: "share of time an appender waited for buffer space"},
	{Name: "bufferpool-wait-time-ns-total", Unit: "ns", Better: jLower, Help: "time appenders waited for buffer space"},
	{Name: "bufferpool-wait-time-total", Unit: "ns", Better: jLower, Help: "time appenders waited for buffer space (older name)"},
	{Name: "waiting-threads", Unit: "threads", Better: jLower, Help: "user threads blocked waiting for buffer space"},
	{Name: "requests-in-flight", Unit: "requests", Help: "requests sent and not yet answered"},
	{Name: "produce-throttle-time-avg", Unit: "ms", Better: jLower, Help: "mean time the broker throttled the producer"},
	{Name: "produce-throttle-time-max", Unit: "ms", Better: jLower, Help: "longest time the broker throttled the producer"},
	{Name: "metadata-age", Unit: "s", Help: "age of the metadata in use"},
	{Name: "metadata-wait-time-ns-total", Unit: "ns", Better: jLower, Help: "time send() blocked waiting for metadata"},
	{Name: "flush-time-ns-total", Unit: "ns", Help: "time spent in flush()"},
	{Name: "txn-init-time-ns-total", Unit: "ns", Better: jLower, Help: "time spent in initTransactions()"},
	{Name: "txn-begin-time-ns-total", Unit: "ns", Better: jLower, Help: "time spent in beginTransaction()"},
	{Name: "txn-send-offsets-time-ns-total", Unit: "ns", Better: jLower, Help: "time spent in sendOffsetsToTransaction()"},
	{Name: "txn-commit-time-ns-total", Unit: "ns", Better: jLower, Help: "time spent in commitTransaction()"},
	{Name: "txn-abort-time-ns-total", Unit: "ns", Better: jLower, Help: "time spent in abortTransaction()"},
}

// javaConsumerMetrics are KafkaConsumer's (consumer-metrics,
// consumer-coordinator-metrics, consumer-fetch-manager-metrics, and the
// event queues of the CONSUMER group protocol's consumer).
var javaConsumerMetrics = []JavaMetric{
	{Name: "records-consumed-rate", Unit: "records/s", Better: jHigher, Help: "records consumed per second"},
	{Name: "records-consumed-total", Unit: "records", Help: "records consumed"},
	{Name: "bytes-consumed-rate", Unit: "bytes/s", Better: jHigher, Help: "bytes consumed per second"},
	{Name: "bytes-consumed-total", Unit: "bytes", Help: "bytes consumed"},
	{Name: "records-per-request-avg", Unit: "records", Help: "mean records in a fetch response"},
	{Name: "fetch-rate", Unit: "fetches/s", Help: "fetch requests per second"},
	{Name: "fetch-total", Unit: "fetches", Help: "fetch requests"},
	{Name: "fetch-latency-avg", Unit: "ms", Better: jLower, Help: "mean time of a fetch request"},
	{Name: "fetch-latency-max", Unit: "ms", Better: jLower, Help: "longest fetch request"},
	{Name: "fetch-size-avg", Unit: "bytes", Help: "mean bytes of a fetch response"},
	{Name: "fetch-size-max", Unit: "bytes", Help: "largest fetch response"},
	{Name: "fetch-throttle-time-avg", Unit: "ms", Better: jLower, Help: "mean time the broker throttled the consumer"},
	{Name: "fetch-throttle-time-max", Unit: "ms", Better: jLower, Help: "longest time the broker throttled the consumer"},
	{Name: "records-lag", Unit: "records", Better: jLower, Help: "records a partition's consumer is behind its log end"},
	{Name: "records-lag-avg", Unit: "records", Better: jLower, Help: "mean lag of a partition"},
	{Name: "records-lag-max", Unit: "records", Better: jLower, Help: "largest lag of any partition"},
	{Name: "records-lead", Unit: "records", Help: "records a partition's consumer is ahead of its log start"},
	{Name: "records-lead-avg", Unit: "records", Help: "mean lead of a partition"},
	{Name: "records-lead-min", Unit: "records", Help: "smallest lead of any partition"},
	{Name: "preferred-read-replica", Unit: "", Help: "the replica a partition is read from (-1: the leader)"},
	{Name: "last-poll-seconds-ago", Unit: "s", Help: "seconds since the last poll()"},
	{Name: "poll-idle-ratio-avg", Unit: "ratio", Help: "share of time poll() waited for records rather than the application processing them"},
	{Name: "time-between-poll-avg", Unit: "ms", Help: "mean time between calls to poll()"},
	{Name: "time-between-poll-max", Unit: "ms", Help: "longest time between calls to poll()"},
	{Name: "commit-sync-time-ns-total", Unit: "ns", Better: jLower, Help: "time spent in commitSync()"},
	{Name: "committed-time-ns-total", Unit: "ns", Better: jLower, Help: "time spent in committed()"},
	{Name: "commit-latency-avg", Unit: "ms", Better: jLower, Help: "mean time of an offset commit request"},
	{Name: "commit-latency-max", Unit: "ms", Better: jLower, Help: "longest offset commit request"},
	{Name: "commit-rate", Unit: "commits/s", Help: "offset commits per second"},
	{Name: "commit-total", Unit: "commits", Help: "offset commits"},
	{Name: "assigned-partitions", Unit: "partitions", Help: "partitions assigned to the consumer"},
	{Name: "heartbeat-rate", Unit: "heartbeats/s", Help: "heartbeats per second"},
	{Name: "heartbeat-total", Unit: "heartbeats", Help: "heartbeats"},
	{Name: "heartbeat-response-time-max", Unit: "ms", Better: jLower, Help: "longest time to a heartbeat's response"},
	{Name: "last-heartbeat-seconds-ago", Unit: "s", Help: "seconds since the last heartbeat"},
	{Name: "join-rate", Unit: "joins/s", Better: jLower, Help: "group joins per second"},
	{Name: "join-total", Unit: "joins", Better: jLower, Help: "group joins"},
	{Name: "join-time-avg", Unit: "ms", Better: jLower, Help: "mean time of a group join"},
	{Name: "join-time-max", Unit: "ms", Better: jLower, Help: "longest group join"},
	{Name: "sync-rate", Unit: "syncs/s", Better: jLower, Help: "group syncs per second"},
	{Name: "sync-total", Unit: "syncs", Better: jLower, Help: "group syncs"},
	{Name: "sync-time-avg", Unit: "ms", Better: jLower, Help: "mean time of a group sync"},
	{Name: "sync-time-max", Unit: "ms", Better: jLower, Help: "longest group sync"},
	{Name: "rebalance-latency-avg", Unit: "ms", Better: jLower, Help: "mean time of a rebalance"},
	{Name: "rebalance-latency-max", Unit: "ms", Better: jLower, Help: "longest rebalance"},
	{Name: "rebalance-latency-total", Unit: "ms", Better: jLower, Help: "time spent rebalancing"},
	{Name: "rebalance-rate-per-hour", Unit: "rebalances/h", Better: jLower, Help: "rebalances per hour"},
	{Name: "rebalance-total", Unit: "rebalances", Better: jLower, Help: "rebalances"},
	{Name: "failed-rebalance-rate-per-hour", Unit: "rebalances/h", Better: jLower, Help: "failed rebalances per hour"},
	{Name: "failed-rebalance-total", Unit: "rebalances", Better: jLower, Help: "failed rebalances"},
	{Name: "last-rebalance-seconds-ago", Unit: "s", Help: "seconds since the last rebalance"},
	{Name: "partition-assigned-latency-avg", Unit: "ms", Better: jLower, Help: "mean time of the rebalance listener's onPartitionsAssigned"},
	{Name: "partition-assigned-latency-max", Unit: "ms", Better: jLower, Help: "longest onPartitionsAssigned"},
	{Name: "partition-revoked-latency-avg", Unit: "ms", Better: jLower, Help: "mean time of the rebalance listener's onPartitionsRevoked"},
	{Name: "partition-revoked-latency-max", Unit: "ms", Better: jLower, Help: "longest onPartitionsRevoked"},
	{Name: "partition-lost-latency-avg", Unit: "ms", Better: jLower, Help: "mean time of the rebalance listener's onPartitionsLost"},
	{Name: "partition-lost-latency-max", Unit: "ms", Better: jLower, Help: "longest onPartitionsLost"},
	// The CONSUMER group protocol's consumer (KIP-848) hands work between
	// the application thread and a background thread through queues.
	{Name: "application-event-queue-size", Unit: "events", Help: "events waiting for the background thread"},
	{Name: "application-event-queue-time-avg", Unit: "ms", Better: jLower, Help: "mean time an application event waited for the background thread"},
	{Name: "application-event-queue-time-max", Unit: "ms", Better: jLower, Help: "longest time an application event waited"},
	{Name: "application-event-queue-processing-time-avg", Unit: "ms", Better: jLower, Help: "mean time the background thread spent on its queued application events"},
	{Name: "application-event-queue-processing-time-max", Unit: "ms", Better: jLower, Help: "longest time the background thread spent on its queued application events"},
	{Name: "application-events-expired-total", Unit: "events", Better: jLower, Help: "application events that expired before they were processed"},
	{Name: "background-event-queue-size", Unit: "events", Help: "events waiting for the application thread"},
	{Name: "background-event-queue-time-avg", Unit: "ms", Better: jLower, Help: "mean time a background event waited for the application thread"},
	{Name: "background-event-queue-time-max", Unit: "ms", Better: jLower, Help: "longest time a background event waited"},
	{Name: "background-event-queue-processing-time-avg", Unit: "ms", Better: jLower, Help: "mean time the application thread spent on its queued background events"},
	{Name: "background-event-queue-processing-time-max", Unit: "ms", Better: jLower, Help: "longest time the application thread spent on its queued background events"},
	{Name: "unsent-requests-queue-size", Unit: "requests", Help: "requests the background thread has not sent yet"},
	{Name: "unsent-requests-queue-time-avg", Unit: "ms", Better: jLower, Help: "mean time a request waited to be sent"},
	{Name: "unsent-requests-queue-time-max", Unit: "ms", Better: jLower, Help: "longest time a request waited to be sent"},
	{Name: "time-between-network-thread-poll-avg", Unit: "ms", Help: "mean time between the background thread's polls of the network"},
	{Name: "time-between-network-thread-poll-max", Unit: "ms", Help: "longest time between the background thread's polls of the network"},
}

// LookupJavaMetric returns the catalog entry of a metric Kafka's Java
// producer or consumer reports, by its attribute name ("io-wait-ratio",
// not "consumer-metrics:io-wait-ratio").
func LookupJavaMetric(name string) (JavaMetric, bool) {
	m, ok := javaMetrics[name]
	return m, ok
}

// JavaMetricsOf lists, sorted by name, the metrics of Kafka's Java
// client that does what workload does: the producer's for producer and
// e2e runs (EndToEndLatency's producer), the consumer's for consumer and
// e2e runs, each with the network layer's common ones; none for another
// workload.
func JavaMetricsOf(workload rundoc.Workload) []JavaMetric {
	var want func(string) bool
	switch workload {
	case rundoc.Producer:
		want = func(c string) bool { return c != javaConsumer }
	case rundoc.Consumer:
		want = func(c string) bool { return c != javaProducer }
	case rundoc.E2E:
		want = func(string) bool { return true }
	default:
		return nil
	}
	var out []JavaMetric
	for _, m := range javaMetrics {
		if want(m.Client) {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
