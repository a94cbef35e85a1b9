package rundoc

// The end-to-end latency workload (`kbench run e2e`, see runner's e2e.go)
// has two modes. Kafka's mode (the default, --throughput -1) does what
// Kafka's EndToEndLatency tool does: one record produced synchronously
// with linger.ms=0, polled back with fetch.max.wait.ms=0, checked, repeat.
// Rate mode (--throughput R, or --mode rate) runs a producer at R
// records/s (with --mode rate and --throughput -1, as fast as it can) and
// a consumer concurrently, and times every record from its send to its
// receipt.

// E2EStampBytes is the smallest --record-size of rate mode: every record
// carries its sequence number, its intended send time and its actual send
// time in its first bytes, so the consumer needs no shared table to time
// it and can tell a record received twice.
const E2EStampBytes = 24

// DefaultE2ERecords is e2e's default --num-records: Kafka's tool takes it
// as a required argument.
const DefaultE2ERecords = 10000

func e2eDefaults(s *Spec) {
	s.NumRecords = DefaultE2ERecords
	s.RecordSize = 100
}

// E2ERateMode reports whether an e2e spec runs in rate mode: --mode rate
// (paced by --throughput, or unthrottled with -1, which is how a sweep
// measures rate mode's maximum), or no --mode and a positive --throughput.
func (s *Spec) E2ERateMode() bool {
	return s.Workload == E2E && (s.Mode == ModeRate || (s.Mode == "" && s.Throughput > 0))
}

// PropsFlag is the flag that holds a workload's Kafka properties: e2e's
// producer and consumer share --producer-props, as Kafka's tool gives its
// one properties file to both.
func PropsFlag(w Workload) string {
	if w == Consumer {
		return "consumer-props"
	}
	return "producer-props"
}

// validateE2E adds the errors of the e2e workload's own combinations.
func (s *Spec) validateE2E(errs *FieldErrors) {
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs.Add(field, format, args...)
		}
	}
	rate := s.E2ERateMode()
	check(s.Mode == ModeKafka && s.Throughput > 0 && !errs.Has("throughput"), "throughput",
		"applies to rate mode (--mode rate); Kafka's mode sends one record at a time, got %v", s.Throughput)
	check(s.Duration > 0 && !rate && !errs.Has("throughput"), "duration",
		"applies to rate mode (--throughput R or --mode rate); Kafka's mode sends --num-records records one at a time")
	check(rate && !errs.Has("record-size") && s.RecordSize < E2EStampBytes, "record-size",
		"must be at least %d bytes in rate mode (each record carries its sequence number and send times), got %d", E2EStampBytes, s.RecordSize)
	check(!rate && s.Threads != 1, "threads", "Kafka's mode runs one producer; more apply to rate mode (--throughput R or --mode rate), got %d", s.Threads)
	check(rate && !errs.Has("threads") && !errs.Has("topics") && s.Threads*max(s.Topics, 1) > MaxE2EProducers, "threads",
		"%d producers per topic over %d topic(s) make %d producers, more than the %d one process runs", s.Threads, max(s.Topics, 1), s.Threads*max(s.Topics, 1), MaxE2EProducers)
	check(s.Warmup < 0 || s.Warmup > MaxDuration, "warmup", "must be between 0 and %v seconds (7 days), got %v", MaxDuration, s.Warmup)
	check(s.Warmup > 0 && !rate, "warmup", "applies to rate mode (--throughput R or --mode rate); Kafka's mode sends --num-records records one at a time")
	check(s.Topics > 0 && !rate && !errs.Has("topics"), "topics",
		"applies to rate mode (--throughput R or --mode rate); Kafka's mode sends and reads one record at a time on --topic")
	check(s.BacklogBytes < 0, "backlog-bytes", "must be positive bytes, got %d", s.BacklogBytes)
	check(s.BacklogBytes > 0 && !rate, "backlog-bytes", "applies to rate mode (--throughput R or --mode rate), whose consumer runs beside the producer")
	check(s.BacklogBytes > 0 && s.Duration == 0 && !errs.Has("num-records") && s.BacklogBytes >= s.NumRecords*int64(s.RecordSize), "backlog-bytes",
		"%d bytes is the whole run (%d records of %d bytes): the backlog must leave records to send while it drains", s.BacklogBytes, s.NumRecords, s.RecordSize)
	check(s.BacklogDrainRatio < 0 || s.BacklogDrainRatio > 1, "backlog-drain-ratio", "must be between 0 and 1, got %v", s.BacklogDrainRatio)
	check(s.BacklogDrainRatio != 0 && s.BacklogBytes == 0, "backlog-drain-ratio", "applies with --backlog-bytes")
	check(s.DurationAfterDrain && (s.BacklogBytes == 0 || s.Duration == 0), "duration-after-drain", "applies with --backlog-bytes and --duration")
	_, _, groups := s.Groups()
	check(s.GroupsPerTopic && !groups, "groups-per-topic", "applies with --subscriptions or --consumers-per-subscription")
	if subs, members, ok := s.Groups(); ok && s.GroupsPerTopic && !errs.Has("topics") && !errs.Has("subscriptions") && !errs.Has("consumers-per-subscription") {
		n := subs * members * max(s.Topics, 1)
		check(n > MaxE2EReaders, "groups-per-topic", "%d topic(s) × %d subscription(s) × %d consumer(s) make %d Readers, more than the %d one process runs", max(s.Topics, 1), subs, members, n, MaxE2EReaders)
	}
	for _, g := range s.groupFlags() {
		check(g.n < 0 || g.n > MaxSubscriptionMembers, g.field, "must be between 1 and %d, got %d", MaxSubscriptionMembers, g.n)
		check(g.n > 0 && !rate, g.field, "applies to rate mode (--throughput R or --mode rate)")
		check(g.n > 0 && rate && s.Topics == 0, g.field, "needs --topics: a subscription's group reads its topics from their start, so they must be the run's own")
	}
}

// groupFlag is one of the two flags of the subscriptions' groups.
type groupFlag struct {
	field string
	n     int
}

// groupFlags are --subscriptions and --consumers-per-subscription, in
// the order their errors are reported.
func (s *Spec) groupFlags() []groupFlag {
	return []groupFlag{{"subscriptions", s.Subscriptions}, {"consumers-per-subscription", s.ConsumersPerSubscription}}
}

// MaxE2EProducers bounds e2e rate mode's producers, --threads per
// topic: each has its own connections and buffer.memory in one process.
const MaxE2EProducers = 1024

// MaxE2EReaders bounds the consumer groups' Readers of e2e rate mode
// (with --groups-per-topic, topics × subscriptions × members).
const MaxE2EReaders = 2000

// MaxSubscriptionMembers bounds --subscriptions and
// --consumers-per-subscription.
const MaxSubscriptionMembers = 100

// Groups reports whether e2e rate mode or the consumer reads through the
// subscriptions' consumer groups (--subscriptions or
// --consumers-per-subscription given), and how many groups of how many
// members: 1 where one of the two is not given.
func (s *Spec) Groups() (subscriptions, members int, ok bool) {
	if s.Subscriptions == 0 && s.ConsumersPerSubscription == 0 {
		return 0, 0, false
	}
	return max(s.Subscriptions, 1), max(s.ConsumersPerSubscription, 1), true
}

// BacklogRecords is the backlog --backlog-bytes asks for, in records of
// --record-size: what the drain is measured against.
func (s *Spec) BacklogRecords() int64 {
	if s.RecordSize <= 0 {
		return 0
	}
	return s.BacklogBytes / int64(s.RecordSize)
}

// DrainedBacklog is the backlog, in records, at or below which the drain
// counts as done, as OMB defines it: what --backlog-drain-ratio (default
// 1) leaves of the backlog, and never under 1,000 records.
func (s *Spec) DrainedBacklog() int64 {
	ratio := s.BacklogDrainRatio
	if ratio == 0 {
		ratio = 1
	}
	return max(1000, int64((1-ratio)*float64(s.BacklogRecords())))
}
