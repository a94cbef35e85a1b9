package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/kbench/kbench/client"
)

// The comparison's tests (compare.Test*): only these two mean the row's
// change was tested.
const (
	testSignificant    = "significant"
	testNotSignificant = "not significant"
)

// untestedTests are the other tests a cell can have.
var untestedTests = map[string]bool{"": true, "too few samples": true, "single runs": true, "descriptive": true}

// flaggedRow is a row whose change between identical configurations was
// called significant.
type flaggedRow struct {
	Metric  string
	Verdict string
	P       *float64
	PAdj    *float64
}

func (f flaggedRow) String() string {
	s := f.Metric + " " + f.Verdict
	if f.P != nil {
		s += fmt.Sprintf(" p=%.3g", *f.P)
	}
	if f.PAdj != nil {
		s += fmt.Sprintf(" (adjusted %.3g)", *f.PAdj)
	}
	return s
}

// tableFlags is what one comparison of identical configurations says.
type tableFlags struct {
	Alpha   float64
	Columns []string
	Rows    int
	// Tested counts the non-baseline cells of rows with a direction whose
	// change kbench tested.
	Tested  int
	Flagged []flaggedRow
	// KbenchPBelowAlpha counts the cells kbench gave an unadjusted
	// p-value ≤ α, among WithP cells with a p-value.
	KbenchPBelowAlpha, WithP int
	// Recount is every cell of a row with a direction (better: higher or
	// lower) and at least TestMinN samples per side, tested again here
	// with Mann-Whitney U on the samples the JSON lists (values), with no
	// correction: RecountBelowAlpha of them have p ≤ α, which is what a
	// table testing every row at α, as kbench's did before issue 11, flags.
	Recount, RecountBelowAlpha int
	// HeadlineKnown: the table marks rows headline (tested) or
	// descriptive; then Headline and Descriptive count them.
	HeadlineKnown         bool
	Headline, Descriptive int
}

// countFalseFlags reads GET /api/compare's JSON (compare.JSON). Fields it
// does not know are ignored; the headline/descriptive split is read when
// the rows carry "headline" or a cell's test is "descriptive".
func countFalseFlags(body []byte) (tableFlags, error) {
	type cell struct {
		N       int       `json:"n"`
		Values  []float64 `json:"values"`
		Test    string    `json:"test"`
		Verdict string    `json:"verdict"`
		P       *float64  `json:"p_value"`
		PAdj    *float64  `json:"p_adjusted"`
	}
	var doc struct {
		Alpha    float64 `json:"alpha"`
		TestMinN int     `json:"test_min_n"`
		Columns  []struct {
			Name     string `json:"name"`
			Baseline bool   `json:"baseline"`
		} `json:"columns"`
		Rows []struct {
			Metric   string `json:"metric"`
			Better   string `json:"better"`
			Headline *bool  `json:"headline"`
			Cells    []cell `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return tableFlags{}, fmt.Errorf("compare JSON: %w", err)
	}
	if len(doc.Columns) < 2 {
		return tableFlags{}, fmt.Errorf("compare JSON: %d columns, want 2 or more", len(doc.Columns))
	}
	t := tableFlags{Alpha: doc.Alpha, Rows: len(doc.Rows)}
	if t.Alpha <= 0 {
		return t, errors.New("compare JSON: no alpha")
	}
	minN := max(doc.TestMinN, 2)
	base := 0
	for i, c := range doc.Columns {
		t.Columns = append(t.Columns, c.Name)
		if c.Baseline {
			base = i
		}
	}
	for _, r := range doc.Rows {
		descriptive := false
		if r.Headline != nil {
			t.HeadlineKnown = true
			descriptive = !*r.Headline
		}
		for i, c := range r.Cells {
			if i == base || i >= len(doc.Columns) {
				continue
			}
			if c.Test == "descriptive" {
				t.HeadlineKnown, descriptive = true, true
			}
			if c.P != nil {
				t.WithP++
				if *c.P <= t.Alpha {
					t.KbenchPBelowAlpha++
				}
			}
			if r.Better != "" && base < len(r.Cells) && len(r.Cells[base].Values) >= minN && len(c.Values) >= minN {
				t.Recount++
				if mannWhitneyP(r.Cells[base].Values, c.Values) <= t.Alpha {
					t.RecountBelowAlpha++
				}
			}
			// A row without a direction gets a p-value but never a
			// verdict: it cannot be flagged, so it is not counted.
			tested := r.Better != "" && (c.Test == testSignificant || c.Test == testNotSignificant ||
				!untestedTests[c.Test] && (c.P != nil || c.PAdj != nil))
			if !tested {
				continue
			}
			t.Tested++
			if c.Verdict == "better" || c.Verdict == "worse" {
				t.Flagged = append(t.Flagged, flaggedRow{Metric: r.Metric, Verdict: c.Verdict, P: c.P, PAdj: c.PAdj})
			}
		}
		if t.HeadlineKnown {
			if descriptive {
				t.Descriptive++
			} else {
				t.Headline++
			}
		}
	}
	return t, nil
}

// mannWhitneyP is the two-sided Mann-Whitney U p-value of two samples,
// from golang.org/x/perf/benchmath (what benchstat and kbench use).
func mannWhitneyP(a, b []float64) float64 {
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), &benchmath.DefaultThresholds),
		benchmath.NewSample(slices.Clone(b), &benchmath.DefaultThresholds))
	return cmp.P
}

// serveProc is a `kbench serve` on a throwaway data directory.
type serveProc struct {
	cmd  *exec.Cmd
	base string
	hc   *http.Client
}

func startServe(ctx context.Context, kbench, dataDir, logFile string) (*serveProc, error) {
	cmd := exec.CommandContext(ctx, kbench, "serve", "--listen", "127.0.0.1:0", "--data", dataDir)
	logf, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kbench serve: %w", err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "kbench serving on "); ok {
				u, _, _ := strings.Cut(rest, " ")
				addr <- u
			}
		}
		close(addr)
	}()
	select {
	case u, ok := <-addr:
		if !ok {
			cmd.Wait()
			return nil, fmt.Errorf("kbench serve exited before serving (log: %s)", logFile)
		}
		return &serveProc{cmd: cmd, base: u, hc: &http.Client{Timeout: 60 * time.Second}}, nil
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New("kbench serve did not start within 60 s")
	}
}

func (s *serveProc) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

func (s *serveProc) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Submission modes of an identical-config batch.
const (
	submitAuto      = "auto"      // configs when the server takes them, else alternate
	submitConfigs   = "configs"   // one POST with "configs": the server interleaves
	submitAlternate = "alternate" // one POST per run, A B B A A B …
)

// submitBatch queues n runs of each of two labels with the same params
// and returns their ids and how they were queued.
func (s *serveProc) submitBatch(ctx context.Context, workload, labelA, labelB string, params map[string]any, n int, mode string) (a, b []uint, how string, err error) {
	if mode == submitAuto || mode == submitConfigs {
		body := map[string]any{"workload": workload, "repetitions": n, "configs": []map[string]any{
			{"label": labelA, "params": params}, {"label": labelB, "params": params}}}
		status, resp, err := s.do(ctx, http.MethodPost, "/api/runs", body)
		if err != nil {
			return nil, nil, "", err
		}
		if status == http.StatusCreated {
			var out client.Created
			if err := json.Unmarshal(resp, &out); err != nil {
				return nil, nil, "", fmt.Errorf("POST /api/runs: %w", err)
			}
			for _, r := range out.Runs {
				switch r.Label {
				case labelA:
					a = append(a, r.ID)
				case labelB:
					b = append(b, r.ID)
				}
			}
			if len(a) != n || len(b) != n {
				return nil, nil, "", fmt.Errorf("POST /api/runs with configs: got %d and %d runs, want %d each", len(a), len(b), n)
			}
			return a, b, "interleaved by the server (\"configs\")", nil
		}
		if mode == submitConfigs || status != http.StatusBadRequest {
			return nil, nil, "", fmt.Errorf("POST /api/runs with configs: %d %s", status, bytes.TrimSpace(resp))
		}
	}
	for i := 0; i < n; i++ {
		order := []string{labelA, labelB}
		if i%2 == 1 {
			order = []string{labelB, labelA}
		}
		for _, label := range order {
			body := map[string]any{"workload": workload, "label": label, "repetitions": 1, "params": params}
			status, resp, err := s.do(ctx, http.MethodPost, "/api/runs", body)
			if err != nil {
				return nil, nil, "", err
			}
			if status != http.StatusCreated {
				return nil, nil, "", fmt.Errorf("POST /api/runs: %d %s", status, bytes.TrimSpace(resp))
			}
			var out client.Created
			if err := json.Unmarshal(resp, &out); err != nil || out.ID == 0 {
				return nil, nil, "", fmt.Errorf("POST /api/runs: no id in %s", bytes.TrimSpace(resp))
			}
			if label == labelA {
				a = append(a, out.ID)
			} else {
				b = append(b, out.ID)
			}
		}
	}
	return a, b, "interleaved by the suite (one POST per run, A B B A …)", nil
}

// terminal are the statuses a run ends in.
var terminal = map[string]bool{"succeeded": true, "failed": true, "canceled": true, "interrupted": true}

// waitRuns polls GET /api/runs/{id} until every run has ended and returns
// their statuses.
func (s *serveProc) waitRuns(ctx context.Context, ids []uint, timeout time.Duration) (map[uint]string, error) {
	deadline := time.Now().Add(timeout)
	out := map[uint]string{}
	for {
		pending := 0
		for _, id := range ids {
			if terminal[out[id]] {
				continue
			}
			status, body, err := s.do(ctx, http.MethodGet, "/api/runs/"+strconv.FormatUint(uint64(id), 10), nil)
			if err != nil {
				return out, err
			}
			if status != http.StatusOK {
				return out, fmt.Errorf("GET /api/runs/%d: %d", id, status)
			}
			var r client.Run
			if err := json.Unmarshal(body, &r); err != nil {
				return out, err
			}
			out[id] = string(r.Status)
			if r.Status == client.StatusFailed && r.Error != "" {
				out[id] = "failed: " + r.Error
			}
			if !terminal[string(r.Status)] {
				pending++
			}
		}
		if pending == 0 {
			return out, nil
		}
		if time.Now().After(deadline) {
			return out, fmt.Errorf("%d runs still not finished after %v", pending, timeout)
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// compare fetches GET /api/compare of the runs, grouped by label, the
// baseline label's runs first.
func (s *serveProc) compare(ctx context.Context, a, b []uint) ([]byte, error) {
	var ids []string
	for _, id := range append(append([]uint{}, a...), b...) {
		ids = append(ids, strconv.FormatUint(uint64(id), 10))
	}
	q := url.Values{"runs": {strings.Join(ids, ",")}, "by": {"label"}}
	status, body, err := s.do(ctx, http.MethodGet, "/api/compare?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET /api/compare: %d %s", status, bytes.TrimSpace(body))
	}
	return body, nil
}
