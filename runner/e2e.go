package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// The end-to-end latency workload (`kbench run e2e`): how long a record
// takes from a producer's send to a consumer's receipt. Kafka's mode
// (e2e_kafka.go) is Kafka's EndToEndLatency tool; rate mode (e2e_rate.go)
// runs a producer at a fixed rate and a consumer concurrently, in this one
// process, so the client CPU profile covers both.

// e2eQuantiles are the percentiles e2e reports, by metric suffix: p75
// and p9999 besides latencyQuantiles.
var e2eQuantiles = []latencyQuantile{{"p50", 50}, {"p75", 75}, {"p95", 95}, {"p99", 99}, {"p999", 99.9}, {"p9999", 99.99}}

// e2eStats aggregates the records the consumer side received.
type e2eStats struct {
	mu       sync.Mutex
	hist     *latencyHist // send → receipt
	intended *latencyHist // paced rate mode: intended send → receipt
	// throttled: rate mode with a schedule (--throughput R), whose
	// intended send times mean something.
	throttled bool
	// subs is how many times each record is to be received: once per
	// subscription (--subscriptions), 1 without them.
	subs     int
	received int64 // distinct receipts (record, subscription) of this run
	dups     int64 // records received again by the same subscription
	foreign  int64 // records not sent by this run
	bytes    int64 // value bytes of the records received
	// seen has bit seq×subs+sub set once record seq (numbered from
	// first) was received by subscription sub.
	seen []uint64
	// first is the stamp of the first measured record: those before it
	// were sent in the warm-up (--warmup), and are received uncounted.
	first uint64
	// warm counts the warm-up's receipts.
	warm int64
	// The current interval of the series.
	point ivCounters
}

func newE2EStats() *e2eStats {
	return &e2eStats{hist: newLatencyHist(), intended: newLatencyHist(), point: pointCounters(), subs: 1}
}

// receive records record seq's receipt by subscription sub (0 without
// subscriptions), lat after its send and late after its intended send
// (timed only when s.throttled: without a schedule there is no intended
// send). A record a subscription receives again counts as a duplicate
// and is not timed again.
func (s *e2eStats) receive(sub int, seq uint64, size int, lat, late time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq < s.first {
		s.warm++
		return
	}
	seq = (seq-s.first)*uint64(s.subs) + uint64(sub)
	w, bit := seq/64, uint64(1)<<(seq%64)
	if w >= uint64(len(s.seen)) {
		s.seen = slices.Grow(s.seen, int(w+1)-len(s.seen))[:w+1]
	}
	if s.seen[w]&bit != 0 {
		s.dups++
		return
	}
	s.seen[w] |= bit
	s.received++
	s.bytes += int64(size)
	s.hist.record(lat)
	if s.throttled {
		s.intended.record(late)
	}
	s.point.add(1, int64(size), lat)
}

// seriesPoint is the series point of the interval since the last one,
// secs long: the records received in it, with their send → receipt
// latency. Both modes sample the series with it.
func (s *e2eStats) seriesPoint(secs float64) rundoc.SeriesPoint {
	s.mu.Lock()
	c := s.point.take()
	s.mu.Unlock()
	return c.point(secs, c.records, c.bytes, c.records)
}

// measureFrom makes seq the first record counted: receipts of records
// stamped before it are the warm-up's.
func (s *e2eStats) measureFrom(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.first = seq
}

func (s *e2eStats) receivedCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// e2e runs the workload in the mode its spec asks for.
func (r *run) e2e(ctx context.Context) error {
	if r.spec.E2ERateMode() {
		return r.e2eRate(ctx)
	}
	return r.e2eKafka(ctx)
}

// e2eCounts adds the counts every e2e run reports, so that the check
// that every record sent was received once is visible.
func (r *run) e2eCounts(sent int64, es *e2eStats) {
	secs := r.win.seconds()
	es.mu.Lock()
	received, dups, subs := es.received, es.dups, int64(es.subs)
	es.mu.Unlock()
	add := func(name string, v float64, unit string, better rundoc.Better, help string) {
		r.res.Metrics = append(r.res.Metrics, rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better, Help: help})
	}
	each := ""
	if subs > 1 {
		each = fmt.Sprintf(", counted once per subscription (%d of them)", subs)
	}
	add("records-sent", float64(sent), "records", "", "records the producer had acknowledged")
	add("records-received", float64(received), "records", "", "distinct records of this run the consumer received"+each)
	add("records-lost", float64(max(sent*subs-received, 0)), "records", rundoc.LowerIsBetter, "records acknowledged but never received"+each+" (the run fails when any is)")
	add("records-duplicated", float64(dups), "records", rundoc.LowerIsBetter, "records received more than once"+each+" (the run fails when any is)")
	if secs > 0 {
		add("record-send-rate", float64(sent)/secs, "records/s", rundoc.HigherIsBetter, "acknowledged records / window seconds")
		add("consume-rate", float64(received)/secs, "records/s", rundoc.HigherIsBetter, "records received"+each+" / window seconds")
	}
	r.res.Measurement.MeasuredRecords = received
	r.res.Measurement.LatencySamples = es.hist.count()
}

// e2eCountError is the error of a run whose consumer did not receive
// every record sent exactly once.
func e2eCountError(sent int64, es *e2eStats) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	want := sent * int64(es.subs)
	if es.received == want && es.dups == 0 && es.foreign == 0 {
		return nil
	}
	each := ""
	if es.subs > 1 {
		each = fmt.Sprintf(" (each to be received by %d subscriptions)", es.subs)
	}
	return fmt.Errorf("count check failed: %d records acknowledged%s, %d received (%d missing), %d received more than once, %d not sent by this run",
		sent, each, es.received, max(want-es.received, 0), es.dups, es.foreign)
}
