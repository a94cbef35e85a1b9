package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/jdktest"
)

// testJDK is the JDK of the Java strategies' tests, which skip under
// -short (they start a JVM or javac) and without a JDK (jdktest.Find).
func testJDK(t *testing.T) jdk.JDK {
	t.Helper()
	skipProcesses(t)
	return jdktest.Find(t)
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
	if testing.Short() {
		t.Skip("integration: starts a JVM")
	}
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
	if testing.Short() {
		t.Skip("integration: starts a JVM")
	}
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

// TestWritepathJavaNeedsJDK: without a JDK a Java strategy is refused with
// what to install, as a problem of the strategy field.
func TestWritepathJavaNeedsJDK(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	opts, _ := sinkOptions(t)
	opts.JavaHome = t.TempDir() // no bin/java in it
	spec := mustParse(t, rundoc.Writepath, "--sink", "--strategy", rundoc.StrategyJavaGather, "--requests", "10")
	_, err := Run(context.Background(), spec, opts)
	var fe *rundoc.FieldError
	if !errors.As(err, &fe) || fe.Field != "strategy" || !strings.Contains(err.Error(), "needs a JDK") || !strings.Contains(err.Error(), "openjdk-17-jdk-headless") {
		t.Fatalf("err = %v, want a strategy field error saying what to install", err)
	}
}

// TestWritepathJavaJFRWindowLabels: with --profile-windows the JVM's
// samples are named by the run's windows from their events' times: a
// 4.5 s run has the windows 0-2 and 2-5 (its last half second joins the
// window before), every sample carries one, and both hold samples.
func TestWritepathJavaJFRWindowLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a JVM")
	}
	testJDK(t)
	opts, out := sinkOptions(t)
	spec := mustParse(t, rundoc.Writepath, "--sink", "--strategy", rundoc.StrategyJavaGather, "--duration", "4.5", "--profile", "cpu")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(opts.OutDir, "client-wall.pb.gz"))
	if err != nil {
		t.Fatalf("%v; notes %q", err, res.Measurement.Notes)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	want := rundoc.WindowName(2, res.Measurement.WindowSeconds)
	byWindow := map[string]int64{}
	for _, s := range p.Sample {
		w := s.Label[rundoc.WindowLabel]
		if len(w) != 1 || (w[0] != "0-2" && w[0] != want) {
			t.Fatalf("a sample's window is %q, want 0-2 or %s", w, want)
		}
		byWindow[w[0]] += s.Value[0]
	}
	if byWindow["0-2"] == 0 || byWindow[want] == 0 {
		t.Errorf("samples by window %v: want samples in 0-2 and %s", byWindow, want)
	}
}
