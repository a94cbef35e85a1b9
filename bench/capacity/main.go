// Command capacity is the measuring half of bench/capacity/run.sh: it
// submits runs to a running `kbench serve` through POST /api/runs, waits
// for them in the shared PostgreSQL database, checks that each was
// executed exactly once, and measures submit → child process started with
// idle workers. run.sh starts the processes (PostgreSQL, a broker, the
// server, the workers) and reads /proc for CPU; this program talks to
// them only through the interfaces users have (the HTTP API, the
// database, the workers' --data directories and /proc).
//
//	capacity submit  -base URL -n 1000 -queue cap -bootstrap ADDR -label L -out submitted.json
//	capacity wait    -database URL -submitted submitted.json
//	capacity verify  -database URL -base URL -submitted submitted.json -data d1,d2 -pids p1,p2
//	capacity latency -base URL -queue cap -bootstrap ADDR -parents p1,p2 -n 20
//	capacity dbsize  -database URL -out sizes.tsv   (until SIGTERM)
//
// Each prints one JSON object on stdout (dbsize writes its file) and
// exits 1 when what it checks does not hold.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: capacity submit|wait|verify|latency|dbsize [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmds := map[string]func(context.Context, []string) error{
		"submit":  cmdSubmit,
		"wait":    cmdWait,
		"verify":  cmdVerify,
		"latency": cmdLatency,
		"dbsize":  cmdDBSize,
	}
	cmd, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "capacity: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err := cmd(ctx, os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "capacity %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
