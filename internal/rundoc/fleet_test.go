package rundoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDivideFleet(t *testing.T) {
	tp := func(topic string, ps ...int) TopicPartitions { return TopicPartitions{Topic: topic, Partitions: ps} }
	tests := []struct {
		name string
		spec Spec
		n    int
		want []Shard
	}{
		{
			name: "one topic's partitions, the remainder to the first shards",
			spec: Spec{Workload: Producer, Topic: "t", Partitions: 8, Threads: 4, Throughput: 1003, Duration: 60},
			n:    3,
			want: []Shard{
				{Index: 0, Count: 3, Assign: []TopicPartitions{tp("t", 0, 1, 2)}, Throughput: 335, Threads: 2, Duration: 60},
				{Index: 1, Count: 3, Assign: []TopicPartitions{tp("t", 3, 4, 5)}, Throughput: 334, Threads: 1, Duration: 60},
				{Index: 2, Count: 3, Assign: []TopicPartitions{tp("t", 6, 7)}, Throughput: 334, Threads: 1, Duration: 60},
			},
		},
		{
			name: "topics, at least one a shard: whole topics, producers per topic kept",
			spec: Spec{Workload: E2E, Mode: ModeRate, Topic: "t", Topics: 5, Partitions: 2, Threads: 1, Throughput: -1, Duration: 30},
			n:    2,
			want: []Shard{
				{Index: 0, Count: 2, Assign: []TopicPartitions{tp("t-0000", 0, 1), tp("t-0001", 0, 1), tp("t-0002", 0, 1)}, Throughput: -1, Threads: 1, Duration: 30},
				{Index: 1, Count: 2, Assign: []TopicPartitions{tp("t-0003", 0, 1), tp("t-0004", 0, 1)}, Throughput: -1, Threads: 1, Duration: 30},
			},
		},
		{
			name: "fewer topics than shards: partitions across topic boundaries",
			spec: Spec{Workload: E2E, Topic: "t", Topics: 2, Partitions: 3, Threads: 4, Throughput: 100, NumRecords: 6000},
			n:    4,
			want: []Shard{
				{Index: 0, Count: 4, Assign: []TopicPartitions{tp("t-0000", 0, 1)}, Throughput: 25, Threads: 1, Duration: 60},
				{Index: 1, Count: 4, Assign: []TopicPartitions{tp("t-0000", 2), tp("t-0001", 0)}, Throughput: 25, Threads: 1, Duration: 60},
				{Index: 2, Count: 4, Assign: []TopicPartitions{tp("t-0001", 1)}, Throughput: 25, Threads: 1, Duration: 60},
				{Index: 3, Count: 4, Assign: []TopicPartitions{tp("t-0001", 2)}, Throughput: 25, Threads: 1, Duration: 60},
			},
		},
		{
			name: "a backlog divided as the rate is",
			spec: Spec{Workload: E2E, Mode: ModeRate, Topic: "t", Partitions: 3, Threads: 3, Throughput: 300, Duration: 20, BacklogBytes: 10},
			n:    3,
			want: []Shard{
				{Index: 0, Count: 3, Assign: []TopicPartitions{tp("t", 0)}, Throughput: 100, Threads: 1, Duration: 20, BacklogBytes: 4},
				{Index: 1, Count: 3, Assign: []TopicPartitions{tp("t", 1)}, Throughput: 100, Threads: 1, Duration: 20, BacklogBytes: 3},
				{Index: 2, Count: 3, Assign: []TopicPartitions{tp("t", 2)}, Throughput: 100, Threads: 1, Duration: 20, BacklogBytes: 3},
			},
		},
		{
			name: "a fractional rate in equal shares",
			spec: Spec{Workload: Producer, Topic: "t", Partitions: 2, Threads: 2, Throughput: 3.5, Duration: 10},
			n:    2,
			want: []Shard{
				{Index: 0, Count: 2, Assign: []TopicPartitions{tp("t", 0)}, Throughput: 1.75, Threads: 1, Duration: 10},
				{Index: 1, Count: 2, Assign: []TopicPartitions{tp("t", 1)}, Throughput: 1.75, Threads: 1, Duration: 10},
			},
		},
		{
			name: "one worker is the run itself",
			spec: Spec{Workload: Producer, Topic: "t", Partitions: 3, Threads: 1, Throughput: -1, NumRecords: 1000},
			n:    1,
			want: []Shard{{Index: 0, Count: 1, Assign: []TopicPartitions{tp("t", 0, 1, 2)}, Throughput: -1, Threads: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DivideFleet(&tt.spec, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got\n%+v\nwant\n%+v", got, tt.want)
			}
			// Every partition exactly once, the rate and the producers
			// adding up (producers only when the shards share topics).
			seen := map[string]int{}
			var rate float64
			threads := 0
			for _, sh := range got {
				for _, a := range sh.Assign {
					for _, p := range a.Partitions {
						seen[fmt.Sprintf("%s/%d", a.Topic, p)]++
					}
				}
				rate += sh.Throughput
				threads += sh.Threads
			}
			for k, c := range seen {
				if c != 1 {
					t.Errorf("partition %s is owned by %d shards", k, c)
				}
			}
			if want := len(tt.spec.TopicNames()) * max(tt.spec.Partitions, 1); len(seen) != want {
				t.Errorf("the shards own %d partitions, the run has %d", len(seen), want)
			}
			if tt.spec.Throughput > 0 && rate != tt.spec.Throughput {
				t.Errorf("the shards' rates add to %g, want %g", rate, tt.spec.Throughput)
			}
			if len(tt.spec.TopicNames()) < tt.n && threads != tt.spec.Threads {
				t.Errorf("the shards' producers add to %d, want %d", threads, tt.spec.Threads)
			}
		})
	}
}

func TestDivideFleetRefuses(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		n     int
		field string
		says  string
	}{
		{"too many workers", Spec{Workload: Producer, Topic: "t", Partitions: 20, Threads: 20, Duration: 5}, 11, "workers", "between 1 and 10"},
		{"no workers", Spec{Workload: Producer, Topic: "t", Partitions: 1, Threads: 1, Duration: 5}, 0, "workers", "between 1 and 10"},
		{"a consumer run", Spec{Workload: Consumer, Topic: "t", Partitions: 4, Threads: 4, Duration: 5}, 2, "workers", "producer and e2e"},
		{"fewer partitions than shards", Spec{Workload: Producer, Topic: "t", Partitions: 3, Threads: 4, Duration: 5}, 4, "partitions", "3 partition(s) make 3"},
		{"fewer producers than shards", Spec{Workload: Producer, Topic: "t", Partitions: 4, Threads: 1, Duration: 5}, 4, "threads", "at least 4, got 1"},
		{"records at an unthrottled rate", Spec{Workload: Producer, Topic: "t", Partitions: 4, Threads: 4, Throughput: -1, NumRecords: 1000}, 4, "duration", "common duration"},
		{"groups sharing topics", Spec{Workload: E2E, Mode: ModeRate, Topic: "t", Topics: 2, Partitions: 4, Threads: 4, Throughput: 100, Duration: 5, Subscriptions: 1}, 4, "subscriptions", "--topics 4 or more"},
		{"e2e in Kafka's mode", Spec{Workload: E2E, Mode: ModeKafka, Topic: "t", Partitions: 4, Threads: 4, Throughput: 100, NumRecords: 1000}, 2, "mode", "rate mode"},
		{"a rate too low to share", Spec{Workload: E2E, Topic: "t", Partitions: 4, Threads: 4, Throughput: 3, Duration: 5}, 4, "throughput", "at least 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DivideFleet(&tt.spec, tt.n)
			var fe FieldErrors
			if !errors.As(err, &fe) || !fe.Has(tt.field) {
				t.Fatalf("got %v, want an error naming %s", err, tt.field)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("%v does not say %q", err, tt.says)
			}
		})
	}
}

func TestShardString(t *testing.T) {
	sh := Shard{Index: 1, Count: 4, Assign: []TopicPartitions{{Topic: "t", Partitions: []int{2, 3}}}, Throughput: 250, Threads: 2, Duration: 60}
	if got, want := sh.String(), "shard 2/4: 2 partition(s) of 1 topic(s), 250 records/s, 2 producer(s) per topic"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzDivideFleet checks the division's invariants over any shape a
// request can ask for: every partition owned once, rates adding up, no
// shard without a partition or a producer.
func FuzzDivideFleet(f *testing.F) {
	f.Add(4, 1, 8, 4, 1000.0, 60.0, int64(0))
	f.Add(3, 5, 2, 1, -1.0, 30.0, int64(0))
	f.Add(10, 0, 10, 10, 12.5, 0.0, int64(100))
	f.Fuzz(func(t *testing.T, n, topics, partitions, threads int, rate, duration float64, records int64) {
		if topics < 0 || topics > 64 || partitions < 1 || partitions > 256 || threads < 1 || threads > 256 {
			return
		}
		s := Spec{Workload: E2E, Topic: "t", Topics: topics, Partitions: partitions, Threads: threads, Throughput: rate, Duration: duration, NumRecords: records}
		shards, err := DivideFleet(&s, n)
		if err != nil {
			var fe FieldErrors
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not a FieldErrors", err)
			}
			return
		}
		if len(shards) != n {
			t.Fatalf("%d shards for %d workers", len(shards), n)
		}
		owned := map[string]bool{}
		var sum float64
		for _, sh := range shards {
			if sh.PartitionCount() == 0 || sh.Threads < 1 {
				t.Fatalf("%v: a shard without a partition or a producer", sh)
			}
			for _, a := range sh.Assign {
				for _, p := range a.Partitions {
					k := fmt.Sprintf("%s/%d", a.Topic, p)
					if owned[k] {
						t.Fatalf("partition %s owned twice", k)
					}
					owned[k] = true
				}
			}
			sum += sh.Throughput
		}
		if len(owned) != len(s.TopicNames())*partitions {
			t.Fatalf("%d of %d partitions owned", len(owned), len(s.TopicNames())*partitions)
		}
		if rate > 0 && n > 0 && (sum < rate*(1-1e-9) || sum > rate*(1+1e-9)) {
			t.Fatalf("rates add to %g, want %g", sum, rate)
		}
	})
}

func TestValidateShard(t *testing.T) {
	base := func(t *testing.T, workload Workload, args ...string) Spec {
		t.Helper()
		all := append([]string{"--topic", "t", "--partitions", "4", "--bootstrap-server", "127.0.0.1:9092"}, args...)
		s, err := ParseArgs(workload, all)
		if err != nil {
			t.Fatalf("ParseArgs(%q): %v", all, err)
		}
		return s
	}
	own := func(topic string, ps ...int) []TopicPartitions {
		return []TopicPartitions{{Topic: topic, Partitions: ps}}
	}
	tests := []struct {
		name     string
		workload Workload
		args     []string
		shard    Shard
		says     string // "" for valid
	}{
		{"a producer shard", Producer, []string{"--throughput", "100", "--duration", "10"}, Shard{Index: 1, Count: 2, Assign: own("t", 2, 3)}, ""},
		{"an e2e shard in rate mode", E2E, []string{"--throughput", "100", "--duration", "10"}, Shard{Index: 0, Count: 2, Assign: own("t", 0, 1)}, ""},
		{"the embedded broker", Producer, []string{"--bootstrap-server", "", "--duration", "10"}, Shard{Index: 0, Count: 2, Assign: own("t", 0)}, "share one cluster"},
		{"an index past the count", Producer, []string{"--duration", "10"}, Shard{Index: 2, Count: 2, Assign: own("t", 0)}, "shard 2 of 2"},
		{"a fleet of one", Producer, []string{"--duration", "10"}, Shard{Index: 0, Count: 1, Assign: own("t", 0)}, "of 2 to 10"},
		{"another topic", Producer, []string{"--duration", "10"}, Shard{Index: 0, Count: 2, Assign: own("u", 0)}, `topic "u"`},
		{"a partition past the topic's", Producer, []string{"--duration", "10"}, Shard{Index: 0, Count: 2, Assign: own("t", 3, 4)}, "each from 0 to 3"},
		{"partitions out of order", Producer, []string{"--duration", "10"}, Shard{Index: 0, Count: 2, Assign: own("t", 1, 0)}, "must ascend"},
		{"nothing assigned", Producer, []string{"--duration", "10"}, Shard{Index: 0, Count: 2}, "assigns no partition"},
		{"a topic twice", Producer, []string{"--duration", "10"}, Shard{Index: 0, Count: 2, Assign: append(own("t", 0), own("t", 1)...)}, "twice"},
		{"groups on a shared topic", E2E, []string{"--throughput", "100", "--duration", "10", "--topics", "2", "--subscriptions", "1"}, Shard{Index: 0, Count: 2, Assign: own("t-0000", 0, 1)}, "consumer groups"},
		{"e2e in Kafka's mode", E2E, []string{"--num-records", "10"}, Shard{Index: 0, Count: 2, Assign: own("t", 0, 1)}, "rate mode"},
		{"a consumer", Consumer, []string{"--messages", "10"}, Shard{Index: 0, Count: 2, Assign: own("t", 0, 1)}, "consumer run cannot be a shard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base(t, tt.workload, tt.args...)
			sh := tt.shard
			s.Shard = &sh
			err := s.Validate()
			if tt.says == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var fe FieldErrors
			if !errors.As(err, &fe) || !fe.Has("shard") || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Validate: got %v, want a shard error saying %q", err, tt.says)
			}
		})
	}
}

func TestOwnedPartitions(t *testing.T) {
	s := Spec{Topic: "t", Topics: 2}
	if got := s.OwnedPartitions("t-0001", 3); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("a run owns every partition: got %v", got)
	}
	s.Shard = &Shard{Index: 1, Count: 2, Assign: []TopicPartitions{{Topic: "t-0001", Partitions: []int{1, 2}}}}
	if got := s.OwnedPartitions("t-0001", 3); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("a shard owns its own: got %v", got)
	}
	if got := s.OwnedPartitions("t-0000", 3); got != nil {
		t.Errorf("a shard owns nothing of another's topic: got %v", got)
	}
	if got := s.ShardTopics(); !reflect.DeepEqual(got, []string{"t-0001"}) {
		t.Errorf("ShardTopics = %v", got)
	}
}

func TestShardStartLine(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	t0 := now.Add(3*time.Second + 123456789)
	got, err := ParseShardStart(ShardStartLine(t0), now)
	if err != nil || !got.Equal(t0) {
		t.Fatalf("ParseShardStart(ShardStartLine(%v)) = %v, %v", t0, got, err)
	}
	for _, line := range []string{"", "start", "begin 1", "start x", "start 1", "start -5", fmt.Sprintf("start %d", now.Add(25*time.Hour).UnixNano()), "start 1 2"} {
		if _, err := ParseShardStart(line, now); err == nil {
			t.Errorf("ParseShardStart(%q): no error", line)
		}
	}
}

// FuzzParseShardStart: whatever arrives on a shard's stdin, the parser
// answers a start near now or an error, and a start it accepts is the
// one its line names.
func FuzzParseShardStart(f *testing.F) {
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	f.Add(ShardStartLine(now.Add(time.Second)))
	f.Add("start 0")
	f.Add("start 99999999999999999999")
	f.Fuzz(func(t *testing.T, line string) {
		t0, err := ParseShardStart(line, now)
		if err != nil {
			return
		}
		if t0.Sub(now).Abs() > 24*time.Hour {
			t.Fatalf("%q: accepted %v, a day or more from now", line, t0)
		}
		if again, err := ParseShardStart(ShardStartLine(t0), now); err != nil || !again.Equal(t0) {
			t.Fatalf("%q: %v does not survive its own line: %v, %v", line, t0, again, err)
		}
	})
}

// TestShardSpecFile: a shard's spec goes through the file the worker
// writes for its child (Params, SpecFromParams) whole, and a "shard"
// that is not the object the server writes is refused.
func TestShardSpecFile(t *testing.T) {
	s, err := ParseArgs(Producer, []string{"--bootstrap-server", "kafka:9092", "--topic", "t", "--partitions", "4",
		"--num-records", "6000", "--throughput", "1000", "--warmup-records", "100", "--threads", "2"})
	if err != nil {
		t.Fatal(err)
	}
	shards, err := DivideFleet(&s, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shards {
		want := s.ShardSpec(sh)
		if err := want.Validate(); err != nil {
			t.Fatalf("shard %d: %v", sh.Index, err)
		}
		params, err := want.Params()
		if err != nil {
			t.Fatal(err)
		}
		got, err := SpecFromParams(Producer, params)
		if err != nil {
			t.Fatalf("shard %d from its params: %v", sh.Index, err)
		}
		if !reflect.DeepEqual(got.Shard, want.Shard) || got.Throughput != 500 || got.Duration != 6 || got.NumRecords != 0 || got.WarmupRecords != 0 {
			t.Errorf("shard %d: got %+v (shard %+v), want %+v", sh.Index, got, got.Shard, want.Shard)
		}
	}
	for _, raw := range []string{`"x"`, `{"index":0,"count":2,"extra":1}`, `{"index":0} {}`} {
		_, err := SpecFromParams(Producer, map[string]json.RawMessage{"shard": json.RawMessage(raw)})
		var fe FieldErrors
		if !errors.As(err, &fe) || !fe.Has("shard") {
			t.Errorf("shard %s: %v, want a field error naming shard", raw, err)
		}
	}
}

// TestFleetParentSpec: a parent's workers go through its spec file and
// its fingerprint, so fleets of different sizes are different series;
// the division's errors are the parent's.
func TestFleetParentSpec(t *testing.T) {
	args := []string{"--bootstrap-server", "kafka:9092", "--topic", "t", "--partitions", "4", "--threads", "4",
		"--throughput", "1000", "--duration", "10"}
	fingerprints := map[string]int{}
	for _, n := range []int{0, 2, 4} {
		s, err := ParseArgs(Producer, args)
		if err != nil {
			t.Fatal(err)
		}
		s.Workers = n
		if err := s.Validate(); err != nil {
			t.Fatalf("workers %d: %v", n, err)
		}
		params, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		back, err := SpecFromParams(Producer, params)
		if err != nil || back.Workers != n {
			t.Fatalf("workers %d from its params: %d, %v", n, back.Workers, err)
		}
		fp, err := s.Fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := fingerprints[fp]; ok {
			t.Errorf("workers %d and %d share fingerprint %s", m, n, fp)
		}
		fingerprints[fp] = n
		for _, sh := range must(divideOf(t, &s)) {
			if got := s.ShardSpec(sh); got.Workers != 0 || got.Validate() != nil {
				t.Errorf("workers %d: shard %d has workers %d, valid: %v", n, sh.Index, got.Workers, got.Validate())
			}
		}
	}
	for _, tt := range []struct {
		workers int
		field   string
	}{{1, "workers"}, {11, "workers"}, {5, "partitions"}} {
		s, err := ParseArgs(Producer, args)
		if err != nil {
			t.Fatal(err)
		}
		s.Workers = tt.workers
		var fe FieldErrors
		if err := s.Validate(); !errors.As(err, &fe) || !fe.Has(tt.field) {
			t.Errorf("workers %d: %v, want an error naming %s", tt.workers, err, tt.field)
		}
	}
}

// divideOf divides s among its workers, none for a run of one.
func divideOf(t *testing.T, s *Spec) ([]Shard, error) {
	t.Helper()
	if s.Workers == 0 {
		return nil, nil
	}
	return DivideFleet(s, s.Workers)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
