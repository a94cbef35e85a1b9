package rundoc

// The consumer workload's many topics and subscriptions (see runner's
// consumer.go): --topics N reads N topics of the run's own, prefilled
// before the read; --subscriptions S and --consumers-per-subscription C
// read them with S consumer groups of C members each, every group
// receiving every record once.

// validateConsumerGroups adds the errors of the consumer workload's
// --topics, --subscriptions and --consumers-per-subscription.
func (s *Spec) validateConsumerGroups(errs *FieldErrors) {
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs.Add(field, format, args...)
		}
	}
	// The topics of --topics are new and nothing but the prefill writes
	// to them, so a consumer that starts at their end would wait for
	// records that never come.
	check(s.Topics > 0 && s.FromLatest, "topics",
		"reads the run's own topics, prefilled before the read; --from-latest would skip those records and wait for others that nothing produces")
	for _, g := range s.groupFlags() {
		check(g.n < 0 || g.n > MaxSubscriptionMembers, g.field, "must be between 1 and %d, got %d", MaxSubscriptionMembers, g.n)
		check(g.n > 0 && s.Mode == ModeAssign, g.field,
			"applies to --mode group: a subscription is a consumer group, and --mode assign reads every partition with no group")
		// Each subscription must receive the same records exactly once,
		// which holds only for records that were there before the read.
		check(g.n > 0 && s.FromLatest && s.Mode != ModeAssign, g.field,
			"reads from the topics' start, so that every subscription receives the same records; not with --from-latest")
	}
}
