package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// shardSpec is a spec of one shard of two over topic (4 partitions,
// each shard 2) owning owned: --duration 1, 64-byte records, no profile,
// then args; its Shard has the spec's own rate, producers and duration.
func shardSpec(t *testing.T, addr string, workload rundoc.Workload, topic string, owned []int, args ...string) rundoc.Spec {
	t.Helper()
	all := append([]string{"--bootstrap-server", addr, "--topic", topic, "--partitions", "4", "--record-size", "64",
		"--duration", "1", "--profile", "none"}, args...)
	s := mustParse(t, workload, all...)
	s.Shard = &rundoc.Shard{Index: owned[0] / 2, Count: 2, Assign: []rundoc.TopicPartitions{{Topic: topic, Partitions: owned}},
		Throughput: s.Throughput, Threads: s.Threads, Duration: s.Duration}
	if err := s.Validate(Validate); err != nil {
		t.Fatal(err)
	}
	return s
}

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
	// startsIn are a shard's options with its start already given on
	// stdin, delay from now: it warms up until then.
	startsIn := func(t *testing.T, delay time.Duration) Options {
		opts, _ := testOptions(t)
		opts.Stdin = strings.NewReader(rundoc.ShardStartLine(time.Now().Add(delay)))
		return opts
	}
	shard := func(t *testing.T, workload rundoc.Workload, topic string, owned []int, args ...string) *rundoc.Result {
		t.Helper()
		s := shardSpec(t, b.Addr(), workload, topic, owned, append([]string{"--threads", "2"}, args...)...)
		res, err := Run(context.Background(), s, startsIn(t, 300*time.Millisecond))
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
				// In small batches: unkeyed records move to the next
				// partition as a batch fills (the sticky partitioner), so
				// every owned partition gets some. Throttled: unthrottled
				// under the race detector, the queue the second's sends
				// left took seconds to drain.
				args := []string{"--mode", mode, "--throughput", "5000", "--producer-props", "batch.size=1024"}
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
		busy := shardSpec(t, b.Addr(), rundoc.Producer, topic, []int{0, 1}, "--throughput", "2000", "--duration", "3", "--threads", "2")
		opts := startsIn(t, 0)
		go func() {
			_, err := Run(context.Background(), busy, opts)
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
		if sent := int64(metric(t, res, "records-sent")) + res.Measurement.WarmupRecords; ends[2]+ends[3] != sent {
			t.Errorf("partitions 2 and 3 hold %d records, the e2e shard sent %d (its warm-up's included)", ends[2]+ends[3], sent)
		}
	})
}

// TestShardCommonStart: shards set up, say they are ready (an EventReady
// on their JSON progress) and wait on stdin; given one start, each warms
// up until it and opens its window at or after it, and says when. A
// shard whose stdin ends, or brings anything but a start, fails saying
// so.
func TestShardCommonStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs against a broker")
	}
	b := startBroker(t, embeddedbroker.Options{})
	spec := func(t *testing.T, workload rundoc.Workload, owned []int) rundoc.Spec {
		return shardSpec(t, b.Addr(), workload, "common-start", owned, "--throughput", "1000")
	}
	type shard struct {
		in    *io.PipeWriter
		out   *io.PipeReader
		ready chan struct{}
		res   chan *rundoc.Result
		err   chan error
	}
	start := func(t *testing.T, s rundoc.Spec) *shard {
		opts, _ := testOptions(t)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		opts.Stdin, opts.Stdout, opts.JSONProgress = inR, outW, true
		sh := &shard{in: inW, out: outR, ready: make(chan struct{}), res: make(chan *rundoc.Result, 1), err: make(chan error, 1)}
		go func() {
			res, err := Run(context.Background(), s, opts)
			outW.Close()
			sh.res <- res
			sh.err <- err
		}()
		go func() {
			sc := bufio.NewScanner(outR)
			measuring := false
			for sc.Scan() {
				var e rundoc.Event
				if json.Unmarshal(sc.Bytes(), &e) != nil {
					continue
				}
				if e.Type == rundoc.EventPhase && e.Phase == "measure" {
					measuring = true
				}
				if e.Type == rundoc.EventReady {
					if measuring {
						t.Error("ready after the window opened")
					}
					close(sh.ready)
				}
			}
		}()
		return sh
	}
	wait := func(t *testing.T, sh *shard) {
		t.Helper()
		select {
		case <-sh.ready:
		case err := <-sh.err:
			t.Fatalf("the shard ended before it was ready: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("no ready event in a minute")
		}
	}

	t.Run("one start for two shards", func(t *testing.T) {
		p := start(t, spec(t, rundoc.Producer, []int{0, 1}))
		e := start(t, spec(t, rundoc.E2E, []int{2, 3}))
		wait(t, p)
		wait(t, e)
		t0 := time.Now().Add(time.Second)
		for _, sh := range []*shard{p, e} {
			if _, err := io.WriteString(sh.in, rundoc.ShardStartLine(t0)); err != nil {
				t.Fatal(err)
			}
		}
		for i, sh := range []*shard{p, e} {
			res := <-sh.res
			if err := <-sh.err; err != nil {
				t.Fatalf("shard %d: %v", i, err)
			}
			st := res.Measurement.ShardStart
			if st == nil {
				t.Fatalf("shard %d: no shard_start in its result", i)
			}
			if !st.T0.Equal(t0) || st.Window.Before(t0) || st.LagMs < 0 {
				t.Errorf("shard %d: given %v, it says t0 %v and its window opened at %v (lag %v ms)", i, t0, st.T0, st.Window, st.LagMs)
			}
			if res.Measurement.WarmupRecords == 0 {
				t.Errorf("shard %d: no warm-up records in the second before the start", i)
			}
		}
	})
	t.Run("stdin ends", func(t *testing.T) {
		sh := start(t, spec(t, rundoc.Producer, []int{0, 1}))
		wait(t, sh)
		sh.in.Close()
		<-sh.res
		if err := <-sh.err; err == nil || !strings.Contains(err.Error(), "waiting for the fleet's start") {
			t.Errorf("got %v, want the wait for the start named", err)
		}
	})
	t.Run("not a start", func(t *testing.T) {
		sh := start(t, spec(t, rundoc.E2E, []int{2, 3}))
		wait(t, sh)
		io.WriteString(sh.in, "go now\n")
		<-sh.res
		if err := <-sh.err; err == nil || !strings.Contains(err.Error(), "shard start") {
			t.Errorf("got %v, want the bad start named", err)
		}
	})
}
