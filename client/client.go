package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// Timeouts and answer sizes of a request: an upload may take a while to
// be stored; a read of a long history or a large flame graph is big.
const (
	readTimeout  = time.Minute
	writeTimeout = 2 * time.Minute
	readLimit    = 64 << 20
	writeLimit   = 16 << 20
	// maxMessage bounds the message of an *Error taken from an answer
	// that is no JSON error (a proxy's page).
	maxMessage = 2000
)

// Client talks to a kbench server's JSON API. Every request sends the
// token (as a Bearer header) and asks for JSON; an answer other than the
// one asked for is an *Error with the status and the server's message,
// no answer an *UnreachableError.
type Client struct {
	base, token string
	// HTTP sends the requests (http.DefaultClient when nil).
	HTTP *http.Client
	// UnreachableHint, when set, is said in an *UnreachableError: what to
	// do about a server that does not answer.
	UnreachableHint string
}

// New returns a client of the server at baseURL ("http://host:8080"; a
// trailing slash is dropped) that sends token, if not empty.
func New(baseURL, token string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token}
}

// BaseURL is the server's URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// Do sends one request (body with its content type, or none) and returns
// the answer's body when its status is want. At most limit bytes of the
// answer are read; the request gives up after timeout.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, contentType string, want int, timeout time.Duration, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, c.unreachable(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, c.unreachable(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, c.unreachable(fmt.Errorf("reading the answer: %w", err))
	}
	if resp.StatusCode == want {
		return data, nil
	}
	e := &Error{Method: method, Path: path, StatusCode: resp.StatusCode, Status: resp.Status}
	e.Message = strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e.Body) == nil && e.Body.Error != "" {
		e.Message = e.Body.Error
	}
	if len(e.Message) > maxMessage {
		e.Message = e.Message[:maxMessage] + "…"
	}
	return nil, e
}

func (c *Client) unreachable(err error) error {
	return &UnreachableError{BaseURL: c.base, Hint: c.UnreachableHint, Err: err}
}

// Get fetches path (with its query) and decodes the JSON answer of a 200
// into v.
func (c *Client) Get(ctx context.Context, path string, v any) error {
	data, err := c.Do(ctx, http.MethodGet, path, nil, "", http.StatusOK, readTimeout, readLimit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("GET %s: unexpected answer: %w", path, err)
	}
	return nil
}

// send posts body (of contentType) to path and decodes the answer of
// status want into v.
func (c *Client) send(ctx context.Context, method, path string, body []byte, contentType string, want int, v any) error {
	data, err := c.Do(ctx, method, path, body, contentType, want, writeTimeout, writeLimit)
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s %s: unexpected answer from the server: %w: %.200s", method, path, err, data)
	}
	return nil
}

// sendJSON posts req encoded as JSON.
func (c *Client) sendJSON(ctx context.Context, path string, req any, want int, v any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("POST %s: encode the request: %w", path, err)
	}
	return c.send(ctx, http.MethodPost, path, body, "application/json", want, v)
}

// withQuery is path with q's query, if any.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func id(n uint) string { return strconv.FormatUint(uint64(n), 10) }

// Run fetches run id with its metrics, series, profiles and documents
// (GET /api/runs/{id}).
func (c *Client) Run(ctx context.Context, runID uint) (*Run, error) {
	var r Run
	if err := c.Get(ctx, "/api/runs/"+id(runID), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Runs fetches one page of runs (GET /api/runs), q holding the filters
// (workload, label, status, group) and the page (limit, offset, or the
// cursors before and after).
func (c *Client) Runs(ctx context.Context, q url.Values) (*RunList, error) {
	var l RunList
	if err := c.Get(ctx, withQuery("/api/runs", q), &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// CreateRuns queues runs (POST /api/runs).
func (c *Client) CreateRuns(ctx context.Context, req CreateRuns) (*Created, error) {
	var a Created
	if err := c.sendJSON(ctx, "/api/runs", req, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// CancelRun cancels a queued or running run (POST /api/runs/{id}/cancel).
func (c *Client) CancelRun(ctx context.Context, runID uint) (*Canceling, error) {
	var a Canceling
	if err := c.send(ctx, http.MethodPost, "/api/runs/"+id(runID)+"/cancel", nil, "", http.StatusAccepted, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// DeleteRun deletes a finished run and its profiles (DELETE
// /api/runs/{id}).
func (c *Client) DeleteRun(ctx context.Context, runID uint) error {
	return c.send(ctx, http.MethodDelete, "/api/runs/"+id(runID), nil, "", http.StatusNoContent, nil)
}

// History fetches one metric of one series (GET /api/history), q naming
// it (run and metric, series, or fingerprint and branch) and the
// detection's parameters (window, max_pvalue, min_magnitude,
// min_segment).
func (c *Client) History(ctx context.Context, q url.Values) (*History, error) {
	var h History
	if err := c.Get(ctx, withQuery("/api/history", q), &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// Regressions fetches the regressions of every series (GET
// /api/regressions), q holding threshold and the detection's parameters.
func (c *Client) Regressions(ctx context.Context, q url.Values) (*Regressions, error) {
	var r Regressions
	if err := c.Get(ctx, withQuery("/api/regressions", q), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Functions fetches the functions that moved from the base runs to the
// target runs (GET /api/functions; each side in time order, at most 50):
// Status "computing" until the server has named them, so ask again.
func (c *Client) Functions(ctx context.Context, base, target []uint) (*Functions, error) {
	q := url.Values{}
	q.Set("base_runs", rundoc.JoinIDs(base))
	q.Set("target_runs", rundoc.JoinIDs(target))
	var f Functions
	if err := c.Get(ctx, withQuery("/api/functions", q), &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// Compare fetches the comparison of runs (GET /api/compare), q holding
// runs and by, at, hide_unchanged.
func (c *Client) Compare(ctx context.Context, q url.Values) (*Comparison, error) {
	var t Comparison
	if err := c.Get(ctx, withQuery("/api/compare", q), &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Report fetches the JSON export of the report slug (GET /r/{slug}.json).
func (c *Client) Report(ctx context.Context, slug string) (*Comparison, error) {
	var t Comparison
	if err := c.Get(ctx, "/r/"+url.PathEscape(slug)+".json", &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// CreateReport stores a report (POST /api/reports).
func (c *Client) CreateReport(ctx context.Context, req CreateReport) (*ReportCreated, error) {
	var a ReportCreated
	if err := c.sendJSON(ctx, "/api/reports", req, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// AddRepetitions queues more runs of a comparison's columns (POST
// /api/compare/repetitions).
func (c *Client) AddRepetitions(ctx context.Context, req AddRepetitions) (*Created, error) {
	var a Created
	if err := c.sendJSON(ctx, "/api/compare/repetitions", req, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// WritepathPreset queues the write-path preset's runs (POST
// /api/presets/writepath).
func (c *Client) WritepathPreset(ctx context.Context, req WritepathPreset) (*Created, error) {
	var a Created
	if err := c.sendJSON(ctx, "/api/presets/writepath", req, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// CreateSweep starts a latency-vs-throughput sweep (POST
// /api/presets/sweep).
func (c *Client) CreateSweep(ctx context.Context, req CreateSweep) (*SweepCreated, error) {
	var a SweepCreated
	if err := c.sendJSON(ctx, "/api/presets/sweep", req, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Sweep fetches a sweep (GET /api/sweeps/{id}).
func (c *Client) Sweep(ctx context.Context, sweepID string) (*Sweep, error) {
	var s Sweep
	if err := c.Get(ctx, "/api/sweeps/"+url.PathEscape(sweepID), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// CancelSweep cancels a sweep and its queued runs (POST
// /api/sweeps/{id}/cancel).
func (c *Client) CancelSweep(ctx context.Context, sweepID string) (*SweepCanceled, error) {
	var a SweepCanceled
	if err := c.send(ctx, http.MethodPost, "/api/sweeps/"+url.PathEscape(sweepID)+"/cancel", nil, "", http.StatusAccepted, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// CreateSLO starts a search for the highest rate a latency target
// allows (POST /api/presets/slo).
func (c *Client) CreateSLO(ctx context.Context, req CreateSLO) (*SLOCreated, error) {
	var a SLOCreated
	if err := c.sendJSON(ctx, "/api/presets/slo", req, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// SLO fetches a latency-target search with its probes (GET
// /api/slos/{id}).
func (c *Client) SLO(ctx context.Context, id string) (*SLO, error) {
	var s SLO
	if err := c.Get(ctx, "/api/slos/"+url.PathEscape(id), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// CancelSLO cancels a search and its unfinished run (POST
// /api/slos/{id}/cancel).
func (c *Client) CancelSLO(ctx context.Context, id string) (*SLOCanceled, error) {
	var a SLOCanceled
	if err := c.send(ctx, http.MethodPost, "/api/slos/"+url.PathEscape(id)+"/cancel", nil, "", http.StatusAccepted, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Import stores one run from a multipart body (POST /api/import): a
// result directory's result.json and profiles, or a Kafka tool's output
// with its label and profiles. The answer is the new run.
func (c *Client) Import(ctx context.Context, body []byte, contentType string) (*Run, error) {
	var r Run
	if err := c.send(ctx, http.MethodPost, "/api/import", body, contentType, http.StatusCreated, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ImportTable stores the runs of a table, one per column (POST
// /api/import with a "table" file).
func (c *Client) ImportTable(ctx context.Context, body []byte, contentType string) (*Created, error) {
	var a Created
	if err := c.send(ctx, http.MethodPost, "/api/import", body, contentType, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// ImportOMB stores OpenMessaging Benchmark results, one run per file
// (POST /api/import with "omb" files). The answer lists the new runs.
func (c *Client) ImportOMB(ctx context.Context, body []byte, contentType string) (*Created, error) {
	var a Created
	if err := c.send(ctx, http.MethodPost, "/api/import", body, contentType, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// OMB fetches a run as the OpenMessaging Benchmark's result JSON (GET
// /api/runs/{id}/omb.json), q holding workload (the name to write as
// OMB's workload; default: the run's own).
func (c *Client) OMB(ctx context.Context, runID uint, q url.Values) (*OMBResult, error) {
	var r OMBResult
	if err := c.Get(ctx, withQuery("/api/runs/"+id(runID)+"/omb.json", q), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ImportCSV back-fills a series from a CSV, one run per row (POST
// /api/import/csv).
func (c *Client) ImportCSV(ctx context.Context, body []byte, contentType string) (*Created, error) {
	var a Created
	if err := c.send(ctx, http.MethodPost, "/api/import/csv", body, contentType, http.StatusCreated, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Profiles lists a run's profiles (GET /api/runs/{id}/profiles).
func (c *Client) Profiles(ctx context.Context, runID uint) (*Profiles, error) {
	var p Profiles
	if err := c.Get(ctx, "/api/runs/"+id(runID)+"/profiles", &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Histograms fetches a run's latency histograms (GET
// /api/runs/{id}/histograms), q holding kind and scope.
func (c *Client) Histograms(ctx context.Context, runID uint, q url.Values) (*RunHistograms, error) {
	var h RunHistograms
	if err := c.Get(ctx, withQuery("/api/runs/"+id(runID)+"/histograms", q), &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// HistogramLog fetches a run's interval histograms as an HdrHistogram
// log (GET /api/runs/{id}/histograms?format=hlog), q holding kind and
// scope.
func (c *Client) HistogramLog(ctx context.Context, runID uint, q url.Values) ([]byte, error) {
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	q2.Set("format", "hlog")
	return c.Do(ctx, http.MethodGet, withQuery("/api/runs/"+id(runID)+"/histograms", q2), nil, "", http.StatusOK, readTimeout, readLimit)
}

// UploadProfiles adds profiles to a run from a multipart body (POST
// /api/runs/{id}/profiles) and returns those added.
func (c *Client) UploadProfiles(ctx context.Context, runID uint, body []byte, contentType string) (*Profiles, error) {
	var p Profiles
	if err := c.send(ctx, http.MethodPost, "/api/runs/"+id(runID)+"/profiles", body, contentType, http.StatusCreated, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// FlameGraph fetches a profile's flame graph (GET
// /api/profiles/{id}/flamegraph), q holding sample, format, focus, width,
// search.
func (c *Client) FlameGraph(ctx context.Context, profileID uint, q url.Values) (*FlameGraph, error) {
	var f FlameGraph
	if err := c.Get(ctx, withQuery("/api/profiles/"+id(profileID)+"/flamegraph", q), &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// WritePaths fetches a profile's write-path panel (GET
// /api/profiles/{id}/writepaths).
func (c *Client) WritePaths(ctx context.Context, profileID uint, q url.Values) (*WritePaths, error) {
	var w WritePaths
	if err := c.Get(ctx, withQuery("/api/profiles/"+id(profileID)+"/writepaths", q), &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Diff fetches a differential flame graph (GET /api/diff): of two
// profiles, q holding base and target (profile ids), or of the merged
// profiles of two run sets, q holding base_runs and target_runs (run ids,
// comma-separated, at most 50 a side), kind and role (RunSetsQuery
// builds it); and normalize, sample, format, search.
func (c *Client) Diff(ctx context.Context, q url.Values) (*Diff, error) {
	var d Diff
	if err := c.Get(ctx, withQuery("/api/diff", q), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// RunSetsQuery is the query of a run-set diff: base_runs, target_runs,
// kind and role. Add normalize, sample or format to it as needed.
func RunSetsQuery(baseRuns, targetRuns []uint, kind, role string) url.Values {
	join := func(ids []uint) string {
		s := make([]string, len(ids))
		for i, v := range ids {
			s[i] = id(v)
		}
		return strings.Join(s, ",")
	}
	return url.Values{"base_runs": {join(baseRuns)}, "target_runs": {join(targetRuns)}, "kind": {kind}, "role": {role}}
}

// DownloadDiffProfile fetches one side ("base" or "target") of a diff
// merged into one gzipped pprof profile (GET /api/diff/profile.pb.gz),
// q as Diff's.
func (c *Client) DownloadDiffProfile(ctx context.Context, side string, q url.Values) ([]byte, error) {
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	q2.Set("side", side)
	return c.Do(ctx, http.MethodGet, withQuery("/api/diff/profile.pb.gz", q2), nil, "", http.StatusOK, readTimeout, readLimit)
}

// DownloadProfile fetches a profile's bytes as stored, gzipped pprof
// (GET /api/profiles/{id}/download).
func (c *Client) DownloadProfile(ctx context.Context, profileID uint) ([]byte, error) {
	return c.Do(ctx, http.MethodGet, "/api/profiles/"+id(profileID)+"/download", nil, "", http.StatusOK, readTimeout, readLimit)
}
