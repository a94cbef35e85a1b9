// Command truth is kbench's truth suite: it runs the real kbench binary
// and measures what each run reports a second time, independently, from
// outside the run's process:
//
//   - record counts against the broker's high watermarks (ListOffsets)
//     and the consumer group's committed offsets, read with franz-go's
//     kgo, not the kafka-go client kbench measures;
//   - rates against a poll of the high watermark on the suite's own clock;
//   - CPU against a sampler of /proc/PID/stat and /proc/PID/task/*/schedstat
//     every 100 ms;
//   - write syscalls against /proc/PID/io read at the window's edges, and
//     against strace;
//   - the comparison's verdicts against N vs N identical runs through
//     `kbench serve`'s API: every flagged row is a false flag.
//
// Every check prints one line: kbench's figure, the independent one, the
// difference and a verdict against a stated tolerance. The run ends with a
// Markdown summary. See bench/README.md, "Truth suite", and run.sh.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// config are the suite's flags.
type config struct {
	kbench     string
	outDir     string
	summary    string
	kbenchDesc string
	command    string

	partitions int
	recordSize int

	rawRecords, writerRecords, clientRecords int64
	throttledRate                            float64
	throttledRecords                         int64
	consumeRecords                           int64
	wpRequests                               int64
	wpRecordsPerRequest                      int

	poll, sampleEvery time.Duration
	clkTck            float64

	strace         string
	straceRecords  int64
	straceRequests int64

	ffN, ffBatches int
	ffWorkloads    []string
	ffRecords      int64
	ffSubmit       string
	ffKeep         bool

	only map[string]bool
}

// Check areas, also the values of -only.
const (
	areaCounts     = "counts"
	areaRates      = "rates"
	areaCPU        = "cpu"
	areaSyscalls   = "syscalls"
	areaFalseFlags = "falseflags"
)

var allAreas = []string{areaCounts, areaRates, areaCPU, areaSyscalls, areaFalseFlags}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "truth: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &suite{cfg: cfg, out: stdout, log: stderr, stamp: time.Now().UTC().Format("20060102T150405Z")}
	if err := s.run(ctx); err != nil {
		fmt.Fprintf(stderr, "truth: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("truth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	fs.StringVar(&cfg.kbench, "kbench", "", "the kbench binary to check (required)")
	fs.StringVar(&cfg.outDir, "out", "", "directory for every run's result.json, events and traces (required)")
	fs.StringVar(&cfg.summary, "summary", "", "write the Markdown summary here (default: OUT/summary.md)")
	fs.StringVar(&cfg.kbenchDesc, "kbench-desc", "", "how the binary was built, for the summary")
	fs.StringVar(&cfg.command, "command", "", "the command that ran the suite, for the summary")
	fs.IntVar(&cfg.partitions, "partitions", 6, "partitions of the producer and consumer topics")
	fs.IntVar(&cfg.recordSize, "record-size", 256, "bytes per record")
	fs.Int64Var(&cfg.rawRecords, "raw-records", 1500000, "records of the unthrottled --mode raw producer run (its topic is then consumed)")
	fs.Int64Var(&cfg.writerRecords, "writer-records", 500000, "records of the --mode writer producer run")
	fs.Int64Var(&cfg.clientRecords, "client-records", 500000, "records of the --mode client producer run")
	fs.Float64Var(&cfg.throttledRate, "throttled-rate", 100000, "--throughput of the throttled producer run (records/s)")
	fs.Int64Var(&cfg.throttledRecords, "throttled-records", 400000, "records of the throttled producer run")
	fs.Int64Var(&cfg.consumeRecords, "consume-records", 1000000, "--messages of each consumer run (below -raw-records)")
	fs.Int64Var(&cfg.wpRequests, "wp-requests", 30000, "measured requests of each writepath run (+10% warm-up)")
	fs.IntVar(&cfg.wpRecordsPerRequest, "wp-records-per-request", 16, "--records-per-request of the writepath runs")
	fs.DurationVar(&cfg.poll, "poll", 25*time.Millisecond, "interval of the high-watermark poller")
	fs.DurationVar(&cfg.sampleEvery, "sample", 100*time.Millisecond, "interval of the /proc CPU sampler")
	fs.Float64Var(&cfg.clkTck, "clk-tck", 100, "USER_HZ, the unit of /proc/PID/stat's times (getconf CLK_TCK)")
	fs.StringVar(&cfg.strace, "strace", "auto", "auto (trace when strace is installed), on (fail without it) or off")
	fs.Int64Var(&cfg.straceRecords, "strace-records", 200000, "records of the traced producer run")
	fs.Int64Var(&cfg.straceRequests, "strace-requests", 2000, "requests of the traced writepath run")
	fs.IntVar(&cfg.ffN, "ff-n", 5, "runs per side of each identical-config comparison")
	fs.IntVar(&cfg.ffBatches, "ff-batches", 4, "identical-config comparisons")
	workloads := fs.String("ff-workloads", "producer,consumer", "workloads of the comparisons, in turn")
	fs.Int64Var(&cfg.ffRecords, "ff-records", 200000, "records of each run of the comparisons")
	fs.StringVar(&cfg.ffSubmit, "ff-submit", submitAuto, "how runs are queued: auto, configs (the server interleaves) or alternate (one POST per run)")
	fs.BoolVar(&cfg.ffKeep, "ff-keep", false, "keep the comparisons' data directory")
	only := fs.String("only", strings.Join(allAreas, ","), "areas to check: "+strings.Join(allAreas, ","))
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.kbench == "" || cfg.outDir == "" {
		return nil, errors.New("-kbench and -out are required")
	}
	if cfg.summary == "" {
		cfg.summary = filepath.Join(cfg.outDir, "summary.md")
	}
	cfg.only = map[string]bool{}
	for _, a := range strings.Split(*only, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		known := false
		for _, k := range allAreas {
			known = known || k == a
		}
		if !known {
			return nil, fmt.Errorf("-only: unknown area %q (have %s)", a, strings.Join(allAreas, ","))
		}
		cfg.only[a] = true
	}
	for _, w := range strings.Split(*workloads, ",") {
		if w = strings.TrimSpace(w); w != "" {
			if w != "producer" && w != "consumer" {
				return nil, fmt.Errorf("-ff-workloads: %q is not producer or consumer", w)
			}
			cfg.ffWorkloads = append(cfg.ffWorkloads, w)
		}
	}
	switch {
	case cfg.strace != "auto" && cfg.strace != "on" && cfg.strace != "off":
		return nil, fmt.Errorf("-strace: must be auto, on or off, got %q", cfg.strace)
	case cfg.ffSubmit != submitAuto && cfg.ffSubmit != submitConfigs && cfg.ffSubmit != submitAlternate:
		return nil, fmt.Errorf("-ff-submit: must be auto, configs or alternate, got %q", cfg.ffSubmit)
	case cfg.consumeRecords >= cfg.rawRecords:
		return nil, errors.New("-consume-records must be below -raw-records: the consumers must be able to read too many")
	case len(cfg.ffWorkloads) == 0:
		return nil, errors.New("-ff-workloads: name at least one workload")
	case cfg.ffN < 1 || cfg.ffBatches < 0:
		return nil, errors.New("-ff-n must be ≥ 1 and -ff-batches ≥ 0")
	case cfg.clkTck <= 0 || cfg.poll <= 0 || cfg.sampleEvery <= 0:
		return nil, errors.New("-clk-tck, -poll and -sample must be positive")
	}
	return cfg, nil
}

// suite is one run of the truth suite.
type suite struct {
	cfg   *config
	out   io.Writer
	log   io.Writer
	stamp string

	addr  string
	admin *admin

	checks []check
	tables []ffTable
	runs   []runSummary
	notes  []string

	started, finished time.Time
	loadStart         string
	loadEnd           string
}

// runSummary is one run the checks used, for the summary.
type runSummary struct {
	Name, Args string
	Window     float64
	Err        string
	CPUSamples int
}

func (s *suite) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (s *suite) add(c check) {
	s.checks = append(s.checks, c)
	fmt.Fprintln(s.out, c.line())
}

func (s *suite) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	s.notes = append(s.notes, n)
	s.logf("note: %s", n)
}

func (s *suite) run(ctx context.Context) error {
	if err := os.MkdirAll(s.cfg.outDir, 0o755); err != nil {
		return err
	}
	s.started = time.Now().UTC()
	s.loadStart = loadAverage()
	s.logf("kbench %s; %d cores, load average %s", s.cfg.kbench, runtime.NumCPU(), s.loadStart)
	wantRuns := s.cfg.only[areaCounts] || s.cfg.only[areaRates] || s.cfg.only[areaCPU] || s.cfg.only[areaSyscalls]
	if wantRuns {
		stopBroker, err := s.startBroker(ctx)
		if err != nil {
			return err
		}
		err = s.runChecks(ctx)
		stopBroker()
		if err != nil {
			return err
		}
	}
	if s.cfg.only[areaFalseFlags] {
		if err := s.falseFlags(ctx); err != nil {
			return err
		}
	}
	s.finished = time.Now().UTC()
	s.loadEnd = loadAverage()
	md := s.markdown()
	if err := os.WriteFile(s.cfg.summary, []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(s.out)
	fmt.Fprint(s.out, s.consoleSummary())
	s.logf("summary: %s", s.cfg.summary)
	return nil
}

// startBroker starts one `kbench broker` for every run, so the broker
// outlives each run and can be asked what the run left in it.
func (s *suite) startBroker(ctx context.Context) (stop func(), err error) {
	cmd := exec.CommandContext(ctx, s.cfg.kbench, "broker", "--listen", "127.0.0.1:0")
	logf, err := os.Create(filepath.Join(s.cfg.outDir, "broker.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kbench broker: %w", err)
	}
	stop = func() {
		if s.admin != nil {
			s.admin.close()
		}
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		logf.Close()
	}
	addr := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		var acc []byte
		for {
			n, err := stdout.Read(buf)
			acc = append(acc, buf[:n]...)
			for _, line := range strings.Split(string(acc), "\n") {
				if a, ok := strings.CutPrefix(strings.TrimSpace(line), "kbench broker listening on "); ok {
					addr <- a
					io.Copy(io.Discard, stdout)
					return
				}
			}
			if err != nil {
				close(addr)
				return
			}
		}
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			stop()
			return nil, errors.New("kbench broker exited before listening (see broker.log)")
		}
		s.addr = a
	case <-time.After(30 * time.Second):
		stop()
		return nil, errors.New("kbench broker did not start within 30 s")
	}
	s.admin, err = newAdmin(s.addr)
	if err != nil {
		stop()
		return nil, err
	}
	s.logf("broker at %s (pid %d)", s.addr, cmd.Process.Pid)
	return stop, nil
}

// loadAverage is /proc/loadavg's three averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
