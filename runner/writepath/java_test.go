package writepath

import (
	"bytes"
	"context"
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

	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/jdktest"
	"github.com/kbench/kbench/profiles/jfr"
	"github.com/kbench/kbench/runner/send"
)

// testJDK is the JDK of the Java strategies' tests, which skip under
// -short (they start a JVM or javac) and without a JDK (jdktest.Find).
func testJDK(t *testing.T) jdk.JDK {
	t.Helper()
	skipProcesses(t)
	return jdktest.Find(t)
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
			g := NewRawClient(dialTCP(t, goSink.Addr()), encodeShape(t, shape), rundoc.StrategyGather, shape)
			if err := g.Send(context.Background(), send.Phase{N: int64(tc.requests), Measured: true}); err != nil {
				t.Fatal(err)
			}
			g.Close()
			if !bytes.Equal(goSink.bytes(), want) {
				t.Fatal("the Go gather stream is not the encoded requests")
			}
			for _, strategy := range rundoc.JavaWritepathStrategies() {
				s := startRecordingSink(t)
				shape.Stats = &testRecorder{}
				c, err := NewJavaClient(context.Background(), tools, s.Addr(), encodeShape(t, shape), strategy, shape, time.Minute)
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
				c.Close()
				if got := shape.Stats.(*testRecorder).measured; got != int64(tc.requests-2) {
					t.Errorf("%s: %d measured responses, want %d", strategy, got, tc.requests-2)
				}
				if got := shape.Stats.(*testRecorder).responded; got != int64(tc.requests) {
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
					if note := c.Splits(); wantCalls > 1 && !strings.Contains(note, "IOV_MAX") {
						t.Errorf("split note %q does not name IOV_MAX", note)
					}
				}
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
	s := NewSink(ln, io.Discard)
	go s.Serve()
	t.Cleanup(s.Close)
	shape := testShape(16, 256, 5)
	ctx := context.Background()
	c, err := NewJavaClient(ctx, tools, s.Addr(), encodeShape(t, shape), rundoc.StrategyJavaGather, shape, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.InitJFR(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, send.Phase{N: 200, Measured: false}); err != nil {
		t.Fatal(err)
	}
	if err := c.StartJFR(ctx); err != nil {
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
			t.Errorf("runner/writepath/java/WritePath.java does not hold %s", want)
		}
	}
}
