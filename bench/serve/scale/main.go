// Command scale measures kbench's pages over a large history: it seeds a
// database (SQLite file or PostgreSQL URL) with 100,000 stored runs, then
// serves the runs list, GET /api/runs, a comparison of 50 runs × 60
// metrics and a report of 20 runs through server.New, in process, and
// prints the server time of each (the handler chain from gin to the last
// byte written into an httptest recorder: no network, no client), median
// and 90th percentile over many requests after a warm-up:
//
//	go run ./bench/serve/scale -dsn "$(mktemp -d)/kbench.db"
//	go run ./bench/serve/scale -dsn postgres://kbench@127.0.0.1:5432/scale?sslmode=disable
//
// bench/serve/scale.sh runs it on both backends, against a revision too.
// Pages the server caches until the store's next write (the runs list,
// /compare, /r/:slug) are measured twice: "built", with a write to the
// store (one that changes nothing) before each request so that the page
// is queried and rendered again, and "cached". The first runs page is
// also measured built after a write that changes a series, before each
// request: "after success" (a succeeded run stored into an existing
// series) and "after delete" (a succeeded run deleted), whose badges'
// regressions are brought up to date then.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/sysstat"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/server"
)

func main() {
	dsn := flag.String("dsn", "", "database: an SQLite file path or a postgres:// URL (required)")
	runs := flag.Int("runs", 100_000, "runs to seed (an existing history is reused)")
	distinct := flag.Int("distinct", 5_000, "runs generated one by one; the rest are bulk copies of them")
	n := flag.Int("n", 60, "measured requests per URL")
	warm := flag.Int("warmup", 5, "unmeasured requests per URL first")
	label := flag.String("label", "", "name of this measurement in the output (e.g. a revision)")
	jsonOut := flag.String("json", "", "also write one JSON line per URL to this file")
	seedOnly := flag.Bool("seed-only", false, "seed and stop")
	quiet := flag.Bool("quiet", false, "no progress on stderr")
	flag.StringVar(&profileName, "cpuprofile-page", "", "write a CPU profile of the built requests of the page so named (e.g. \"compare 50×60\") to -cpuprofile")
	flag.StringVar(&profileOut, "cpuprofile", "scale-cpu.prof", "where -cpuprofile-page writes")
	flag.StringVar(&pagesRe, "pages", "", "measure only the pages whose name matches this regular expression (e.g. \"compare|report\")")
	flag.Parse()
	if *dsn == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dsn, *runs, *distinct, *n, *warm, *label, *jsonOut, *seedOnly, logger(*quiet)); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// profileName and profileOut: which page to profile, and where; pagesRe
// selects the pages measured ("" is all).
var profileName, profileOut, pagesRe string

// result is one URL's figures.
type result struct {
	Label    string  `json:"label"`
	Backend  string  `json:"backend"`
	Name     string  `json:"name"`
	URL      string  `json:"url"`
	Mode     string  `json:"mode"` // built or cached
	N        int     `json:"n"`
	MedianMs float64 `json:"median_ms"`
	P90Ms    float64 `json:"p90_ms"`
	MaxMs    float64 `json:"max_ms"`
	// CPUMs is the median CPU time (user + system) the process spent
	// during a request: on a machine shared with other work, wall time
	// includes waiting for a core, CPU time does not.
	CPUMs    float64 `json:"cpu_ms"`
	Bytes    int     `json:"bytes"`
	TargetMs float64 `json:"target_ms"`
}

func run(dsn string, runs, distinct, n, warm int, label, jsonOut string, seedOnly bool, logf func(string, ...any)) error {
	ctx := context.Background()
	backend := "sqlite"
	if store.IsPostgresURL(dsn) {
		backend = "postgres"
	}
	t0 := time.Now()
	st, err := store.Open(dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	logf("opened %s in %.1fs (migrations included)", backend, time.Since(t0).Seconds())
	h, err := seed(ctx, st, dsn, runs, distinct, logf)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	hj, _ := json.Marshal(h)
	logf("history: %s", hj)
	if seedOnly {
		return nil
	}
	ids, added, err := comparisonSet(ctx, st, dsn, 50, 60)
	if err != nil {
		return fmt.Errorf("comparison set: %w", err)
	}
	if added > 0 {
		logf("gave the 50 compared runs %d more metrics (60 each)", added)
	}
	dir, err := os.MkdirTemp("", "kbench-scale")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The lifecycle is never started: this bench executes no run.
	lc := lifecycle.NewManager(st, lifecycle.Options{DataDir: filepath.Join(dir, "data"), Logger: quiet})
	srv, err := server.New(server.Config{DataDir: filepath.Join(dir, "data"), Logger: quiet},
		server.Deps{Store: st, Runs: lc, Validate: runner.Validate, ImportMetrics: runner.ImportMetrics})
	if err != nil {
		return err
	}
	h2 := &harness{srv: srv, st: st}

	// A report of 20 of the compared runs, made as a user makes one.
	var runList []string
	for _, id := range ids[:20] {
		runList = append(runList, strconv.FormatUint(uint64(id), 10))
	}
	body, code := h2.do(http.MethodPost, "/api/reports", `{"title":"scale bench","runs":[`+strings.Join(runList, ",")+`]}`)
	if code != http.StatusCreated {
		return fmt.Errorf("POST /api/reports: %d %s", code, body)
	}
	var rep struct{ Slug string }
	if err := json.Unmarshal(body, &rep); err != nil {
		return err
	}

	// Cursors for the deep pages: the ids of the runs at offset 49,950
	// (page 1,000 of 50), as the list numbers them.
	deep := func(filter string, offset int) (uint, bool) {
		b, code := h2.do(http.MethodGet, fmt.Sprintf("/api/runs?limit=1&offset=%d%s", offset, filter), "")
		var page struct {
			Runs []struct{ ID uint }
			Next *string `json:"next"`
		}
		if code != http.StatusOK || json.Unmarshal(b, &page) != nil || len(page.Runs) == 0 {
			return 0, false
		}
		return page.Runs[0].ID + 1, page.Next != nil
	}
	// Page 1,000 of 100,000 runs, and of a trunk list of 30,000 (page
	// 200); the same share of a smaller history.
	off := min(49_950, int(h.Runs)/2/50*50)
	trunkOff := min(9_950, int(h.Runs)/10/50*50)
	deepAll, cursors := deep("", off)
	deepTrunk, _ := deep("&label=trunk", trunkOff)
	if !cursors {
		logf("GET /api/runs gives no cursor (next): the cursor pages are left out")
	}
	all := make([]string, len(ids))
	for i, id := range ids {
		all[i] = strconv.FormatUint(uint64(id), 10)
	}
	cmp := strings.Join(all, ",")
	type page struct {
		name, url string
		cached    bool // the server caches it
		cursor    bool // needs cursors
		target    float64
	}
	pages := []page{
		{"runs page 1", "/", true, false, 50},
		{fmt.Sprintf("runs page %d (offset)", off/50+1), fmt.Sprintf("/?page=%d", off/50+1), true, false, 50},
		{fmt.Sprintf("runs page %d (cursor)", off/50+1), fmt.Sprintf("/?before=%d", deepAll), true, true, 50},
		{"runs label=trunk", "/?label=trunk", true, false, 50},
		{"runs status=failed page 100", "/?status=failed&page=100", true, false, 50},
		{"api runs", "/api/runs", false, false, 50},
		{fmt.Sprintf("api runs offset=%d", off), fmt.Sprintf("/api/runs?offset=%d", off), false, false, 50},
		{fmt.Sprintf("api runs cursor (offset %d)", off), fmt.Sprintf("/api/runs?before=%d", deepAll), false, true, 50},
		{fmt.Sprintf("api runs label=trunk offset=%d", trunkOff), fmt.Sprintf("/api/runs?label=trunk&offset=%d", trunkOff), false, false, 50},
		{"api runs label=trunk cursor", fmt.Sprintf("/api/runs?label=trunk&before=%d", deepTrunk), false, true, 50},
		{"api runs consumer succeeded", "/api/runs?workload=consumer&status=succeeded", false, false, 50},
		{"compare 50×60", "/compare?runs=" + cmp, true, false, 100},
		{"api compare 50×60", "/api/compare?runs=" + cmp, false, false, 100},
		{"report 20 runs", "/r/" + rep.Slug, true, false, 100},
	}
	only, err := regexp.Compile(pagesRe)
	if err != nil {
		return fmt.Errorf("-pages: %w", err)
	}
	var out []result
	for _, p := range pages {
		if p.cursor && !cursors || !only.MatchString(p.name) {
			continue
		}
		modes := []string{"built"}
		if p.cached {
			modes = append(modes, "cached")
		}
		for _, mode := range modes {
			var stop func()
			if p.name == profileName && mode == "built" {
				f, err := os.Create(profileOut)
				if err != nil {
					return err
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				stop = func() { pprof.StopCPUProfile(); f.Close() }
			}
			var before func() error
			if mode == "built" {
				before = h2.noChange
			}
			r, err := h2.measure(ctx, p.url, before, n, warm)
			if stop != nil {
				stop()
			}
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			r.Label, r.Backend, r.Name, r.Mode, r.TargetMs = label, backend, p.name, mode, p.target
			out = append(out, r)
			logf("%-34s %-13s median %7.2f ms  p90 %7.2f ms  (%d B)", p.name, mode, r.MedianMs, r.P90Ms, r.Bytes)
		}
	}
	// Last, as they change the history: the first runs page after writes
	// that change a series.
	for _, mode := range []string{"after success", "after delete"} {
		name := "runs page 1"
		if !only.MatchString(name + " " + mode) {
			continue
		}
		before, err := h2.seriesWrite(ctx, mode, n+warm)
		if err != nil {
			return fmt.Errorf("%s %s: %w", name, mode, err)
		}
		r, err := h2.measure(ctx, "/", before, n, warm)
		if err != nil {
			return fmt.Errorf("%s %s: %w", name, mode, err)
		}
		r.Label, r.Backend, r.Name, r.Mode, r.TargetMs = label, backend, name, mode, 50
		out = append(out, r)
		logf("%-34s %-13s median %7.2f ms  p90 %7.2f ms  (%d B)", name, mode, r.MedianMs, r.P90Ms, r.Bytes)
	}
	fmt.Printf("kbench pages at scale: %s, %d runs%s; server time in ms over %d requests per URL after %d warm-up\n",
		backend, h.Runs, map[bool]string{true: ", " + label, false: ""}[label != ""], n, warm)
	fmt.Printf("%-34s %-13s %9s %9s %9s %9s %7s %s\n", "page", "mode", "median", "p90", "max", "cpu", "target", "KB")
	for _, r := range out {
		fmt.Printf("%-34s %-13s %9.2f %9.2f %9.2f %9.2f %7.0f %.1f\n", r.Name, r.Mode, r.MedianMs, r.P90Ms, r.MaxMs, r.CPUMs, r.TargetMs, float64(r.Bytes)/1024)
	}
	if jsonOut != "" {
		f, err := os.OpenFile(jsonOut, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		for _, r := range out {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	}
	return nil
}

type harness struct {
	srv *server.Server
	st  *store.Store
}

func (h *harness) do(method, target, body string) ([]byte, int) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	req.RemoteAddr = "127.0.0.1:40000"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, req)
	return w.Body.Bytes(), w.Code
}

// noChange is a write that changes nothing, canceling a run that does
// not exist: the store's generation moves all the same (ErrNotFound), so
// no cached page is served.
func (h *harness) noChange() error {
	_ = h.st.CancelQueued(context.Background(), 0, "")
	return nil
}

// seriesWrite returns a write that changes a series, for each of count
// requests: for "after success", a succeeded consumer run with the
// metrics of the newest one stored into its series; for "after delete",
// the deletion of one of the succeeded consumer runs (which no report
// uses: the report is of producer runs), newest first.
func (h *harness) seriesWrite(ctx context.Context, mode string, count int) (func() error, error) {
	runs, _, err := h.st.ListRuns(ctx, store.RunFilter{Workload: "consumer", Status: "succeeded", Limit: min(count, store.MaxLimit)})
	if err != nil {
		return nil, err
	}
	if len(runs) < count {
		return nil, fmt.Errorf("%d succeeded consumer runs, want %d", len(runs), count)
	}
	if mode == "after delete" {
		next := 0
		return func() error {
			id := runs[next].ID
			next++
			return h.st.DeleteRun(ctx, id)
		}, nil
	}
	base, err := h.st.GetRun(ctx, runs[0].ID)
	if err != nil {
		return nil, err
	}
	return func() error {
		r := &store.Run{Label: base.Label, Workload: base.Workload, Status: base.Status, Source: base.Source,
			Fingerprint: base.Fingerprint, SeriesKey: base.SeriesKey, Complete: true}
		for _, m := range base.Metrics {
			r.Metrics = append(r.Metrics, store.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better})
		}
		return h.st.CreateRuns(ctx, []*store.Run{r})
	}, nil
}

// measure requests target warm times, then n times, timing each from the
// call of ServeHTTP to its return. before, when set, is called before
// each request, untimed: a write to the store, so that the page is built
// again.
func (h *harness) measure(ctx context.Context, target string, before func() error, n, warm int) (result, error) {
	if _, err := url.Parse(target); err != nil {
		return result{}, err
	}
	var ms, cpu []float64
	size := 0
	for i := 0; i < warm+n; i++ {
		if before != nil {
			if err := before(); err != nil {
				return result{}, err
			}
		}
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.RemoteAddr = "127.0.0.1:40000"
		w := httptest.NewRecorder()
		c0 := cpuTime()
		start := time.Now()
		h.srv.ServeHTTP(w, req)
		d := time.Since(start)
		c := cpuTime() - c0
		if w.Code != http.StatusOK {
			return result{}, fmt.Errorf("GET %s: %d %.300s", target, w.Code, w.Body.String())
		}
		size = w.Body.Len()
		if i >= warm {
			ms = append(ms, float64(d.Microseconds())/1000)
			cpu = append(cpu, float64(c.Microseconds())/1000)
		}
	}
	slices.Sort(ms)
	slices.Sort(cpu)
	// p90 by nearest rank: the smallest value at least 90% of the
	// requests did not exceed.
	return result{URL: target, N: n, MedianMs: median.Sorted(ms), P90Ms: ms[(len(ms)*9+9)/10-1], MaxMs: ms[len(ms)-1],
		CPUMs: median.Sorted(cpu), Bytes: size}, nil
}

// cpuTime is the CPU time this process has used. The requests are served
// one at a time, so its growth over one is that request's cost (with the
// GC work it causes, and on PostgreSQL without the database server's).
// A reading that fails ends the benchmark rather than count as 0 ms.
func cpuTime() time.Duration {
	t, err := sysstat.CPUTime()
	if err != nil {
		log.Fatalf("scale: %v", err)
	}
	return t
}
