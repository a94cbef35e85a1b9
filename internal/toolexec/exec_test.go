package toolexec

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// standIn is the stand-in for kafka-producer-perf-test.sh.
func standIn(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "kafka-producer-perf-test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// statTicks reads utime+stime+cutime+cstime from a /proc/PID/stat text.
func statTicks(t *testing.T, text string) uint64 {
	t.Helper()
	i := strings.LastIndexByte(text, ')')
	f := strings.Fields(text[i+1:])
	var sum uint64
	for _, n := range []int{14, 15, 16, 17} {
		v, err := strconv.ParseUint(f[n-3], 10, 64)
		if err != nil {
			t.Fatalf("stat field %d: %v", n, err)
		}
		sum += v
	}
	return sum
}

// groupSampler is the test's own measurement of the stand-in's CPU,
// taken right after each of Run's readings (the same windows, so bursts
// fall in the same samples): the sum of utime+stime+cutime+cstime of the
// processes in the command's process group, found by their pgrp field,
// not by ancestry, with no correction for processes that end.
type groupSampler struct {
	mu      sync.Mutex
	prev    uint64
	prevT   time.Time
	samples []float64
	// maxLag is the longest of the test's readings: its windows lag
	// Run's by up to that much at either end.
	maxLag time.Duration
}

func (g *groupSampler) read(pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	begin := time.Now()
	defer func() { g.maxLag = max(g.maxLag, time.Since(begin)) }()
	// A child reaped between the reading of its parent (cutime without
	// it) and its own /proc entry (gone) is missing from a scan: the
	// group's total, which never falls, seems to, and the next scan
	// would count that child's whole life in one window. Scanning again
	// sees it in its parent's cutime.
	var v uint64
	for try := 0; try < 5 && (try == 0 || v < g.prev); try++ {
		procs, _ := scanProcs()
		v = 0
		for _, st := range procs {
			if st.pgrp == pgid {
				v += st.self + st.children
			}
		}
	}
	now := time.Now()
	if !g.prevT.IsZero() {
		g.samples = append(g.samples, 100*float64(ticksToDuration(v-min(v, g.prev)))/float64(now.Sub(g.prevT)))
	}
	g.prev, g.prevT = v, now
}

func TestRunStandInProducer(t *testing.T) {
	tier.Integration(t, "starts tool processes")
	statfile := filepath.Join(t.TempDir(), "stat")
	env := append(os.Environ(), "STATFILE="+statfile, "BURN_MS=1500")
	var indep groupSampler
	var echo bytes.Buffer
	e, err := Run(context.Background(), Command{Argv: []string{standIn(t), "--topic", "bench"}, Env: env, Stdout: &echo, afterSample: indep.read})
	if err != nil {
		t.Fatal(err)
	}
	theirs := indep.samples
	if !e.Succeeded() || e.ExitCode != 0 || e.Failure() != "" {
		t.Fatalf("exit %d signal %q start %v: %s", e.ExitCode, e.Signal, e.StartErr, e.Failure())
	}
	if echo.String() != e.Stdout || !strings.Contains(e.Stdout, "500000 records sent") {
		t.Errorf("stdout kept %q, passed through %q", e.Stdout, echo.String())
	}
	stat, err := os.ReadFile(statfile)
	if err != nil {
		t.Fatal(err)
	}
	// The whole tree's CPU, as the script's own /proc entry counts it once
	// every child was reaped, against the run's wall time.
	total := ticksToDuration(statTicks(t, string(stat)))
	if d := e.CPU.CPU - total; d < -30*time.Millisecond || d > 30*time.Millisecond+ticksToDuration(3) {
		t.Errorf("tree CPU %v, /proc of the script says %v", e.CPU.CPU, total)
	}
	indepAvg := 100 * float64(total) / float64(e.CPU.Wall)
	// Points of one core; /proc counts in 10 ms ticks, so one 100 ms
	// sample may be off by a tick (10 points) per busy process.
	if math.Abs(e.CPU.AvgPercent-indepAvg) > 3 {
		t.Errorf("avg %.1f%%, independent %.1f%%", e.CPU.AvgPercent, indepAvg)
	}
	// However slow the machine, the stand-in burns 1.5 s by its clock:
	// there is a sample, and the test read each window Run read.
	if e.CPU.Samples == 0 || len(theirs) != e.CPU.Samples {
		t.Fatalf("%d samples, the test's sampler %d", e.CPU.Samples, len(theirs))
	}
	c := summarizeCPU(theirs, 0, 0, 100*time.Millisecond)
	// The two readings of a window are moments apart: a clock tick of the
	// busy process (one at a time in the stand-in) may land between them,
	// and each end of the test's window lags Run's by up to the time a
	// reading takes (a few ms; far more on a loaded machine). So: one tick
	// and twice the longest reading, over the interval (10 points at
	// 100 ms for the tick), plus two.
	tol := 100*float64(ticksToDuration(1)+2*indep.maxLag)/float64(e.CPU.Interval) + 2
	if math.Abs(e.CPU.MaxPercent-c.MaxPercent) > tol || math.Abs(e.CPU.P99Percent-c.P99Percent) > tol {
		t.Errorf("p99 %.1f%% max %.1f%%; independent p99 %.1f%% max %.1f%% (tolerance %.1f points; samples %v)", e.CPU.P99Percent, e.CPU.MaxPercent, c.P99Percent, c.MaxPercent, tol, theirs)
	}

	r := ToResult(e, ResultOptions{Meta: map[string]string{"branch": "trunk"}})
	if r.Workload != rundoc.Producer || !r.Complete || r.Error != "" {
		t.Fatalf("workload %s complete %v error %q", r.Workload, r.Complete, r.Error)
	}
	for name, want := range map[string]float64{"records-sent": 500000, "record-send-rate": 19534.302235, "record-latency-p99": 14,
		"process-cpu-avg": e.CPU.AvgPercent, "process-cpu-p99": e.CPU.P99Percent, "process-cpu-max": e.CPU.MaxPercent} {
		m, ok := r.Metric(name)
		if !ok || m.Value != want {
			t.Errorf("%s = %+v (present %v), want %v", name, m, ok, want)
		}
	}
	if m, _ := r.Metric("process-cpu-max"); m.Unit != "%" || m.Better != rundoc.LowerIsBetter {
		t.Errorf("process-cpu-max: %+v", m)
	}
	if r.Measurement.ExitCode == nil || *r.Measurement.ExitCode != 0 || r.Measurement.CPUSamples != e.CPU.Samples ||
		r.Measurement.Tool != "kafka-producer-perf-test" || len(r.Series) != 3 {
		t.Errorf("measurement %+v, %d series points", r.Measurement, len(r.Series))
	}
}

func TestRunFailingStandIn(t *testing.T) {
	tier.Integration(t, "starts tool processes")
	env := append(os.Environ(), "FAIL_HALF=1", "BURN_MS=200")
	e, err := Run(context.Background(), Command{Argv: []string{standIn(t)}, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if e.Succeeded() || e.ExitCode != 3 || e.Signal != "" {
		t.Fatalf("exit %d signal %q", e.ExitCode, e.Signal)
	}
	if !strings.Contains(e.StderrTail, "TimeoutException: Expiring 12 record(s)") {
		t.Errorf("stderr tail %q", e.StderrTail)
	}
	r := ToResult(e, ResultOptions{})
	if r.Complete || r.Workload != rundoc.Producer || *r.Measurement.ExitCode != 3 {
		t.Fatalf("complete %v workload %s exit %v", r.Complete, r.Workload, *r.Measurement.ExitCode)
	}
	for _, want := range []string{"exited with status 3", "TimeoutException: Expiring 12 record(s)", "no Kafka figures"} {
		if !strings.Contains(r.Error, want) {
			t.Errorf("error %q lacks %q", r.Error, want)
		}
	}
	if !strings.Contains(r.Output, "99980 records sent") || strings.Contains(r.Output, "500000") {
		t.Errorf("partial output %q", r.Output)
	}
	if _, ok := r.Metric("process-cpu-avg"); !ok {
		t.Error("a failed run keeps its CPU figures")
	}
}

func TestRunNotFoundAndStopped(t *testing.T) {
	tier.Integration(t, "starts tool processes")
	e, err := Run(context.Background(), Command{Argv: []string{"kbench-no-such-command-here"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.ExitCode != ExitNotFound || e.StartErr == nil || !strings.Contains(e.Failure(), "kbench-no-such-command-here") {
		t.Errorf("exit %d, %v", e.ExitCode, e.StartErr)
	}
	r := ToResult(e, ResultOptions{})
	if r.Complete || r.Workload != rundoc.Imported || *r.Measurement.ExitCode != ExitNotFound {
		t.Errorf("%+v", r)
	}

	// A context that ends stops the whole group: SIGINT reaches the
	// sleeping child too.
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel(errors.New("the user stopped it")) }()
	e, err = Run(ctx, Command{Argv: []string{"sh", "-c", "sleep 30 & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Succeeded() || e.Stopped == nil || !strings.Contains(e.Failure(), "the user stopped it") {
		t.Errorf("exit %d signal %q stopped %v", e.ExitCode, e.Signal, e.Stopped)
	}
	if e.Finished.Sub(e.Started) > StopGrace {
		t.Errorf("took %v: SIGINT did not stop it", e.Finished.Sub(e.Started))
	}
}

// A grandchild whose parent exits at once is re-parented away from the
// command before any sample sees it; it is still in the group, and its
// CPU counts.
func TestRunCountsEscapedChild(t *testing.T) {
	tier.Integration(t, "starts tool processes")
	stat := filepath.Join(t.TempDir(), "stat")
	burner := `ms() { echo $(( $(date +%s%N) / 1000000 )); }
end=$(( $(ms) + 400 ))
while [ "$(ms)" -lt "$end" ]; do i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done; done
cat /proc/$$/stat > "$1"`
	script := `( sh -c "$0" burner "$1" & ); sleep 3`
	e, err := Run(context.Background(), Command{Argv: []string{"sh", "-c", script, burner, stat}})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Succeeded() {
		t.Fatal(e.Failure())
	}
	data, err := os.ReadFile(stat)
	if err != nil {
		t.Fatalf("the burner did not finish within the script's 3 s: %v", err)
	}
	// What the burner itself used (its own /proc entry, its date
	// children included) is in the tree's total.
	if used := ticksToDuration(statTicks(t, string(data))); e.CPU.CPU < used {
		t.Errorf("tree CPU %v, the escaped burner alone used %v", e.CPU.CPU, used)
	}
}

func TestSecrets(t *testing.T) {
	tier.Integration(t, "starts tool processes")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(cfg, []byte("security.protocol=SASL_SSL\nssl.truststore.password=trust-me-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	argv := []string{"kafka-producer-perf-test.sh", "--topic", "t", "--producer-props", "bootstrap.servers=b:9092",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="hunter2-secret";`,
		"sasl.password=pw-in-props", "--command-config", cfg, "--password", "flagged-pw"}
	env := []string{"PATH=/bin", "JAVA_TOOL_OPTIONS=-Xmx1g -Djavax.net.ssl.keyStorePassword=ks-pw-42", "KAFKA_SECRET=env-secret-9"}
	s := Secrets(argv, env)
	for _, want := range []string{"hunter2-secret", "pw-in-props", "trust-me-123", "flagged-pw", "ks-pw-42", "env-secret-9"} {
		if !slices.Contains(s, want) {
			t.Errorf("secrets %q lack %q", s, want)
		}
	}
	for _, not := range []string{"alice", "b:9092", "-Xmx1g", "SASL_SSL"} {
		if slices.Contains(s, not) {
			t.Errorf("%q is no secret", not)
		}
	}
	red := strings.Join(RedactArgs(argv, s), " ")
	for _, secret := range s {
		if strings.Contains(red, secret) {
			t.Errorf("redacted command %q holds %q", red, secret)
		}
	}
	if !strings.Contains(red, `username="alice"`) || !strings.Contains(red, cfg) {
		t.Errorf("redacted too much: %q", red)
	}

	// Nothing the command prints keeps them either.
	var echo lockedBuffer
	e, err := Run(context.Background(), Command{Argv: []string{"sh", "-c", `echo "Picked up JAVA_TOOL_OPTIONS: $JAVA_TOOL_OPTIONS"; echo "pw=$1" >&2; exit 1`, "sh", "hunter2-secret"},
		Env: env, Secrets: s, Stdout: &echo, Stderr: &echo})
	if err != nil {
		t.Fatal(err)
	}
	r := ToResult(e, ResultOptions{})
	for _, text := range []string{echo.String(), e.Stdout, e.StderrTail, r.Error, r.Output, strings.Join(e.Argv, " ")} {
		for _, secret := range []string{"hunter2-secret", "ks-pw-42"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q holds %q", text, secret)
			}
		}
	}
	if !strings.Contains(echo.String(), rundoc.Redacted) {
		t.Errorf("passed through %q", echo.String())
	}
}

func TestSummarizeCPU(t *testing.T) {
	samples := make([]float64, 200)
	for i := range samples {
		samples[i] = float64(i)
	}
	c := summarizeCPU(samples, 3*time.Second, 2*time.Second, 100*time.Millisecond)
	if c.AvgPercent != 150 || c.P99Percent != 197 || c.MaxPercent != 199 || c.Samples != 200 {
		t.Errorf("%+v", c)
	}
	if c := summarizeCPU(nil, time.Second, 0, time.Second); c.AvgPercent != 0 || c.Samples != 0 {
		t.Errorf("%+v", c)
	}
}

// lockedBuffer is a bytes.Buffer that stdout and stderr may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSecretsHoles: what kbench exec's redaction missed. The files of
// --producer.config=FILE, --consumer.config=FILE and --command-config=FILE
// (the = form) and of EndToEndLatency's positional properties_file are
// read; names like *_PASSWD, API_KEY and basic.auth.user.info are secret
// in arguments, environment and files; URL passwords go everywhere.
func TestSecretsHoles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prod := write("producer.properties", "sasl.password=prod-file-pw\nbasic.auth.user.info=sr:bai-file-pw\n")
	cons := write("consumer.properties", "ssl.key.password=cons-file-pw\nschema.registry.url=https://sr:url-file-pw@registry:8081\n")
	cmdc := write("command.properties", "sasl.jaas.config=x.PlainLoginModule required username=\"alice\" password=\"cmd-file-pw\";\n")
	e2e := write("e2e.properties", "ssl.keystore.password=e2e-file-pw\n")
	for _, c := range []struct {
		name   string
		argv   []string
		env    []string
		secret []string
		kept   []string
	}{
		{"--producer.config=FILE", []string{"kafka-producer-perf-test.sh", "--topic", "t", "--producer.config=" + prod}, nil,
			[]string{"prod-file-pw", "sr:bai-file-pw"}, []string{"--producer.config=" + prod}},
		{"--consumer.config=FILE", []string{"kafka-consumer-perf-test.sh", "--consumer.config=" + cons}, nil,
			[]string{"cons-file-pw", "url-file-pw"}, []string{"--consumer.config=" + cons}},
		{"--command-config=FILE (Kafka 4.2)", []string{"kafka-producer-perf-test.sh", "--command-config=" + cmdc, "--command-property", "acks=all"}, nil,
			[]string{"cmd-file-pw"}, []string{"acks=all"}},
		{"e2e properties_file", []string{"kafka-e2e-latency.sh", "b:9092", "t", "100", "1", "10", e2e}, nil,
			[]string{"e2e-file-pw"}, []string{e2e}},
		{"arguments", []string{"tool", "--producer-props", "basic.auth.user.info=u:bai-arg-pw", "api_key=key-arg-1", "--passwd=pwd-arg-1",
			"--url", "https://u:url-arg-pw@h:8081/x", "--api-key", "key-arg-2"}, nil,
			[]string{"u:bai-arg-pw", "key-arg-1", "pwd-arg-1", "url-arg-pw", "key-arg-2"}, []string{"--url", "https://u:[redacted]@h:8081/x"}},
		{"environment", []string{"tool"}, []string{"MYSQL_PASSWD=env-passwd-1", "API_KEY=env-apikey-1", "DB_PWD=env-pwd-1", "PWD=build/who",
			"DATABASE_URL=postgres://kbench:env-dburl-pw@db/kbench", "KAFKA_OPTS=-Dbasic.auth.user.info=u:env-bai-pw", "KBENCH_TOKEN=env-token-1"},
			[]string{"env-passwd-1", "env-apikey-1", "env-pwd-1", "env-dburl-pw", "u:env-bai-pw", "env-token-1"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Secrets(c.argv, c.env)
			for _, want := range c.secret {
				if !slices.Contains(s, want) {
					t.Errorf("secrets %q lack %q", s, want)
				}
			}
			if slices.Contains(s, "build/who") {
				t.Errorf("PWD, the working directory, is no secret: %q", s)
			}
			red := strings.Join(RedactArgs(c.argv, s), " ")
			text := RedactText(strings.Join(append(append([]string{}, c.argv...), c.env...), "\n")+"\n"+strings.Join(c.secret, " "), s)
			for _, secret := range c.secret {
				if strings.Contains(red, secret) || strings.Contains(text, secret) {
					t.Errorf("%q kept in %q or %q", secret, red, text)
				}
			}
			for _, k := range c.kept {
				if !strings.Contains(red, k) {
					t.Errorf("redacted command %q lacks %q", red, k)
				}
			}
		})
	}
	// A URL password too short to be replaced wherever it appears (under
	// four characters) still goes from URLs.
	if got := RedactText("connecting to postgres://u:pw@db/kbench", nil); got != "connecting to postgres://u:[redacted]@db/kbench" {
		t.Errorf("RedactText: %q", got)
	}
}

// TestChildEnv: kbench's own secrets are dropped, the rest kept.
func TestChildEnv(t *testing.T) {
	got := ChildEnv([]string{"PATH=/bin", "KBENCH_TOKEN=t", "KBENCH_DATABASE=postgres://u:p@h/d", "KBENCH_NOTIFY_URL=https://h/s",
		"KBENCH_SECRET_PROPS={}", "KBENCH_SERVER=http://h", "KAFKA_OPTS=-Xmx1g", "MY_TOKEN=x"})
	want := []string{"PATH=/bin", "KBENCH_SERVER=http://h", "KAFKA_OPTS=-Xmx1g", "MY_TOKEN=x"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q, want %q", got, want)
	}
}

// TestToResultShareConsumer: kafka-share-consumer-perf-test's output is a
// consumer run of that tool; output that does not parse still names the
// tool the command line ran.
func TestToResultShareConsumer(t *testing.T) {
	argv := []string{"/opt/kafka/bin/kafka-share-consumer-perf-test.sh", "--bootstrap-server", "k:9092", "--topic", "t", "--num-records", "100000"}
	out := "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms\n" +
		"2026-02-10 09:27:32:123, 2026-02-10 09:27:42:456, 95.3674, 9.2294, 9677.7315, 100000, 10333\n"
	now := time.Now()
	r := ToResult(&Execution{Argv: argv, Stdout: out, Started: now, Finished: now.Add(11 * time.Second)}, ResultOptions{})
	if r.Workload != rundoc.Consumer || !r.Complete || r.Measurement.Tool != "kafka-share-consumer-perf-test" {
		t.Fatalf("workload %s complete %v tool %q error %q", r.Workload, r.Complete, r.Measurement.Tool, r.Error)
	}
	if m, ok := r.Metric("records-consumed-rate"); !ok || m.Value != 9677.7315 {
		t.Errorf("records-consumed-rate %+v %v", m, ok)
	}
	r = ToResult(&Execution{Argv: argv, Stdout: strings.SplitAfter(out, "\n")[0], Started: now, Finished: now}, ResultOptions{})
	if r.Complete || r.Workload != rundoc.Consumer || r.Measurement.Tool != "kafka-share-consumer-perf-test" ||
		!strings.Contains(strings.Join(r.Measurement.Notes, "\n"), "did not parse as kafka-share-consumer-perf-test output") {
		t.Errorf("cut output: complete %v workload %s tool %q notes %q", r.Complete, r.Workload, r.Measurement.Tool, r.Measurement.Notes)
	}
}
