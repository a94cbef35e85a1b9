package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/silentbroker"

	"github.com/google/pprof/profile"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/kafkasec"
	"github.com/kbench/kbench/internal/testutil/kbenchbin"
)

// skipProcesses skips, under go test -short, a test that starts processes:
// the fast tier starts no kbench broker child, sink child, JVM or javac.
// Tests on an in-process broker (internal/embeddedbroker) that do not run
// a whole benchmark stay in it.
func skipProcesses(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts processes (a broker or sink child, a JVM) or runs a whole benchmark")
	}
}

// testOptions are the Options of a test's run, whose embedded broker child
// is the kbench binary (kbenchbin: built without the race detector, as
// users run it); such a test is not in -short.
func testOptions(t *testing.T) (Options, *bytes.Buffer) {
	t.Helper()
	skipProcesses(t)
	var out bytes.Buffer
	return Options{
		OutDir:        t.TempDir(),
		Stdout:        &out,
		Stderr:        testWriter{t},
		BrokerCommand: []string{kbenchbin.Path(t), "broker"},
	}, &out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// testBroker is a broker a test starts: a kbench broker process, or one
// in this process.
type testBroker interface {
	Addr() string
	Close()
}

// startBroker starts an embedded broker for tests that need one to
// outlive a single run (produce, then consume the same records): a
// `kbench broker` process built without the race detector
// (kbenchbin.StartBroker), so that under -race the broker's work costs
// what it costs in production. Under -short, where no process starts,
// and for options no flag of kbench broker gives (users, TLS, default
// partitions), the broker
// runs in this process.
func startBroker(t *testing.T, opts embeddedbroker.Options) testBroker {
	t.Helper()
	if !testing.Short() && len(opts.Users) == 0 && opts.TLS == nil && opts.Partitions == 0 {
		var args []string
		if opts.Brokers > 1 {
			args = append(args, "--brokers", fmt.Sprint(opts.Brokers))
		}
		if opts.ProduceRate > 0 {
			args = append(args, "--produce-rate", fmt.Sprint(opts.ProduceRate))
		}
		return kbenchbin.StartBroker(t, args...)
	}
	b, err := embeddedbroker.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// mustParse parses a spec as `kbench run` does: the contract's checks
// and the runner's (Validate).
func mustParse(t *testing.T, workload rundoc.Workload, args ...string) rundoc.Spec {
	t.Helper()
	s, err := rundoc.ParseArgs(workload, args, Validate)
	if err != nil {
		t.Fatalf("ParseArgs(%s, %q): %v", workload, args, err)
	}
	return s
}

func metric(t *testing.T, r *rundoc.Result, name string) float64 {
	t.Helper()
	m, ok := r.Metric(name)
	if !ok {
		t.Fatalf("result has no metric %q; has %v", name, metricNames(r))
	}
	return m.Value
}

func metricNames(r *rundoc.Result) []string {
	var names []string
	for _, m := range r.Metrics {
		names = append(names, m.Name)
	}
	return names
}

var (
	producerSummaryRe  = regexp.MustCompile(`(?m)^\d+ records sent, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{2} ms avg latency, \d+\.\d{2} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$`)
	producerIntervalRe = regexp.MustCompile(`(?m)^\d+ records sent, \d+\.\d records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d ms avg latency, \d+\.\d ms max latency\.$`)
	consumerRowRe      = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d+\.\d{4}, \d+\.\d{4}, (\d+), \d+\.\d{4}, \d+, \d+, \d+\.\d{4}, \d+\.\d{4}$`)
)

// TestProduceThenConsume sends records with the producer workload and reads
// exactly those back with both consumer modes, over TCP to a real broker.
func TestProduceThenConsume(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	const n, size = 20000, 300
	opts, out := testOptions(t)
	spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "roundtrip", "--partitions", "3",
		"--num-records", fmt.Sprint(n), "--record-size", fmt.Sprint(size), "--throughput", "-1",
		"--reporting-interval", "200", "--profile", "none", "--print-metrics")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	if !res.Complete {
		t.Fatalf("producer result not complete: %s", res.Error)
	}
	if got := metric(t, res, "records-sent"); got != n {
		t.Errorf("records-sent = %v, want %d", got, n)
	}
	if got := res.Measurement.LatencySamples; got != n {
		t.Errorf("latency samples = %d, want every record (%d)", got, n)
	}
	if !producerSummaryRe.MatchString(out.String()) {
		t.Errorf("producer output has no Kafka summary line:\n%s", out.String())
	}
	if !strings.HasPrefix(out.String(), fmt.Sprintf("%d records sent", n)) && !producerIntervalRe.MatchString(out.String()) {
		t.Errorf("producer output starts with neither an interval line nor the summary:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "producer-metrics:record-send-rate:{client-id=producer-1}") {
		t.Errorf("--print-metrics block missing:\n%s", out.String())
	}
	onDisk, err := rundoc.ReadResult(opts.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.Output != out.String() {
		t.Errorf("result.json output differs from stdout")
	}

	for _, mode := range []string{rundoc.ModeGroup, rundoc.ModeAssign} {
		t.Run(mode, func(t *testing.T) {
			opts, out := testOptions(t)
			spec := mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "roundtrip",
				"--messages", fmt.Sprint(n), "--mode", mode, "--timeout", "20000", "--profile", "none")
			res, err := Run(context.Background(), spec, opts)
			if err != nil {
				t.Fatalf("consumer: %v", err)
			}
			if res.Measurement.PrefillRecords != 0 {
				t.Errorf("prefilled %d records, want 0: the producer left %d", res.Measurement.PrefillRecords, n)
			}
			if got := metric(t, res, "records-consumed-total"); got != n {
				t.Errorf("records consumed = %v, want %d", got, n)
			}
			if got := metric(t, res, "bytes-consumed-total"); got != n*size {
				t.Errorf("bytes consumed = %v, want %d", got, n*size)
			}
			m := consumerRowRe.FindStringSubmatch(out.String())
			if m == nil || m[1] != fmt.Sprint(n) {
				t.Errorf("consumer output has no Kafka summary row for %d records:\n%s", n, out.String())
			}
			if !strings.HasPrefix(out.String(), "start.time, end.time, data.consumed.in.MB") {
				t.Errorf("consumer output does not start with Kafka's header:\n%s", out.String())
			}
		})
	}
}

// TestEmbeddedBrokerProfiles runs against a broker child process, as a user
// without --bootstrap-server does, and checks every profile it writes.
func TestEmbeddedBrokerProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.Producer, "--num-records", "150000", "--record-size", "256",
		"--profile", "cpu,heap,allocs,mutex,block,goroutine", "--warmup-records", "1000")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.HasPrefix(res.Environment.Broker, "embedded") {
		t.Errorf("broker = %q, want the embedded one", res.Environment.Broker)
	}
	if got := res.Measurement.MeasuredRecords; got != 149000 {
		t.Errorf("measured records = %d, want 149000 (warm-up excluded)", got)
	}
	want := map[string]bool{"client/cpu": true, "client/heap": true, "client/allocs": true, "client/mutex": true,
		"client/block": true, "client/goroutine": true, "broker/cpu": true}
	for _, pf := range res.Profiles {
		key := string(pf.Role) + "/" + string(pf.Kind)
		if !want[key] {
			t.Errorf("unexpected profile %s", key)
			continue
		}
		delete(want, key)
		f, err := os.Open(filepath.Join(opts.OutDir, pf.File))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: not a pprof profile: %v", pf.File, err)
			continue
		}
		if key == "client/cpu" {
			if !hasFrame(p, "github.com/segmentio/kafka-go.") {
				t.Errorf("client CPU profile (%d samples) holds no kafka-go frame", len(p.Sample))
			}
			if hasFrame(p, "kfake") {
				t.Errorf("client CPU profile holds broker (kfake) frames: the broker must run in its own process")
			}
		}
		// The broker stores 38 MB in the window: its profile has samples
		// (42 to 53 here), and they are kfake's.
		if key == "broker/cpu" && !hasFrame(p, "kfake") {
			t.Errorf("broker CPU profile (%d samples) holds no kfake frame", len(p.Sample))
		}
	}
	for k := range want {
		t.Errorf("profile %s missing", k)
	}
	for _, name := range []string{"process-cpu-avg", "gc-count", "gc-pause-total", "heap-peak", "syscw", "bytes-per-write-syscall"} {
		metric(t, res, name)
	}
	// p99 and max exist exactly when the window held a CPU sample.
	_, hasP99 := res.Metric("process-cpu-p99")
	if hasP99 != (res.Measurement.CPUSamples > 0) {
		t.Errorf("process-cpu-p99 present = %v with %d CPU samples", hasP99, res.Measurement.CPUSamples)
	}
}

func hasFrame(p *profile.Profile, substr string) bool {
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function != nil && strings.Contains(l.Function.Name, substr) {
					return true
				}
			}
		}
	}
	return false
}

// TestConsumerPrefillsEmbeddedBroker: a fresh embedded broker holds nothing,
// so the consumer first produces what it will read, outside the window.
func TestConsumerPrefillsEmbeddedBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	opts, out := testOptions(t)
	spec := mustParse(t, rundoc.Consumer, "--messages", "5000", "--mode", "assign", "--profile", "none",
		"--show-detailed-stats", "--reporting-interval", "100", "--partitions", "2")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Measurement.PrefillRecords != 5000 {
		t.Errorf("prefill = %d, want 5000", res.Measurement.PrefillRecords)
	}
	if got := metric(t, res, "bytes-consumed-total"); got != 5000*512 {
		t.Errorf("bytes = %v, want 5000 × the default 512 B", got)
	}
	if !strings.HasPrefix(out.String(), "time, threadId, data.consumed.in.MB") {
		t.Errorf("detailed output does not start with Kafka's detailed header:\n%s", out.String())
	}
}

func TestUnreachableBroker(t *testing.T) {
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.Producer, "--bootstrap-server", "127.0.0.1:1", "--num-records", "10", "--profile", "none")
	start := time.Now()
	res, err := Run(context.Background(), spec, opts)
	if err == nil {
		t.Fatal("run against a closed port succeeded")
	}
	if !strings.Contains(err.Error(), "cannot reach broker 127.0.0.1:1") {
		t.Errorf("error = %q, want it to say the broker cannot be reached", err)
	}
	if time.Since(start) > 40*time.Second {
		t.Errorf("failing took %v: an unreachable broker must fail within the client's timeouts", time.Since(start))
	}
	onDisk, rerr := rundoc.ReadResult(opts.OutDir)
	if rerr != nil {
		t.Fatalf("no result.json after a failed run: %v", rerr)
	}
	if onDisk.Complete || onDisk.Error == "" || res.Complete {
		t.Errorf("result complete=%v error=%q, want incomplete with the error", onDisk.Complete, onDisk.Error)
	}
}

// TestBrokerLostMidRun: the broker dies while a throttled producer runs,
// in every producer mode. The run fails with an error and still writes
// what it measured.
func TestBrokerLostMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a paced run waits for the broker loss")
	}
	for _, mode := range []string{rundoc.ModeWriter, rundoc.ModeClient, rundoc.ModeRaw} {
		t.Run(mode, func(t *testing.T) {
			b, err := embeddedbroker.Start(embeddedbroker.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opts, _ := testOptions(t)
			spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--num-records", "100000", "--throughput", "2000", "--mode", mode,
				"--profile", "none", "--producer-props", "retries=1", "retry.backoff.ms=50", "request.timeout.ms=2000")
			time.AfterFunc(1500*time.Millisecond, b.Close)
			start := time.Now()
			res, err := Run(context.Background(), spec, opts)
			if err == nil {
				t.Fatal("run succeeded although its broker died")
			}
			if time.Since(start) > 45*time.Second {
				t.Errorf("failing took %v: a lost broker must end the run within the client's timeouts", time.Since(start))
			}
			onDisk, rerr := rundoc.ReadResult(opts.OutDir)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if onDisk.Complete {
				t.Error("result says complete")
			}
			if sent := metric(t, res, "records-sent"); sent <= 0 || sent >= 100000 {
				t.Errorf("records-sent = %v, want the partial count acknowledged before the broker died", sent)
			}
		})
	}
}

// TestCancelWritesPartialResult is what SIGINT does, in every producer
// mode: the context ends, the run stops, requests cut short count as
// neither acknowledged nor failed, and what was measured is written with
// complete=false.
func TestCancelWritesPartialResult(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: paced runs, canceled midway")
	}
	b := startBroker(t, embeddedbroker.Options{})
	for _, mode := range []string{rundoc.ModeRaw, rundoc.ModeWriter, rundoc.ModeClient} {
		t.Run(mode, func(t *testing.T) {
			opts, _ := testOptions(t)
			spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "cancel-"+mode, "--mode", mode,
				"--num-records", "1000000", "--throughput", "5000", "--profile", "cpu")
			res := runCanceled(t, spec, opts, 1200*time.Millisecond)
			if sent := metric(t, res, "records-sent"); sent <= 0 {
				t.Errorf("records-sent = %v, want what was acknowledged before the cancel", sent)
			}
			if failed := metric(t, res, "record-error-total"); failed != 0 {
				t.Errorf("record-error-total = %v: records cut short by the cancel are not failures", failed)
			}
			if _, err := os.Stat(filepath.Join(opts.OutDir, "client-cpu.pb.gz")); err != nil {
				t.Errorf("CPU profile of the partial window missing: %v", err)
			}
		})
	}
}

// runCanceled runs spec until its context ends after d and checks that the
// run says so: the context's error, and a result that is not complete.
func runCanceled(t *testing.T, spec rundoc.Spec, opts Options, d time.Duration) *rundoc.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := Run(ctx, spec, opts)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	if res.Complete {
		t.Error("canceled run says complete")
	}
	return res
}

func TestSASL(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{Users: []embeddedbroker.User{
		{Mechanism: "PLAIN", Name: "alice", Password: "alice-secret"},
		{Mechanism: "SCRAM-SHA-512", Name: "bob", Password: "bob-secret"},
	}})
	tests := []struct {
		name    string
		props   []string
		wantErr string
	}{
		{"plain", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN",
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`}, ""},
		{"scram", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512", "sasl.username=bob", "sasl.password=bob-secret"}, ""},
		{"wrong password", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN", "sasl.username=alice", "sasl.password=nope-nope"}, "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, _ := testOptions(t)
			args := append([]string{"--bootstrap-server", b.Addr(), "--num-records", "500", "--profile", "none", "--producer-props"}, tt.props...)
			spec := mustParse(t, rundoc.Producer, args...)
			_, err := Run(context.Background(), spec, opts)
			data, _ := os.ReadFile(filepath.Join(opts.OutDir, "result.json"))
			for _, secret := range []string{"alice-secret", "bob-secret", "nope-nope"} {
				if bytes.Contains(data, []byte(secret)) {
					t.Errorf("result.json contains the password %q", secret)
				}
				if err != nil && strings.Contains(err.Error(), secret) {
					t.Errorf("error contains the password: %v", err)
				}
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authentication") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want a clear authentication error naming %s", err, tt.wantErr)
			}
		})
	}
}

// TestProducerBatchingModes: kbench's own batching with kafka-go's record
// encoder (client) and with its own record encoder (raw)
// delivers exactly the records asked for, unthrottled, throttled and
// compressed, and a consumer reads them back.
func TestProducerBatchingModes(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	tests := []struct {
		name string
		mode string
		args []string
		n    int64
	}{
		{"client-unthrottled", rundoc.ModeClient, []string{"--producer-props", "max.in.flight.requests.per.connection=3", "batch.size=65536"}, 30000},
		{"client-throttled", rundoc.ModeClient, []string{"--throughput", "5000", "--producer-props", "linger.ms=2"}, 3000},
		{"raw-unthrottled", rundoc.ModeRaw, []string{"--producer-props", "max.in.flight.requests.per.connection=3", "batch.size=65536"}, 30000},
		{"raw-throttled", rundoc.ModeRaw, []string{"--throughput", "5000", "--producer-props", "linger.ms=2"}, 3000},
		{"raw-gzip", rundoc.ModeRaw, []string{"--producer-props", "compression.type=gzip", "batch.size=32768"}, 10000},
		{"raw-zstd-acks1", rundoc.ModeRaw, []string{"--producer-props", "compression.type=zstd", "acks=1"}, 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, out := testOptions(t)
			topic := "batching-" + tt.name
			args := append([]string{"--bootstrap-server", b.Addr(), "--topic", topic, "--partitions", "2", "--mode", tt.mode,
				"--num-records", fmt.Sprint(tt.n), "--record-size", "200", "--profile", "none"}, tt.args...)
			res, err := Run(context.Background(), mustParse(t, rundoc.Producer, args...), opts)
			if err != nil {
				t.Fatalf("producer: %v", err)
			}
			if got := metric(t, res, "records-sent"); got != float64(tt.n) {
				t.Errorf("records-sent = %v, want %d", got, tt.n)
			}
			if got := res.Measurement.LatencySamples; got != tt.n {
				t.Errorf("latency samples = %d, want %d", got, tt.n)
			}
			if metric(t, res, "request-rate") <= 0 || metric(t, res, "records-per-request-avg") < 1 {
				t.Errorf("request figures missing")
			}
			if tt.mode == rundoc.ModeRaw {
				// Exact sizes: 61 header bytes plus, per 200 B record,
				// 200 value bytes and 8 to 10 bytes of record framing.
				perRecord := (metric(t, res, "batch-size-avg") - 61) / metric(t, res, "records-per-request-avg")
				if perRecord < 208 || perRecord > 210 {
					t.Errorf("raw batch bytes per record = %.2f, want 208 to 210", perRecord)
				}
			}
			if !producerSummaryRe.MatchString(out.String()) {
				t.Errorf("no Kafka summary line:\n%s", out.String())
			}
			if !strings.Contains(strings.Join(res.Measurement.Notes, "\n"), "mode "+tt.mode+":") {
				t.Errorf("notes do not say how mode %s sent: %q", tt.mode, res.Measurement.Notes)
			}
			copts, _ := testOptions(t)
			cres, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", topic,
				"--messages", fmt.Sprint(tt.n), "--mode", "assign", "--profile", "none", "--timeout", "20000"), copts)
			if err != nil {
				t.Fatalf("consumer: %v", err)
			}
			if cres.Measurement.PrefillRecords != 0 || metric(t, cres, "bytes-consumed-total") != float64(tt.n*200) {
				t.Errorf("read back: prefill %d, bytes %v; want 0 and %d", cres.Measurement.PrefillRecords, metric(t, cres, "bytes-consumed-total"), tt.n*200)
			}
		})
	}
	if _, err := rundoc.ParseArgs(rundoc.Producer, []string{"--mode", "assign"}); err == nil {
		t.Error("a consumer mode was accepted for the producer")
	}
}

// TestProducerRetries: a broker that answers the first produce requests
// with NOT_LEADER_OR_FOLLOWER (retriable) costs retries, not records, in
// every producer mode; with retries=0 the same answer fails the run.
func TestProducerRetries(t *testing.T) {
	for _, mode := range []string{rundoc.ModeWriter, rundoc.ModeClient, rundoc.ModeRaw} {
		for _, retries := range []int{5, 0} {
			t.Run(fmt.Sprintf("%s-retries-%d", mode, retries), func(t *testing.T) {
				c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "retried"))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				for range 2 {
					c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
						req := kr.(*kmsg.ProduceRequest)
						resp := req.ResponseKind().(*kmsg.ProduceResponse)
						for _, rt := range req.Topics {
							st := kmsg.NewProduceResponseTopic()
							st.Topic = rt.Topic
							for _, rp := range rt.Partitions {
								sp := kmsg.NewProduceResponseTopicPartition()
								sp.Partition = rp.Partition
								sp.ErrorCode = kerr.NotLeaderForPartition.Code
								st.Partitions = append(st.Partitions, sp)
							}
							resp.Topics = append(resp.Topics, st)
						}
						return resp, nil, true
					})
				}
				opts, _ := testOptions(t)
				res, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", c.ListenAddrs()[0], "--topic", "retried",
					"--mode", mode, "--num-records", "2000", "--profile", "none", "--producer-props",
					fmt.Sprintf("retries=%d", retries), "retry.backoff.ms=10", "linger.ms=1"), opts)
				if retries == 0 {
					if err == nil || !strings.Contains(err.Error(), "Not Leader For Partition") {
						t.Fatalf("err = %v, want the broker's error", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := metric(t, res, "records-sent"); got != 2000 {
					t.Errorf("records-sent = %v, want 2000", got)
				}
				if got := metric(t, res, "record-retry-total"); got < 1 {
					t.Errorf("record-retry-total = %v, want the refused requests retried", got)
				}
			})
		}
	}
}

// TestJSONProgress runs with --progress json, as the server's children do:
// stdout is one event per line, progress ends at the phase's total, and the
// Kafka text travels in output events.
func TestJSONProgress(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	opts, out := testOptions(t)
	opts.JSONProgress = true
	spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--num-records", "20000", "--profile", "none", "--reporting-interval", "100")
	if _, err := Run(context.Background(), spec, opts); err != nil {
		t.Fatal(err)
	}
	var lastProgress, sawOutput, done bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e rundoc.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line is not an event: %q", line)
		}
		if e.V != rundoc.EventVersion {
			t.Errorf("event %q carries version %d, want rundoc.EventVersion (%d)", line, e.V, rundoc.EventVersion)
		}
		switch e.Type {
		case "progress":
			lastProgress = e.Phase == "measure" && e.Done == e.Total || lastProgress
		case "output":
			sawOutput = sawOutput || strings.Contains(e.Text, "20000 records sent")
		case "done":
			done = e.Complete
		}
	}
	if !lastProgress || !sawOutput || !done {
		t.Errorf("progress reached the total: %v, summary in output events: %v, done and complete: %v", lastProgress, sawOutput, done)
	}
}

// TestSilentBroker: a bootstrap server that accepts the connection and
// never answers fails the producer and the consumer (the write path shares
// their preflight but takes no properties) with "no answer from ADDR within N
// s", N being socket.connection.setup.timeout.ms, rather than kafka-go's
// "Broker Not Available".
func TestSilentBroker(t *testing.T) {
	addr := silentbroker.Listen(t).Addr()
	for _, tc := range []struct {
		workload rundoc.Workload
		args     []string
	}{
		{rundoc.Producer, []string{"--num-records", "10", "--producer-props", "socket.connection.setup.timeout.ms=500"}},
		{rundoc.Consumer, []string{"--messages", "10", "--consumer-props", "socket.connection.setup.timeout.ms=500"}},
		// kafka-go's Dialer leaves the SASL handshake without a deadline:
		// this waited forever.
		{rundoc.Producer, []string{"--num-records", "10", "--producer-props", "socket.connection.setup.timeout.ms=500",
			"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN", "sasl.username=u", "sasl.password=secret"}},
	} {
		t.Run(string(tc.workload)+"-"+tc.args[len(tc.args)-1], func(t *testing.T) {
			opts, _ := testOptions(t)
			args := append([]string{"--bootstrap-server", addr, "--profile", "none"}, tc.args...)
			spec := mustParse(t, tc.workload, args...)
			res, err := Run(context.Background(), spec, opts)
			if err == nil {
				t.Fatal("a run against a broker that never answers succeeded")
			}
			want := "no answer from " + addr + " within 0.5 s"
			if !strings.Contains(err.Error(), want) || !strings.Contains(res.Error, want) {
				t.Errorf("error %q, want it to say %q", err, want)
			}
			if !errors.Is(err, kafkasec.ErrNoAnswer) {
				t.Errorf("error %v does not match kafkasec.ErrNoAnswer", err)
			}
		})
	}
}

// TestSilentAdvertisedBroker: the bootstrap server answers, but the broker
// its metadata names (the controller, which creates the topic) accepts
// connections and never answers. Topic creation fails saying so, within
// socket.connection.setup.timeout.ms.
func TestSilentAdvertisedBroker(t *testing.T) {
	silent := silentbroker.Listen(t).Addr()
	host, portText, _ := net.SplitHostPort(silent)
	port, _ := strconv.Atoi(portText)
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ControlKey(int16(kmsg.Metadata), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kr.(*kmsg.MetadataRequest).ResponseKind().(*kmsg.MetadataResponse)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 0, host, int32(port)
		resp.Brokers = append(resp.Brokers, b)
		resp.ControllerID = 0
		return resp, nil, true
	})
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.Producer, "--bootstrap-server", c.ListenAddrs()[0], "--num-records", "10", "--profile", "none",
		"--producer-props", "socket.connection.setup.timeout.ms=500")
	_, err = Run(context.Background(), spec, opts)
	want := "no answer from " + silent + " within 0.5 s"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "create topic") {
		t.Errorf("error %v, want topic creation to fail with %q", err, want)
	}
}
