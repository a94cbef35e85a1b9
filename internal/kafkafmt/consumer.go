package kafkafmt

import (
	"strconv"
	"strings"
	"time"
)

// ConsumerHeader renders the header line ConsumerPerformance prints unless
// --hide-header is given, ending in "\n". detailed selects the
// --show-detailed-stats header, whose first two columns are "time,
// threadId" instead of "start.time, end.time".
func ConsumerHeader(detailed bool) string {
	const tail = ", data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" +
		", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n"
	if detailed {
		return "time, threadId" + tail
	}
	return "start.time, end.time" + tail
}

// ConsumerRow holds the numbers of the final consumer summary row, which
// Java prints only without --show-detailed-stats.
type ConsumerRow struct {
	Start, End          time.Time
	MB                  float64 // data.consumed.in.MB (MB = 1024*1024 bytes)
	MBPerSec            float64 // MB.sec
	Messages            int64   // data.consumed.in.nMsg
	MessagesPerSec      float64 // nMsg.sec
	RebalanceMs         int64   // rebalance.time.ms
	FetchMs             int64   // fetch.time.ms
	FetchMBPerSec       float64 // fetch.MB.sec
	FetchMessagesPerSec float64 // fetch.nMsg.sec
	// Loc is the time zone of the dates; nil keeps each time's own
	// location (time.UnixMilli gives time.Local, as Java uses the JVM's
	// default zone).
	Loc *time.Location
}

// ConsumerSummaryRow renders the final consumer row, ending in "\n":
//
//	%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f%n
//
// with the dates as "yyyy-MM-dd HH:mm:ss:SSS" (see [JavaTime]).
// [ConsumerCounters.Row] computes the numbers exactly as Java does.
func ConsumerSummaryRow(r ConsumerRow) string {
	var b strings.Builder
	b.WriteString(JavaTimeIn(r.Start, r.Loc))
	b.WriteString(", ")
	b.WriteString(JavaTimeIn(r.End, r.Loc))
	writeConsumerColumns(&b, r.MB, r.MBPerSec, r.Messages, r.MessagesPerSec,
		r.RebalanceMs, r.FetchMs, r.FetchMBPerSec, r.FetchMessagesPerSec)
	return b.String()
}

// ConsumerIntervalRow holds the numbers of one --show-detailed-stats row,
// which Java prints per reporting interval (printConsumerProgress).
// Note that the data and message columns are running totals while the
// rates are for the interval only.
type ConsumerIntervalRow struct {
	Time     time.Time // end of the interval
	ThreadID int       // always 0 in Kafka's tool
	// TotalMB is data.consumed.in.MB: all bytes read so far, in MB.
	TotalMB float64
	// MBPerSec is the interval's MB over its whole duration, rebalance
	// time included.
	MBPerSec float64
	// TotalMessages is data.consumed.in.nMsg: all messages read so far.
	TotalMessages int64
	// MessagesPerSec is the interval's messages over its whole duration.
	MessagesPerSec float64
	// RebalanceMs is the rebalance time within the interval.
	RebalanceMs int64
	// FetchMs is the interval duration less RebalanceMs.
	FetchMs int64
	// FetchMBPerSec and FetchMessagesPerSec are the interval's MB and
	// messages over FetchMs, 0 when FetchMs <= 0.
	FetchMBPerSec       float64
	FetchMessagesPerSec float64
	// Loc is the time zone of Time; nil keeps Time's own location.
	Loc *time.Location
}

// ConsumerDetailedRow renders one --show-detailed-stats row, ending in
// "\n", like ConsumerPerformance.printConsumerProgress:
//
//	%s, %d, %.4f, %.4f, %d, %.4f  then  , %d, %d, %.4f, %.4f  then  %n
//
// [ConsumerIntervalCounters.Row] computes the numbers exactly as Java does.
func ConsumerDetailedRow(r ConsumerIntervalRow) string {
	var b strings.Builder
	b.WriteString(JavaTimeIn(r.Time, r.Loc))
	b.WriteString(", ")
	b.WriteString(strconv.Itoa(r.ThreadID))
	writeConsumerColumns(&b, r.TotalMB, r.MBPerSec, r.TotalMessages, r.MessagesPerSec,
		r.RebalanceMs, r.FetchMs, r.FetchMBPerSec, r.FetchMessagesPerSec)
	return b.String()
}

// writeConsumerColumns writes the eight columns both row kinds share,
// each preceded by ", ", and the final newline.
func writeConsumerColumns(b *strings.Builder, mb, mbPerSec float64, msgs int64, msgsPerSec float64,
	rebalanceMs, fetchMs int64, fetchMBPerSec, fetchMsgsPerSec float64) {
	b.WriteString(", ")
	b.WriteString(JavaFixed(mb, 4))
	b.WriteString(", ")
	b.WriteString(JavaFixed(mbPerSec, 4))
	b.WriteString(", ")
	b.WriteString(strconv.FormatInt(msgs, 10))
	b.WriteString(", ")
	b.WriteString(JavaFixed(msgsPerSec, 4))
	b.WriteString(", ")
	b.WriteString(strconv.FormatInt(rebalanceMs, 10))
	b.WriteString(", ")
	b.WriteString(strconv.FormatInt(fetchMs, 10))
	b.WriteString(", ")
	b.WriteString(JavaFixed(fetchMBPerSec, 4))
	b.WriteString(", ")
	b.WriteString(JavaFixed(fetchMsgsPerSec, 4))
	b.WriteString("\n")
}

// ConsumerTimeoutWarning is the line ConsumerPerformance prints when it
// stops before reading --messages records because no record arrived for
// timeoutMs (--timeout).
func ConsumerTimeoutWarning(timeoutMs int64) string {
	return "WARNING: Exiting before consuming the expected number of messages: timeout (" +
		strconv.FormatInt(timeoutMs, 10) +
		" ms) exceeded. You can use the --timeout option to increase the timeout.\n"
}

// ConsumerCounters are the raw totals ConsumerPerformance.main turns into
// the summary row.
type ConsumerCounters struct {
	StartMs, EndMs int64 // epoch milliseconds
	Bytes          int64 // key and value bytes read
	Messages       int64
	RebalanceMs    int64 // total time spent joining the group
}

// Row computes the summary numbers with the same double operations, in
// the same order, as ConsumerPerformance.main: elapsed seconds are
// (end - start) / 1000.0, fetch time is (end - start) - rebalance, and
// rates are plain divisions (a zero duration gives Infinity or NaN, as in
// Java). The dates are in loc, nil meaning time.Local.
func (c ConsumerCounters) Row(loc *time.Location) ConsumerRow {
	if loc == nil {
		loc = time.Local
	}
	elapsedSec := float64(c.EndMs-c.StartMs) / 1000.0
	fetchMs := (c.EndMs - c.StartMs) - c.RebalanceMs
	mb := float64(c.Bytes) * 1.0 / bytesPerMB
	fetchSec := float64(fetchMs) / 1000.0
	return ConsumerRow{
		Start:               time.UnixMilli(c.StartMs).In(loc),
		End:                 time.UnixMilli(c.EndMs).In(loc),
		MB:                  mb,
		MBPerSec:            mb / elapsedSec,
		Messages:            c.Messages,
		MessagesPerSec:      float64(c.Messages) / elapsedSec,
		RebalanceMs:         c.RebalanceMs,
		FetchMs:             fetchMs,
		FetchMBPerSec:       mb / fetchSec,
		FetchMessagesPerSec: float64(c.Messages) / fetchSec,
	}
}

// ConsumerIntervalCounters are the raw counters ConsumerPerformance hands
// to printConsumerProgress at the end of a reporting interval.
type ConsumerIntervalCounters struct {
	ThreadID       int   // Kafka always passes 0
	StartMs, EndMs int64 // interval bounds, epoch milliseconds
	Bytes          int64 // bytes read so far
	LastBytes      int64 // bytes read at the start of the interval
	Messages       int64 // messages read so far
	LastMessages   int64 // messages read at the start of the interval
	RebalanceMs    int64 // rebalance time within the interval
}

// Row computes a detailed row with the same double operations, in the
// same order, as printBasicProgress and printExtendedProgress. The time is
// in loc, nil meaning time.Local.
func (c ConsumerIntervalCounters) Row(loc *time.Location) ConsumerIntervalRow {
	if loc == nil {
		loc = time.Local
	}
	elapsedMs := float64(c.EndMs - c.StartMs)
	intervalMB := float64(c.Bytes-c.LastBytes) * 1.0 / bytesPerMB
	intervalMsgs := c.Messages - c.LastMessages
	fetchMs := c.EndMs - c.StartMs - c.RebalanceMs
	var fetchMBPerSec, fetchMsgsPerSec float64
	if fetchMs > 0 {
		fetchMBPerSec = 1000.0 * intervalMB / float64(fetchMs)
		fetchMsgsPerSec = 1000.0 * float64(intervalMsgs) / float64(fetchMs)
	}
	return ConsumerIntervalRow{
		Time:                time.UnixMilli(c.EndMs).In(loc),
		ThreadID:            c.ThreadID,
		TotalMB:             float64(c.Bytes) * 1.0 / bytesPerMB,
		MBPerSec:            1000.0 * intervalMB / elapsedMs,
		TotalMessages:       c.Messages,
		MessagesPerSec:      (float64(intervalMsgs) / elapsedMs) * 1000.0,
		RebalanceMs:         c.RebalanceMs,
		FetchMs:             fetchMs,
		FetchMBPerSec:       fetchMBPerSec,
		FetchMessagesPerSec: fetchMsgsPerSec,
	}
}
