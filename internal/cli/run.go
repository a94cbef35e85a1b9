package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/runner"
)

// Run is `kbench run`, also the child command line of every queued run
// (kbench run --spec FILE --out DIR --progress json).
var Run = &Command{
	Name:      "run",
	UsageLine: "run producer|consumer|writepath|e2e [flags]",
	Short:     "one benchmark on kafka-go, like Kafka's perf-test tools (writepath: Produce requests of many buffers; omb WORKLOAD.yaml DRIVER.yaml: an OpenMessaging Benchmark workload)",
	Run:       cmdRun,
}

// cmdRun runs `kbench run`: rundoc.ParseRunCommand reads the workload's
// Kafka-style flags and kbench's own --out, --spec and --progress.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "omb" {
		return cmdRunOMB(ctx, args[1:], stdout, stderr)
	}
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
	if cmd.Workers > 1 {
		return submitFleet(ctx, cmd, stdout, stderr)
	}
	if cmd.Spec.Tool != "" {
		return runner.RunTool(ctx, cmd, stdout, stderr)
	}
	return runSpec(ctx, cmd, stdout, stderr)
}

// submitFleet submits cmd's run to --server as a fleet run of --workers
// workers of --queue, and prints the parent run's URL: the run executes
// on those workers, not here. The server's field errors name the API's
// fields (workers, queue, barrier_timeout_s, or the workload's flags).
func submitFleet(ctx context.Context, cmd rundoc.RunCommand, stdout, stderr io.Writer) int {
	prefix := "kbench run " + string(cmd.Spec.Workload)
	params, err := cmd.Spec.Params()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 1
	}
	token := cmd.Token
	if token == "" {
		token = envOr("token", "")
	}
	c := newAPIClient(cmd.Server, token)
	created, err := c.CreateRuns(ctx, client.CreateRuns{Workload: cmd.Spec.Workload, Params: params, Queue: cmd.Queue,
		Meta: cmd.Meta, Workers: cmd.Workers, BarrierTimeoutS: cmd.BarrierTimeoutS})
	if err != nil {
		fmt.Fprintf(stderr, "%s: the server refused the fleet run: %v\n", prefix, err)
		return 1
	}
	fmt.Fprintf(stderr, "%s: submitted as a fleet run of %d workers; follow it at\n", prefix, cmd.Workers)
	fmt.Fprintln(stdout, c.BaseURL()+created.URL)
	return 0
}

// runSpec runs cmd's spec with kbench's client, writes its result where
// --out says and stores it in --server; the result is the exit code.
func runSpec(ctx context.Context, cmd rundoc.RunCommand, stdout, stderr io.Writer) int {
	spec := cmd.Spec
	opts := runner.Options{OutDir: cmd.Out, JSONProgress: cmd.JSONProgress, Stdout: stdout, Stderr: stderr, Meta: cmd.Meta, JavaHome: cmd.JavaHome}
	if spec.Shard != nil {
		// A fleet's shard waits for its start on stdin (its worker's).
		opts.Stdin = os.Stdin
	}
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
	client := newAPIClient(cmd.Server, token)
	url, err := storeResult(ctx, client, opts.OutDir, nil)
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
		fmt.Fprintf(stderr, "%s: its result stays in %s (send it later with: kbench import --server %s %s)\n", prefix, cmd.Out, client.BaseURL(), cmd.Out)
	}
	return false
}
