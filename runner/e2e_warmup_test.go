package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestE2EWarmupProducersBacklog: rate mode with --warmup, two producers
// per topic (--threads, OMB's producersPerTopic) and a backlog built
// after the warm-up, as OMB builds it: the consumers read the warm-up's
// records, which no figure counts, then are held until the backlog is
// built and let go. The broker holds the warm-up's and the measured
// records; the run counts the measured ones only, each received once
// per subscription. Once with partition readers, once with a
// subscription's group.
func TestE2EWarmupProducersBacklog(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: two paced runs of about 2 s")
	}
	b := startBroker(t, embeddedbroker.Options{})
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"partitions", nil},
		{"group", []string{"--subscriptions", "1", "--consumers-per-subscription", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := testOptions(t)
			opts.keepTopics = true
			topic := "warm-" + tc.name
			args := append([]string{"--bootstrap-server", b.Addr(), "--topic", topic, "--topics", "2", "--partitions", "2", "--threads", "2",
				"--throughput", "10000", "--warmup", "0.5", "--num-records", "12000", "--record-size", "512",
				"--backlog-bytes", fmt.Sprint(2 << 20), "--profile", "none"}, tc.extra...)
			res, err := Run(context.Background(), mustParse(t, rundoc.E2E, args...), opts)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			warm := res.Measurement.WarmupRecords
			if warm <= 0 {
				t.Fatalf("warm-up records %d, want some", warm)
			}
			held := highWatermarks(t, b.Addr(), topic+"-0000") + highWatermarks(t, b.Addr(), topic+"-0001")
			if held != 12000+warm {
				t.Errorf("the topics hold %d records, want the 12000 measured and the %d of the warm-up", held, warm)
			}
			for name, want := range map[string]float64{"records-sent": 12000, "records-received": 12000, "records-lost": 0, "records-duplicated": 0} {
				if got := metric(t, res, name); got != want {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			if got := metric(t, res, "backlog-records"); got < 4096 {
				t.Errorf("backlog of %v records, want at least 4096 (2 MiB of 512 B)", got)
			}
			for _, h := range res.Histograms {
				if h.Kind == rundoc.HistE2ELatency && h.Count != 12000 {
					t.Errorf("e2e-latency holds %d values, want the 12000 measured", h.Count)
				}
			}
			notes := strings.Join(res.Measurement.Notes, "\n")
			for _, want := range []string{"warm-up: 0.5 s", "2 producer(s) each", "over the 4 producers"} {
				if !strings.Contains(notes, want) {
					t.Errorf("notes lack %q:\n%s", want, notes)
				}
			}
			if got, _ := res.Environment.Config.Get("threads"); got != "2" {
				t.Errorf("config threads = %q, want 2", got)
			}
		})
	}
}

// TestE2EGroupsPerTopicDurationAfterDrain: with --groups-per-topic each
// subscription is a group per topic (two Readers a group here: four in
// all over two topics), every record still received once; with
// --duration-after-drain the producer goes on for --duration after the
// backlog drained, so the window holds the build, the drain and the
// duration after it; and --notes reach the result first.
func TestE2EGroupsPerTopicDurationAfterDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: consumer groups join, then a paced run of about 1 s")
	}
	b := startBroker(t, embeddedbroker.Options{})
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "pertopic", "--topics", "2", "--partitions", "2",
		"--subscriptions", "1", "--consumers-per-subscription", "2", "--groups-per-topic",
		"--throughput", "8000", "--duration", "0.3", "--record-size", "256", "--backlog-bytes", fmt.Sprint(1<<20), "--duration-after-drain",
		"--notes", "first note", "--notes", "second, with a comma", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if sent, got, lost := metric(t, res, "records-sent"), metric(t, res, "records-received"), metric(t, res, "records-lost"); sent != got || lost != 0 || sent == 0 {
		t.Errorf("sent %v, received %v, lost %v: want every record received once", sent, got, lost)
	}
	build, drain := metric(t, res, "backlog-build-time"), metric(t, res, "backlog-drain-time")
	if w := res.Measurement.WindowSeconds; w < build+drain+0.3-0.01 {
		t.Errorf("window of %v s, want the build (%v s), the drain (%v s) and 0.3 s after it", w, build, drain)
	}
	notes := res.Measurement.Notes
	if len(notes) < 2 || notes[0] != "first note" || notes[1] != "second, with a comma" {
		t.Errorf("the spec's notes are not the result's first: %q", notes)
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"a consumer group per topic (--groups-per-topic, as OMB's subscriptions are), 2 groups of 2 kafka-go Reader(s)", "4 Readers in all", "--duration-after-drain"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
}
