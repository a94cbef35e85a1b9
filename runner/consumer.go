package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/kafkafmt"
)

// consumeStats counts what the consumer read. Counters are atomic: the
// assign mode reads partitions in parallel.
type consumeStats struct {
	records  atomic.Int64 // all phases
	bytes    atomic.Int64
	lastRead atomic.Int64 // unix nanos of the latest record, for --timeout
	// redelivered counts records a consumer group handed out again after
	// a rebalance, all phases; none of them is counted in records.
	redelivered atomic.Int64

	mu        sync.Mutex
	fetches   int64
	fetchTime time.Duration
	fetchMax  time.Duration
	fetchSize int64 // bytes over all fetches
	fetchBMax int64
	fetchRecs int64
	lagMax    int64
}

// resetFetches forgets fetch statistics gathered before the window.
func (s *consumeStats) resetFetches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches, s.fetchTime, s.fetchMax, s.fetchSize, s.fetchBMax, s.fetchRecs, s.lagMax = 0, 0, 0, 0, 0, 0, 0
}

func (s *consumeStats) add(records, bytes int64) {
	s.records.Add(records)
	s.bytes.Add(bytes)
	s.lastRead.Store(time.Now().UnixNano())
}

// consumer reads records, in either mode, until a target count.
type consumer interface {
	// read consumes until stats.records reaches target or ctx ends.
	read(ctx context.Context, stats *consumeStats, target int64) error
	// rebalance is the time spent joining the group so far (group mode).
	rebalance() time.Duration
	// collect folds the client's own statistics into stats.
	collect(stats *consumeStats)
	close() error
}

func (r *run) consume(ctx context.Context) error {
	topics, partitions, err := r.ensureTopics(ctx)
	if err != nil {
		return err
	}
	fromLatest := r.spec.FromLatest || r.st.fromLatest
	duration := r.spec.Duration > 0
	backlog := r.spec.NumRecords
	if duration {
		backlog = durationBacklog + r.spec.WarmupRecords
	}
	if r.spec.Topics > 0 {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"%d topic(s) (%s to %s, created for the run and deleted after it) of %d partitions, prefilled with %d records spread evenly over them; "+
				"the consumer reads them all, and the record counts are totals over the topics",
			len(topics), topics[0], topics[len(topics)-1], partitions, backlog))
	}
	if !fromLatest {
		if err := r.prefill(ctx, topics, partitions, backlog); err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
	}
	if subs, members, ok := r.spec.Groups(); ok {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"%d subscription(s), each a consumer group of %d kafka-go Reader(s) (%s assignment; groups %s-sub0 and on) over the %d topic(s), reading them from their start; "+
				"each record is counted once per subscription, so records, bytes and rates are totals over the subscriptions, and every subscription must receive every record once; "+
				"no record counts until every group is Stable with every partition assigned, and that wait is rebalance-time (in the window without --warmup-records, as Kafka's tool counts its one consumer's join)",
			subs, members, r.st.balancerName, r.st.group, len(topics)))
	}
	stats := &consumeStats{}
	// Every subscription receives every record, so the counts the reads
	// stop at are receipts: records times subscriptions.
	receipts := r.receipts()
	measureFrom := r.spec.WarmupRecords * receipts
	target := r.spec.NumRecords * receipts

	// Without warm-up the window opens before the consumer exists, so the
	// group join is inside it and reported as rebalance.time.ms, as in
	// Kafka's tool. With warm-up, the join happened before.
	var c consumer
	if measureFrom > 0 {
		if c, err = r.newConsumer(ctx); err != nil {
			return err
		}
		defer c.close()
		r.rep.phase("warmup", measureFrom)
		if err := r.readPhase(ctx, c, stats, "warmup", 0, measureFrom); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		r.res.Measurement.WarmupRecords = stats.records.Load()
	}
	r.rep.kafka(kafkafmt.ConsumerHeader(r.spec.ShowDetailedStats))
	if err := r.openWindow(); err != nil {
		return err
	}
	start := time.Now()
	rebalance0 := time.Duration(0)
	if c == nil {
		if c, err = r.newConsumer(ctx); err != nil {
			return err
		}
		defer c.close()
	} else {
		rebalance0 = c.rebalance()
	}
	base := stats.records.Load()
	bytes0 := stats.bytes.Load()
	c.collect(&consumeStats{}) // drop the client's statistics of the warm-up
	stats.resetFetches()
	stopIntervals := r.consumerIntervals(stats, c, base, bytes0, start, rebalance0)
	seriesRecs, seriesBytes := base, bytes0
	stopSeries := r.recordSeries(func(secs float64) rundoc.SeriesPoint {
		recs, bytes := stats.records.Load(), stats.bytes.Load()
		pt := ivCounters{}.point(secs, recs-seriesRecs, bytes-seriesBytes, 0)
		seriesRecs, seriesBytes = recs, bytes
		return pt
	})
	var readErr error
	var laps lapResult
	if duration {
		c, laps, readErr = r.readLaps(ctx, c, stats, base, fromLatest)
	} else {
		readErr = r.readPhase(ctx, c, stats, "measure", base, target-measureFrom+base)
	}
	end := time.Now()
	r.win.stop()
	stopIntervals()
	stopSeries()
	c.collect(stats)
	r.win.snapshot()
	r.rep.phase("finishing", 0)
	closeErr := c.close()
	closeErr = errors.Join(closeErr, laps.wait())

	records := stats.records.Load() - base
	bytes := stats.bytes.Load() - bytes0
	rebalance := c.rebalance() - rebalance0 + laps.rebalance
	if duration {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, laps.note(r.spec.Duration, fromLatest))
	}
	r.consumerResults(stats, records, bytes, start, end, rebalance)
	if readErr != nil {
		return readErr
	}
	if sc, ok := c.(*subsConsumer); ok && !duration {
		if err := sc.countError(r.spec.NumRecords); err != nil {
			return err
		}
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"count check: each of the %d subscriptions received %d records (warm-up included), none of them twice", len(sc.subs), r.spec.NumRecords))
	}
	if n := stats.redelivered.Load(); n > 0 {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
			"the consumer groups delivered %d record(s) again after a rebalance moved their partition before its commit; "+
				"they were read but not counted a second time (warm-up included)", n))
	}
	if closeErr != nil && !errors.Is(closeErr, io.EOF) {
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, "closing the consumer: "+closeErr.Error())
	}
	return nil
}

// readPhase reads up to target (counted from the start of all phases) with
// progress events and --timeout enforcement.
func (r *run) readPhase(ctx context.Context, c consumer, stats *consumeStats, phase string, base, target int64) error {
	r.rep.phase(phase, target-base)
	stop := r.tickProgress(phase, target-base, func() int64 { return stats.records.Load() - base })
	defer stop()
	_, err := r.readUntil(ctx, c, stats, base, target, time.Time{})
	return err
}

// errDurationReached ends the reads of a consumer with --duration.
var errDurationReached = errors.New("--duration reached")

// readUntil reads up to target (counted from the start of all phases) or
// until the deadline (zero: none), enforcing --timeout; timeUp reports that
// the deadline ended it.
func (r *run) readUntil(ctx context.Context, c consumer, stats *consumeStats, base, target int64, deadline time.Time) (timeUp bool, err error) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	cancel := func() { cancelCause(nil) }
	if !deadline.IsZero() {
		stopTimer := time.AfterFunc(time.Until(deadline), func() { cancelCause(errDurationReached) })
		defer stopTimer.Stop()
	}
	timeout := time.Duration(r.spec.Timeout) * time.Millisecond
	stats.lastRead.Store(time.Now().UnixNano())
	var timedOut atomic.Bool
	watchdog := make(chan struct{})
	go func() {
		defer close(watchdog)
		tick := time.NewTicker(max(timeout/20, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if now.Sub(time.Unix(0, stats.lastRead.Load())) > timeout {
					timedOut.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	withRole(ctx, roleReceive, func(ctx context.Context) { err = c.read(ctx, stats, target) })
	timeUp = errors.Is(context.Cause(ctx), errDurationReached)
	cancel()
	<-watchdog
	got := stats.records.Load() - base
	if timedOut.Load() && got < target-base {
		r.rep.kafka(kafkafmt.ConsumerTimeoutWarning(r.spec.Timeout))
		if !deadline.IsZero() {
			return false, fmt.Errorf("consumer timed out: no record for %d ms (--timeout) after %d records", r.spec.Timeout, got)
		}
		return false, fmt.Errorf("consumer timed out: no record for %d ms (--timeout) after %d of %d records", r.spec.Timeout, got, target-base)
	}
	if timeUp {
		return true, nil
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return false, r.explain(err)
	}
	if got < target-base {
		return false, fmt.Errorf("%w: %d of %d records consumed", ErrIncomplete, got, target-base)
	}
	return false, nil
}

// lapResult is what readLaps did besides reading: the consumers it
// replaced, still closing, and their group joins.
type lapResult struct {
	laps      int // consumers after the first
	rebalance time.Duration
	closing   []chan error
}

func (l *lapResult) wait() error {
	var errs []error
	for _, ch := range l.closing {
		if err := <-ch; err != nil && !errors.Is(err, io.EOF) {
			errs = append(errs, err)
		}
	}
	l.closing = nil
	return errors.Join(errs...)
}

func (l *lapResult) note(d float64, fromLatest bool) string {
	if fromLatest {
		return fmt.Sprintf("--duration %v: records produced after the start were read for %v s", d, d)
	}
	return fmt.Sprintf("--duration %v: the topic's records were read for %v s; each time a consumer had read all of them, a new consumer read them again from the start "+
		"(%d such laps; in group mode each lap is a new group, whose join counts as rebalance time), "+
		"so that a long window needs no more records in the broker than one lap of at least %d (prefilled when missing)",
		d, d, l.laps, durationBacklog)
}

// readLaps reads for --duration seconds. A topic holds far fewer records
// than a consumer reads in a long window (10 s at 1.5M records/s of 512 B
// would be 7.5 GB in the embedded broker's memory), so when a consumer has
// read every record it is replaced by a new one that reads them again from
// the start: a lap. The records are the same, the broker serves them
// again, and the consumer's cost per record does not change. With
// --from-latest there is nothing to re-read: it reads what arrives.
func (r *run) readLaps(ctx context.Context, c consumer, stats *consumeStats, base int64, fromLatest bool) (consumer, lapResult, error) {
	var res lapResult
	deadline := time.Now().Add(time.Duration(r.spec.Duration * float64(time.Second)))
	r.rep.phase("measure", 0)
	stop := r.tickProgress("measure", 0, func() int64 { return stats.records.Load() - base })
	defer stop()
	target := int64(math.MaxInt64)
	if !fromLatest {
		available, err := r.availableRecords(ctx)
		if err != nil {
			return c, res, err
		}
		// stats counts every phase, so the first lap ends when the topics'
		// records, warm-up included, have all been read once by every
		// subscription.
		available *= r.receipts()
		target = available
		group := r.st.group
		defer func() { r.st.group = group }()
		for {
			timeUp, err := r.readUntil(ctx, c, stats, base, target, deadline)
			if timeUp || err != nil {
				return c, res, err
			}
			c.collect(stats)
			res.rebalance += c.rebalance()
			done := make(chan error, 1)
			res.closing = append(res.closing, done)
			go func(old consumer) { done <- old.close() }(c)
			res.laps++
			r.st.group = fmt.Sprintf("%s-lap%d", group, res.laps)
			if c, err = r.newConsumer(ctx); err != nil {
				return nil, res, err
			}
			target += available
		}
	}
	_, err := r.readUntil(ctx, c, stats, base, target, deadline)
	return c, res, err
}

// consumerIntervals prints --show-detailed-stats rows every reporting
// interval (the series has its own step: recordSeries).
func (r *run) consumerIntervals(stats *consumeStats, c consumer, base, bytes0 int64, start time.Time, rebalance0 time.Duration) (stop func()) {
	if !r.spec.ShowDetailedStats {
		return func() {}
	}
	last, lastRecs, lastBytes, lastReb := start, int64(0), int64(0), time.Duration(0)
	return every(time.Duration(r.spec.ReportingInterval)*time.Millisecond, func(now time.Time) {
		recs, bytes := stats.records.Load()-base, stats.bytes.Load()-bytes0
		reb := c.rebalance() - rebalance0
		row := kafkafmt.ConsumerIntervalCounters{
			StartMs: last.UnixMilli(), EndMs: now.UnixMilli(),
			Bytes: bytes, LastBytes: lastBytes, Messages: recs, LastMessages: lastRecs,
			RebalanceMs: (reb - lastReb).Milliseconds(),
		}.Row(nil)
		r.rep.kafka(kafkafmt.ConsumerDetailedRow(row))
		last, lastRecs, lastBytes, lastReb = now, recs, bytes, reb
	})
}

func (r *run) consumerResults(stats *consumeStats, records, bytes int64, start, end time.Time, rebalance time.Duration) {
	secs := end.Sub(start).Seconds()
	fetchSecs := secs - rebalance.Seconds()
	m := &r.res.Measurement
	m.MeasuredRecords = records
	mb := float64(bytes) / (1 << 20)
	add := func(name string, v float64, unit string, better rundoc.Better, help string) {
		r.res.Metrics = append(r.res.Metrics, rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better, Help: help})
	}
	mode := "mode " + r.spec.Mode
	add("records-consumed-total", float64(records), "records", "", "records read in the measured window, "+mode)
	add("records-consumed-rate", float64(records)/secs, "records/s", rundoc.HigherIsBetter, "records / window seconds (Kafka's nMsg.sec), "+mode)
	what := "key + value bytes"
	if r.spec.Mode == rundoc.ModeAssign {
		what = "value bytes (mode assign skips keys unread)"
	}
	add("bytes-consumed-total", float64(bytes), "bytes", "", what+" read")
	add("bytes-consumed-rate", float64(bytes)/secs, "bytes/s", rundoc.HigherIsBetter, what+" / window seconds")
	add("mb-per-sec", mb/secs, "MB/s", rundoc.HigherIsBetter, "Kafka's MB.sec; MB = 1,048,576 bytes")
	rebalanceHelp := "time to join the group and get partitions (Kafka's rebalance.time.ms)"
	if subs, members, ok := r.spec.Groups(); ok {
		rebalanceHelp = fmt.Sprintf("time from creating the %d subscriptions' consumer groups of %d member(s) to when every group was Stable with its members holding every partition of the topics "+
			"(the broker's DescribeGroups, asked every %v; the groups join at once, so this is the slowest group's join; Kafka's rebalance.time.ms for one consumer); records are counted from then",
			subs, members, groupsPoll)
	}
	add("rebalance-time", ms(rebalance), "ms", rundoc.LowerIsBetter, rebalanceHelp)
	add("fetch-time", fetchSecs*1000, "ms", "", "window less rebalance time (Kafka's fetch.time.ms)")
	if fetchSecs > 0 {
		add("fetch-records-per-sec", float64(records)/fetchSecs, "records/s", rundoc.HigherIsBetter, "records / fetch time (Kafka's fetch.nMsg.sec)")
		add("fetch-mb-per-sec", mb/fetchSecs, "MB/s", rundoc.HigherIsBetter, "MB / fetch time (Kafka's fetch.MB.sec)")
	}
	stats.mu.Lock()
	if stats.fetches > 0 {
		add("fetch-total", float64(stats.fetches), "fetches", "", "fetch responses in the window")
		add("fetch-rate", float64(stats.fetches)/secs, "fetches/s", "", "fetch responses per second")
		if stats.fetchTime > 0 {
			add("fetch-latency-avg", ms(stats.fetchTime)/float64(stats.fetches), "ms", rundoc.LowerIsBetter, "fetch request → response, as the client times it")
			add("fetch-latency-max", ms(stats.fetchMax), "ms", rundoc.LowerIsBetter, "fetch request → response, as the client times it")
		}
		// kafka-go reports no response sizes (Reader.Stats' FetchBytes is
		// the records' payload too), so these count payload and say so.
		add("fetch-size-avg", float64(stats.fetchSize)/float64(stats.fetches), "bytes", "",
			"record payload per fetch response: "+what+" of the records it delivered, not the size of the response on the wire")
		add("fetch-size-max", float64(stats.fetchBMax), "bytes", "",
			"largest record payload of one fetch response ("+what+"), not the size of the response on the wire")
		add("records-per-request-avg", float64(stats.fetchRecs)/float64(stats.fetches), "records", "", "records per fetch response")
	}
	add("records-lag-max", float64(stats.lagMax), "records", rundoc.LowerIsBetter,
		"largest backlog of one partition seen in the window: the high watermark a fetch response reported minus the offset of the first record it delivered, at every fetch; a consumer that starts behind reports its starting backlog")
	stats.mu.Unlock()
	r.res.Metrics = append(r.res.Metrics, r.win.processMetrics(bytes)...)
	r.harnessCheck("")

	if !r.spec.ShowDetailedStats {
		counters := kafkafmt.ConsumerCounters{StartMs: start.UnixMilli(), EndMs: end.UnixMilli(), Bytes: bytes,
			Messages: records, RebalanceMs: rebalance.Milliseconds()}
		r.rep.kafka(kafkafmt.ConsumerSummaryRow(counters.Row(nil)))
		if note := consumerLineNote(counters, records, end.Sub(start), rebalance); note != "" {
			m.OutputNotes = append(m.OutputNotes, note)
			r.rep.note("kbench: %s", note)
		}
	}
	if r.spec.PrintMetrics {
		r.rep.kafka(kafkafmt.PrintMetrics(r.kafkaMetrics("consumer-fetch-manager-metrics", r.clientID("consumer"))))
	}
}

// prefill makes sure the topics, of partitions each, hold at least want
// records between them, an even share each, producing the missing ones
// before anything is measured.
func (r *run) prefill(ctx context.Context, topics []string, partitions int, want int64) error {
	needs := make([]int64, len(topics))
	var have, need int64
	for i, topic := range topics {
		offs, err := r.topicOffsets(ctx, topic)
		if err != nil {
			return err
		}
		held := recordsIn(offs)
		have += held
		needs[i] = max(share(want, len(topics), i)-held, 0)
		need += needs[i]
	}
	if need <= 0 {
		return nil
	}
	r.res.Measurement.PrefillRecords = need
	if len(topics) == 1 {
		r.rep.note("kbench: topic %s holds %d records; producing %d of %d bytes first (not measured)", topics[0], have, need, r.spec.RecordSize)
	} else {
		r.rep.note("kbench: topics %s to %s hold %d records; producing %d of %d bytes first, an even share of %d into each (not measured)",
			topics[0], topics[len(topics)-1], have, need, r.spec.RecordSize, want)
	}
	r.rep.phase("prefill", need)
	tr, err := r.transport("prefill")
	if err != nil {
		return err
	}
	payload := make([]byte, r.spec.RecordSize)
	for i := range payload {
		payload[i] = byte('A' + i%26)
	}
	msgs := make([]kafka.Message, 10000)
	for i := range msgs {
		msgs[i].Value = payload
	}
	var done atomic.Int64
	stop := r.tickProgress("prefill", need, done.Load)
	defer stop()
	for i, topic := range topics {
		if needs[i] == 0 {
			continue
		}
		// The run's own topics get their share spread evenly over their
		// partitions, in chunks small enough to reach every one, so that
		// every member of a subscription has records to read; --topic
		// keeps the chunks of 1,000 it always had.
		chunk := 1000
		if r.spec.Topics > 0 {
			chunk = int(min(max(needs[i]/int64(partitions), 1), 1000))
		}
		w := &kafka.Writer{
			Addr: kafka.TCP(r.brokers...), Topic: topic, Transport: tr,
			Balancer:     &kafka.RoundRobin{ChunkSize: chunk},
			RequiredAcks: kafka.RequireAll, BatchSize: 1000, BatchBytes: max(1<<20, int64(r.spec.RecordSize)+512),
			BatchTimeout: 10 * time.Millisecond, Async: false,
		}
		for left := needs[i]; left > 0; {
			n := min(int64(len(msgs)), left)
			if err := w.WriteMessages(ctx, msgs[:n]...); err != nil {
				w.Close()
				return fmt.Errorf("topic %s: %w", topic, r.explain(err))
			}
			done.Add(n)
			left -= n
		}
		w.Close() // the writes were synchronous: nothing is left to fail
	}
	return nil
}

// availableRecords is the number of records between the start and the end
// of every partition of the consumer's topics.
func (r *run) availableRecords(ctx context.Context) (int64, error) {
	offs, err := r.consumerOffsets(ctx)
	if err != nil {
		return 0, err
	}
	return recordsIn(offs), nil
}

// recordsIn is the number of records between the first and last offsets
// of the partitions offs.
func recordsIn(offs []partOffsets) int64 {
	var n int64
	for _, o := range offs {
		n += o.last - o.first
	}
	return n
}

// consumerOffsets are the first and last offsets of the partitions of
// the consumer's topics: --topic, or those of --topics.
func (r *run) consumerOffsets(ctx context.Context) ([]partOffsets, error) {
	var out []partOffsets
	for _, topic := range r.spec.TopicNames() {
		offs, err := r.topicOffsets(ctx, topic)
		if err != nil {
			return nil, err
		}
		out = append(out, offs...)
	}
	return out, nil
}

// receipts is how many times the consumer reads each record: once per
// subscription (--subscriptions), else once.
func (r *run) receipts() int64 {
	if subs, _, ok := r.spec.Groups(); ok {
		return int64(subs)
	}
	return 1
}

type partOffsets struct {
	topic       string
	partition   int
	first, last int64
}

// offsets are the first and last offsets of the partitions of --topic.
func (r *run) offsets(ctx context.Context) ([]partOffsets, error) {
	return r.topicOffsets(ctx, r.spec.Topic)
}

// topicOffsets are the first and last offsets of topic's partitions.
func (r *run) topicOffsets(ctx context.Context, topic string) ([]partOffsets, error) {
	client, done, err := r.adminClient()
	if err != nil {
		return nil, err
	}
	defer done()
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, r.explain(err)
	}
	var reqs []kafka.OffsetRequest
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			reqs = append(reqs, kafka.FirstOffsetOf(p.ID), kafka.LastOffsetOf(p.ID))
		}
	}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, r.explain(err)
	}
	var out []partOffsets
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("offsets of %s/%d: %w", topic, po.Partition, po.Error)
		}
		out = append(out, partOffsets{topic: topic, partition: po.Partition, first: po.FirstOffset, last: po.LastOffset})
	}
	return out, nil
}

func (r *run) newConsumer(ctx context.Context) (consumer, error) {
	if r.spec.Mode == rundoc.ModeAssign {
		return r.newAssignConsumer(ctx)
	}
	if subs, members, ok := r.spec.Groups(); ok {
		return r.newSubsConsumer(ctx, subs, members)
	}
	return r.newGroupConsumer(r.st.group)
}

// groupConsumer is kafka-go's consumer-group Reader: what an application
// uses, with group coordination, a fetch queue and offset commits.
type groupConsumer struct {
	reader   *kafka.Reader
	created  time.Time
	assigned atomic.Int64 // nanoseconds from creation to first assignment
	lastErr  atomic.Pointer[string]
	commit   bool
	// lagMax is the largest lag seen since the last collect: the Reader's
	// own Lag statistic is a gauge holding only the latest value.
	lagMax atomic.Int64
}

// newGroupConsumer is a member of group reading the consumer's topics.
func (r *run) newGroupConsumer(group string) (*groupConsumer, error) {
	dialer, err := r.st.sec.Dialer(r.clientID("consumer"), r.st.setupTimeout)
	if err != nil {
		return nil, err
	}
	g := &groupConsumer{created: time.Now(), commit: r.st.commitInterval > 0}
	start := kafka.FirstOffset
	if r.st.fromLatest {
		start = kafka.LastOffset
	}
	cfg := kafka.ReaderConfig{
		Brokers:           r.brokers,
		GroupID:           group,
		Dialer:            dialer,
		MinBytes:          r.st.minBytes,
		MaxBytes:          r.st.maxPartBytes,
		MaxWait:           r.st.maxWait,
		StartOffset:       start,
		CommitInterval:    r.st.commitInterval,
		SessionTimeout:    r.st.sessionTimeout,
		HeartbeatInterval: r.st.heartbeat,
		IsolationLevel:    r.st.isolation,
		GroupBalancers:    r.st.balancers,
		// kafka-go has no rebalance listener; the Reader logs this line
		// when a generation hands it partitions, which is the moment
		// Kafka's onPartitionsAssigned marks.
		Logger: kafka.LoggerFunc(func(msg string, _ ...any) {
			if strings.HasPrefix(msg, "subscribed to topics and partitions") {
				g.assigned.CompareAndSwap(0, int64(time.Since(g.created)))
			}
		}),
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			s := fmt.Sprintf(msg, args...)
			g.lastErr.Store(&s)
		}),
	}
	// kafka-go takes one Topic, or GroupTopics for a group of several;
	// --topic alone keeps the one-topic Reader it always had.
	if r.spec.Topics > 0 {
		cfg.GroupTopics = r.spec.TopicNames()
	} else {
		cfg.Topic = r.spec.Topic
	}
	g.reader = kafka.NewReader(cfg)
	return g, nil
}

func (g *groupConsumer) read(ctx context.Context, stats *consumeStats, target int64) error {
	for stats.records.Load() < target {
		m, err := g.fetch(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return g.ended(ctx)
			}
			return err
		}
		g.count(&m, stats)
	}
	return nil
}

// fetch returns the next record.
func (g *groupConsumer) fetch(ctx context.Context) (kafka.Message, error) {
	if g.commit {
		return g.reader.ReadMessage(ctx) // commits asynchronously every CommitInterval
	}
	return g.reader.FetchMessage(ctx) // enable.auto.commit=false: no commits at all
}

// ended is the error of reads that ctx ended, with the client's last
// error, which often says why no record came.
func (g *groupConsumer) ended(ctx context.Context) error {
	if e := g.lastErr.Load(); e != nil {
		return fmt.Errorf("%w (last client error: %s)", ctx.Err(), *e)
	}
	return ctx.Err()
}

// count adds record m to stats. Only one goroutine counts a consumer's
// records.
func (g *groupConsumer) count(m *kafka.Message, stats *consumeStats) {
	stats.add(1, int64(len(m.Key)+len(m.Value)))
	// The record's high watermark is the one of the fetch response
	// that carried it, so this is the partition's backlog at that
	// fetch, counted from this record: at a fetch's first record, the
	// backlog when the response arrived.
	if lag := m.HighWaterMark - m.Offset; lag > g.lagMax.Load() {
		g.lagMax.Store(lag) // only this goroutine writes it
	}
}

func (g *groupConsumer) rebalance() time.Duration { return time.Duration(g.assigned.Load()) }

func (g *groupConsumer) collect(stats *consumeStats) {
	s := g.reader.Stats() // kafka-go resets its counters on every call
	stats.mu.Lock()
	defer stats.mu.Unlock()
	stats.fetches += s.Fetches
	stats.fetchTime += s.WaitTime.Sum
	stats.fetchMax = max(stats.fetchMax, s.WaitTime.Max)
	stats.fetchSize += s.FetchBytes.Sum
	stats.fetchBMax = max(stats.fetchBMax, s.FetchBytes.Max)
	stats.fetchRecs += s.FetchSize.Sum
	stats.lagMax = max(stats.lagMax, g.lagMax.Swap(0))
}

func (g *groupConsumer) close() error { return g.reader.Close() }

// assignConsumer reads every partition over its own leader connection in
// parallel, with no group: the fastest way kafka-go can consume.
type assignConsumer struct {
	parts   []*partitionReader
	maxWait time.Duration
	maxByte int
}

type partitionReader struct {
	conn *kafka.Conn
	buf  []byte // reused for every record's value
	// next is the offset the next fetch asks for; skip is the number of
	// records at or after next that an earlier phase already counted (its
	// last fetch was cut at --messages and the rest is read again).
	next int64
	skip int64
	last int64 // end offset when the run started
	// sizes holds the value sizes of the records of the current fetch
	// that count, so a fetch cut at --messages counts the right bytes.
	sizes []int32
}

func (r *run) newAssignConsumer(ctx context.Context) (*assignConsumer, error) {
	offs, err := r.consumerOffsets(ctx)
	if err != nil {
		return nil, err
	}
	dialer, err := r.st.sec.Dialer(r.clientID("consumer"), r.st.setupTimeout)
	if err != nil {
		return nil, err
	}
	a := &assignConsumer{maxWait: r.st.maxWait, maxByte: r.st.maxPartBytes}
	for _, o := range offs {
		conn, err := dialer.DialLeader(ctx, "tcp", r.brokers[0], o.topic, o.partition)
		if err != nil {
			a.close()
			return nil, r.explain(err)
		}
		if _, err := conn.Seek(o.first, kafka.SeekAbsolute); err != nil {
			conn.Close()
			a.close()
			return nil, err
		}
		a.parts = append(a.parts, &partitionReader{conn: conn, buf: make([]byte, max(r.st.maxPartBytes, 64<<10)), next: o.first, last: o.last})
	}
	return a, nil
}

// read fetches from every partition in parallel until target records are
// counted. The partitions share one budget of the records still wanted:
// a reader reads a whole fetch, then claims as many of its records as the
// budget still holds, so the total is exactly target however the
// partitions race, and no partition is held to a fixed share (one may
// hold all the records left).
func (a *assignConsumer) read(ctx context.Context, stats *consumeStats, target int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var budget atomic.Int64
	budget.Store(target - stats.records.Load())
	errs := make([]error, len(a.parts))
	var wg sync.WaitGroup
	for i, p := range a.parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = a.readPartition(ctx, p, stats, &budget)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	// Connections block in reads that ignore ctx; unblock them when it ends.
	stopWatch := context.AfterFunc(ctx, func() {
		for _, p := range a.parts {
			p.conn.SetReadDeadline(time.Now())
		}
	})
	wg.Wait()
	stopWatch()
	for _, p := range a.parts {
		p.conn.SetReadDeadline(time.Time{})
	}
	if ctx.Err() != nil && stats.records.Load() < target {
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return ctx.Err()
	}
	return nil
}

// claim takes up to n records from budget and returns how many it took.
func claim(budget *atomic.Int64, n int64) int64 {
	for {
		left := budget.Load()
		k := min(left, n)
		if k <= 0 {
			return 0
		}
		if budget.CompareAndSwap(left, left-k) {
			return k
		}
	}
}

func (a *assignConsumer) readPartition(ctx context.Context, p *partitionReader, stats *consumeStats, budget *atomic.Int64) error {
	for budget.Load() > 0 && ctx.Err() == nil {
		if p.next >= p.last {
			return nil // this partition is drained; others hold the rest
		}
		asked, skip := p.next, p.skip
		t0 := time.Now()
		batch := p.conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: a.maxByte, MaxWait: a.maxWait})
		wait := time.Since(t0)
		p.sizes = p.sizes[:0]
		var bytes int64
		first := asked // offset of the first record counted
		// Batch.Read copies each value into one reused buffer; ReadMessage
		// would allocate a key and a value per record, and the GC that
		// follows was half the consumer's CPU. Keys are skipped unread, so
		// this mode counts value bytes (kbench's own records have no key).
		inPrefix := true
		for {
			n, err := batch.Read(p.buf)
			if err != nil {
				if errors.Is(err, io.ErrShortBuffer) {
					p.buf = make([]byte, 2*len(p.buf)) // a record larger than the fetch size: fetch again
				}
				break
			}
			if inPrefix {
				// The broker answers with whole record batches, so the first
				// may start before the offset asked for; unlike ReadMessage,
				// Batch.Read does not skip those records itself.
				if off := batch.Offset() - 1; off < asked {
					continue
				}
				inPrefix = false
			}
			if skip > 0 {
				skip--
				continue
			}
			if len(p.sizes) == 0 {
				first = batch.Offset() - 1
			}
			p.sizes = append(p.sizes, int32(n))
			bytes += int64(n)
		}
		end := batch.Offset()
		hw := batch.HighWaterMark()
		if err := batch.Close(); err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrShortBuffer) {
			return fmt.Errorf("fetch partition: %w", err)
		}
		read := int64(len(p.sizes))
		recs := claim(budget, read)
		if recs < read {
			// --messages is reached inside this fetch: count the records
			// up to it, and leave the rest to be read again by a later
			// phase, from the same offset, skipping what was counted.
			bytes = 0
			for _, n := range p.sizes[:recs] {
				bytes += int64(n)
			}
			p.next, p.skip = asked, p.skip+recs
			if _, err := p.conn.Seek(asked, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
				return fmt.Errorf("fetch partition: %w", err)
			}
			if recs == 0 {
				return nil // every record of this fetch is beyond --messages: it does not count
			}
		} else {
			p.next, p.skip = end, skip
		}
		if recs > 0 {
			stats.add(recs, bytes)
		}
		stats.mu.Lock()
		stats.fetches++
		stats.fetchTime += wait
		stats.fetchMax = max(stats.fetchMax, wait)
		stats.fetchSize += bytes
		stats.fetchBMax = max(stats.fetchBMax, bytes)
		stats.fetchRecs += recs
		stats.lagMax = max(stats.lagMax, hw-first)
		stats.mu.Unlock()
	}
	return nil
}

func (a *assignConsumer) rebalance() time.Duration { return 0 }
func (a *assignConsumer) collect(*consumeStats)    {}

func (a *assignConsumer) close() error {
	var errs []error
	for _, p := range a.parts {
		errs = append(errs, p.conn.Close())
	}
	return errors.Join(errs...)
}

// durationBacklog is how many records a consumer with --duration reads
// again and again (see readLaps); a variable so tests can shorten laps.
var durationBacklog int64 = 500000
