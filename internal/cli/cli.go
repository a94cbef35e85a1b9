package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/kbench/kbench/runner"
)

const usage = `kbench: Kafka client benchmarks with profiles

usage:
  kbench serve [flags]           the web application (default http://127.0.0.1:8080)
  kbench worker --database URL --queue Q   a benchmark machine: runs from a queue of serve's PostgreSQL store
  kbench run producer [flags]    like kafka-producer-perf-test, on kafka-go
  kbench run consumer [flags]    like kafka-consumer-perf-test, on kafka-go
  kbench run writepath [flags]   Produce requests of many buffers: gathering vs other write strategies
  kbench broker [flags]          the embedded broker (franz-go's kfake)
  kbench import --label L FILE   send kafka-producer/consumer-perf-test output to a running kbench serve
  kbench exec --label L -- CMD   run Kafka's perf-test tool (or any command): CPU of its process tree, JFR, stored in a running kbench serve
  kbench check --run ID          for CI: did the run regress against its series' history? (exit 1 if so)

Without --bootstrap-server, "kbench run" starts its own broker process.
"kbench run producer --help" lists a workload's flags.
`

// Main runs the kbench command line: args without the program name; the
// result is the process exit code (0, 1, 2, or check's 3).
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "broker":
		return cmdBroker(ctx, args[1:], stdout, stderr)
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "worker":
		return cmdWorker(ctx, args[1:], stdout, stderr)
	case "import":
		return cmdImport(ctx, args[1:], stdout, stderr)
	case "exec":
		return cmdExec(ctx, args[1:], stdout, stderr)
	case "check":
		return cmdCheck(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "kbench: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// signalContext ends on SIGINT or SIGTERM with the signal as its cause, so a
// stopped run records "interrupted by signal: interrupt", not a bare
// "context canceled".
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			cancel(fmt.Errorf("interrupted by signal: %v", sig))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}

func cmdBroker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kbench broker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts runner.BrokerOptions
	fs.StringVar(&opts.Listen, "listen", "127.0.0.1:9092", "host:port to listen on (port 0 picks a free one)")
	fs.StringVar(&opts.CPUProfile, "cpuprofile", "", "write the broker's CPU profile to this file on exit")
	fs.BoolVar(&opts.Control, "control", false, "read profiling commands from stdin and exit when it closes (used by kbench run)")
	sink := fs.Bool("sink", false, "be the write-path sink instead: answer Produce requests at once, store nothing (used by kbench run writepath --sink)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kbench broker: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *sink {
		err := runner.ServeSink(ctx, runner.SinkOptions{Listen: opts.Listen, CPUProfile: opts.CPUProfile, Control: opts.Control}, os.Stdin, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "kbench broker --sink: %v\n", err)
			return 1
		}
		return 0
	}
	if err := runner.ServeBroker(ctx, opts, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "kbench broker: %v\n", err)
		return 1
	}
	return 0
}

// cmdRun runs `kbench run`: rundoc.ParseRunCommand reads the workload's
// Kafka-style flags and kbench's own --out, --spec and --progress.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd, err := rundoc.ParseRunCommand(args, os.Getenv, runner.Validate)
	prefix := "kbench run"
	if cmd.Workload != "" {
		prefix += " " + string(cmd.Workload)
	}
	if errors.Is(err, rundoc.ErrHelp) {
		if cmd.Workload == "" {
			fmt.Fprint(stdout, runner.Usage(rundoc.Producer), "\n", runner.Usage(rundoc.Consumer), "\n", runner.Usage(rundoc.Writepath), "\n", runner.Usage(rundoc.E2E))
			return 0
		}
		fmt.Fprint(stdout, runner.Usage(cmd.Workload))
		return 0
	}
	if err != nil {
		// Every bad flag on a line of its own.
		var fes rundoc.FieldErrors
		if errors.As(err, &fes) {
			for _, fe := range fes {
				fmt.Fprintf(stderr, "%s: %v\n", prefix, fe)
			}
			return 2
		}
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 2
	}
	if cmd.Spec.Tool != "" {
		return runner.RunTool(ctx, cmd, stdout, stderr)
	}
	spec := cmd.Spec
	opts := runner.Options{OutDir: cmd.Out, JSONProgress: cmd.JSONProgress, Stdout: stdout, Stderr: stderr, Meta: cmd.Meta, JavaHome: cmd.JavaHome}
	if cmd.Server != "" && opts.OutDir == "" {
		// The server takes the run as kbench import DIR sends it: write
		// the result and profiles somewhere, and remove them after.
		tmp, err := os.MkdirTemp("", "kbench-run-")
		if err != nil {
			fmt.Fprintf(stderr, "kbench run %s: --server: %v\n", spec.Workload, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		opts.OutDir = tmp
	}
	res, err := runner.Run(ctx, spec, opts)
	code := 0
	if err != nil {
		var fe *rundoc.FieldError
		if errors.As(err, &fe) {
			fmt.Fprintf(stderr, "kbench run %s: %v\n", spec.Workload, err)
			return 2
		}
		fmt.Fprintf(stderr, "kbench run %s: %v\n", spec.Workload, err)
		if cmd.Out != "" && res != nil {
			fmt.Fprintf(stderr, "kbench run %s: partial results in %s/result.json (complete: false)\n", spec.Workload, opts.OutDir)
		}
		code = 1
	} else if cmd.Out != "" && !opts.JSONProgress {
		fmt.Fprintf(stderr, "kbench: wrote %s/result.json\n", opts.OutDir)
	}
	if cmd.Server != "" {
		if !storeRun(ctx, cmd, opts, res, stdout, stderr) {
			code = 1
		}
	}
	return code
}

// storeRun sends a finished run's result directory to --server as
// `kbench import DIR` does, and prints the stored run's URL (last on
// stdout; on stderr with --progress json, whose stdout is events). A run
// that ended with a result, complete or failed, is stored: a failed run
// is history too (the build that broke the benchmark). A run stopped by
// a signal is not: the user stopped it. It reports whether the run was
// stored or had nothing to store.
func storeRun(ctx context.Context, cmd rundoc.RunCommand, opts runner.Options, res *rundoc.Result, stdout, stderr io.Writer) bool {
	prefix := "kbench run " + string(cmd.Spec.Workload)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "%s: stopped (%v): not stored in %s\n", prefix, context.Cause(ctx), cmd.Server)
		return true
	case res == nil:
		fmt.Fprintf(stderr, "%s: the run left no result: nothing stored in %s\n", prefix, cmd.Server)
		return false
	}
	token := cmd.Token
	if token == "" {
		token = envOr("token", "")
	}
	client := apiClient{base: strings.TrimRight(cmd.Server, "/"), token: token}
	url, err := client.storeResult(ctx, opts.OutDir, nil)
	if err == nil {
		if opts.JSONProgress {
			fmt.Fprintf(stderr, "kbench: stored as %s\n", url)
		} else {
			fmt.Fprintln(stdout, url)
		}
		return true
	}
	fmt.Fprintf(stderr, "%s: the run was not stored: %v\n", prefix, err)
	if cmd.Out != "" {
		fmt.Fprintf(stderr, "%s: its result stays in %s (send it later with: kbench import --server %s %s)\n", prefix, cmd.Out, client.base, cmd.Out)
	}
	return false
}
