// Command fleet is the measuring half of bench/fleet/run.sh: it submits
// fleet runs ("workers": N) to a running kbench serve, waits for each,
// and measures what coordinating the shards costs. run.sh starts the
// processes (PostgreSQL, one kbench broker, the server, the workers);
// this program talks to them through the interfaces users have (the
// HTTP API and /proc).
//
//	fleet -base URL -queue Q -bootstrap ADDR -workload producer -workers 4 -rounds 5 \
//	      -server-pid P -postmaster-pid PM -out rounds.jsonl
//
// Per round it records:
//   - the barrier's skew: the spread of the shards' measured-window
//     openings on the database's clock (the API's fleet.start_skew_ms);
//   - submit to start: from the POST to the fleet's common start (T0),
//     less the lead the server waits after the last check-in, so that
//     what remains is queueing, taking, child start-up, set-up and the
//     check-ins;
//   - the server's and the database's CPU from the POST to the parent's
//     merge, per shard (the server's includes this program's polling of
//     GET /api/runs/ID every 250 ms), and, as the peer measured right
//     after in the same round, the same for one ordinary run of one
//     shard's share: the ratio is what being a shard costs the server
//     and the database over being a run.
//
// It prints one JSON summary (medians and maxima over the rounds) and
// exits 1 when a fleet does not succeed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/median"
)

// leadS is the server's wait from the last check-in to the start
// (launch's fleetLead): subtracted from submit-to-start.
const leadS = 3.0

// round is one fleet run's figures.
type round struct {
	Round         int     `json:"round"`
	RunID         uint    `json:"run_id"`
	SkewMs        float64 `json:"skew_ms"`
	SubmitToT0S   float64 `json:"submit_to_t0_s"`
	GatherS       float64 `json:"gather_s"` // submit to T0 less the lead
	ServerCPUS    float64 `json:"server_cpu_s"`
	DatabaseCPUS  float64 `json:"database_cpu_s"`
	ServerCPUMsSh float64 `json:"server_cpu_ms_per_shard"`
	DBCPUMsSh     float64 `json:"database_cpu_ms_per_shard"`
	RecordsPerSec float64 `json:"records_per_sec"`
	ClockOffsetMs []float64
	// The peer measured right after: one ordinary run of one shard's
	// share, its server and database CPU, and the fleet's per shard
	// over it.
	SingleServerCPUMs float64 `json:"single_server_cpu_ms"`
	SingleDBCPUMs     float64 `json:"single_database_cpu_ms"`
	ServerRatio       float64 `json:"server_cpu_ratio"`
	DBRatio           float64 `json:"database_cpu_ratio"`
}

func main() {
	base := flag.String("base", "", "the server's base URL")
	queue := flag.String("queue", "fleet", "the workers' queue")
	bootstrap := flag.String("bootstrap", "", "the broker's address")
	workload := flag.String("workload", "producer", "producer or e2e")
	workers := flag.Int("workers", 4, "shards per fleet")
	rounds := flag.Int("rounds", 5, "fleet runs")
	duration := flag.Float64("duration", 5, "each fleet's window, seconds")
	rate := flag.Int("rate", 4000, "the fleet's records/s")
	serverPID := flag.Int("server-pid", 0, "kbench serve's pid")
	postmasterPID := flag.Int("postmaster-pid", 0, "PostgreSQL's postmaster pid")
	out := flag.String("out", "", "a file for one JSON line per round")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *base, *queue, *bootstrap, *workload, *workers, *rounds, *duration, *rate, *serverPID, *postmasterPID, *out); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base, queue, bootstrap, workload string, workers, rounds int, duration float64, rate, serverPID, pmPID int, out string) error {
	if base == "" || bootstrap == "" || serverPID == 0 || pmPID == 0 {
		return errors.New("give -base, -bootstrap, -server-pid and -postmaster-pid")
	}
	c := client.New(base, "")
	var lines bytes.Buffer
	var all []round
	for i := range rounds {
		topic := fmt.Sprintf("fleet-%s-%d-%d", workload, time.Now().Unix(), i)
		params := map[string]any{"bootstrap-server": bootstrap, "topic": topic, "partitions": 2 * workers, "threads": workers,
			"record-size": 100, "throughput": rate, "duration": duration, "profile": "none"}
		s0, d0, err := cpu(serverPID, pmPID)
		if err != nil {
			return err
		}
		submitted := time.Now()
		created, err := c.CreateRuns(ctx, client.CreateRuns{Workload: client.Workload(workload), Label: "bench/fleet " + workload,
			Queue: queue, Params: rawParams(workload, params), Workers: workers})
		if err != nil {
			return fmt.Errorf("round %d: submit: %w", i+1, err)
		}
		parent, err := wait(ctx, c, created.ID)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		s1, d1, err := cpu(serverPID, pmPID)
		if err != nil {
			return err
		}
		if parent.Status != "succeeded" || parent.Fleet == nil || parent.Fleet.StartAt == nil || parent.Fleet.StartSkewMs == nil {
			return fmt.Errorf("round %d: fleet %d %s %q", i+1, parent.ID, parent.Status, parent.Error)
		}
		r := round{Round: i + 1, RunID: parent.ID, SkewMs: *parent.Fleet.StartSkewMs, SubmitToT0S: parent.Fleet.StartAt.Sub(submitted).Seconds(),
			ServerCPUS: s1 - s0, DatabaseCPUS: d1 - d0}
		r.GatherS = r.SubmitToT0S - leadS
		r.ServerCPUMsSh = r.ServerCPUS * 1000 / float64(workers)
		r.DBCPUMsSh = r.DatabaseCPUS * 1000 / float64(workers)
		if m, ok := parent.Metric(rateMetric(workload)); ok {
			r.RecordsPerSec = m.Value
		}
		for _, sh := range parent.Shards {
			if sh.ClockOffsetMs != nil {
				r.ClockOffsetMs = append(r.ClockOffsetMs, *sh.ClockOffsetMs)
			}
		}
		ss, sd, err := single(ctx, c, queue, bootstrap, workload, rate/workers, duration, serverPID, pmPID)
		if err != nil {
			return fmt.Errorf("round %d: the single run: %w", i+1, err)
		}
		r.SingleServerCPUMs, r.SingleDBCPUMs = ss*1000, sd*1000
		r.ServerRatio, r.DBRatio = r.ServerCPUMsSh/r.SingleServerCPUMs, r.DBCPUMsSh/r.SingleDBCPUMs
		all = append(all, r)
		b, _ := json.Marshal(r)
		lines.Write(append(b, '\n'))
		fmt.Fprintf(os.Stderr, "round %d: fleet %d skew %.2f ms, submit→T0 %.2f s, server %.0f ms/shard (single run %.0f), database %.0f ms/shard (single run %.0f)\n",
			r.Round, r.RunID, r.SkewMs, r.SubmitToT0S, r.ServerCPUMsSh, r.SingleServerCPUMs, r.DBCPUMsSh, r.SingleDBCPUMs)
	}
	if out != "" {
		if err := os.WriteFile(out, lines.Bytes(), 0o644); err != nil {
			return err
		}
	}
	col := func(f func(round) float64) map[string]float64 {
		xs := make([]float64, len(all))
		for i, r := range all {
			xs[i] = f(r)
		}
		return map[string]float64{"median": median.Of(xs), "max": slices.Max(xs), "min": slices.Min(xs)}
	}
	summary := map[string]any{
		"workload": workload, "workers": workers, "rounds": len(all), "duration_s": duration, "rate": rate,
		"skew_ms":                   col(func(r round) float64 { return r.SkewMs }),
		"submit_to_t0_s":            col(func(r round) float64 { return r.SubmitToT0S }),
		"gather_s":                  col(func(r round) float64 { return r.GatherS }),
		"server_cpu_ms_per_shard":   col(func(r round) float64 { return r.ServerCPUMsSh }),
		"database_cpu_ms_per_shard": col(func(r round) float64 { return r.DBCPUMsSh }),
		"records_per_sec":           col(func(r round) float64 { return r.RecordsPerSec }),
		"single_server_cpu_ms":      col(func(r round) float64 { return r.SingleServerCPUMs }),
		"single_database_cpu_ms":    col(func(r round) float64 { return r.SingleDBCPUMs }),
		"server_cpu_ratio":          col(func(r round) float64 { return r.ServerRatio }),
		"database_cpu_ratio":        col(func(r round) float64 { return r.DBRatio }),
	}
	return json.NewEncoder(os.Stdout).Encode(summary)
}

// rawParams are params as the API takes them; e2e runs in rate mode.
func rawParams(workload string, params map[string]any) map[string]json.RawMessage {
	if workload == "e2e" {
		params["mode"] = "rate"
	}
	raw := map[string]json.RawMessage{}
	for k, v := range params {
		b, _ := json.Marshal(v)
		raw[k] = b
	}
	return raw
}

// rateMetric is the merged rate a workload's parent reports.
func rateMetric(workload string) string {
	if workload == "e2e" {
		return "consume-rate"
	}
	return "record-send-rate"
}

// single submits the peer of one shard: an ordinary run of the shard's
// share (its rate, two partitions, one producer) and measures the
// server's and the database's CPU from its POST to its end.
func single(ctx context.Context, c *client.Client, queue, bootstrap, workload string, rate int, duration float64, serverPID, pmPID int) (server, database float64, err error) {
	params := map[string]any{"bootstrap-server": bootstrap, "topic": fmt.Sprintf("single-%s-%d", workload, time.Now().UnixNano()),
		"partitions": 2, "threads": 1, "record-size": 100, "throughput": rate, "duration": duration, "profile": "none"}
	s0, d0, err := cpu(serverPID, pmPID)
	if err != nil {
		return 0, 0, err
	}
	created, err := c.CreateRuns(ctx, client.CreateRuns{Workload: client.Workload(workload), Label: "bench/fleet single " + workload,
		Queue: queue, Params: rawParams(workload, params)})
	if err != nil {
		return 0, 0, err
	}
	r, err := wait(ctx, c, created.ID)
	if err != nil {
		return 0, 0, err
	}
	if r.Status != "succeeded" {
		return 0, 0, fmt.Errorf("single run %d %s %q", r.ID, r.Status, r.Error)
	}
	s1, d1, err := cpu(serverPID, pmPID)
	return s1 - s0, d1 - d0, err
}

// wait polls run id every 250 ms until it is final.
func wait(ctx context.Context, c *client.Client, id uint) (*client.Run, error) {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		r, err := c.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		if r.Status != "queued" && r.Status != "running" {
			return r, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("fleet %d still %s after 5 minutes", id, r.Status)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// cpu is the CPU seconds the server has used, and those of the database:
// the postmaster, its exited children (waited for, so counted in its
// cutime) and its live ones (each connection's backend).
func cpu(serverPID, pmPID int) (server, database float64, err error) {
	hz := 100.0 // USER_HZ on Linux
	own, _, err := ticks(serverPID)
	if err != nil {
		return 0, 0, err
	}
	pmOwn, pmChildren, err := ticks(pmPID)
	if err != nil {
		return 0, 0, err
	}
	db := pmOwn + pmChildren
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if ppid, err := parentOf(pid); err == nil && ppid == pmPID {
			if o, _, err := ticks(pid); err == nil {
				db += o
			}
		}
	}
	return own / hz, db / hz, nil
}

// statFields are the fields of /proc/PID/stat after the command.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	return strings.Fields(string(data[i+1:])), nil
}

// ticks are a process's own CPU ticks (utime+stime) and its waited-for
// children's (cutime+cstime).
func ticks(pid int) (own, children float64, err error) {
	f, err := statFields(pid)
	if err != nil || len(f) < 15 {
		return 0, 0, fmt.Errorf("process %d: %v", pid, err)
	}
	n := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v }
	// state is f[0]: utime is field 14 of the line, f[11].
	return n(11) + n(12), n(13) + n(14), nil
}

func parentOf(pid int) (int, error) {
	f, err := statFields(pid)
	if err != nil || len(f) < 2 {
		return 0, errors.New("no stat")
	}
	return strconv.Atoi(f[1])
}
