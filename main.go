// Command kbench runs Kafka client benchmarks on github.com/segmentio/kafka-go,
// captures pprof profiles while they run, and (with `kbench serve`) keeps
// every run for comparison.
//
// Its commands are the table cli.Commands, one file each in internal/cli:
//
//	kbench serve [flags]                   the web application
//	kbench worker --database URL           a benchmark machine taking runs from serve's PostgreSQL store
//	kbench run producer|consumer|writepath [flags]   run one benchmark (Kafka's perf-test flags)
//	kbench broker [--listen ADDR]          run the embedded Kafka-protocol broker
//	kbench import --label L FILE           send Kafka perf-tool output to a running server
//	kbench exec --label L -- CMD ARGS…     run a Kafka tool (or any command), sample and store it
//	kbench check --run ID                  for CI: did the run regress?
//
// Exit codes: 0 success, 1 the run failed (partial results are still
// written), 2 bad usage; kbench check's 3: it could not decide.
package main

import (
	"os"

	"github.com/kbench/kbench/internal/childproc"
	"github.com/kbench/kbench/internal/cli"
)

func main() {
	childproc.ExitIfOrphaned() // started by a kbench that is already gone: do not run on
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
