package acceptance

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/testutil/jdktest"
)

// execRun is a run as GET /api/runs/:id shows it, the fields kbench
// exec's tests read.
type execRun struct {
	client.Run
	// Measurement is the run's measurement document, read loosely.
	Measurement map[string]any `json:"measurement"`
}

func (r execRun) metric(name string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// TestExecCommand runs `kbench exec` on a stand-in for
// kafka-producer-perf-test.sh (a script printing Kafka's producer lines
// while a child burns CPU) against a real `kbench serve`: the run has
// Kafka's figures and the CPU of the script's process tree (its total
// checked against the script's own /proc entry once every child was
// reaped); a failing script stores a failed run with its exit status,
// stderr tail and partial output; a missing command is exit status 127;
// no secret of the command line is printed or stored.
func TestExecCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	t.Parallel() // waits on its processes most of the time: see test.sh
	srv := startE2EServer(t)
	bin := e2eKbench(t)
	standIn, err := filepath.Abs("../internal/toolexec/testdata/kafka-producer-perf-test.sh")
	if err != nil {
		t.Fatal(err)
	}
	kbench := func(env []string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KBENCH_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("kbench %v: %v", args, err)
		}
		return code, stdout.String(), stderr.String()
	}
	get := func(stdout string) execRun {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		url := lines[len(lines)-1]
		if !strings.HasPrefix(url, srv.URL+"/runs/") {
			t.Fatalf("last line of stdout %q is not a run URL", url)
		}
		var r execRun
		srv.api(t, http.MethodGet, "/api"+strings.TrimPrefix(url, srv.URL), nil, http.StatusOK, &r)
		return r
	}
	const secret = "hunter2-secret"
	statfile := filepath.Join(t.TempDir(), "stat")

	code, stdout, stderr := kbench([]string{"BURN_MS=1500", "STATFILE=" + statfile},
		"exec", "--server", srv.URL, "--label", "java-trunk", "--meta", "branch=trunk", "--jfr=false", "--",
		standIn, "--topic", "bench", "--producer-props", "bootstrap.servers=b:9092", "sasl.password="+secret)
	if code != 0 {
		t.Fatalf("exec: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "99980 records sent, 19996.0 records/sec") {
		t.Errorf("the tool's output was not passed through: %q", stdout)
	}
	r := get(stdout)
	if r.Workload != "producer" || r.Source != "imported" || r.Status != "succeeded" || !r.Complete || r.Label != "java-trunk" ||
		r.Meta["branch"] != "trunk" || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("run %+v", r)
	}
	for name, want := range map[string]float64{"records-sent": 500000, "record-latency-p99": 14, "record-send-rate": 19534.302235} {
		if v, ok := r.metric(name); !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	stat, err := os.ReadFile(statfile)
	if err != nil {
		t.Fatal(err)
	}
	// The script's utime+stime+cutime+cstime once it reaped every child:
	// the whole tree's CPU, by the kernel's count in clock ticks.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	var ticks float64
	for _, n := range []int{14, 15, 16, 17} {
		v, _ := strconv.ParseFloat(f[n-3], 64)
		ticks += v
	}
	theirs := ticks / 100 // USER_HZ
	cpu, _ := r.metric("process-cpu-seconds")
	if math.Abs(cpu-theirs) > 0.05 {
		t.Errorf("process-cpu-seconds %.3f, the script's /proc entry says %.3f", cpu, theirs)
	}
	wall := r.FinishedAt.Sub(*r.StartedAt).Seconds()
	avg, _ := r.metric("process-cpu-avg")
	if math.Abs(avg-100*theirs/wall) > 3 {
		t.Errorf("process-cpu-avg %.1f%%, independent %.1f%% (%.3f s over %.3f s)", avg, 100*theirs/wall, theirs, wall)
	}
	p99, okP := r.metric("process-cpu-p99")
	mx, okM := r.metric("process-cpu-max")
	if !okP || !okM || p99 > mx || mx <= 0 {
		t.Errorf("p99 %v max %v", p99, mx)
	}
	all := stdout + stderr + fmt.Sprint(r)
	if strings.Contains(all, secret) {
		t.Errorf("the secret was printed or stored")
	}
	if cmd, _ := r.Measurement["command"].([]any); len(cmd) == 0 || cmd[len(cmd)-1] != "sasl.password=[redacted]" {
		t.Errorf("stored command %v", r.Measurement["command"])
	}

	// Exit 3 after half its output.
	code, stdout, stderr = kbench([]string{"FAIL_HALF=1", "BURN_MS=200"}, "exec", "--server", srv.URL, "--label", "java-trunk", "--jfr=false", "--", standIn)
	if code != 1 {
		t.Fatalf("failing tool: exit %d, stdout %s stderr %s", code, stdout, stderr)
	}
	r = get(stdout)
	if r.Status != "failed" || r.Complete || r.ExitCode == nil || *r.ExitCode != 3 || r.Workload != "producer" ||
		!strings.Contains(r.Error, "exited with status 3") || !strings.Contains(r.Error, "TimeoutException: Expiring 12 record(s)") ||
		!strings.Contains(r.Output, "99980 records sent") || strings.Contains(r.Output, "500000") {
		t.Errorf("failed run %+v", r)
	}
	if _, ok := r.metric("process-cpu-avg"); !ok {
		t.Error("the failed run lost its CPU figures")
	}

	// Kafka's EndToEndLatency: an e2e run with the tool's figures and
	// the tree's CPU.
	e2eStandIn, err := filepath.Abs("../internal/toolexec/testdata/kafka-e2e-latency.sh")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = kbench([]string{"BURN_MS=300"}, "exec", "--server", srv.URL, "--label", "java-e2e", "--jfr=false", "--",
		e2eStandIn, "127.0.0.1:9092", "lat", "2500", "1", "100")
	if code != 0 || !strings.Contains(stdout, "Percentiles: 50th = 1, 99th = 24, 99.9th = 26") {
		t.Fatalf("exec e2e: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	r = get(stdout)
	if r.Workload != "e2e" || r.Source != "imported" || r.Status != "succeeded" || !r.Complete {
		t.Fatalf("e2e run %+v", r)
	}
	for name, want := range map[string]float64{"e2e-latency-avg": 1.5614, "e2e-latency-p99": 24, "e2e-latency-p999": 26} {
		if v, ok := r.metric(name); !ok || v != want {
			t.Errorf("e2e %s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if v, ok := r.metric("process-cpu-seconds"); !ok || v <= 0 {
		t.Errorf("e2e process-cpu-seconds = %v (present %v)", v, ok)
	}
	// The count comes from the command line, which the output lacks.
	if m := r.Measurement; m["measured_records"] != 2500.0 || m["latency_samples"] != 2500.0 ||
		!strings.Contains(fmt.Sprint(m["notes"]), "the tool was given acks=1, 2500 records of 100 bytes") {
		t.Errorf("e2e measurement %v", m)
	}
	// Failing at its first poll: failed, e2e still, the output kept.
	code, stdout, _ = kbench([]string{"FAIL_HALF=1"}, "exec", "--server", srv.URL, "--label", "java-e2e", "--jfr=false", "--",
		e2eStandIn, "127.0.0.1:9092", "lat", "2500", "1", "100")
	if r := get(stdout); code != 1 || r.Status != "failed" || r.Workload != "e2e" || r.ExitCode == nil || *r.ExitCode != 1 ||
		!strings.Contains(r.Error, "poll() timed out") || r.Output != "0\t23.456789\n" {
		t.Errorf("failed e2e: exit %d, run %+v", code, r)
	}

	// Not found.
	code, stdout, _ = kbench(nil, "exec", "--server", srv.URL, "--label", "x", "--", "kbench-no-such-tool")
	if r := get(stdout); code != 1 || r.Status != "failed" || r.ExitCode == nil || *r.ExitCode != 127 || !strings.Contains(r.Error, "kbench-no-such-tool") {
		t.Errorf("not found: exit %d, run %+v", code, r)
	}

	// --profile: the collapsed stacks the command wrote (as
	// async-profiler's collapsed output) become the run's CPU profile.
	collapsed := filepath.Join(t.TempDir(), "cpu.collapsed")
	code, stdout, stderr = kbench([]string{"BURN_MS=100", "OUT=" + collapsed}, "exec", "--server", srv.URL, "--label", "ap", "--profile", collapsed, "--",
		"sh", "-c", `printf 'java/lang/Thread.run;KafkaProducer.send;SocketChannelImpl.write 30\nKafkaProducer.send;encode 10\n' > "$OUT"; exec "$0"`, standIn)
	if r := get(stdout); code != 0 || len(r.Profiles) != 1 || r.Profiles[0].Kind != "cpu" || r.Profiles[0].Samples != 2 || r.Workload != "producer" {
		t.Errorf("--profile: exit %d, run %+v, stderr %s", code, r, stderr)
	}

	// --jfr without a JDK: refused before anything runs, saying what to
	// install.
	code, stdout, stderr = kbench(nil, "exec", "--server", srv.URL, "--label", "x", "--jfr", "--java-home", t.TempDir(), "--", "true")
	if code != 2 || stdout != "" || !strings.Contains(stderr, jdk.Install) {
		t.Errorf("--jfr without a JDK: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// Usage.
	for _, args := range [][]string{{"exec", "--label", "x"}, {"exec", "--", "true"}, {"exec", "--label", "x", "--meta", "bad", "--", "true"}} {
		if code, _, _ := kbench(nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestExecJVM: `kbench exec -- java …` records the JVM with JFR through
// JAVA_TOOL_OPTIONS and stores the recording as a profile of kind wall.
func TestExecJVM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	j := jdktest.Find(t)
	srv := startE2EServer(t)
	bin := e2eKbench(t)
	dir := t.TempDir()
	// The JVM takes its execution samples by suspending the spinning
	// thread, and gives a sample up when the thread does not answer within
	// 2 ms: on a loaded machine a second of spinning can leave none. So
	// Spin dumps its own recording every half second and spins on until
	// the dump holds one, then says on stderr how many it saw.
	src := `import java.nio.file.Files;
import java.nio.file.Path;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

public class Spin {
	public static void main(String[] args) throws Exception {
		Path dump = Files.createTempFile("spin", ".jfr");
		long deadline = System.nanoTime() + 120_000_000_000L, x = 1, seen = 0;
		while (seen == 0 && System.nanoTime() < deadline) {
			long end = System.nanoTime() + 500_000_000L;
			while (System.nanoTime() < end) x = x * 31 + 7;
			for (Recording r : FlightRecorder.getFlightRecorder().getRecordings()) {
				r.dump(dump);
				for (RecordedEvent e : RecordingFile.readAllEvents(dump)) {
					if (e.getEventType().getName().equals("jdk.ExecutionSample")) seen++;
				}
			}
		}
		Files.delete(dump);
		System.out.println(x);
		System.err.println("spin: its recording held " + seen + " execution samples");
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "Spin.java"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(j.Javac, "-d", dir, filepath.Join(dir, "Spin.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "exec", "--server", srv.URL, "--label", "spin", "--", j.Java, "-cp", dir, "Spin")
	cmd.Env = append(os.Environ(), "JAVA_TOOL_OPTIONS=-Xss1m")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("exec java: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var r execRun
	srv.api(t, http.MethodGet, "/api"+strings.TrimPrefix(lines[len(lines)-1], srv.URL), nil, http.StatusOK, &r)
	if r.Workload != "imported" || r.Status != "succeeded" || len(r.Profiles) != 1 || r.Profiles[0].Kind != "wall" {
		t.Fatalf("run %+v\nstderr %s", r, stderr.String())
	}
	// The stored profile holds at least the samples Spin saw in its
	// recording before it stopped (the JVM went on sampling after).
	m := regexp.MustCompile(`its recording held (\d+) execution samples`).FindStringSubmatch(stderr.String())
	if m == nil || m[1] == "0" {
		t.Fatalf("Spin saw no execution sample in its own recording (stderr %s)", stderr.String())
	}
	seen, _ := strconv.Atoi(m[1])
	notes := fmt.Sprint(r.Measurement["notes"])
	n := regexp.MustCompile(`JFR: 1 JVM recording\(s\), only the two events kbench converts: (\d+) jdk.ExecutionSample events`).FindStringSubmatch(notes)
	if n == nil || r.Profiles[0].Samples == 0 {
		t.Fatalf("notes %s, profile %+v", notes, r.Profiles[0])
	}
	got, _ := strconv.Atoi(n[1])
	t.Logf("Spin saw %d execution samples; the stored profile converted %d", seen, got)
	if got < seen {
		t.Errorf("the stored profile converted %d execution samples; the recording held %d before the JVM exited", got, seen)
	}
	// The JVM kept the options it had: ours were appended.
	if !strings.Contains(stderr.String(), "Picked up JAVA_TOOL_OPTIONS: -Xss1m -XX:StartFlightRecording=") {
		t.Errorf("stderr %s", stderr.String())
	}
	if avg, ok := r.metric("process-cpu-avg"); !ok || avg <= 0 {
		t.Errorf("process-cpu-avg %v", avg)
	}
}
