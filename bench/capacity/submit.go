package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kbench/kbench/client"
)

// maxRepetitions is the most runs one POST /api/runs creates
// (internal/launch's MaxRepetitions): a submission of n runs is
// ceil(n / maxRepetitions) requests.
const maxRepetitions = 50

// runParams are the tiny producer runs both measurements submit: a few
// hundred small records to the shared broker, no profile, so a run is
// mostly its queue and process overhead.
func runParams(bootstrap string, records int) map[string]any {
	return map[string]any{
		"bootstrap-server": bootstrap,
		"num-records":      records,
		"record-size":      100,
		"profile":          "none",
	}
}

// apiRun is a run as the API shows it.
type apiRun = client.Run

var httpClient = &http.Client{Timeout: 60 * time.Second}

// postRuns creates runs with one POST /api/runs and returns them.
func postRuns(ctx context.Context, base string, body map[string]any) ([]apiRun, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/runs", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST /api/runs: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("POST /api/runs: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return nil, fmt.Errorf("POST /api/runs: %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	var out client.Created
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("POST /api/runs: answer: %w", err)
	}
	return out.Runs, nil
}

// getJSON GETs base+path into v.
func getJSON(ctx context.Context, base, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// submitted is what submit writes and wait and verify read.
type submitted struct {
	Label    string    `json:"label"`
	Queue    string    `json:"queue"`
	N        int       `json:"n"`
	Requests int       `json:"requests"`
	First    time.Time `json:"first_submit"`
	// Last is when the last POST was answered: every run was queued.
	Last      time.Time `json:"last_submit_answered"`
	SubmitSec float64   `json:"submit_seconds"`
	IDs       []uint    `json:"ids"`
}

// batches splits n runs into requests of at most per runs.
func batches(n, per int) []int {
	var out []int
	for n > 0 {
		k := min(n, per)
		out = append(out, k)
		n -= k
	}
	return out
}

// distinct reports the first id that appears twice in ids.
func distinct(ids []uint) (uint, bool) {
	seen := make(map[uint]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return id, false
		}
		seen[id] = true
	}
	return 0, true
}

func cmdSubmit(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("submit", flag.ExitOnError)
	base := fs.String("base", "", "the server's URL (http://127.0.0.1:PORT)")
	n := fs.Int("n", 1000, "runs to submit")
	queue := fs.String("queue", "cap", "queue of the runs")
	bootstrap := fs.String("bootstrap", "", "the shared broker's host:port")
	records := fs.Int("records", 200, "records per run")
	label := fs.String("label", "capacity", "label of every run")
	parallel := fs.Int("parallel", 4, "requests in flight at once")
	out := fs.String("out", "", "file to write the submission (JSON) to")
	fs.Parse(args)
	if *base == "" || *bootstrap == "" || *out == "" || *n < 1 || *parallel < 1 {
		return errors.New("need -base, -bootstrap, -out, -n ≥ 1 and -parallel ≥ 1")
	}
	sizes := batches(*n, maxRepetitions)
	work := make(chan int)
	var (
		mu   sync.Mutex
		ids  []uint
		errs []error
		wg   sync.WaitGroup
	)
	first := time.Now()
	for range min(*parallel, len(sizes)) {
		wg.Go(func() {
			for i := range work {
				runs, err := postRuns(ctx, *base, map[string]any{
					"workload": "producer", "label": *label, "queue": *queue, "repetitions": sizes[i],
					"meta": map[string]string{"capacity_batch": fmt.Sprint(i)}, "params": runParams(*bootstrap, *records),
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("request %d: %w", i, err))
				} else if len(runs) != sizes[i] {
					errs = append(errs, fmt.Errorf("request %d: asked for %d runs, got %d", i, sizes[i], len(runs)))
				}
				for _, r := range runs {
					ids = append(ids, r.ID)
				}
				mu.Unlock()
			}
		})
	}
	for i := range sizes {
		work <- i
	}
	close(work)
	wg.Wait()
	last := time.Now()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if id, ok := distinct(ids); !ok {
		return fmt.Errorf("the server answered run %d twice", id)
	}
	slices.Sort(ids)
	s := submitted{Label: *label, Queue: *queue, N: len(ids), Requests: len(sizes), First: first, Last: last,
		SubmitSec: last.Sub(first).Seconds(), IDs: ids}
	data, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	fmt.Printf(`{"n":%d,"requests":%d,"submit_seconds":%.3f}`+"\n", s.N, s.Requests, s.SubmitSec)
	return nil
}

// readSubmitted reads what submit wrote.
func readSubmitted(path string) (submitted, error) {
	var s submitted
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
