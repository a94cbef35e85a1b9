package rundoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxFleetWorkers bounds a fleet run's "workers": the shards of one run,
// each driven by its own worker process.
const MaxFleetWorkers = 10

// Shard is one shard's part of a fleet run (a run asking for "workers":
// N): the topics and partitions it drives, and its share of the rate and
// of the producers. Every partition belongs to exactly one shard, so each
// shard consumes what it produced and an end-to-end latency never crosses
// two machines' clocks.
type Shard struct {
	// Index is the shard's place in the fleet, 0 to Count-1.
	Index int `json:"index"`
	Count int `json:"count"`
	// Assign lists, per topic the shard uses, the partitions it owns.
	Assign []TopicPartitions `json:"assign"`
	// Throughput is the shard's share of the run's records/s; -1 is
	// unthrottled, as for a run.
	Throughput float64 `json:"throughput"`
	// Threads is the shard's producers per topic (Spec.Threads).
	Threads int `json:"threads"`
	// Duration is the measured window every shard runs, in seconds: the
	// run's duration, or its record count at its rate.
	Duration float64 `json:"duration"`
	// BacklogBytes is the shard's share of e2e's --backlog-bytes (0 for
	// none): each shard builds and drains the backlog of its partitions.
	BacklogBytes int64 `json:"backlog_bytes,omitempty"`
}

// TopicPartitions is one topic and the partitions of it a shard owns.
type TopicPartitions struct {
	Topic      string `json:"topic"`
	Partitions []int  `json:"partitions"`
}

// PartitionCount is how many partitions the shard owns, over its topics.
func (sh Shard) PartitionCount() int {
	n := 0
	for _, tp := range sh.Assign {
		n += len(tp.Partitions)
	}
	return n
}

// DivideFleet divides the run s among n shards: its topics when there are
// at least n of them (each shard every partition of its topics), else the
// partitions of its topics taken in order; its rate (records/s) and its
// producers per topic when the shards share topics. Remainders go to the
// first shards. Shards run for a common duration: the spec's, or its
// record count at its rate; a record count at an unthrottled rate has no
// common duration and is refused. n of 1 is the run itself, as one shard.
// Errors are FieldErrors naming the field to change.
func DivideFleet(s *Spec, n int) ([]Shard, error) {
	var errs FieldErrors
	if n < 1 || n > MaxFleetWorkers {
		errs.Add("workers", "must be between 1 and %d, got %d", MaxFleetWorkers, n)
		return nil, errs.Err()
	}
	switch s.Workload {
	case Producer, E2E:
	default:
		if n > 1 {
			errs.Add("workers", "a %s run cannot be divided among workers: fleets are producer and e2e runs", s.Workload)
		}
	}
	if s.Workload == E2E && n > 1 && !s.E2ERateMode() {
		errs.Add("mode", "an e2e fleet runs in rate mode (--mode rate or --throughput R): Kafka's mode sends one record at a time from one producer")
	}
	duration := s.Duration
	if duration <= 0 {
		switch {
		case s.NumRecords > 0 && s.Throughput > 0:
			duration = float64(s.NumRecords) / s.Throughput
		case n > 1:
			errs.Add("duration", "a fleet's shards run for a common duration: give --duration, or --throughput with --num-records (%d records at an unthrottled rate take as long as each shard's machine needs)", s.NumRecords)
		}
	}
	if n > 1 && s.Throughput > 0 && s.Throughput < float64(n) {
		errs.Add("throughput", "%g records/s among %d shards leaves a shard without a record to send: give at least %d", s.Throughput, n, n)
	}
	topics := s.TopicNames()
	parts := max(s.Partitions, 1)
	byTopic := len(topics) >= n
	if !byTopic && len(topics)*parts < n {
		errs.Add("partitions", "each of the %d shards needs partitions of its own: %d topic(s) of %d partition(s) make %d", n, len(topics), parts, len(topics)*parts)
	}
	if !byTopic && n > 1 && s.Threads < n {
		errs.Add("threads", "the %d shards share %d topic(s) and divide its producers: each needs at least one, so --threads must be at least %d, got %d", n, len(topics), n, s.Threads)
	}
	if _, _, groups := s.Groups(); groups && !byTopic && n > 1 {
		errs.Add("subscriptions", "consumer groups read every partition of their topics, so a fleet of groups divides whole topics: give --topics %d or more", n)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}

	shards := make([]Shard, n)
	backlog := divideInts64(s.BacklogBytes, n)
	rates := divideRate(s.Throughput, n)
	threads := divideInts(s.Threads, n)
	for i := range shards {
		shards[i] = Shard{Index: i, Count: n, Throughput: rates[i], Threads: s.Threads, Duration: duration, BacklogBytes: backlog[i]}
		if !byTopic {
			shards[i].Threads = threads[i]
		}
	}
	if byTopic {
		at := 0
		for i, k := range divideInts(len(topics), n) {
			for _, t := range topics[at : at+k] {
				shards[i].Assign = append(shards[i].Assign, TopicPartitions{Topic: t, Partitions: seq(0, parts)})
			}
			at += k
		}
		return shards, nil
	}
	// The (topic, partition) pairs in order, cut into n runs.
	at := 0
	for i, k := range divideInts(len(topics)*parts, n) {
		for j := at; j < at+k; j++ {
			t, p := topics[j/parts], j%parts
			a := shards[i].Assign
			if len(a) == 0 || a[len(a)-1].Topic != t {
				a = append(a, TopicPartitions{Topic: t})
			}
			a[len(a)-1].Partitions = append(a[len(a)-1].Partitions, p)
			shards[i].Assign = a
		}
		at += k
	}
	return shards, nil
}

// divideInts cuts total into n whole shares, the remainder one each to
// the first shares.
func divideInts(total, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = total / n
		if i < total%n {
			out[i]++
		}
	}
	return out
}

// divideInts64 is divideInts for byte counts.
func divideInts64(total int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = total / int64(n)
		if int64(i) < total%int64(n) {
			out[i]++
		}
	}
	return out
}

// divideRate cuts a rate in records/s into n shares: whole records/s with
// the remainder to the first shares when the rate is whole, equal shares
// otherwise; an unthrottled rate (≤ 0) stays unthrottled in every share.
func divideRate(rate float64, n int) []float64 {
	out := make([]float64, n)
	if rate <= 0 {
		for i := range out {
			out[i] = rate
		}
		return out
	}
	if whole := math.Trunc(rate); whole == rate && rate <= math.MaxInt64/2 {
		for i, k := range divideInts(int(whole), n) {
			out[i] = float64(k)
		}
		return out
	}
	for i := range out {
		out[i] = rate / float64(n)
	}
	return out
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// String describes the shard's part for logs and pages: "shard 2/4:
// 8 partition(s) of 1 topic(s), 250 records/s, 2 producers per topic".
func (sh Shard) String() string {
	rate := "unthrottled"
	if sh.Throughput > 0 {
		rate = fmt.Sprintf("%g records/s", sh.Throughput)
	}
	return fmt.Sprintf("shard %d/%d: %d partition(s) of %d topic(s), %s, %d producer(s) per topic",
		sh.Index+1, sh.Count, sh.PartitionCount(), len(sh.Assign), rate, sh.Threads)
}

// validateShard adds the errors of a shard's part (Spec.Shard), all under
// the field "shard": a shard spec is written by the server, never typed.
func (s *Spec) validateShard(errs *FieldErrors) {
	sh := s.Shard
	if sh == nil {
		return
	}
	bad := func(format string, args ...any) { errs.Add("shard", format, args...) }
	if s.Workload != Producer && s.Workload != E2E {
		bad("a %s run cannot be a shard: fleets are producer and e2e runs", s.Workload)
		return
	}
	if s.Workload == E2E && !s.E2ERateMode() {
		bad("an e2e shard runs in rate mode (--mode rate or --throughput R)")
	}
	if s.Duration <= 0 {
		bad("a shard runs for the fleet's common duration: --duration, got none")
	}
	if s.Warmup > 0 || s.WarmupRecords > 0 {
		// The fleet's start sets when the warm-up ends, for every shard.
		bad("a shard warms up from when it is ready until the fleet's start: no --warmup or --warmup-records of its own")
	}
	if sh.Count < 2 || sh.Count > MaxFleetWorkers || sh.Index < 0 || sh.Index >= sh.Count {
		bad("shard %d of %d: want a shard 0 to count-1 of 2 to %d", sh.Index, sh.Count, MaxFleetWorkers)
	}
	if len(s.Targets()) == 0 && s.Cluster == "" {
		bad("the shards of a fleet share one cluster: give its bootstrap servers or name it (an embedded broker would be each shard's own)")
	}
	if len(sh.Assign) == 0 {
		bad("assigns no partition")
	}
	topics := s.TopicNames()
	seen := map[string]bool{}
	for _, a := range sh.Assign {
		switch {
		case !slices.Contains(topics, a.Topic):
			bad("assigns topic %q, which is not one of the run's (%s to %s)", a.Topic, topics[0], topics[len(topics)-1])
		case seen[a.Topic]:
			bad("assigns topic %q twice", a.Topic)
		case len(a.Partitions) == 0:
			bad("assigns no partition of topic %q", a.Topic)
		}
		seen[a.Topic] = true
		for i, p := range a.Partitions {
			if p < 0 || p >= s.Partitions || (i > 0 && p <= a.Partitions[i-1]) {
				bad("topic %q: partitions must ascend, each from 0 to %d, got %v", a.Topic, s.Partitions-1, a.Partitions)
				break
			}
		}
		if _, _, groups := s.Groups(); groups && len(a.Partitions) < s.Partitions {
			// A group's members share every partition of their topics,
			// so a shard's would read other shards' records, whose send
			// times another machine's clock took.
			bad("consumer groups read every partition of a topic, so shards of groups take whole topics: topic %q is shared", a.Topic)
		}
	}
}

// validateFleet adds the errors of a fleet's parent (Spec.Workers): the
// number of workers, and the division's own errors, each naming the flag
// to change.
func (s *Spec) validateFleet(errs *FieldErrors) {
	switch {
	case s.Workers == 0:
		return
	case s.Workers < 2 || s.Workers > MaxFleetWorkers:
		errs.Add("workers", "a fleet has 2 to %d workers, got %d (a run of one process leaves workers out)", MaxFleetWorkers, s.Workers)
		return
	case s.Shard != nil:
		errs.Add("workers", "a shard is one worker's part of a fleet, not a fleet of its own")
		return
	}
	if _, err := DivideFleet(s, s.Workers); err != nil {
		var fe FieldErrors
		if errors.As(err, &fe) {
			*errs = append(*errs, fe...)
			return
		}
		errs.Add("workers", "%v", err)
	}
}

// OwnedPartitions are the partitions of topic (of partitions in all) the
// run drives: all of them, or a shard's (nil for a topic not its own).
func (s *Spec) OwnedPartitions(topic string, partitions int) []int {
	if s.Shard == nil {
		return seq(0, partitions)
	}
	for _, a := range s.Shard.Assign {
		if a.Topic == topic {
			return a.Partitions
		}
	}
	return nil
}

// ShardTopics are the topics the run drives: the run's, or a shard's.
func (s *Spec) ShardTopics() []string {
	if s.Shard == nil {
		return s.TopicNames()
	}
	out := make([]string, len(s.Shard.Assign))
	for i, a := range s.Shard.Assign {
		out[i] = a.Topic
	}
	return out
}

// ShardStart is a shard's common start (Measurement.ShardStart): T0, the
// start it was given, converted to its own clock by its worker; Window,
// when its measured window opened, by the same clock (its warm-up ran
// until T0, and the window opens once the warm-up's records are
// acknowledged); LagMs is Window − T0, which the fleet's barrier skew is
// made of.
type ShardStart struct {
	T0     time.Time `json:"t0"`
	Window time.Time `json:"window"`
	LagMs  float64   `json:"lag_ms"`
}

// shardStartVerb opens the line a shard's worker writes on the shard's
// stdin once the fleet's start is set: "start" and T0 in Unix nanoseconds
// of the shard's machine's clock.
const shardStartVerb = "start"

// ShardStartLine is the line (with its newline) that starts a shard at
// t0, a time of the shard's machine's clock.
func ShardStartLine(t0 time.Time) string {
	return fmt.Sprintf("%s %d\n", shardStartVerb, t0.UnixNano())
}

// ParseShardStart reads a ShardStartLine. It refuses anything else, a
// start before 2000 or one more than a day away from now (a clock or a
// unit gone wrong, not a start to wait for).
func ParseShardStart(line string, now time.Time) (time.Time, error) {
	verb, arg, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok || verb != shardStartVerb {
		return time.Time{}, fmt.Errorf("shard start: want %q and Unix nanoseconds, got %q", shardStartVerb, line)
	}
	ns, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("shard start: %q is not Unix nanoseconds", arg)
	}
	t0 := time.Unix(0, ns)
	if t0.Year() < 2000 || t0.Sub(now).Abs() > 24*time.Hour {
		return time.Time{}, fmt.Errorf("shard start: %s is a day or more from now (%s)", t0.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	return t0, nil
}

// ShardSpec is the spec shard sh of the run s executes: s with its
// share of the rate, producers and backlog, the common duration in
// place of a record count, and no warm-up of its own (every shard warms
// up until the fleet's start).
func (s Spec) ShardSpec(sh Shard) Spec {
	s.Shard, s.Workers = &sh, 0
	s.Throughput, s.Threads, s.Duration, s.NumRecords = sh.Throughput, sh.Threads, sh.Duration, 0
	s.BacklogBytes = sh.BacklogBytes
	s.Warmup, s.WarmupRecords = 0, 0
	return s
}

// shardParam decodes the "shard" param of a spec file or a stored spec:
// the object Spec.Shard encodes to, strictly (validateShard checks its
// values). Requests never give it: the server refuses it in theirs.
func shardParam(raw json.RawMessage, errs *FieldErrors) *Shard {
	var sh Shard
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sh); err != nil || dec.More() {
		errs.Add("shard", "want the object the server writes for a fleet's shard")
		return nil
	}
	return &sh
}
