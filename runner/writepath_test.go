package runner

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/google/pprof/profile"
	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/testutil/kbenchbin"
	"github.com/kbench/kbench/runner/writepath"
)

// sinkOptions are testOptions whose sink child is `kbench broker --sink`
// (kbenchbin's binary, as a run of kbench starts it).
func sinkOptions(t *testing.T) (Options, *bytes.Buffer) {
	t.Helper()
	opts, out := testOptions(t)
	opts.SinkCommand = []string{kbenchbin.Path(t), "broker", "--sink"}
	return opts, out
}

var writepathSummaryRe = regexp.MustCompile(`(?m)^(\d+) requests sent, \d+\.\d{6} requests/sec, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{3} ms avg latency, \d+\.\d{3} ms max latency, \d+\.\d{3} ms 50th, \d+\.\d{3} ms 95th, \d+\.\d{3} ms 99th, \d+\.\d{3} ms 99\.9th(, (\d+\.\d{2}) write syscalls/request, \d+\.\d bytes/write syscall)? \(([a-z-]+), (\d+) (buffers|records)/request\)\.$`)

// writepathMetrics are the metrics every write-path result has.
var writepathMetrics = []string{"requests-sent", "requests-per-sec", "records-per-sec", "mb-per-sec",
	"request-latency-avg", "request-latency-p50", "request-latency-p95", "request-latency-p99", "request-latency-p999", "request-latency-max",
	"cpu-seconds-per-mb", "process-cpu-avg", "gc-count"}

// TestWritepathRunAgainstSink runs each strategy against the sink child
// process, as `kbench run writepath --sink` does, and reads result.json.
func TestWritepathRunAgainstSink(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	for _, strategy := range rundoc.GoWritepathStrategies() {
		t.Run(strategy, func(t *testing.T) {
			opts, out := sinkOptions(t)
			const requests = 1500
			spec := mustParse(t, rundoc.Writepath, "--sink", "--strategy", strategy, "--requests", fmt.Sprint(requests),
				"--warmup-requests", "100", "--in-flight", "2", "--profile", "cpu", "--reporting-interval", "100")
			res, err := Run(context.Background(), spec, opts)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			onDisk, err := rundoc.ReadResult(opts.OutDir)
			if err != nil {
				t.Fatal(err)
			}
			if !onDisk.Complete || onDisk.Workload != rundoc.Writepath || !strings.Contains(onDisk.Environment.Broker, "sink") {
				t.Fatalf("result: complete %v, workload %q, broker %q", onDisk.Complete, onDisk.Workload, onDisk.Environment.Broker)
			}
			for _, name := range writepathMetrics {
				metric(t, onDisk, name)
			}
			if got := metric(t, onDisk, "requests-sent"); got != requests {
				t.Errorf("requests-sent = %v, want %d", got, requests)
			}
			// result.json carries the requests' whole histogram.
			checkHistograms(t, onDisk, requests, rundoc.HistRequestLatency)
			if got := onDisk.Measurement.MeasuredRecords; got != requests*16 {
				t.Errorf("measured records = %d, want %d", got, requests*16)
			}
			if got := onDisk.Measurement.WarmupRecords; got != 100*16 {
				t.Errorf("warm-up records = %d, want %d", got, 100*16)
			}
			if !strings.Contains(strings.Join(onDisk.Measurement.Notes, "\n"), "strategy "+strategy+":") {
				t.Errorf("notes do not name the strategy: %q", onDisk.Measurement.Notes)
			}
			m := writepathSummaryRe.FindStringSubmatch(out.String())
			if m == nil || m[1] != fmt.Sprint(requests) || m[4] != strategy {
				t.Errorf("no summary line for %d requests of %s:\n%s", requests, strategy, out.String())
			}
			raw := strategy == rundoc.StrategyGather || strategy == rundoc.StrategyPerBuffer || strategy == rundoc.StrategyCopy
			if raw {
				if got := metric(t, onDisk, "buffers-per-request"); got != 18 {
					t.Errorf("buffers-per-request = %v, want 18", got)
				}
				if !strings.Contains(strings.Join(onDisk.Measurement.Notes, "\n"), "18 buffers per request") {
					t.Errorf("notes do not give the buffer count: %q", onDisk.Measurement.Notes)
				}
			}
			if runtime.GOOS == "linux" {
				// The syscall counts of a whole run: like the quiet-connection
				// test, plus the run's own few writes and the Go runtime's
				// 8-byte wake-up writes, which a run that parks and wakes its
				// writer and reader for every response makes often (observed:
				// 0.04 per request at 5 in flight, 0.19 at 1). Up to 0.5 extra
				// per request is allowed: 1 and 18 stay far apart, and the
				// exact counts are TestWritepathWriteSyscalls' job.
				got := metric(t, onDisk, "write-syscalls-per-request")
				metric(t, onDisk, "bytes-per-write-syscall")
				want := map[string]float64{rundoc.StrategyGather: 1, rundoc.StrategyCopy: 1, rundoc.StrategyPerBuffer: 18}[strategy]
				if want > 0 && (got < want || got > want+0.5) {
					t.Errorf("write-syscalls-per-request = %v, want %v", got, want)
				}
			}
			profiles := map[string]bool{}
			for _, p := range res.Profiles {
				profiles[string(p.Role)+"/"+string(p.Kind)] = true
			}
			if !profiles["client/cpu"] || !profiles["broker/cpu"] {
				t.Errorf("profiles %v, want the client's and the sink's CPU", res.Profiles)
			}
		})
	}
}

// TestWritepathCPUProfileShowsWritePath: the client profile of a gather run
// holds writev frames and no sink frames; a per-buffer run holds write.
//
// Which stacks a 100 Hz CPU profile holds is chance, and one short run on a
// fast machine gives only a few samples (13 in a 20000-request gather run
// here). So the runs are repeated and their profiles merged until they hold
// writepathMinSamples samples. The write call is in about half of the
// client's samples (measured here: 58 of 115 for gather, 121 of 133 for
// per-buffer), so the chance that it is in none of 100 is below 1e-20.
// A profile that stays short of that across every attempt is a failure:
// the profiler is not recording the client.
func TestWritepathCPUProfileShowsWritePath(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	const (
		writepathMinSamples = 100
		attempts            = 20
	)
	for strategy, frame := range map[string]string{rundoc.StrategyGather: "internal/poll.(*FD).Writev", rundoc.StrategyPerBuffer: "internal/poll.(*FD).Write"} {
		var profiles []*profile.Profile
		samples := int64(0)
		for i := 0; i < attempts && samples < writepathMinSamples; i++ {
			opts, _ := sinkOptions(t)
			spec := mustParse(t, rundoc.Writepath, "--sink", "--strategy", strategy, "--duration", "1", "--profile", "cpu")
			if _, err := Run(context.Background(), spec, opts); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(opts.OutDir, "client-cpu.pb.gz"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.Parse(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			profiles = append(profiles, p)
			samples += sampleCount(p)
		}
		if samples < writepathMinSamples {
			t.Fatalf("%s: %d runs of 1 s gave %d CPU samples in all, want at least %d", strategy, len(profiles), samples, writepathMinSamples)
		}
		p, err := profile.Merge(profiles)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d samples from %d runs", strategy, samples, len(profiles))
		if !hasExactFrame(p, frame) {
			t.Errorf("%s: client CPU profiles (%d samples, %d runs) have no %s frame", strategy, samples, len(profiles), frame)
		}
		if hasFrame(p, "writepath.(*Sink)") {
			t.Errorf("%s: client CPU profile holds sink frames: the sink must run in its own process", strategy)
		}
	}
}

// sampleCount is how many times the profiler sampled: the first value of
// every sample (one stack may hold many).
func sampleCount(p *profile.Profile) int64 {
	n := int64(0)
	for _, s := range p.Sample {
		if len(s.Value) > 0 {
			n += s.Value[0]
		}
	}
	return n
}

func hasExactFrame(p *profile.Profile, name string) bool {
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function != nil && l.Function.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// TestWritepathBrokerReadsBack: every strategy's requests are accepted by
// the embedded broker (kfake checks CRCs and batch fields), and a kafka-go
// consumer reads back exactly the records sent, warm-up included, with the
// run's payload.
func TestWritepathBrokerReadsBack(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	const requests, warmup, perRequest, size = 40, 5, 8, 100
	for _, strategy := range rundoc.GoWritepathStrategies() {
		t.Run(strategy, func(t *testing.T) {
			topic := "wp-" + strategy
			opts, out := testOptions(t)
			spec := mustParse(t, rundoc.Writepath, "--bootstrap-server", b.Addr(), "--topic", topic, "--strategy", strategy,
				"--requests", fmt.Sprint(requests), "--warmup-requests", fmt.Sprint(warmup), "--records-per-request", fmt.Sprint(perRequest),
				"--record-size", fmt.Sprint(size), "--in-flight", "3", "--acks", "1", "--profile", "none")
			res, err := Run(context.Background(), spec, opts)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if got := metric(t, res, "requests-sent"); got != requests {
				t.Errorf("requests-sent = %v, want %d", got, requests)
			}
			if !writepathSummaryRe.MatchString(out.String()) {
				t.Errorf("no summary line:\n%s", out.String())
			}
			payloads, err := (&run{spec: spec}).payloads()
			if err != nil {
				t.Fatal(err)
			}
			want := (requests + warmup) * perRequest
			got := readAll(t, b.Addr(), topic, want)
			if len(got) != want {
				t.Fatalf("read %d records back, want %d", len(got), want)
			}
			for i, v := range got {
				if !bytes.Equal(v, payloads[0]) {
					t.Fatalf("record %d = %q, want the run's %d B payload", i, v, size)
				}
			}
		})
	}
}

// readAll reads partition 0 of topic from the start until it has want
// records or nothing more comes.
func readAll(t *testing.T, addr, topic string, want int) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", addr, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var got [][]byte
	for len(got) < want {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Seek(int64(len(got)), kafka.SeekAbsolute); err != nil {
			t.Fatal(err)
		}
		batch := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 100 * time.Millisecond})
		n := len(got)
		for {
			m, err := batch.ReadMessage()
			if err != nil {
				break
			}
			got = append(got, m.Value)
		}
		batch.Close()
		if len(got) == n {
			break
		}
	}
	// Nothing beyond what was sent.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if last, err := conn.ReadLastOffset(); err != nil || last != int64(len(got)) {
		t.Errorf("partition ends at offset %d (%v), want %d", last, err, len(got))
	}
	return got
}

// TestWritepathEmbeddedBrokerChild runs without --bootstrap-server: the
// broker is the usual child process, and its profile comes back too.
func TestWritepathEmbeddedBrokerChild(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.Writepath, "--strategy", rundoc.StrategyPerBuffer, "--requests", "500", "--profile", "cpu")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Environment.Broker, "embedded") {
		t.Errorf("broker = %q", res.Environment.Broker)
	}
	if got := metric(t, res, "requests-sent"); got != 500 {
		t.Errorf("requests-sent = %v", got)
	}
	if len(res.Profiles) != 2 {
		t.Errorf("profiles = %v, want client and broker CPU", res.Profiles)
	}
}

func TestWritepathDuration(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	opts, _ := sinkOptions(t)
	spec := mustParse(t, rundoc.Writepath, "--sink", "--duration", "0.5", "--request-rate", "2000", "--profile", "none")
	start := time.Now()
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("a 0.5 s run took %v", el)
	}
	// 2000 requests/s for 0.5 s: about 1000, give or take start-up jitter.
	if got := metric(t, res, "requests-sent"); got < 700 || got > 1100 {
		t.Errorf("requests-sent = %v, want about 1000 (2000/s for 0.5 s)", got)
	}
	if rate := metric(t, res, "requests-per-sec"); rate > 2300 {
		t.Errorf("requests-per-sec = %v above the 2000/s throttle", rate)
	}
}

// TestWritepathUnansweredFails: a peer that reads and never answers makes
// the run fail once canceled, with what was measured written.
func TestWritepathCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := writepath.NewSink(ln, nil)
	go s.Serve()
	defer s.Close()
	opts, _ := testOptions(t)
	// --sink is not used: the in-process sink poses as a broker (metadata,
	// topic creation, Produce), throttled so the run is still going when
	// the context ends.
	spec := mustParse(t, rundoc.Writepath, "--bootstrap-server", s.Addr(), "--requests", "100000", "--request-rate", "1000", "--profile", "none")
	res := runCanceled(t, spec, opts, 700*time.Millisecond)
	if got := metric(t, res, "requests-sent"); got <= 0 || got >= 100000 {
		t.Errorf("requests-sent = %v, want the requests answered before the cancel", got)
	}
}

// TestWritepathFormats pins the text lines documented in README.md.
func TestWritepathFormats(t *testing.T) {
	got := writepathSummary(writepathTotals{Requests: 20000, RequestsPerSec: 110234.56789, RecordsPerS: 1763752.5, MBPerSec: 430.6, AvgMs: 0.0425,
		MaxMs: 1.2, P50: 0.035, P95: 0.08, P99: 0.12, P999: 0.9, SyscallsPerRequest: 1.0012, BytesPerSyscall: 4276.55, Strategy: "gather", Shape: "18 buffers/request"})
	want := "20000 requests sent, 110234.567890 requests/sec, 1763752.500000 records/sec (430.60 MB/sec), 0.043 ms avg latency, 1.200 ms max latency, " +
		"0.035 ms 50th, 0.080 ms 95th, 0.120 ms 99th, 0.900 ms 99.9th, 1.00 write syscalls/request, 4276.6 bytes/write syscall (gather, 18 buffers/request).\n"
	if got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
	if !writepathSummaryRe.MatchString(got) {
		t.Error("summary does not match the tests' pattern")
	}
	got = writepathInterval(5512, 11024, 176384, 43.06, 0.0456, 0.9, -1)
	want = "5512 requests sent, 11024.0 requests/sec, 176384.0 records/sec (43.06 MB/sec), 0.046 ms avg latency, 0.900 ms max latency.\n"
	if got != want {
		t.Errorf("interval\n got %q\nwant %q", got, want)
	}
}
