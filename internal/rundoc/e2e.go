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
	check(s.Threads != 1, "threads", "e2e runs one producer, got %d", s.Threads)
}
