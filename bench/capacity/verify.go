package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	// The pgx driver for database/sql ("pgx").
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/kbench/kbench/client"
)

// finalStatuses are rundoc's final statuses, as stored.
var finalStatuses = []string{"succeeded", "failed", "canceled", "interrupted"}

func openDB(url string) (*sql.DB, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	return db, nil
}

// idArray is ids as a PostgreSQL bigint[] literal.
func idArray(ids []uint) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatUint(uint64(id), 10)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func cmdWait(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("wait", flag.ExitOnError)
	dbURL := fs.String("database", "", "the shared PostgreSQL URL")
	subPath := fs.String("submitted", "", "what submit wrote")
	timeout := fs.Duration("timeout", 2*time.Hour, "give up after this long")
	fs.Parse(args)
	s, err := readSubmitted(*subPath)
	if err != nil {
		return err
	}
	db, err := openDB(*dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(*timeout)
	lastLog := time.Now()
	for {
		var final int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ANY($1::bigint[]) AND status = ANY($2::text[])`,
			idArray(s.IDs), "{"+strings.Join(finalStatuses, ",")+"}").Scan(&final)
		if err != nil {
			return fmt.Errorf("count final runs: %w", err)
		}
		if final == len(s.IDs) {
			fmt.Printf(`{"final":%d,"seen_at":%q}`+"\n", final, time.Now().UTC().Format(time.RFC3339Nano))
			return nil
		}
		if time.Since(lastLog) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "capacity wait: %d of %d runs final\n", final, len(s.IDs))
			lastLog = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v only %d of %d runs are final", *timeout, final, len(s.IDs))
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// dbRun is a run's row as the checks need it.
type dbRun struct {
	ID         uint
	Status     string
	Error      string
	Queue      string
	Worker     string
	WorkerID   sql.NullInt64
	WorkerPID  sql.NullInt64
	StartedAt  sql.NullTime
	FinishedAt sql.NullTime
}

// riverJob is a River job row of the queue.
type riverJob struct {
	ID          int64
	RunID       uint
	State       string
	Attempt     int
	AttemptedBy []string
}

// findings collects the violations of one verification; it prints the
// first few of each kind and counts the rest.
type findings struct {
	list   []string
	counts map[string]int
}

func (f *findings) add(kind, format string, args ...any) {
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[kind]++
	if f.counts[kind] <= 10 {
		f.list = append(f.list, kind+": "+fmt.Sprintf(format, args...))
	} else if f.counts[kind] == 11 {
		f.list = append(f.list, kind+": … (more below in the counts)")
	}
}

// workerDir is one worker process and its --data directory.
type workerDir struct {
	PID int
	Dir string
}

// dirRuns lists the run directories in a worker's --data directory.
func dirRuns(dir string) ([]uint, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "runs"))
	if err != nil {
		return nil, err
	}
	var ids []uint
	for _, e := range entries {
		n, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil || !e.IsDir() {
			return nil, fmt.Errorf("%s: unexpected entry %q", dir, e.Name())
		}
		ids = append(ids, uint(n))
	}
	return ids, nil
}

// check applies every rule of "executed exactly once" to what the
// database, River, the workers' directories and the API say about the
// submitted runs. perDir[i] are the run directories in workers[i].Dir.
func check(s submitted, runs []dbRun, jobs []riverJob, workers []workerDir, perDir [][]uint, api []apiRun, apiTotal int) (findings, map[string]int) {
	var f findings
	want := make(map[uint]bool, len(s.IDs))
	for _, id := range s.IDs {
		want[id] = true
	}
	if len(want) != s.N || len(s.IDs) != s.N {
		f.add("submission", "%d ids for %d runs (%d distinct)", len(s.IDs), s.N, len(want))
	}

	// The database: exactly the submitted runs in the queue, each
	// succeeded, started and finished, by a registered worker.
	byID := make(map[uint]dbRun, len(runs))
	for _, r := range runs {
		if _, dup := byID[r.ID]; dup {
			f.add("database", "run %d listed twice", r.ID)
		}
		byID[r.ID] = r
		if !want[r.ID] {
			f.add("database", "run %d is in queue %s but was not submitted", r.ID, r.Queue)
		}
		if r.Status != "succeeded" {
			f.add("status", "run %d ended %s: %s", r.ID, r.Status, r.Error)
		}
		if r.Queue != s.Queue {
			f.add("database", "run %d is in queue %q, want %q", r.ID, r.Queue, s.Queue)
		}
		if !r.WorkerID.Valid || !r.WorkerPID.Valid || r.Worker == "" {
			f.add("worker", "run %d records no worker (worker %q, worker_id %v)", r.ID, r.Worker, r.WorkerID)
		}
		if !r.StartedAt.Valid || !r.FinishedAt.Valid {
			f.add("database", "run %d has no start or finish time", r.ID)
		}
	}
	for _, id := range s.IDs {
		if _, ok := byID[id]; !ok {
			f.add("lost", "run %d was submitted but is not in the database's queue %s", id, s.Queue)
		}
	}

	// River: one job per run, completed at its first attempt by one
	// client.
	jobsOf := map[uint]int{}
	for _, j := range jobs {
		jobsOf[j.RunID]++
		if !want[j.RunID] {
			f.add("river", "job %d is for run %d, which was not submitted", j.ID, j.RunID)
		}
		if j.State != "completed" || j.Attempt != 1 || len(j.AttemptedBy) != 1 {
			f.add("river", "job %d (run %d): state %s, attempt %d, attempted by %v; want completed, 1, one client", j.ID, j.RunID, j.State, j.Attempt, j.AttemptedBy)
		}
	}
	for _, id := range s.IDs {
		if n := jobsOf[id]; n != 1 {
			f.add("river", "run %d has %d jobs, want 1", id, n)
		}
	}

	// The workers' directories: each run's working directory in exactly
	// one, and that one the worker the database records.
	dirOf := map[uint][]int{}
	for i, ids := range perDir {
		for _, id := range ids {
			dirOf[id] = append(dirOf[id], i)
			if !want[id] {
				f.add("directory", "%s holds run %d, which was not submitted", workers[i].Dir, id)
			}
		}
	}
	perWorker := map[string]int{}
	for _, id := range s.IDs {
		ws := dirOf[id]
		if len(ws) != 1 {
			var dirs []string
			for _, i := range ws {
				dirs = append(dirs, workers[i].Dir)
			}
			f.add("directory", "run %d has a working directory in %d workers' --data (%v), want exactly 1", id, len(ws), dirs)
			continue
		}
		w := workers[ws[0]]
		perWorker[strconv.Itoa(w.PID)]++
		if r, ok := byID[id]; ok && r.WorkerPID.Valid && int(r.WorkerPID.Int64) != w.PID {
			f.add("worker", "run %d ran in the directory of worker pid %d, but the database records worker pid %d", id, w.PID, r.WorkerPID.Int64)
		}
	}

	// The API: the label lists exactly the submitted runs, succeeded, in
	// the queue, with a worker.
	if apiTotal != s.N || len(api) != s.N {
		f.add("api", "GET /api/runs?label=%s: total %d, listed %d; want %d", s.Label, apiTotal, len(api), s.N)
	}
	seen := map[uint]bool{}
	for _, r := range api {
		if seen[r.ID] {
			f.add("api", "run %d listed twice", r.ID)
		}
		seen[r.ID] = true
		if !want[r.ID] {
			f.add("api", "run %d has the label but was not submitted", r.ID)
		}
		if r.Status != "succeeded" || r.Queue != s.Queue || r.Worker == "" {
			f.add("api", "run %d: status %s, queue %q, worker %q: %s", r.ID, r.Status, r.Queue, r.Worker, r.Error)
		}
	}
	return f, perWorker
}

func cmdVerify(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("verify", flag.ExitOnError)
	dbURL := fs.String("database", "", "the shared PostgreSQL URL")
	base := fs.String("base", "", "the server's URL")
	subPath := fs.String("submitted", "", "what submit wrote")
	dataDirs := fs.String("data", "", "the workers' --data directories, comma-separated")
	pids := fs.String("pids", "", "the workers' process ids, in the order of -data")
	fs.Parse(args)
	s, err := readSubmitted(*subPath)
	if err != nil {
		return err
	}
	dirs, pidList := strings.Split(*dataDirs, ","), strings.Split(*pids, ",")
	if *dataDirs == "" || len(dirs) != len(pidList) {
		return errors.New("need -data and -pids of the same length")
	}
	var workers []workerDir
	var perDir [][]uint
	for i, d := range dirs {
		pid, err := strconv.Atoi(pidList[i])
		if err != nil {
			return fmt.Errorf("-pids: %w", err)
		}
		ids, err := dirRuns(d)
		if err != nil {
			return err
		}
		workers = append(workers, workerDir{PID: pid, Dir: d})
		perDir = append(perDir, ids)
	}
	db, err := openDB(*dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	runs, err := queryRuns(ctx, db, s.Queue)
	if err != nil {
		return err
	}
	jobs, err := queryJobs(ctx, db, s.Queue)
	if err != nil {
		return err
	}
	var api []apiRun
	apiTotal := 0
	for offset := 0; ; {
		var page client.RunList
		if err := getJSON(ctx, *base, fmt.Sprintf("/api/runs?label=%s&limit=500&offset=%d", s.Label, offset), &page); err != nil {
			return err
		}
		api = append(api, page.Runs...)
		apiTotal = int(page.Total)
		offset += len(page.Runs)
		if len(page.Runs) == 0 || int64(offset) >= page.Total {
			break
		}
	}
	f, perWorker := check(s, runs, jobs, workers, perDir, api, apiTotal)

	var first, last time.Time
	statuses := map[string]int{}
	perWorkerDB := map[string]int{}
	for _, r := range runs {
		statuses[r.Status]++
		if r.WorkerPID.Valid {
			perWorkerDB[strconv.FormatInt(r.WorkerPID.Int64, 10)]++
		}
		if r.StartedAt.Valid && (first.IsZero() || r.StartedAt.Time.Before(first)) {
			first = r.StartedAt.Time
		}
		if r.FinishedAt.Valid && r.FinishedAt.Time.After(last) {
			last = r.FinishedAt.Time
		}
	}
	wall := last.Sub(s.First).Seconds()
	out := map[string]any{
		"n": s.N, "statuses": statuses, "river_jobs": len(jobs),
		"per_worker_pid_dirs": perWorker, "per_worker_pid_db": perWorkerDB,
		"first_submit": s.First, "first_start": first, "last_final": last,
		"wall_seconds": wall, "runs_per_second": float64(s.N) / wall,
		"submit_seconds": s.SubmitSec, "violations": f.counts, "ok": len(f.list) == 0,
	}
	data, _ := json.Marshal(out)
	fmt.Println(string(data))
	if len(f.list) > 0 {
		for _, l := range f.list {
			fmt.Fprintln(os.Stderr, "VIOLATION", l)
		}
		return fmt.Errorf("%d violations", sumCounts(f.counts))
	}
	return nil
}

func sumCounts(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

func queryRuns(ctx context.Context, db *sql.DB, queue string) ([]dbRun, error) {
	rows, err := db.QueryContext(ctx, `SELECT r.id, r.status, r.error, r.queue, r.worker, r.worker_id, w.pid, r.started_at, r.finished_at
		FROM runs r LEFT JOIN workers w ON w.id = r.worker_id WHERE r.queue = $1 ORDER BY r.id`, queue)
	if err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	defer rows.Close()
	var out []dbRun
	for rows.Next() {
		var r dbRun
		var errText sql.NullString
		if err := rows.Scan(&r.ID, &r.Status, &errText, &r.Queue, &r.Worker, &r.WorkerID, &r.WorkerPID, &r.StartedAt, &r.FinishedAt); err != nil {
			return nil, fmt.Errorf("query runs: %w", err)
		}
		r.Error = errText.String
		out = append(out, r)
	}
	return out, rows.Err()
}

func queryJobs(ctx context.Context, db *sql.DB, queue string) ([]riverJob, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, (args->>'run_id')::bigint, state::text, attempt, coalesce(attempted_by, '{}')
		FROM river_job WHERE queue = $1 ORDER BY id`, queue)
	if err != nil {
		return nil, fmt.Errorf("query river_job: %w", err)
	}
	defer rows.Close()
	var out []riverJob
	for rows.Next() {
		var j riverJob
		var by []string
		var byText string
		if err := rows.Scan(&j.ID, &j.RunID, &j.State, &j.Attempt, &byText); err != nil {
			return nil, fmt.Errorf("query river_job: %w", err)
		}
		by = parseTextArray(byText)
		j.AttemptedBy = by
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b riverJob) int { return int(a.ID - b.ID) })
	return out, rows.Err()
}

// parseTextArray reads a PostgreSQL text[] in its text form ({a,b}) whose
// elements need no quoting (River's client ids are host names, dates and
// underscores).
func parseTextArray(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
