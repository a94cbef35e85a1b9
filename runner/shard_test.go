package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestShardOwnsItsPartitions: a fleet's shard (Spec.Shard) sends only to
// the partitions it was given, in every producer mode and with keys, and
// e2e's shard reads only those: records another shard left in the other
// partitions count in none of its figures. The topic it shares is created
// by the first shard and kept.
func TestShardOwnsItsPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs against a broker")
	}
	b := startBroker(t, embeddedbroker.Options{})
	shard := func(t *testing.T, workload rundoc.Workload, topic string, owned []int, args ...string) *rundoc.Result {
		t.Helper()
		opts, _ := testOptions(t)
		all := append([]string{"--bootstrap-server", b.Addr(), "--topic", topic, "--partitions", "4", "--record-size", "64",
			"--duration", "1", "--threads", "2", "--profile", "none"}, args...)
		s := mustParse(t, workload, all...)
		s.Shard = &rundoc.Shard{Index: owned[0] / 2, Count: 2, Assign: []rundoc.TopicPartitions{{Topic: topic, Partitions: owned}},
			Throughput: s.Throughput, Threads: s.Threads, Duration: s.Duration}
		if err := s.Validate(Validate); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), s, opts)
		if err != nil {
			t.Fatalf("shard %v of %s: %v", owned, topic, err)
		}
		if !slices.ContainsFunc(res.Measurement.Notes, func(n string) bool { return strings.Contains(n, "only its own partitions") }) {
			t.Errorf("the result does not say the run was a shard: %q", res.Measurement.Notes)
		}
		return res
	}
	for _, mode := range []string{rundoc.ModeWriter, rundoc.ModeClient, rundoc.ModeRaw} {
		for _, keyed := range []bool{false, true} {
			name := fmt.Sprintf("%s keyed=%v", mode, keyed)
			t.Run(name, func(t *testing.T) {
				topic := fmt.Sprintf("shard-%s-%v", mode, keyed)
				// Unthrottled, in small batches: unkeyed records move to
				// the next partition as a batch fills (the sticky
				// partitioner), so every owned partition gets some.
				args := []string{"--mode", mode, "--throughput", "-1", "--producer-props", "batch.size=1024"}
				if keyed {
					args = append(args, "--key-size", "8")
				}
				res := shard(t, rundoc.Producer, topic, []int{1, 3}, args...)
				ends := partitionEnds(t, b.Addr(), topic)
				sent := metric(t, res, "records-sent")
				if ends[0] != 0 || ends[2] != 0 {
					t.Errorf("partitions 0 and 2 hold %d and %d records: another shard's", ends[0], ends[2])
				}
				if ends[1] == 0 || ends[3] == 0 {
					t.Errorf("partitions 1 and 3 hold %d and %d records: the shard's sends should reach both", ends[1], ends[3])
				}
				if got := ends[1] + ends[3]; float64(got) < sent {
					t.Errorf("the shard's partitions hold %d records, it sent %v", got, sent)
				}
			})
		}
	}
	t.Run("e2e", func(t *testing.T) {
		// The other shard sends to its partitions while the e2e shard
		// runs: a record of its read by the e2e shard would be one "not
		// sent by this run", which fails the count check.
		const topic = "shard-e2e"
		shard(t, rundoc.Producer, topic, []int{0, 1}, "--throughput", "2000") // creates the topic
		other := make(chan error, 1)
		go func() {
			opts, _ := testOptions(t)
			s := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", topic, "--partitions", "4", "--record-size", "64",
				"--throughput", "2000", "--duration", "3", "--threads", "2", "--profile", "none")
			s.Shard = &rundoc.Shard{Index: 0, Count: 2, Assign: []rundoc.TopicPartitions{{Topic: topic, Partitions: []int{0, 1}}}, Throughput: 2000, Threads: 2, Duration: 3}
			_, err := Run(context.Background(), s, opts)
			other <- err
		}()
		res := shard(t, rundoc.E2E, topic, []int{2, 3}, "--throughput", "2000")
		if err := <-other; err != nil {
			t.Fatalf("the other shard: %v", err)
		}
		ends := partitionEnds(t, b.Addr(), topic)
		if got, sent := metric(t, res, "records-received"), metric(t, res, "records-sent"); got != sent || got == 0 {
			t.Errorf("the e2e shard received %v records and sent %v", got, sent)
		}
		if ends[2]+ends[3] != int64(metric(t, res, "records-sent")) {
			t.Errorf("partitions 2 and 3 hold %d records, the e2e shard sent %v", ends[2]+ends[3], metric(t, res, "records-sent"))
		}
	})
}
