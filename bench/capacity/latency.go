package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/median"
)

// children lists the child processes of pid: the union over its threads
// of /proc/PID/task/TID/children (a child is listed under the thread
// that forked it, and kbench forks from one locked thread).
func children(pid int) ([]int, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("process %d: no /proc/%d/task/*/children (gone, or a kernel without CONFIG_PROC_CHILDREN)", pid, pid)
	}
	var out []int
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		out = append(out, parsePIDs(data)...)
	}
	return out, nil
}

// parsePIDs reads the space-separated process ids of a children file.
func parsePIDs(data []byte) []int {
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// runChildID reads a process's /proc/PID/cmdline (NUL-separated
// arguments): for `kbench run --spec …/runs/ID/spec.json …`, the run's
// child after its exec (not the parent's fork before it), it returns ID.
func runChildID(cmdline []byte) (uint, bool) {
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	for i, a := range args {
		if a != "--spec" || i+1 >= len(args) || !slices.Contains(args[:i], "run") {
			continue
		}
		spec := args[i+1]
		dir := filepath.Dir(spec)
		if filepath.Base(spec) != "spec.json" || filepath.Base(filepath.Dir(dir)) != "runs" {
			return 0, false
		}
		n, err := strconv.ParseUint(filepath.Base(dir), 10, 64)
		if err != nil || n == 0 {
			return 0, false
		}
		return uint(n), true
	}
	return 0, false
}

// watcher looks at the children of its parents every poll and records
// when it first saw each run's child process. It runs from before the
// first submission, so a run that starts (or even ends) before its POST
// is answered is still seen.
type watcher struct {
	parents []int
	mu      sync.Mutex
	seen    map[uint]time.Time
	err     error
}

func (w *watcher) run(ctx context.Context, poll time.Duration) {
	known := map[int]bool{} // processes already identified as run children
	for {
		for _, p := range w.parents {
			kids, err := children(p)
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				return
			}
			for _, k := range kids {
				if known[k] {
					continue
				}
				cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", k))
				if err != nil {
					continue
				}
				if id, ok := runChildID(cmd); ok {
					now := time.Now()
					known[k] = true
					w.mu.Lock()
					if _, dup := w.seen[id]; !dup {
						w.seen[id] = now
					}
					w.mu.Unlock()
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// when is when run id's child was first seen.
func (w *watcher) when(id uint) (time.Time, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.seen[id]
	return t, ok, w.err
}

// waitFinal polls the run until it is final.
func waitFinal(ctx context.Context, base string, id uint, limit time.Duration) (apiRun, error) {
	deadline := time.Now().Add(limit)
	for {
		var r apiRun
		if err := getJSON(ctx, base, fmt.Sprintf("/api/runs/%d", id), &r); err != nil {
			return r, err
		}
		if slices.Contains(finalStatuses, string(r.Status)) {
			return r, nil
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("run %d still %s after %v", id, r.Status, limit)
		}
		select {
		case <-ctx.Done():
			return r, context.Cause(ctx)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// medianOr0 is the median of xs; 0 for none, so that the JSON
// summary stays valid.
func medianOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return median.Of(xs)
}

func cmdLatency(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("latency", flag.ExitOnError)
	base := fs.String("base", "", "the server's URL")
	queue := fs.String("queue", "", "queue of the runs (empty: the server's default, local)")
	bootstrap := fs.String("bootstrap", "", "the shared broker's host:port")
	records := fs.Int("records", 200, "records per run")
	label := fs.String("label", "latency", "label of the runs")
	n := fs.Int("n", 20, "runs, one at a time")
	parentList := fs.String("parents", "", "process ids whose children are the runs (the workers, or serve with its local worker), comma-separated")
	idle := fs.Duration("idle", time.Second, "pause after a run is final before submitting the next, so the workers are idle")
	poll := fs.Duration("poll", 2*time.Millisecond, "how often to look for the child process")
	fs.Parse(args)
	if *base == "" || *bootstrap == "" || *parentList == "" || *n < 1 {
		return errors.New("need -base, -bootstrap, -parents and -n ≥ 1")
	}
	var parents []int
	for _, p := range strings.Split(*parentList, ",") {
		pid, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("-parents: %w", err)
		}
		parents = append(parents, pid)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := &watcher{parents: parents, seen: map[uint]time.Time{}}
	go w.run(wctx, *poll)
	var toChild, toRunning []float64
	var ids []uint
	for i := range *n {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(*idle):
		}
		body := map[string]any{"workload": "producer", "label": *label, "params": runParams(*bootstrap, *records)}
		if *queue != "" {
			body["queue"] = *queue
		}
		t0 := time.Now()
		runs, err := postRuns(ctx, *base, body)
		if err != nil {
			return err
		}
		if len(runs) != 1 {
			return fmt.Errorf("submission %d: %d runs, want 1", i, len(runs))
		}
		id := runs[0].ID
		r, err := waitFinal(ctx, *base, id, 5*time.Minute)
		if err != nil {
			return err
		}
		if r.Status != "succeeded" {
			return fmt.Errorf("run %d ended %s: %s", id, r.Status, r.Error)
		}
		seen, ok, err := w.when(id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("run %d succeeded but its child process was never seen among the children of %v (poll %v)", id, parents, *poll)
		}
		ids = append(ids, id)
		toChild = append(toChild, float64(seen.Sub(t0).Microseconds())/1000)
		if r.StartedAt != nil {
			// Both stamped on this machine's clock: by the server (created)
			// and by the worker that took the run (started).
			toRunning = append(toRunning, float64(r.StartedAt.Sub(r.CreatedAt).Microseconds())/1000)
		}
	}
	out := map[string]any{
		"n": len(toChild), "queue": *queue, "ids": ids,
		"submit_to_child_ms_median": medianOr0(toChild), "submit_to_child_ms_min": slices.Min(toChild), "submit_to_child_ms_max": slices.Max(toChild),
		"submit_to_child_ms":           toChild,
		"created_to_running_ms_median": medianOr0(toRunning), "created_to_running_ms": toRunning,
	}
	data, _ := json.Marshal(out)
	fmt.Println(string(data))
	return nil
}
