package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/profiles/jfr"
	"github.com/kbench/kbench/runner/send"
)

// testJDK is the JDK of the Java strategies' tests; they are skipped
// without one (test.sh installs Debian's openjdk-17-jdk-headless), unless
// KBENCH_REQUIRE_JDK=1, and under -short (they start a JVM or javac).
func testJDK(t *testing.T) jdk.JDK {
	t.Helper()
	skipProcesses(t)
	tools, err := jdk.Find("")
	if err != nil {
		if os.Getenv("KBENCH_REQUIRE_JDK") == "1" {
			t.Fatal(err)
		}
		t.Skipf("no JDK (set KBENCH_REQUIRE_JDK=1 to fail instead): %v", err)
	}
	return tools
}

// TestWritepathJavaSendsIdenticalBytes: the Java strategies send, byte for
// byte, the stream the Go strategies send (the encoded requests with
// correlation ids 0, 1, 2, …), into a recording sink. 1100 records are
// 1102 buffers, more than the JDK's IOV_MAX (1024): java-gather then takes
// two SocketChannel.write calls per request, which the program counts.
func TestWritepathJavaSendsIdenticalBytes(t *testing.T) {
	tools := testJDK(t)
	for _, tc := range []struct{ records, size, requests, inFlight int }{{16, 256, 60, 4}, {1100, 3, 5, 1}} {
		t.Run(fmt.Sprintf("%dx%d", tc.records, tc.size), func(t *testing.T) {
			shape := testShape(tc.records, tc.size, tc.inFlight)
			req := encodeShape(t, shape)
			var want []byte
			for i := 0; i < tc.requests; i++ {
				req.SetCorrelationID(int32(i))
				want = req.AppendTo(want)
			}
			// The Go gather strategy into a sink of its own, as the
			// reference the Java streams must equal.
			goSink := startRecordingSink(t)
			g := newRawClient(dialTCP(t, goSink.addr()), encodeShape(t, shape), rundoc.StrategyGather, shape)
			if err := g.Send(context.Background(), send.Phase{N: int64(tc.requests), Measured: true}); err != nil {
				t.Fatal(err)
			}
			g.close()
			if !bytes.Equal(goSink.bytes(), want) {
				t.Fatal("the Go gather stream is not the encoded requests")
			}
			for _, strategy := range rundoc.JavaWritepathStrategies() {
				s := startRecordingSink(t)
				shape.stats = &wpStats{hist: newLatencyHist()}
				c, err := newJavaClient(context.Background(), tools, s.addr(), encodeShape(t, shape), strategy, shape, time.Minute)
				if err != nil {
					t.Fatalf("%s: %v", strategy, err)
				}
				// A warm-up phase and a measured one: correlation ids run on.
				if err := c.Send(context.Background(), send.Phase{N: 2, Measured: false}); err != nil {
					t.Fatalf("%s: %v", strategy, err)
				}
				if err := c.Send(context.Background(), send.Phase{N: int64(tc.requests - 2), Measured: true}); err != nil {
					t.Fatalf("%s: %v", strategy, err)
				}
				c.close()
				if got := shape.stats.measured; got != int64(tc.requests-2) {
					t.Errorf("%s: %d measured responses, want %d", strategy, got, tc.requests-2)
				}
				if got := shape.stats.responded; got != int64(tc.requests) {
					t.Errorf("%s: %d responses, want %d", strategy, got, tc.requests)
				}
				if got := s.bytes(); !bytes.Equal(got, want) {
					t.Errorf("%s sent %d bytes that differ from the Go strategy's %d (first difference at %d)", strategy, len(got), len(want), firstDiff(got, want))
				}
				if strategy == rundoc.StrategyJavaGather {
					wantCalls := int64(1)
					if tc.records+2 > 1024 {
						wantCalls = 2 // IOV_MAX
					}
					if c.iovMax != 1024 {
						t.Errorf("the program read IOV_MAX %d, want Linux's 1024", c.iovMax)
					}
					if c.calls < wantCalls*c.sent || (wantCalls > 1 && c.split != c.sent) {
						t.Errorf("java-gather: %d write calls for %d requests (%d split), want %d per request", c.calls, c.sent, c.split, wantCalls)
					}
					if note := c.splits(); wantCalls > 1 && !strings.Contains(note, "IOV_MAX") {
						t.Errorf("split note %q does not name IOV_MAX", note)
					}
				}
			}
		})
	}
}

// TestWritepathJavaRunAgainstSink runs each Java strategy as `kbench run
// writepath --sink --strategy java-…` does and checks the write-type
// syscalls of the JVM's sending thread, read from
// /proc/PID/task/TID/io: java-gather and java-copy one per request,
// java-per-buffer one per buffer (R+2). The sending thread makes no other
// write (the program's events go out from a thread of their own), so the
// only slack is for partial writes, which the program counts: the syscalls
// must equal its SocketChannel.write calls exactly.
func TestWritepathJavaRunAgainstSink(t *testing.T) {
	testJDK(t)
	for _, strategy := range rundoc.JavaWritepathStrategies() {
		t.Run(strategy, func(t *testing.T) {
			opts, out := sinkOptions(t)
			const requests = 1500
			spec := mustParse(t, rundoc.Writepath, "--sink", "--strategy", strategy, "--requests", fmt.Sprint(requests),
				"--warmup-requests", "100", "--in-flight", "2", "--reporting-interval", "100")
			res, err := Run(context.Background(), spec, opts)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			if !res.Complete {
				t.Fatalf("incomplete: %s", res.Error)
			}
			if got := metric(t, res, "requests-sent"); got != requests {
				t.Errorf("requests-sent = %v, want %d", got, requests)
			}
			for _, name := range []string{"requests-per-sec", "request-latency-p99", "cpu-seconds-per-mb", "process-cpu-avg", "process-cpu-seconds"} {
				if v := metric(t, res, name); v <= 0 {
					t.Errorf("%s = %v, want > 0", name, v)
				}
			}
			if _, ok := res.Metric("gc-count"); ok {
				t.Error("a Java run reports kbench's Go GC cycles")
			}
			syscalls := metric(t, res, "write-syscalls-per-request")
			calls := metric(t, res, "channel-writes-per-request")
			buffers := metric(t, res, "buffers-per-request")
			want := 1.0
			if strategy == rundoc.StrategyJavaPerBuffer {
				want = buffers
			}
			t.Logf("%s: %.3f write syscalls and %.3f channel writes per request (%v buffers)", strategy, syscalls, calls, buffers)
			if syscalls != calls {
				t.Errorf("%.4f write syscalls per request from /proc, but the program made %.4f SocketChannel.write calls per request", syscalls, calls)
			}
			if calls < want || calls > want*1.01 {
				t.Errorf("%.4f SocketChannel.write calls per request, want %v (1%% slack for partial writes)", calls, want)
			}
			if !regexp.MustCompile(`(?m)^1500 requests sent, .* write syscalls/request, .* \(` + strategy + `, 18 buffers/request\)\.$`).MatchString(out.String()) {
				t.Errorf("no summary line for %s in:\n%s", strategy, out)
			}
			notes := strings.Join(res.Measurement.Notes, "\n")
			if !strings.Contains(notes, "/task/") || !strings.Contains(notes, "sending thread") {
				t.Errorf("the notes do not say the syscalls are the sending thread's:\n%s", notes)
			}
		})
	}
}

// TestWritepathJavaJFRWindow: with --profile cpu a Java run records the
// JVM with Flight Recorder over the window and stores it as the client's
// wall profile; the gather run's holds the JDK's writev0, the per-buffer
// run's write0 and no writev0.
func TestWritepathJavaJFRWindow(t *testing.T) {
	testJDK(t)
	for strategy, frames := range map[string][2]string{
		rundoc.StrategyJavaGather:    {"writev0", "write0"},
		rundoc.StrategyJavaPerBuffer: {"write0", "writev0"},
	} {
		t.Run(strategy, func(t *testing.T) {
			opts, out := sinkOptions(t)
			spec := mustParse(t, rundoc.Writepath, "--sink", "--strategy", strategy, "--duration", "2", "--profile", "cpu,heap")
			res, err := Run(context.Background(), spec, opts)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			var files []string
			for _, p := range res.Profiles {
				files = append(files, p.File)
				if p.Role == rundoc.RoleClient && p.Kind != rundoc.KindWall {
					t.Errorf("a Java run stored the client profile %s of kind %s: Go profiles are kbench's, not the JVM's", p.File, p.Kind)
				}
			}
			if !strings.Contains(strings.Join(files, " "), "client-wall.pb.gz") {
				t.Fatalf("profiles %v: no client-wall.pb.gz; notes %q", files, res.Measurement.Notes)
			}
			f, err := os.Open(filepath.Join(opts.OutDir, "client-wall.pb.gz"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := profile.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			has := func(method string) bool {
				for _, name := range []string{"sun.nio.ch.FileDispatcherImpl." + method, "sun.nio.ch.SocketDispatcher." + method} {
					if hasExactFrame(p, name) {
						return true
					}
				}
				return false
			}
			if !has(frames[0]) {
				t.Errorf("the %s wall profile (%d samples) has no %s frame", strategy, sampleCount(p), frames[0])
			}
			if has(frames[1]) {
				t.Errorf("the %s wall profile has a %s frame", strategy, frames[1])
			}
			if notes := strings.Join(res.Measurement.Notes, "\n"); !strings.Contains(notes, "Flight Recorder") || !strings.Contains(notes, "--profile heap") {
				t.Errorf("notes say nothing of the recording or of the Go profiles left out:\n%s", notes)
			}
		})
	}
}

// TestWritepathJavaJFRRecordsOnlySamples: the window's recording holds the
// two events kbench converts and nothing else but the chunk's metadata and
// constant pools (where stack traces and thread names are), as `jfr
// summary` counts them; its samples still convert into a profile whose
// sending thread ("main") is inside writev0. With the JDK's "profile"
// settings the recording also held thread park, allocation, GC and
// periodic events that cost the JVM and that kbench never reads.
func TestWritepathJavaJFRRecordsOnlySamples(t *testing.T) {
	tools := testJDK(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newSink(ln, io.Discard)
	go s.serve()
	t.Cleanup(s.close)
	shape := testShape(16, 256, 5)
	ctx := context.Background()
	c, err := newJavaClient(ctx, tools, s.addr(), encodeShape(t, shape), rundoc.StrategyJavaGather, shape, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if err := c.initJFR(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, send.Phase{N: 200, Measured: false}); err != nil {
		t.Fatal(err)
	}
	if err := c.startJFR(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, send.Phase{N: 0, Deadline: time.Now().Add(1500 * time.Millisecond), Measured: true}); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "window.jfr")
	if _, err := c.command(ctx, "jfr-stop "+rec, 'J'); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(tools.JFR, "summary", rec).CombinedOutput()
	if err != nil {
		t.Fatalf("jfr summary: %v\n%s", err, out)
	}
	allowed := map[string]bool{"jdk.ExecutionSample": true, "jdk.NativeMethodSample": true, "jdk.Metadata": true, "jdk.CheckPoint": true}
	counts := map[string]int64{}
	line := regexp.MustCompile(`^\s*(jdk\.\w+)\s+(\d+)\s+\d+\s*$`)
	for _, l := range strings.Split(string(out), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			counts[m[1]] = n
		}
	}
	if len(counts) == 0 {
		t.Fatalf("jfr summary lists no event types:\n%s", out)
	}
	for name, n := range counts {
		if n > 0 && !allowed[name] {
			t.Errorf("the recording holds %d %s events; kbench converts only jdk.ExecutionSample and jdk.NativeMethodSample", n, name)
		}
	}
	if counts["jdk.ExecutionSample"]+counts["jdk.NativeMethodSample"] == 0 {
		t.Fatalf("the recording holds no samples:\n%s", out)
	}

	p, sum, err := jfr.FromRecording(ctx, tools.JFR, rec)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Execution != counts["jdk.ExecutionSample"] || sum.Native != counts["jdk.NativeMethodSample"] {
		t.Errorf("converted %d execution and %d native samples, jfr summary counts %d and %d", sum.Execution, sum.Native, counts["jdk.ExecutionSample"], counts["jdk.NativeMethodSample"])
	}
	inWritev := false
	for _, smp := range p.Sample {
		if len(smp.Label[jfr.LabelThread]) == 0 || smp.Label[jfr.LabelThread][0] == "" {
			t.Fatalf("a sample without its thread's name: %v", smp.Label)
		}
		if smp.Label[jfr.LabelThread][0] != "main" {
			continue
		}
		for _, loc := range smp.Location {
			for _, ln := range loc.Line {
				if strings.HasSuffix(ln.Function.Name, ".writev0") {
					inWritev = true
				}
			}
		}
	}
	if counts["jdk.NativeMethodSample"] > 0 && !inWritev {
		t.Errorf("no sample of the sending thread (main) inside writev0 among %d native samples", counts["jdk.NativeMethodSample"])
	}
}

// TestWritepathJavaNeedsJDK: without a JDK a Java strategy is refused with
// what to install, as a problem of the strategy field.
func TestWritepathJavaNeedsJDK(t *testing.T) {
	opts, _ := sinkOptions(t)
	opts.JavaHome = t.TempDir() // no bin/java in it
	spec := mustParse(t, rundoc.Writepath, "--sink", "--strategy", rundoc.StrategyJavaGather, "--requests", "10")
	_, err := Run(context.Background(), spec, opts)
	var fe *rundoc.FieldError
	if !errors.As(err, &fe) || fe.Field != "strategy" || !strings.Contains(err.Error(), "needs a JDK") || !strings.Contains(err.Error(), "openjdk-17-jdk-headless") {
		t.Fatalf("err = %v, want a strategy field error saying what to install", err)
	}
}

// TestCompileJavaConcurrently: first uses at once each compile, and all
// end with the one cached directory, nothing else left behind; a later
// use compiles nothing.
func TestCompileJavaConcurrently(t *testing.T) {
	tools := testJDK(t)
	base := t.TempDir()
	orig := javaCacheDir
	javaCacheDir = func() (string, error) { return base, nil }
	t.Cleanup(func() { javaCacheDir = orig })
	dirs := make([]string, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = compileJava(context.Background(), tools.Javac)
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Fatalf("compiled into %s and %s", dirs[0], dirs[i])
		}
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 1 || filepath.Join(base, entries[0].Name()) != dirs[0] {
		t.Errorf("cache holds %v, want only %s", entries, dirs[0])
	}
	st, err := os.Stat(filepath.Join(dirs[0], "WritePath.class"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := compileJava(context.Background(), filepath.Join(t.TempDir(), "no-javac")) // cached: javac is not run
	if err != nil || again != dirs[0] {
		t.Fatalf("second use: %s, %v", again, err)
	}
	if st2, _ := os.Stat(filepath.Join(dirs[0], "WritePath.class")); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("the cached class was rewritten")
	}
}

// TestWritepathJavaPeriods: the lab's Java program samples with the
// periods the notes state (jfr.ExecutionPeriod and jfr.NativePeriod, the
// periods kbench exec records with too).
func TestWritepathJavaPeriods(t *testing.T) {
	for event, period := range map[string]time.Duration{jfr.ExecutionSample: jfr.ExecutionPeriod, jfr.NativeMethodSample: jfr.NativePeriod} {
		want := fmt.Sprintf("r.enable(%q).withPeriod(Duration.ofMillis(%d));", event, period.Milliseconds())
		if !bytes.Contains(javaSource, []byte(want)) {
			t.Errorf("runner/java/WritePath.java does not hold %s", want)
		}
	}
}
