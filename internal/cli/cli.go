// Package cli is the kbench command line: one file per command (serve,
// worker, run, broker, import, exec, check), each a Command of the table
// Commands, and the flag handling they share (flags.go). It builds what
// a command runs with from flags and KBENCH_* variables, and maps the
// outcome to the exit code; the work itself is done by the packages it
// imports: server and the lifecycle (serve, worker), runner (run,
// broker), check (check) and the server's JSON API (import, exec, check,
// run --server).
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Command is one kbench command, as cmd/go's: `kbench NAME ARGS…` runs
// it, and the usage lists it from UsageLine and Short.
type Command struct {
	// Name is the word that selects the command.
	Name string
	// UsageLine is the command's synopsis after "kbench ".
	UsageLine string
	// Short says in a few words what it does.
	Short string
	// Run runs it with the arguments after its name; the result is the
	// exit code: 0 success, 1 failure, 2 bad usage (check also has 3).
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// Commands is kbench's command table, in the order the usage lists it.
var Commands = []*Command{Serve, Worker, Run, Broker, Import, Exec, Check}

// Main runs the kbench command line: args without the program name; the
// result is the process exit code (0, 1, 2, or check's 3). No command
// prints the usage and is bad usage; help, -h and --help print it.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage(Commands))
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage(Commands))
		return 0
	}
	for _, c := range Commands {
		if c.Name == args[0] {
			ctx, stop := signalContext()
			defer stop()
			return c.Run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "kbench: unknown command %q\n\n%s", args[0], usage(Commands))
	return 2
}

// usage is kbench's usage, listing cmds.
func usage(cmds []*Command) string {
	var b strings.Builder
	b.WriteString("kbench: Kafka client benchmarks with profiles\n\nusage:\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-28s   %s\n", "kbench "+c.UsageLine, c.Short)
	}
	b.WriteString(`
Without --bootstrap-server, "kbench run" starts its own broker process.
"kbench run producer --help" lists a workload's flags.
"kbench COMMAND -h" lists a command's flags.
`)
	return b.String()
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
