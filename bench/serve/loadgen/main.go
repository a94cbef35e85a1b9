// Command loadgen is a closed-loop HTTP load generator for the serve
// benchmark: N clients, each sending one request at a time over a
// keep-alive connection, cycle over the given URLs for a fixed duration.
// Every request's latency (sent → whole body read) goes into an
// HdrHistogram per URL; non-2xx answers and transport errors are counted.
//
//	loadgen -c 50 -d 60s http://127.0.0.1:8080/ http://127.0.0.1:8080/runs/42
//
// It prints a table (per URL and overall: requests, req/s, p50, p90, p99,
// p99.9, max, non-2xx, transport errors) and, last, one JSON line with the
// same figures (-json FILE writes it to a file too). The load is bounded
// both in time (-d) and in count (-n), and only loopback targets are
// accepted. The exit status is 0 even when
// requests failed: the caller judges the figures.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kbench/kbench/internal/hdr"
)

// Histogram range, in microseconds: 1 µs to 5 minutes, 3 significant digits.
const (
	histMin    = 1
	histMax    = 5 * 60 * 1_000_000
	histDigits = 3
)

// maxErrorSamples is how many distinct error messages are kept per URL.
const maxErrorSamples = 5

type config struct {
	clients     int
	duration    time.Duration
	maxRequests int64
	timeout     time.Duration
	warmup      time.Duration
	jsonPath    string
	label       string
	urls        []string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clients, "c", 50, "concurrent clients (each has one request in flight)")
	flag.DurationVar(&cfg.duration, "d", 60*time.Second, "how long to send requests (measured part; after -warmup)")
	flag.Int64Var(&cfg.maxRequests, "n", 50_000_000, "stop after this many measured requests in all, whatever -d says")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "per-request timeout (a timeout counts as a transport error)")
	flag.DurationVar(&cfg.warmup, "warmup", 0, "send requests this long first without recording them")
	flag.StringVar(&cfg.jsonPath, "json", "", "also write the JSON summary to this file")
	flag.StringVar(&cfg.label, "label", "", "a name for this load test, copied into the JSON summary")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: loadgen [flags] URL...")
		flag.PrintDefaults()
	}
	flag.Parse()
	cfg.urls = flag.Args()
	if err := cfg.check(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sum := run(ctx, cfg)
	printTable(os.Stdout, sum)
	line, err := json.Marshal(sum)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	if cfg.jsonPath != "" {
		if err := os.WriteFile(cfg.jsonPath, append(line, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
	}
	fmt.Println(string(line))
}

func (c *config) check() error {
	switch {
	case len(c.urls) == 0:
		return errors.New("no URL given")
	case c.clients < 1 || c.clients > 10_000:
		return fmt.Errorf("-c %d: want 1..10000", c.clients)
	case c.duration <= 0 || c.duration > 24*time.Hour:
		return fmt.Errorf("-d %v: want more than 0 and at most 24h", c.duration)
	case c.maxRequests < 1:
		return fmt.Errorf("-n %d: want at least 1", c.maxRequests)
	case c.warmup < 0 || c.warmup > time.Hour:
		return fmt.Errorf("-warmup %v: want 0..1h", c.warmup)
	}
	for _, raw := range c.urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%q is not an http(s) URL", raw)
		}
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("%s is not a loopback address: loadgen only loads this machine", u.Host)
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// urlStats is what one client recorded for one URL.
type urlStats struct {
	hist       *hdr.Histogram
	status     map[int]int64 // non-2xx status → count
	transport  int64         // transport errors (refused, reset, timeout…)
	bytes      int64
	errSamples []string
}

func newURLStats() *urlStats {
	return &urlStats{hist: hdr.New(histMin, histMax, histDigits), status: map[int]int64{}}
}

func (s *urlStats) sample(msg string) {
	if len(s.errSamples) >= maxErrorSamples {
		return
	}
	for _, m := range s.errSamples {
		if m == msg {
			return
		}
	}
	s.errSamples = append(s.errSamples, msg)
}

func (s *urlStats) merge(o *urlStats) {
	_ = s.hist.Merge(o.hist) // cannot fail: newURLStats makes every histogram alike
	for k, v := range o.status {
		s.status[k] += v
	}
	s.transport += o.transport
	s.bytes += o.bytes
	for _, m := range o.errSamples {
		s.sample(m)
	}
}

// run drives the load and returns its summary.
func run(ctx context.Context, cfg config) summary {
	tr := &http.Transport{
		Proxy:               nil, // loopback: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.clients * 2,
		MaxIdleConnsPerHost: cfg.clients * 2,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true, // measure the page as the server sends it
		ForceAttemptHTTP2:   false,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.timeout,
		// A redirect is an answer; do not follow it into another page.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	if cfg.warmup > 0 {
		drive(ctx, time.Now().Add(cfg.warmup), client, cfg, int64(cfg.clients)*1_000_000)
	}
	start := time.Now()
	per := drive(ctx, start.Add(cfg.duration), client, cfg, cfg.maxRequests)
	elapsed := time.Since(start)
	return summarize(cfg, per, elapsed)
}

// drive runs the clients until the deadline passes, limit requests were
// sent or ctx ends (SIGINT), and returns each URL's merged stats. At the
// deadline no new request starts; those in flight finish and are recorded,
// so the server never sees a request given up by the test itself.
func drive(ctx context.Context, deadline time.Time, client *http.Client, cfg config, limit int64) []*urlStats {
	var sent atomic.Int64
	results := make([][]*urlStats, cfg.clients)
	var wg sync.WaitGroup
	for c := 0; c < cfg.clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			mine := make([]*urlStats, len(cfg.urls))
			for i := range mine {
				mine[i] = newURLStats()
			}
			results[c] = mine
			buf := make([]byte, 32<<10)
			// Clients start at different URLs so every URL is under load
			// all the time, not in waves.
			for i := c; ctx.Err() == nil && time.Now().Before(deadline); i++ {
				if sent.Add(1) > limit {
					return
				}
				u := i % len(cfg.urls)
				one(ctx, client, cfg.urls[u], mine[u], buf)
			}
		}(c)
	}
	wg.Wait()
	merged := make([]*urlStats, len(cfg.urls))
	for i := range merged {
		merged[i] = newURLStats()
		for _, r := range results {
			merged[i].merge(r[i])
		}
	}
	return merged
}

// one sends a request and records it. A request cut short by SIGINT (ctx
// done) is not recorded: it did not fail, the test was stopped.
func one(ctx context.Context, client *http.Client, target string, st *urlStats, buf []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		st.transport++
		st.sample(err.Error())
		return
	}
	req.Header.Set("User-Agent", "kbench-loadgen")
	req.Header.Set("Accept", "text/html,application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		st.hist.RecordValue(clamp(time.Since(start)))
		st.transport++
		st.sample(err.Error())
		return
	}
	n, err := io.CopyBuffer(io.Discard, resp.Body, buf)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		st.hist.RecordValue(clamp(d))
		st.transport++
		st.sample("reading body: " + err.Error())
		return
	}
	st.hist.RecordValue(clamp(d))
	st.bytes += n
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		st.status[resp.StatusCode]++
		st.sample(resp.Status)
	}
}

func clamp(d time.Duration) int64 {
	us := d.Microseconds()
	return min(max(us, histMin), histMax)
}

// summary is the JSON line.
type summary struct {
	Label       string  `json:"label,omitempty"`
	Clients     int     `json:"clients"`
	DurationSec float64 `json:"duration_s"`
	// LoadgenCPUSec is this process's own CPU time (user + system), to
	// see how much of the machine the load generator took.
	LoadgenCPUSec float64      `json:"loadgen_cpu_s"`
	Overall       figures      `json:"overall"`
	URLs          []urlFigures `json:"urls"`
}

type urlFigures struct {
	URL string `json:"url"`
	figures
	Statuses     map[string]int64 `json:"non2xx_statuses,omitempty"`
	ErrorSamples []string         `json:"error_samples,omitempty"`
}

// figures are one line of the table; latencies in milliseconds.
type figures struct {
	Requests        int64   `json:"requests"`
	ReqPerSec       float64 `json:"req_per_s"`
	MeanMs          float64 `json:"mean_ms"`
	P50Ms           float64 `json:"p50_ms"`
	P90Ms           float64 `json:"p90_ms"`
	P99Ms           float64 `json:"p99_ms"`
	P999Ms          float64 `json:"p99_9_ms"`
	MaxMs           float64 `json:"max_ms"`
	Non2xx          int64   `json:"non2xx"`
	TransportErrors int64   `json:"transport_errors"`
	Errors          int64   `json:"errors"`
	BytesPerReq     float64 `json:"bytes_per_req"`
}

func figuresOf(s *urlStats, secs float64) figures {
	h := s.hist
	ms := func(us int64) float64 { return float64(us) / 1000 }
	f := figures{
		Requests:        h.TotalCount(),
		MeanMs:          h.Mean() / 1000,
		P50Ms:           ms(h.ValueAtQuantile(50)),
		P90Ms:           ms(h.ValueAtQuantile(90)),
		P99Ms:           ms(h.ValueAtQuantile(99)),
		P999Ms:          ms(h.ValueAtQuantile(99.9)),
		MaxMs:           ms(h.Max()),
		TransportErrors: s.transport,
	}
	for _, n := range s.status {
		f.Non2xx += n
	}
	f.Errors = f.Non2xx + f.TransportErrors
	if secs > 0 {
		f.ReqPerSec = float64(f.Requests) / secs
	}
	if ok := f.Requests - f.TransportErrors; ok > 0 {
		f.BytesPerReq = float64(s.bytes) / float64(ok)
	}
	return f
}

func summarize(cfg config, per []*urlStats, elapsed time.Duration) summary {
	secs := elapsed.Seconds()
	sum := summary{Label: cfg.label, Clients: cfg.clients, DurationSec: secs}
	all := newURLStats()
	for i, s := range per {
		all.merge(s)
		uf := urlFigures{URL: cfg.urls[i], figures: figuresOf(s, secs), ErrorSamples: s.errSamples}
		if len(s.status) > 0 {
			uf.Statuses = map[string]int64{}
			for k, v := range s.status {
				uf.Statuses[fmt.Sprint(k)] = v
			}
		}
		sum.URLs = append(sum.URLs, uf)
	}
	sum.Overall = figuresOf(all, secs)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		sum.LoadgenCPUSec = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return sum
}

func printTable(w io.Writer, s summary) {
	fmt.Fprintf(w, "%d clients, %.1f s, loadgen CPU %.1f s", s.Clients, s.DurationSec, s.LoadgenCPUSec)
	if s.Label != "" {
		fmt.Fprintf(w, " (%s)", s.Label)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "requests\treq/s\tp50 ms\tp90 ms\tp99 ms\tp99.9 ms\tmax ms\tnon-2xx\ttransport err\tKB/req\t  url\t")
	line := func(f figures, name string) {
		fmt.Fprintf(tw, "%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%.1f\t  %s\t\n", f.Requests, f.ReqPerSec,
			f.P50Ms, f.P90Ms, f.P99Ms, f.P999Ms, f.MaxMs, f.Non2xx, f.TransportErrors, f.BytesPerReq/1024, name)
	}
	for _, u := range s.URLs {
		line(u.figures, shortURL(u.URL))
	}
	line(s.Overall, "all")
	tw.Flush()
	for _, u := range s.URLs {
		if len(u.ErrorSamples) == 0 {
			continue
		}
		codes := make([]string, 0, len(u.Statuses))
		for k, v := range u.Statuses {
			codes = append(codes, fmt.Sprintf("%s×%d", k, v))
		}
		sort.Strings(codes)
		fmt.Fprintf(w, "errors on %s: %s %s\n", shortURL(u.URL), strings.Join(codes, " "), strings.Join(u.ErrorSamples, "; "))
	}
}

// shortURL drops scheme and host: every URL of a test has the same.
func shortURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.RequestURI()
}
