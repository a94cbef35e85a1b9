// Command seed fills a kbench data directory with a history of finished
// runs, stored through the store package as `kbench serve` stores them, so
// the serve benchmark lists and opens pages over a realistic database:
//
//	go run ./bench/serve/seed -data "$(mktemp -d)/kbench-data" -runs 10000
//
// It refuses a database that already holds runs (unless -append), prints
// progress to stderr and, last, one JSON line with what it stored,
// including sample_run_id: a succeeded producer run with metrics, series
// and profiles.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/kbench/kbench/bench/serve/fixture"
	"github.com/kbench/kbench/internal/store"
)

func main() {
	data := flag.String("data", "", "kbench data directory (the database is DIR/kbench.db); required")
	runs := flag.Int("runs", 10_000, "runs to store")
	seed := flag.Uint64("seed", 1, "seed of the generated content")
	batch := flag.Int("batch", 250, "runs per transaction")
	profiles := flag.Bool("profiles", true, "store 3 small pprof profiles with each succeeded run")
	appendRuns := flag.Bool("append", false, "add to a database that already holds runs")
	quiet := flag.Bool("quiet", false, "no progress on stderr")
	flag.Parse()
	if *data == "" || flag.NArg() > 0 || *runs <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *data, *runs, *seed, *batch, *profiles, *appendRuns, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, data string, runs int, seed uint64, batch int, profiles, appendRuns, quiet bool) error {
	st, err := store.Open(filepath.Join(data, "kbench.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	have, err := st.CountRuns(ctx)
	if err != nil {
		return err
	}
	if have > 0 && !appendRuns {
		return fmt.Errorf("%s already holds %d runs; use a fresh directory or -append", data, have)
	}
	start := time.Now()
	last := start
	stats, err := fixture.Seed(ctx, st, fixture.Options{
		Runs: runs, Seed: seed, Batch: batch, NoProfiles: !profiles,
		Progress: func(n int) {
			if !quiet && (time.Since(last) > 2*time.Second || n == runs) {
				last = time.Now()
				fmt.Fprintf(os.Stderr, "seed: %d/%d runs stored (%.1fs)\n", n, runs, time.Since(start).Seconds())
			}
		},
	})
	if err != nil {
		return err
	}
	total, err := st.CountRuns(ctx)
	if err != nil {
		return err
	}
	var dbBytes int64
	if fi, err := os.Stat(filepath.Join(data, "kbench.db")); err == nil {
		dbBytes = fi.Size()
	}
	out := struct {
		fixture.Stats
		TotalRuns int64   `json:"total_runs"`
		Seconds   float64 `json:"seconds"`
		DBBytes   int64   `json:"db_bytes"`
		DataDir   string  `json:"data_dir"`
	}{stats, total, time.Since(start).Seconds(), dbBytes, data}
	line, err := json.Marshal(out)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	return nil
}
