package runner

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/google/pprof/profile"
	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/sysstat"
	"github.com/kbench/kbench/runner/send"
	"github.com/kbench/kbench/runner/wire"
)

// sinkHelperEnv makes TestWritepathSinkProcess act as `kbench broker
// --sink` when a run starts it as its sink child.
const sinkHelperEnv = "KBENCH_RUNNER_TEST_SINK"

// TestWritepathSinkProcess is not a test: it is the sink child process of
// the tests that run with --sink (see sinkOptions).
func TestWritepathSinkProcess(t *testing.T) {
	if os.Getenv(sinkHelperEnv) != "1" {
		t.Skip("the sink child process of the --sink tests")
	}
	fs := flag.NewFlagSet("sink", flag.ExitOnError)
	var opts SinkOptions
	fs.StringVar(&opts.Listen, "listen", "127.0.0.1:0", "")
	fs.BoolVar(&opts.Control, "control", false, "")
	fs.Parse(flag.Args())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := ServeSink(ctx, opts, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// sinkOptions are testOptions whose sink child is this test binary.
func sinkOptions(t *testing.T) (Options, *bytes.Buffer) {
	t.Helper()
	t.Setenv(sinkHelperEnv, "1")
	opts, out := testOptions(t)
	opts.SinkCommand = []string{os.Args[0], "-test.run=^TestWritepathSinkProcess$", "--"}
	return opts, out
}

// recordingSink is an in-process sink that keeps every byte it reads.
type recordingSink struct {
	*sink
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recordingSink) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *recordingSink) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.buf.Bytes()...)
}

func startRecordingSink(t *testing.T) *recordingSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recordingSink{}
	r.sink = newSink(ln, r)
	go r.serve()
	t.Cleanup(r.close)
	return r
}

func testShape(records, size, inFlight int) *wpShape {
	return &wpShape{
		topic: "t", clientID: "kbench-test", acks: -1, records: records,
		payload: bytes.Repeat([]byte{'v'}, size), inFlight: inFlight,
		base: time.Now(), stats: &wpStats{hist: newLatencyHist()}, timestamp: 1700000000000,
	}
}

func encodeShape(t *testing.T, shape *wpShape) *wire.Request {
	t.Helper()
	req, err := wire.Encode(wire.Produce{ClientID: shape.clientID, Topic: shape.topic, Acks: shape.acks,
		TimeoutMs: 30000, Timestamp: shape.timestamp, Values: repeatPayload(shape.payload, shape.records)})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func dialTCP(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*net.TCPConn)
}

// TestWritepathStrategiesSendIdenticalBytes: gather, per-buffer and copy
// are three ways of writing the same bytes. A recording sink captures the
// stream of each, through the same client code the workload runs, and the
// streams must be identical, request for request, and equal to the
// encoded requests with correlation ids 0, 1, 2, …. The 1100-record case
// needs two writev calls per request (IOV_MAX is 1024).
func TestWritepathStrategiesSendIdenticalBytes(t *testing.T) {
	for _, tc := range []struct{ records, size, requests, inFlight int }{{16, 256, 60, 4}, {4, 16384, 20, 2}, {1100, 3, 5, 1}} {
		t.Run(fmt.Sprintf("%dx%d", tc.records, tc.size), func(t *testing.T) {
			shape := testShape(tc.records, tc.size, tc.inFlight)
			req := encodeShape(t, shape)
			var want []byte
			for i := 0; i < tc.requests; i++ {
				req.SetCorrelationID(int32(i))
				want = req.AppendTo(want)
			}
			streams := map[string][]byte{}
			for _, strategy := range []string{rundoc.StrategyGather, rundoc.StrategyPerBuffer, rundoc.StrategyCopy} {
				s := startRecordingSink(t)
				shape.stats = &wpStats{hist: newLatencyHist()}
				c := newRawClient(dialTCP(t, s.addr()), encodeShape(t, shape), strategy, shape)
				if err := c.Send(context.Background(), send.Phase{N: int64(tc.requests), Measured: true}); err != nil {
					t.Fatalf("%s: %v", strategy, err)
				}
				c.close()
				if got := shape.stats.measured; got != int64(tc.requests) {
					t.Errorf("%s: %d responses, want %d", strategy, got, tc.requests)
				}
				streams[strategy] = s.bytes()
			}
			for strategy, got := range streams {
				if !bytes.Equal(got, want) {
					t.Errorf("%s sent %d bytes that differ from the %d bytes of the encoded requests (first difference at %d)",
						strategy, len(got), len(want), firstDiff(got, want))
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestWritepathWriteSyscalls counts write-type syscalls per request from
// /proc/self/io around a fixed number of requests on a quiet connection: an
// in-process reader that drains the socket and answers nothing (answers
// would be writes of this process), one request at a time, so no write
// ever finds the socket buffer full and splits. Expected: 1 for gather and
// copy, the buffer count for per-buffer.
//
// Slack: the Go runtime itself writes 8 bytes to an eventfd when it wakes
// its network poller; such writes count in syscw too. Observed here: 0 to
// 8 per 500 requests. The test allows 2% + 4 extra syscalls and checks that
// the extras carry at most 8 bytes each, so they cannot be the client's.
func TestWritepathWriteSyscalls(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/io is Linux only")
	}
	if _, err := sysstat.ReadIO(); err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	read := make(chan int, 64)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1<<20)
		for {
			n, err := c.Read(buf)
			if err != nil {
				close(read)
				return
			}
			read <- n
		}
	}()
	conn := dialTCP(t, ln.Addr().String())
	defer conn.Close()
	for _, tc := range []struct{ records, size int }{{16, 256}, {4, 16384}} {
		shape := testShape(tc.records, tc.size, 1)
		req := encodeShape(t, shape)
		buffers := int64(req.NumBuffers())
		for _, strategy := range []string{rundoc.StrategyGather, rundoc.StrategyCopy, rundoc.StrategyPerBuffer} {
			c := &rawClient{shape: shape, conn: conn, req: req, strategy: strategy, scratch: make([][]byte, 0, req.NumBuffers())}
			const n = 500
			per := int64(1)
			if strategy == rundoc.StrategyPerBuffer {
				per = buffers
			}
			// /proc/self/io counts the whole process: the Go runtime's
			// netpoll wake-ups (8-byte eventfd writes) and goroutines other
			// tests left behind write too. Everything beyond the requests'
			// bytes must be 8-byte wake-ups, and once they are taken out the
			// count must be exact; a window disturbed otherwise is measured
			// again (at most three times) rather than loosening the check.
			var problem string
			for attempt := 0; attempt < 3; attempt++ {
				io0, _ := sysstat.ReadIO()
				for i := 0; i < n; i++ {
					if err := c.write(); err != nil {
						t.Fatal(err)
					}
					for left := req.Len(); left > 0; {
						left -= <-read
					}
				}
				io1, _ := sysstat.ReadIO()
				d := io1.Sub(io0)
				extraBytes := d.Wchar - int64(n*req.Len())
				t.Logf("%d×%d B %s: %d write syscalls for %d requests (%.3f per request), %d extra bytes", tc.records, tc.size, strategy, d.Syscw, n, float64(d.Syscw)/n, extraBytes)
				switch got := d.Syscw - extraBytes/8; {
				case extraBytes < 0 || extraBytes%8 != 0:
					problem = fmt.Sprintf("%d bytes written beyond the requests: not 8-byte runtime wake-ups", extraBytes)
				case got != n*per:
					problem = fmt.Sprintf("%d write syscalls for %d requests (runtime wake-ups taken out), want %d per request", got, n, per)
				default:
					problem = ""
				}
				if problem == "" {
					break
				}
			}
			if problem != "" {
				t.Errorf("%d×%d B %s: %s", tc.records, tc.size, strategy, problem)
			}
		}
	}
}

var writepathSummaryRe = regexp.MustCompile(`(?m)^(\d+) requests sent, \d+\.\d{6} requests/sec, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{3} ms avg latency, \d+\.\d{3} ms max latency, \d+\.\d{3} ms 50th, \d+\.\d{3} ms 95th, \d+\.\d{3} ms 99th, \d+\.\d{3} ms 99\.9th(, (\d+\.\d{2}) write syscalls/request, \d+\.\d bytes/write syscall)? \(([a-z-]+), (\d+) (buffers|records)/request\)\.$`)

// writepathMetrics are the metrics every write-path result has.
var writepathMetrics = []string{"requests-sent", "requests-per-sec", "records-per-sec", "mb-per-sec",
	"request-latency-avg", "request-latency-p50", "request-latency-p95", "request-latency-p99", "request-latency-p999", "request-latency-max",
	"cpu-seconds-per-mb", "process-cpu-avg", "gc-count"}

// TestWritepathRunAgainstSink runs each strategy against the sink child
// process, as `kbench run writepath --sink` does, and reads result.json.
func TestWritepathRunAgainstSink(t *testing.T) {
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
		if hasFrame(p, "runner.(*sink)") {
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
	s := newSink(ln, nil)
	go s.serve()
	defer s.close()
	opts, _ := testOptions(t)
	// --sink is not used: the in-process sink poses as a broker (metadata,
	// topic creation, Produce), throttled so the run is still going when
	// the context ends.
	spec := mustParse(t, rundoc.Writepath, "--bootstrap-server", s.addr(), "--requests", "100000", "--request-rate", "1000", "--profile", "none")
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

// TestSinkServesKafkaGo: the sink answers what kafka-go's Transport and
// Conn ask before producing (ApiVersions, Metadata, CreateTopics).
func TestSinkServesKafkaGo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newSink(ln, nil)
	go s.serve()
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(s.addr()), Transport: &kafka.Transport{}}
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: "a", NumPartitions: 1, ReplicationFactor: 1}}})
	if err != nil || resp.Errors["a"] != nil {
		t.Fatalf("create topic: %v %v", err, resp)
	}
	w := &kafka.Writer{Addr: kafka.TCP(s.addr()), Topic: "a", RequiredAcks: kafka.RequireAll, Transport: &kafka.Transport{MetadataTopics: []string{"a"}}, BatchTimeout: time.Millisecond}
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("x")}, kafka.Message{Value: []byte("y")}); err != nil {
		t.Fatalf("Writer: %v", err)
	}
	conn, err := kafka.DialLeader(ctx, "tcp", s.addr(), "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.WriteMessages(kafka.Message{Value: []byte("z")}); err != nil {
		t.Fatalf("Conn: %v", err)
	}
	_, _, offset, _, err := conn.WriteCompressedMessagesAt(nil, kafka.Message{Value: []byte("w")})
	if err != nil || offset != 3 {
		t.Errorf("fourth record at offset %d (%v), want 3", offset, err)
	}
}

// FuzzSinkAnswer: the sink reads frames from the network; no frame may
// panic it, and an answer is always one whole frame.
func FuzzSinkAnswer(f *testing.F) {
	req, _ := wire.Encode(wire.Produce{Topic: "t", Acks: -1, Values: [][]byte{[]byte("v")}})
	f.Add(req.AppendTo(nil)[4:])
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0, 0})            // ApiVersions v3, null client id, no tags
	f.Add([]byte{0, 3, 0, 1, 0, 0, 0, 2, 0, 0, 0xff, 0xff, 0xff, 0xff}) // Metadata v1, all topics
	f.Add([]byte{0, 0, 0, 8, 0, 0, 0, 1, 0, 0})
	s := newSink(nil, nil)
	f.Fuzz(func(t *testing.T, frame []byte) {
		out, err := s.answer(nil, frame)
		if err == nil && len(out) > 0 && int(int32(be32(out)))+4 != len(out) {
			t.Fatalf("answer of %d bytes has size prefix %d", len(out), be32(out))
		}
	})
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
