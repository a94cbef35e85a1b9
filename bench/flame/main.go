// Command flame measures how fast kbench delivers and draws a flame graph,
// next to `go tool pprof -http`'s flame graph page for the same profile, and
// how much memory the embedded pprof UI keeps under kbench.
//
//	go run ./bench/flame -kbench /path/to/kbench            # what run.sh does
//	go run ./bench/flame -rounds 3 -variants 0               # quick look
//
// For every input file it imports the file into a fresh `kbench serve` (on a
// free loopback port, with a temporary data directory) and starts
// `go tool pprof -http=127.0.0.1:PORT -no_browser FILE` for the same
// profile. Folded stacks, which pprof cannot read, reach pprof as the pprof
// protobuf kbench converted them to (downloaded from
// /api/profiles/{id}/download); the report says so. Then, for every round,
// interleaved (odd rounds kbench first, even rounds pprof first; -rounds
// 15 by default, the fewest the report takes medians of without a warning):
//
//   - time to data: a Go HTTP GET of kbench's
//     /api/profiles/{id}/flamegraph?format=rows (the answer the profile
//     page inlines as its first view: the same view parameters, width
//     1200) against pprof's /flamegraph page (which embeds its data), and
//     of kbench's profile page itself (HTML with the first view inline),
//     sent with the Accept-Encoding Chromium sends (-accept-encoding), full
//     body read and decoded; the bytes on the wire and decoded are recorded;
//   - time to first paint in headless Chromium: a fresh tab in a fresh
//     browser context (own renderer process, empty cache) navigates to
//     kbench's /profiles/{id} or pprof's /flamegraph. A script injected
//     before the page's own scripts records performance.now() (milliseconds
//     since navigation start) when the graph is drawn and after the next
//     animation frame has been rendered. "Drawn" is kbench's
//     flamegraph:rendered event (data-rendered="true") and, for pprof, the
//     first time #stack-chart holds .boxbg boxes (stackViewer builds every
//     box and inserts them with one replaceChildren call, synchronously in
//     the page's inline script);
//   - the bytes the browser received for the graph's data (Resource
//     Timing transferSize and encodedBodySize/decodedBodySize of kbench's
//     flame-graph request; of pprof's page itself);
//   - the page's JavaScript heap (CDP Runtime.getHeapUsage, as rendered and
//     after a forced garbage collection), its DOM node count and its
//     script/layout/style time (CDP Performance.getMetrics);
//   - the resident memory of the kbench server and of the pprof process
//     (/proc/PID/status VmRSS and VmHWM);
//   - the floor: in every round and load mode, the same fresh tab opens an
//     empty page (a heading and a paragraph, no style sheet, one inline
//     script that signals "drawn" as the parser reaches it) from a plain
//     net/http server on 127.0.0.1. Its first paint is what Chromium on this
//     machine takes to show any page at all, so pprof / floor is the most
//     any page could reach against pprof: a first-paint target above it
//     cannot be met by drawing faster.
//
// The report gives each side's median with its spread (25th–75th
// percentile, min–max over the rounds) and the ratio pprof / kbench two
// ways: the ratio of the medians, and the median (and spread) of the
// per-round ratios, which pair the two sides' loads of the same round.
//
// Finally it imports -variants smaller variants of the first pprof input
// and opens each one's embedded pprof UI (/profiles/{id}/pprof/flamegraph)
// twice over, recording the server's RSS after each, to show that the
// handler-set cache (an LRU of 16) keeps memory bounded.
//
// Everything listens on 127.0.0.1; every wait and loop is bounded.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/pprof/profile"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/kbench/kbench/internal/median"
)

const (
	dataRows = "rows"
	dataPage = "page"

	sideKbench = "kbench"
	sidePprof  = "pprof"
	// sideFloor is the empty page (floorPage): the first paint no page can
	// beat. Its samples have no input (floorInput).
	sideFloor  = "floor"
	floorInput = "(empty page)"
	// sidePage is a saved page given with -page: a candidate version of
	// a page, loaded in every round. Its samples' input is the directory's
	// name.
	sidePage = "page"

	// modeWarm: a fresh tab in the browser's one default context, so
	// kbench's static files come from the HTTP cache filled by the warm-up
	// (a user's repeat visit). modeCold: a fresh tab in a fresh browser
	// context: its own renderer process and an empty cache.
	modeWarm = "warm"
	modeCold = "cold"
)

type config struct {
	kbenchBin    string
	goBin        string
	chromium     string
	inputs       []string
	rounds       int
	variants     int
	variantEvery int
	outDir       string
	timeout      time.Duration
	pageTimeout  time.Duration
	width        int64
	height       int64
	keep         bool
	trace        bool
	modes        []string
	// floorDir, when set, is served as the floor instead of floorPage:
	// its index.html calls window.__flameBenchSeen itself.
	floorDir string
	// pageDirs (-page) are directories served each as a page of its own
	// and loaded in every round: saved copies of a page, changed, to
	// measure a change against pprof in the same run before making it.
	pageDirs []string
	// acceptEncoding is sent with the Go GETs of the data ("" sends none).
	acceptEncoding string
	// targets: an input's least first-paint ratio pprof / kbench, by file
	// name (defaultTarget for others).
	targets map[string]float64
}

// minRounds is the fewest rounds whose medians the report gives without
// a warning: first paints on a shared machine move 0.7–1.4× between runs
// of the same code, so a median of a few rounds says little.
const minRounds = 15

// defaultTarget is the first-paint ratio an input without a -targets entry
// is held to.
const defaultTarget = 3.0

// target is the least first-paint ratio pprof / kbench for an input.
func (c config) target(name string) float64 {
	if t, ok := c.targets[name]; ok {
		return t
	}
	return defaultTarget
}

// chromiumAcceptEncoding is what Chromium (156 here) sends, also over
// plain HTTP to 127.0.0.1.
const chromiumAcceptEncoding = "gzip, deflate, br, zstd"

func main() {
	var cfg config
	var inputs string
	flag.StringVar(&cfg.kbenchBin, "kbench", "", "kbench binary to measure (default: build the module at the working directory)")
	flag.StringVar(&cfg.goBin, "go", "go", "go command used for `go tool pprof` (and to build kbench)")
	flag.StringVar(&cfg.chromium, "chromium", "/usr/bin/chromium", "Chromium binary")
	flag.StringVar(&inputs, "inputs", "../shared/public-data/pprof-large-cpu.pb.gz,../shared/public-data/java-netty-collapsed.txt", "comma-separated profile files (pprof or folded stacks)")
	flag.IntVar(&cfg.rounds, "rounds", 15, "measured rounds (each measures every input once per side); fewer than 15 is reported as too few for a median")
	targets := flag.String("targets", "pprof-large-cpu.pb.gz=15,java-netty-collapsed.txt=1.5", "first-paint targets: input file name=least pprof/kbench ratio, comma-separated (other inputs: 3)")
	flag.IntVar(&cfg.variants, "variants", 20, "variants of the first pprof input whose embedded pprof UI is opened for the memory check (0: skip)")
	flag.IntVar(&cfg.variantEvery, "variant-every", 4, "each variant keeps every Nth sample of the input")
	flag.StringVar(&cfg.outDir, "out", "", "directory for results.json, report.txt and the servers' logs (default bench/flame/out/<UTC time>)")
	flag.DurationVar(&cfg.timeout, "timeout", 45*time.Minute, "give up after this long")
	flag.DurationVar(&cfg.pageTimeout, "page-timeout", 2*time.Minute, "longest wait for one page to draw")
	flag.Int64Var(&cfg.width, "width", 1280, "browser viewport width (CSS px)")
	flag.Int64Var(&cfg.height, "height", 900, "browser viewport height (CSS px)")
	flag.BoolVar(&cfg.trace, "trace", true, "after the rounds, load each page once more with Chrome tracing on and summarise its main thread (trace files in -out)")
	flag.StringVar(&cfg.acceptEncoding, "accept-encoding", chromiumAcceptEncoding, "Accept-Encoding of the Go GETs (time to data); \"\" asks for no compression")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temporary directory (data, converted files, variants)")
	flag.StringVar(&cfg.floorDir, "floor", "", "serve this directory as the floor instead of the built-in empty page (its index.html must call window.__flameBenchSeen('…') where the page counts as drawn): to find what part of a page costs its first paint")
	flag.Func("page", "a directory to serve as one more page, loaded in every round beside the empty page and reported as pprof / page against each input (drawn when its .flamegraph fires flamegraph:rendered with data-rendered=\"true\", as kbench's page does, or when it calls window.__flameBenchSeen('…') itself); repeatable: one per variant of a page, e.g. saved copies of kbench's profile page with one part changed", func(dir string) error {
		if st, err := os.Stat(filepath.Join(dir, "index.html")); err != nil || st.IsDir() {
			return fmt.Errorf("%s holds no index.html", dir)
		}
		for _, d := range cfg.pageDirs {
			if filepath.Base(filepath.Clean(d)) == filepath.Base(filepath.Clean(dir)) {
				return fmt.Errorf("%s and %s: the report names a page by its directory's name, and these share one", d, dir)
			}
		}
		cfg.pageDirs = append(cfg.pageDirs, dir)
		return nil
	})
	modes := flag.String("modes", "warm,cold", "page loads per round: warm (fresh tab, shared HTTP cache) and/or cold (fresh tab in a fresh browser context)")
	flag.Parse()
	for _, m := range strings.Split(*modes, ",") {
		if m = strings.TrimSpace(m); m == modeWarm || m == modeCold {
			cfg.modes = append(cfg.modes, m)
		} else if m != "" {
			fmt.Fprintf(os.Stderr, "flame: -modes: unknown mode %q\n", m)
			os.Exit(2)
		}
	}
	if len(cfg.modes) == 0 {
		cfg.modes = []string{modeWarm}
	}
	for _, s := range strings.Split(inputs, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.inputs = append(cfg.inputs, s)
		}
	}
	if len(cfg.inputs) == 0 || cfg.rounds < 1 || cfg.rounds > 101 || cfg.variants < 0 || cfg.variants > 200 || cfg.variantEvery < 1 {
		fmt.Fprintln(os.Stderr, "flame: need inputs, 1 ≤ -rounds ≤ 101, 0 ≤ -variants ≤ 200, -variant-every ≥ 1")
		os.Exit(2)
	}
	cfg.targets = map[string]float64{}
	for _, s := range strings.Split(*targets, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		name, v, ok := strings.Cut(s, "=")
		r, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || r <= 0 {
			fmt.Fprintf(os.Stderr, "flame: -targets: want name=ratio, got %q\n", s)
			os.Exit(2)
		}
		cfg.targets[name] = r
	}
	if cfg.outDir == "" {
		cfg.outDir = filepath.Join("bench", "flame", "out", time.Now().UTC().Format("20060102T150405Z"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg)
	stop()
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "flame: FAILED:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// --- results ---

// input is one profile file, as both sides serve it.
type input struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Folded    bool   `json:"folded"`
	KbenchID  uint   `json:"kbench_profile_id"`
	PprofFile string `json:"pprof_file"` // what pprof was given
	PprofNote string `json:"pprof_note,omitempty"`

	pprof    *proc
	pprofURL string
}

// dataSample is one time-to-data measurement.
type dataSample struct {
	Input string `json:"input"`
	Side  string `json:"side"`
	Round int    `json:"round"` // 0: the cold first request
	// What: dataRows (kbench's first-view answer; pprof's page, which
	// holds its data) or dataPage (kbench's profile page, first view
	// inline; pprof's page again is not fetched).
	What       string  `json:"what"`
	BusyBefore float64 `json:"cpu_busy_before"`
	MS         float64 `json:"ms"`
	TTFBMS     float64 `json:"ttfb_ms"`
	Bytes      int64   `json:"bytes"`         // on the wire
	Decoded    int64   `json:"decoded_bytes"` // after Content-Encoding is undone
	Encoding   string  `json:"content_encoding,omitempty"`
}

// paintSample is one time-to-first-paint measurement.
type paintSample struct {
	Input      string  `json:"input"`
	Side       string  `json:"side"`
	Round      int     `json:"round"` // 0: warm-up, not in the medians
	Mode       string  `json:"mode"`
	BusyBefore float64 `json:"cpu_busy_before"`
	pageResult
	WallMS         float64            `json:"wall_ms"` // Go side: Page.navigate sent → painted seen
	HeapUsedMB     float64            `json:"heap_used_mb"`
	HeapTotalMB    float64            `json:"heap_total_mb"`
	HeapAfterGCMB  float64            `json:"heap_after_gc_mb"`
	Metrics        map[string]float64 `json:"metrics"` // CDP Performance.getMetrics
	Timing         map[string]float64 `json:"timing,omitempty"`
	ServerRSSMB    float64            `json:"server_rss_mb"` // the side's server process after the page drew
	ServerHWMMB    float64            `json:"server_hwm_mb"`
	KbenchRSSMB    float64            `json:"kbench_rss_mb"`
	PprofProcRSSMB float64            `json:"pprof_rss_mb"`
}

// pageResult is what the injected script and the page report.
type pageResult struct {
	Signal        string  `json:"signal"`
	DrawnMS       float64 `json:"drawn_ms"`   // navigation start → the graph is drawn
	FrameMS       float64 `json:"frame_ms"`   // → the next animation frame starts
	PaintedMS     float64 `json:"painted_ms"` // → that frame has been rendered (task after it)
	ResponseStart float64 `json:"response_start_ms"`
	ResponseEnd   float64 `json:"response_end_ms"`
	DCL           float64 `json:"dom_content_loaded_ms"`
	RawTiming     string  `json:"data_timing,omitempty"`
	Rendered      string  `json:"data_rendered,omitempty"`
	Boxes         int     `json:"pprof_boxes,omitempty"`
	// The graph's data as the browser received it: kbench's flame-graph
	// request, pprof's page (Resource Timing; 0 when served from cache).
	DataTransfer int64       `json:"data_transfer_bytes"`
	DataEncoded  int64       `json:"data_encoded_bytes"`
	DataDecoded  int64       `json:"data_decoded_bytes"`
	Nodes        int         `json:"kbench_nodes,omitempty"`
	State        string      `json:"data_state,omitempty"`
	LongFrames   []longFrame `json:"long_frames,omitempty"`
}

// longFrame is a long-animation-frame entry (a frame that took ≥ 50 ms).
type longFrame struct {
	Start            float64 `json:"start"`
	Duration         float64 `json:"duration"`
	RenderStart      float64 `json:"render_start"`
	StyleLayoutStart float64 `json:"style_layout_start"`
	Scripts          []struct {
		Invoker           string  `json:"invoker"`
		Source            string  `json:"source"`
		Start             float64 `json:"start"`
		Duration          float64 `json:"duration"`
		ForcedStyleLayout float64 `json:"forced_style_layout"`
	} `json:"scripts"`
}

type memPoint struct {
	Pass    int     `json:"pass"`
	Open    int     `json:"open"` // 1-based within the pass
	Profile uint    `json:"profile_id"`
	MS      float64 `json:"ms"`
	Bytes   int64   `json:"bytes"`
	RSSMB   float64 `json:"rss_mb"`
	HWMMB   float64 `json:"hwm_mb"`
	GC      gcLine  `json:"last_gc"`
}

// gcLine is one line of GODEBUG=gctrace=1 output.
type gcLine struct {
	Num    int `json:"num"`
	LiveMB int `json:"live_mb"` // heap marked live by this cycle
	GoalMB int `json:"goal_mb"`
}

var gcRe = regexp.MustCompile(`^gc (\d+) @.* (\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

// lastGC reads the most recent gctrace line of a log.
func lastGC(path string) gcLine {
	b, err := os.ReadFile(path)
	if err != nil {
		return gcLine{}
	}
	var g gcLine
	for _, line := range strings.Split(string(b), "\n") {
		if m := gcRe.FindStringSubmatch(line); m != nil {
			g.Num, _ = strconv.Atoi(m[1])
			g.LiveMB, _ = strconv.Atoi(m[4])
			g.GoalMB, _ = strconv.Atoi(m[5])
		}
	}
	return g
}

type memResult struct {
	Variants     int        `json:"variants"`
	SamplesEach  []int      `json:"samples_each"`
	BytesEach    []int64    `json:"bytes_each"`
	BeforeRSSMB  float64    `json:"before_rss_mb"`
	BeforeHWMMB  float64    `json:"before_hwm_mb"`
	AfterPrefill float64    `json:"after_prefill_rss_mb"`
	PrefillGC    gcLine     `json:"after_prefill_gc"`
	Points       []memPoint `json:"points"`
}

type results struct {
	Started   time.Time       `json:"started"`
	Host      hostInfo        `json:"host"`
	Rounds    int             `json:"rounds"`
	Inputs    []*input        `json:"inputs"`
	Data      []dataSample    `json:"data"`
	Paint     []paintSample   `json:"paint"`
	Memory    *memResult      `json:"memory,omitempty"`
	Traces    []*traceSummary `json:"traces,omitempty"`
	Signals   []string        `json:"signals"`
	Commands  []string        `json:"commands"`
	KbenchPID int             `json:"kbench_pid"`
}

type hostInfo struct {
	CPUs     int    `json:"cpus"`
	Go       string `json:"go"`
	Chromium string `json:"chromium"`
	Kbench   string `json:"kbench_binary"`
}

// --- the run ---

func run(ctx context.Context, cfg config) error {
	res := &results{Started: time.Now().UTC(), Rounds: cfg.rounds}
	if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
		return err
	}
	outDir, _ := filepath.Abs(cfg.outDir)
	tmp, err := os.MkdirTemp("", "kbench-flame-bench-")
	if err != nil {
		return err
	}
	if cfg.keep {
		defer logf("temporary files kept in %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	res.Host = hostInfo{CPUs: cpuCount(), Go: commandLine(ctx, cfg.goBin, "version"), Chromium: commandLine(ctx, cfg.chromium, "--version")}

	// kbench
	bin := cfg.kbenchBin
	if bin == "" {
		bin = filepath.Join(tmp, "kbench")
		logf("building kbench into %s", bin)
		build := exec.CommandContext(ctx, cfg.goBin, "build", "-o", bin, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build kbench: %w", err)
		}
	}
	res.Host.Kbench = bin
	kport, err := freePort()
	if err != nil {
		return err
	}
	kbase := fmt.Sprintf("http://127.0.0.1:%d", kport)
	kargs := []string{bin, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", kport), "--data", filepath.Join(tmp, "data")}
	// gctrace=1 only prints a line per garbage collection (to the log):
	// the memory check reads the live heap from it.
	godebug := "gctrace=1"
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + ",gctrace=1"
	}
	kb, err := startProc(ctx, "kbench serve", filepath.Join(outDir, "kbench-serve.log"), kargs, tmp, "GODEBUG="+godebug)
	if err != nil {
		return err
	}
	defer kb.stop()
	res.KbenchPID = kb.cmd.Process.Pid
	res.Commands = append(res.Commands, "GODEBUG="+godebug+" "+strings.Join(kargs, " "))
	client := &http.Client{Timeout: 3 * time.Minute, Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	if err := waitHTTP(ctx, client, kbase+"/api/runs?limit=1", 60*time.Second); err != nil {
		return fmt.Errorf("kbench serve did not come up: %w (see %s)", err, kb.logPath)
	}
	logf("kbench serve (pid %d) on %s", kb.cmd.Process.Pid, kbase)

	// inputs: import into kbench, start pprof on the same profile
	for _, path := range cfg.inputs {
		in := &input{Name: filepath.Base(path), Path: path}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		in.Folded = looksFolded(data)
		ids, err := importProfiles(ctx, client, kbase, "flame-bench "+in.Name, []namedFile{{in.Name, data}})
		if err != nil {
			return fmt.Errorf("import %s: %w", path, err)
		}
		in.KbenchID = ids[0]
		in.PprofFile = path
		if in.Folded {
			conv := filepath.Join(tmp, strings.TrimSuffix(in.Name, filepath.Ext(in.Name))+".kbench-converted.pb.gz")
			if err := download(ctx, client, fmt.Sprintf("%s/api/profiles/%d/download", kbase, in.KbenchID), conv); err != nil {
				return fmt.Errorf("download the converted %s: %w", in.Name, err)
			}
			in.PprofFile = conv
			in.PprofNote = "pprof cannot read folded stacks: pprof was given kbench's conversion of the file, downloaded from /api/profiles/" + strconv.Itoa(int(in.KbenchID)) + "/download"
		}
		pport, err := freePort()
		if err != nil {
			return err
		}
		pargs := []string{cfg.goBin, "tool", "pprof", fmt.Sprintf("-http=127.0.0.1:%d", pport), "-no_browser", in.PprofFile}
		in.pprof, err = startProc(ctx, "pprof "+in.Name, filepath.Join(outDir, "pprof-"+in.Name+".log"), pargs, tmp)
		if err != nil {
			return err
		}
		defer in.pprof.stop()
		in.pprofURL = fmt.Sprintf("http://127.0.0.1:%d", pport)
		res.Commands = append(res.Commands, strings.Join(pargs, " "))
		if err := waitTCP(ctx, fmt.Sprintf("127.0.0.1:%d", pport), 3*time.Minute); err != nil {
			return fmt.Errorf("go tool pprof for %s did not come up: %w (see %s)", in.Name, err, in.pprof.logPath)
		}
		logf("%s: kbench profile %d; pprof (pid %d) on %s%s", in.Name, in.KbenchID, in.pprof.cmd.Process.Pid, in.pprofURL,
			map[bool]string{true: " (given kbench's converted pprof)", false: ""}[in.Folded])
		res.Inputs = append(res.Inputs, in)
	}
	kbData := func(in *input) string {
		// The profile page's inline first view is this answer: no view
		// parameters, so the server's default width of 1200 px.
		return fmt.Sprintf("%s/api/profiles/%d/flamegraph?format=rows", kbase, in.KbenchID)
	}
	kbPage := func(in *input) string { return fmt.Sprintf("%s/profiles/%d", kbase, in.KbenchID) }
	// pprof serves its UI under /ui/ (and redirects /flamegraph there in
	// four hops); go straight to the page.
	ppURL := func(in *input) string { return in.pprofURL + "/ui/flamegraph" }

	// cold first requests: kbench parses the stored profile on its first
	// use; pprof parsed its file at start-up.
	for _, in := range res.Inputs {
		for _, side := range []string{sideKbench, sidePprof} {
			u := map[string]string{sideKbench: kbData(in), sidePprof: ppURL(in)}[side]
			ds, err := timeGET(ctx, client, u, cfg.acceptEncoding)
			if err != nil {
				return fmt.Errorf("%s %s: %w", side, in.Name, err)
			}
			ds.Input, ds.Side, ds.Round, ds.What = in.Name, side, 0, dataRows
			res.Data = append(res.Data, ds)
			logf("cold data %s %s: %.1f ms, %s on the wire (%s), %s decoded", in.Name, side, ds.MS, mb(ds.Bytes), cmp.Or(ds.Encoding, "identity"), mb(ds.Decoded))
		}
	}

	// the browser
	br, err := startBrowser(ctx, cfg, filepath.Join(tmp, "chromium-profile"), filepath.Join(outDir, "chromium.log"))
	if err != nil {
		return err
	}
	defer br.close()
	res.Signals = []string{
		"kbench: the bubbling flamegraph:rendered event of .flamegraph (fired right after data-rendered=\"true\" is set, once the canvas is drawn); the predicate also checks data-rendered=\"true\"",
		"pprof: a MutationObserver sees #stack-chart holding .boxbg elements (stackViewer inserts every box with one replaceChildren call from the page's inline script)",
		"both: then painted = a setTimeout(0) queued from the next requestAnimationFrame callback, i.e. after that frame's style, layout and paint; times are performance.now(), ms since navigation start",
	}
	measure := func(in *input, side string, round int, modes []string) error {
		busy := waitIdle(ctx)
		ds, err := timeGET(ctx, client, map[string]string{sideKbench: kbData(in), sidePprof: ppURL(in)}[side], cfg.acceptEncoding)
		if err != nil {
			return fmt.Errorf("data %s %s: %w", side, in.Name, err)
		}
		ds.Input, ds.Side, ds.Round, ds.What, ds.BusyBefore = in.Name, side, round, dataRows, busy
		if round > 0 {
			res.Data = append(res.Data, ds)
		}
		if side == sideKbench {
			busy := waitIdle(ctx)
			pg, err := timeGET(ctx, client, kbPage(in), cfg.acceptEncoding)
			if err != nil {
				return fmt.Errorf("page %s %s: %w", side, in.Name, err)
			}
			pg.Input, pg.Side, pg.Round, pg.What, pg.BusyBefore = in.Name, side, round, dataPage, busy
			if round > 0 {
				res.Data = append(res.Data, pg)
			}
		}
		for _, mode := range modes {
			busy := waitIdle(ctx)
			u := map[string]string{sideKbench: kbPage(in), sidePprof: ppURL(in)}[side]
			ps, err := br.paint(ctx, cfg, u, side, mode == modeCold)
			if err != nil {
				return fmt.Errorf("paint %s %s (%s): %w", side, in.Name, mode, err)
			}
			ps.Input, ps.Side, ps.Round, ps.Mode, ps.BusyBefore = in.Name, side, round, mode, busy
			kr, kh := procMem(kb.cmd.Process.Pid)
			pr, ph := procMem(in.pprof.toolPID())
			ps.KbenchRSSMB, ps.PprofProcRSSMB = kr, pr
			if side == sideKbench {
				ps.ServerRSSMB, ps.ServerHWMMB = kr, kh
			} else {
				ps.ServerRSSMB, ps.ServerHWMMB = pr, ph
			}
			res.Paint = append(res.Paint, ps)
			logf("round %d %-24s %-6s %-4s data %7.1f ms %9s | drawn %7.1f painted %7.1f ms wall %7.1f | heap %6.1f MB | rss %6.1f MB | cpu busy before %3.0f%%",
				round, in.Name, side, mode, ds.MS, mb(ds.Bytes), ps.DrawnMS, ps.PaintedMS, ps.WallMS, ps.HeapUsedMB, ps.ServerRSSMB, busy*100)
		}
		return nil
	}
	// The floor, an empty page from a server of its own, and the pages
	// given with -page, each from its own server too.
	type extraPage struct{ url, name, side string }
	floorURL, stopFloor, err := serveFloor(cfg.floorDir)
	if err != nil {
		return err
	}
	defer stopFloor()
	res.Signals = append(res.Signals, "floor: an empty page (no style sheet) calls the signal from an inline script after its text; served by a plain net/http server on 127.0.0.1")
	extras := []extraPage{{floorURL, floorInput, sideFloor}}
	for _, dir := range cfg.pageDirs {
		u, stop, err := serveFloor(dir)
		if err != nil {
			return err
		}
		defer stop()
		extras = append(extras, extraPage{u, filepath.Base(filepath.Clean(dir)), sidePage})
	}
	if len(cfg.pageDirs) > 0 {
		res.Signals = append(res.Signals, "pages (-page): saved pages served as they are by a plain net/http server on 127.0.0.1 (index.html not cached, other files for an hour); drawn as kbench's page is (flamegraph:rendered), or when the page calls the signal itself")
	}
	// measureExtras loads the floor and the pages, in an order reversed
	// every other round, as the sides are.
	measureExtras := func(round int, modes []string) error {
		pages := slices.Clone(extras)
		if round%2 == 0 {
			slices.Reverse(pages)
		}
		for _, pg := range pages {
			for _, mode := range modes {
				busy := waitIdle(ctx)
				ps, err := br.paint(ctx, cfg, pg.url, pg.side, mode == modeCold)
				if err != nil {
					return fmt.Errorf("paint %s (%s): %w", pg.name, mode, err)
				}
				ps.Input, ps.Side, ps.Round, ps.Mode, ps.BusyBefore = pg.name, pg.side, round, mode, busy
				res.Paint = append(res.Paint, ps)
				logf("round %d %-24s %-6s %-4s drawn %7.1f painted %7.1f ms wall %7.1f | cpu busy before %3.0f%%",
					round, pg.name, pg.side, mode, ps.DrawnMS, ps.PaintedMS, ps.WallMS, busy*100)
			}
		}
		return nil
	}
	// Warm-up (round 0): Chromium's first pages (and kbench's static
	// files into the browser's cache), not in the medians.
	for _, in := range res.Inputs {
		for _, side := range []string{sideKbench, sidePprof} {
			if err := measure(in, side, 0, []string{modeWarm}); err != nil {
				return err
			}
		}
	}
	if err := measureExtras(0, []string{modeWarm}); err != nil {
		return err
	}
	for r := 1; r <= cfg.rounds; r++ {
		sides := []string{sideKbench, sidePprof}
		ins := slices.Clone(res.Inputs)
		modes := slices.Clone(cfg.modes)
		if r%2 == 0 {
			slices.Reverse(sides)
			slices.Reverse(ins)
			slices.Reverse(modes)
		}
		// The empty page's and the -page pages' place in the round
		// alternates too: first in odd rounds, last in even ones.
		if r%2 == 1 {
			if err := measureExtras(r, modes); err != nil {
				return err
			}
		}
		for _, in := range ins {
			for _, side := range sides {
				if err := measure(in, side, r, modes); err != nil {
					return err
				}
			}
		}
		if r%2 == 0 {
			if err := measureExtras(r, modes); err != nil {
				return err
			}
		}
	}
	if cfg.trace {
		for _, mode := range cfg.modes {
			for _, in := range res.Inputs {
				for _, side := range []string{sideKbench, sidePprof} {
					waitIdle(ctx)
					u := map[string]string{sideKbench: kbPage(in), sidePprof: ppURL(in)}[side]
					file := filepath.Join(outDir, fmt.Sprintf("trace-%s-%s-%s.json", in.Name, side, mode))
					ts, err := br.trace(ctx, cfg, u, side, file, mode == modeCold)
					if err != nil {
						return fmt.Errorf("trace %s %s: %w", side, in.Name, err)
					}
					ts.Input, ts.Side, ts.Mode, ts.File = in.Name, side, mode, file
					res.Traces = append(res.Traces, ts)
					logf("traced %s %s %s: painted at %.0f ms, main thread busy %.0f ms", in.Name, side, mode, ts.PaintedMS, ts.BusyMS)
				}
			}
		}
	}
	br.close()

	// the embedded pprof UI's memory
	if cfg.variants > 0 {
		var src *input
		for _, in := range res.Inputs {
			if !in.Folded {
				src = in
				break
			}
		}
		if src == nil {
			src = res.Inputs[0]
		}
		res.Memory, err = memoryCheck(ctx, cfg, client, kbase, kb.cmd.Process.Pid, kb.logPath, src.PprofFile)
		if err != nil {
			return fmt.Errorf("memory check: %w", err)
		}
	}

	// report
	var rep bytes.Buffer
	report(&rep, cfg, res)
	os.Stdout.Write(rep.Bytes())
	if err := os.WriteFile(filepath.Join(outDir, "report.txt"), rep.Bytes(), 0o644); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(outDir, "results.json"), js, 0o644); err != nil {
		return err
	}
	logf("wrote %s and %s", filepath.Join(outDir, "report.txt"), filepath.Join(outDir, "results.json"))
	return nil
}

// --- processes ---

type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
}

// startProc starts argv in its own process group (so that stopping it also
// stops what it started, e.g. the pprof binary `go tool` runs), with its
// output in logPath. KBENCH_* variables are removed from its environment so
// that only the flags given here configure kbench serve.
func startProc(ctx context.Context, name, logPath string, argv []string, home string, extraEnv ...string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			env = append(env, kv)
		}
	}
	if os.Getenv("HOME") == "" {
		env = append(env, "HOME="+home) // pprof needs a configuration directory
	}
	env = append(env, extraEnv...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// stop interrupts the process group it started, then kills it after 10 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	}
}

// toolPID finds the process that does the work: `go tool pprof` runs the
// pprof binary as a child of the go command.
func (p *proc) toolPID() int {
	pid := p.cmd.Process.Pid
	for depth := 0; depth < 3; depth++ {
		kids := childrenOf(pid)
		if len(kids) == 0 {
			return pid
		}
		best := kids[0]
		for _, k := range kids {
			if comm(k) == "pprof" {
				return k
			}
			if r, _ := procMem(k); r > 0 {
				best = k
			}
		}
		pid = best
	}
	return pid
}

func childrenOf(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// procMem reads VmRSS and VmHWM (MB) of a process.
func procMem(pid int) (rss, hwm float64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(fs[1], 64)
		switch fs[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		}
	}
	return rss, hwm
}

// waitIdle waits (at most 5 s) until the machine's CPUs were less than 30%
// busy over a quarter of a second, so that one measurement does not pay for
// the previous one's clean-up (a closing renderer, a server's GC). It
// returns the last busy fraction seen.
func waitIdle(ctx context.Context) float64 {
	busy := 1.0
	for i := 0; i < 20; i++ {
		a, ta := cpuTimes()
		select {
		case <-ctx.Done():
			return busy
		case <-time.After(250 * time.Millisecond):
		}
		b, tb := cpuTimes()
		if tb > ta {
			busy = 1 - float64(b-a)/float64(tb-ta)
		}
		if busy < 0.3 {
			break
		}
	}
	return busy
}

// cpuTimes returns the idle (idle + iowait) and total jiffies of all CPUs.
func cpuTimes() (idle, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fs := strings.Fields(line)
	for i, f := range fs[1:min(len(fs), 9)] {
		v, _ := strconv.ParseUint(f, 10, 64)
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return idle, total
}

func cpuCount() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "\nprocessor") + map[bool]int{true: 1, false: 0}[strings.HasPrefix(string(b), "processor")]
}

func commandLine(ctx context.Context, name string, args ...string) string {
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(c, name, args...).Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitHTTP(ctx context.Context, c *http.Client, u string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for i := 0; i < 10000 && time.Now().Before(deadline); i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := c.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", u, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("gave up after %s: %v", limit, last)
}

func waitTCP(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for i := 0; i < 10000 && time.Now().Before(deadline); i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("gave up after %s: %v", limit, last)
}

// --- HTTP ---

// timeGET measures one GET: request sent → whole body read and decoded
// (the Content-Encoding undone, as a browser does), asking with
// acceptEncoding ("" asks for no compression).
func timeGET(ctx context.Context, c *http.Client, u, acceptEncoding string) (dataSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return dataSample{}, err
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return dataSample{}, err
	}
	ttfb := time.Since(t0)
	wire := &countingReader{r: resp.Body}
	var body io.Reader = wire
	enc := resp.Header.Get("Content-Encoding")
	switch enc {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(wire)
		if err != nil {
			resp.Body.Close()
			return dataSample{}, fmt.Errorf("GET %s: gzip: %w", u, err)
		}
		body = zr
	case "zstd":
		zr, err := zstd.NewReader(wire, zstd.WithDecoderConcurrency(1))
		if err != nil {
			resp.Body.Close()
			return dataSample{}, fmt.Errorf("GET %s: zstd: %w", u, err)
		}
		defer zr.Close()
		body = zr
	default:
		resp.Body.Close()
		return dataSample{}, fmt.Errorf("GET %s: cannot decode Content-Encoding %q", u, enc)
	}
	n, err := io.Copy(io.Discard, body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil {
		return dataSample{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return dataSample{}, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return dataSample{MS: ms(d), TTFBMS: ms(ttfb), Bytes: wire.n, Decoded: n, Encoding: enc}, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type namedFile struct {
	name string
	data []byte
}

// importProfiles posts files to /api/import and returns the new profiles' ids.
func importProfiles(ctx context.Context, c *http.Client, base, label string, files []namedFile) ([]uint, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := mw.WriteField("label", label); err != nil {
		return nil, err
	}
	for _, f := range files {
		w, err := mw.CreateFormFile("profile", f.name)
		if err != nil {
			return nil, err
		}
		w.Write(f.data)
	}
	mw.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/import", &body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
	}
	var out struct {
		Profiles []struct {
			ID uint `json:"id"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if len(out.Profiles) != len(files) {
		return nil, fmt.Errorf("imported %d files, got %d profiles back", len(files), len(out.Profiles))
	}
	ids := make([]uint, len(out.Profiles))
	for i, p := range out.Profiles {
		ids[i] = p.ID
	}
	return ids, nil
}

func download(ctx context.Context, c *http.Client, u, dst string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

var foldedLine = regexp.MustCompile(`^\S.* [0-9]+$`)

// looksFolded: not gzip, not protobuf, and the first non-empty line is
// "frame;frame;… count".
func looksFolded(b []byte) bool {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for i := 0; i < 100 && sc.Scan(); i++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return foldedLine.MatchString(line) && !strings.HasPrefix(line, "--- ")
	}
	return false
}

// --- the browser ---

type browser struct {
	allocCancel   context.CancelFunc
	browserCancel context.CancelFunc
	ctx           context.Context
	closed        bool
}

// startBrowser starts headless Chromium with exactly the project's flags
// and a fresh user-data-dir; chromedp adds its pipe and about:blank.
func startBrowser(ctx context.Context, cfg config, userDir, logPath string) (*browser, error) {
	if err := os.MkdirAll(userDir, 0o700); err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(cfg.chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(userDir),
		chromedp.CombinedOutput(logFile),
	)
	bctx, bcancel := chromedp.NewContext(allocCtx)
	b := &browser{allocCancel: func() { allocCancel(); logFile.Close() }, browserCancel: bcancel, ctx: bctx}
	// The first action starts the browser; its tab stays open on about:blank.
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		b.close()
		return nil, fmt.Errorf("start chromium: %w (see %s)", err, logPath)
	}
	return b, nil
}

func (b *browser) close() {
	if b.closed {
		return
	}
	b.closed = true
	closeCtx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	chromedp.Cancel(closeCtx)
	cancel()
	b.browserCancel()
	b.allocCancel()
}

// The injected scripts run in the main frame before any of the page's own
// scripts. They record, in performance.now() milliseconds since navigation
// start, when the graph is drawn (drawn), when the next animation frame
// starts (frame) and a task queued from that frame's requestAnimationFrame
// callback, which runs after the frame's style, layout and paint (painted).
const injectCommon = `(function () {
  if (window.top !== window || window.__flameBench) { return; }
  var st = window.__flameBench = { drawn: 0, frame: 0, painted: 0, signal: '', frames: [] };
  // Long animation frames (≥ 50 ms) up to the paint: where the main thread went.
  try {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) {
        if (st.painted) { return; }
        st.frames.push({
          start: e.startTime, duration: e.duration, render_start: e.renderStart, style_layout_start: e.styleAndLayoutStart,
          scripts: (e.scripts || []).map(function (x) {
            return { invoker: x.invoker, source: x.sourceURL, start: x.startTime, duration: x.duration, forced_style_layout: x.forcedStyleAndLayoutDuration };
          })
        });
      });
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch (e) { /* not supported */ }
  window.__flameBenchSeen = function (signal) {
    if (st.drawn) { return; }
    st.drawn = performance.now();
    st.signal = signal;
    requestAnimationFrame(function () {
      st.frame = performance.now();
      setTimeout(function () { st.painted = performance.now(); }, 0);
    });
  };
  %s
})();`

const injectKbench = `document.addEventListener('flamegraph:rendered', function (ev) {
    var el = ev.target;
    if (el && el.getAttribute && el.getAttribute('data-rendered') === 'true') { window.__flameBenchSeen('flamegraph:rendered'); }
  }, true);`

// serveFloor serves floorPage (or, with dir, that directory) on a free
// loopback port; stop closes the server.
func serveFloor(dir string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("empty page: %w", err)
	}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, floorPage)
	})
	if dir != "" {
		// Files other than the page are cached for an hour, as kbench
		// serves its static files: a warm load takes them from the cache.
		files := http.FileServer(http.Dir(dir))
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" || strings.HasSuffix(r.URL.Path, ".html") {
				w.Header().Set("Cache-Control", "no-store")
			} else {
				w.Header().Set("Cache-Control", "public, max-age=3600")
			}
			files.ServeHTTP(w, r)
		})
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", func() { srv.Close() }, nil
}

// floorPage is the floor's empty page: it signals "drawn" from an inline
// script, which runs as the parser reaches it, after the text above it.
const floorPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>floor</title></head>
<body><h1>An empty page</h1><p>The first paint of any page, for comparison.</p>
<script>window.__flameBenchSeen && window.__flameBenchSeen('floor: inline script');</script>
</body></html>
`

const injectPprof = `var mo = new MutationObserver(function () {
    var chart = document.getElementById('stack-chart');
    if (chart && chart.querySelector('.boxbg')) { mo.disconnect(); window.__flameBenchSeen('#stack-chart .boxbg'); }
  });
  mo.observe(document, { childList: true, subtree: true });`

const collectResult = `(function () {
  var s = window.__flameBench || {};
  var nav = (performance.getEntriesByType('navigation') || [])[0] || {};
  var el = document.querySelector('.flamegraph');
  var chart = document.getElementById('stack-chart');
  var data = nav;
  if (el) {
    (performance.getEntriesByType('resource') || []).forEach(function (r) {
      if (r.name.indexOf('/flamegraph?') >= 0 && r.name.indexOf('view=top') < 0) { data = r; } // not the top table's
    });
  }
  return {
    data_transfer_bytes: data.transferSize || 0, data_encoded_bytes: data.encodedBodySize || 0, data_decoded_bytes: data.decodedBodySize || 0,
    signal: s.signal || '', drawn_ms: s.drawn || 0, frame_ms: s.frame || 0, painted_ms: s.painted || 0,
    response_start_ms: nav.responseStart || 0, response_end_ms: nav.responseEnd || 0,
    dom_content_loaded_ms: nav.domContentLoadedEventEnd || 0,
    data_timing: el ? (el.getAttribute('data-timing') || '') : '',
    data_rendered: el ? (el.getAttribute('data-rendered') || '') : '',
    data_state: el ? (el.getAttribute('data-state') || '') : '',
    kbench_nodes: el ? (+el.getAttribute('data-nodes') || 0) : 0,
    pprof_boxes: chart ? chart.querySelectorAll('.boxbg').length : 0,
    long_frames: s.frames || []
  };
})()`

// paint opens u in a fresh tab (with fresh, in a fresh browser context:
// its own renderer process and an empty HTTP cache) and waits until the
// graph is painted.
func (b *browser) paint(ctx context.Context, cfg config, u, side string, fresh bool) (paintSample, error) {
	var ps paintSample
	var opts []chromedp.ContextOption
	if fresh {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	tab, cancel := chromedp.NewContext(b.ctx, opts...)
	defer cancel()
	// A -page page is a version of kbench's: it is drawn when kbench's is.
	script := fmt.Sprintf(injectCommon, map[string]string{sideKbench: injectKbench, sidePage: injectKbench, sidePprof: injectPprof}[side])
	// Set-up on the tab's own context (its first Run creates the target).
	err := chromedp.Do(tab,
		chromedp.EmulateViewport(cfg.width, cfg.height),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, performance.Enable, performance.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
			return err
		}))
	if err != nil {
		return ps, fmt.Errorf("tab set-up: %w", err)
	}
	tctx, tcancel := context.WithTimeout(tab, cfg.pageTimeout)
	defer tcancel()
	t0 := time.Now()
	if err := chromedp.Do(tctx, chromedp.Navigate(u)); err != nil {
		return ps, fmt.Errorf("navigate %s: %w", u, err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`!!(window.__flameBench && window.__flameBench.painted > 0)`,
		chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(cfg.pageTimeout))); err != nil {
		pr, _ := chromedp.Run(tctx, chromedp.Evaluate[pageResult](collectResult))
		return ps, fmt.Errorf("waiting for %s to draw: %w (page state: %+v)", u, err, pr)
	}
	ps.WallMS = ms(time.Since(t0))
	pr, err := chromedp.Run(tctx, chromedp.Evaluate[pageResult](collectResult))
	if err != nil {
		return ps, err
	}
	ps.pageResult = pr
	if side == sideKbench && pr.Rendered != "true" {
		return ps, fmt.Errorf("kbench page: data-rendered=%q data-state=%q", pr.Rendered, pr.State)
	}
	if side == sidePprof && pr.Boxes == 0 {
		return ps, fmt.Errorf("pprof page drew no boxes")
	}
	if pr.RawTiming != "" {
		_ = json.Unmarshal([]byte(pr.RawTiming), &ps.Timing)
	}
	err = chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		hu, err := cdp.Call(ctx, t, runtime.GetHeapUsage, cdp.Empty{})
		if err != nil {
			return fmt.Errorf("heap usage: %w", err)
		}
		ps.HeapUsedMB, ps.HeapTotalMB = hu.UsedSize/(1<<20), hu.TotalSize/(1<<20)
		m, err := cdp.Call(ctx, t, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			return fmt.Errorf("performance metrics: %w", err)
		}
		ps.Metrics = map[string]float64{}
		for _, x := range m.Metrics {
			switch x.Name {
			case "Nodes", "JSHeapUsedSize", "LayoutCount", "RecalcStyleCount", "LayoutDuration", "RecalcStyleDuration", "ScriptDuration", "TaskDuration", "JSEventListeners":
				ps.Metrics[x.Name] = x.Value
			}
		}
		if _, err := cdp.Call(ctx, t, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
			return fmt.Errorf("collect garbage: %w", err)
		}
		hu, err = cdp.Call(ctx, t, runtime.GetHeapUsage, cdp.Empty{})
		if err != nil {
			return err
		}
		ps.HeapAfterGCMB = hu.UsedSize / (1 << 20)
		return nil
	}))
	return ps, err
}

// --- the embedded pprof UI's memory ---

func memoryCheck(ctx context.Context, cfg config, c *http.Client, base string, pid int, gclog, src string) (*memResult, error) {
	raw, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	bp, err := profile.ParseData(raw)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", src, err)
	}
	m := &memResult{Variants: cfg.variants}
	var files []namedFile
	for i := 0; i < cfg.variants; i++ {
		p := bp.Copy()
		kept := p.Sample[:0]
		for j, s := range p.Sample {
			if j%cfg.variantEvery == i%cfg.variantEvery {
				for k := range s.Value {
					s.Value[k] *= int64(i + 1)
				}
				kept = append(kept, s)
			}
		}
		p.Sample = kept
		p.Comments = append(p.Comments, fmt.Sprintf("kbench bench/flame memory variant %d", i+1))
		p = p.Compact()
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			return nil, err
		}
		files = append(files, namedFile{fmt.Sprintf("variant-%02d.pb.gz", i+1), buf.Bytes()})
		m.SamplesEach = append(m.SamplesEach, len(p.Sample))
		m.BytesEach = append(m.BytesEach, int64(buf.Len()))
	}
	m.BeforeRSSMB, m.BeforeHWMMB = procMem(pid)
	ids, err := importProfiles(ctx, c, base, "flame-bench memory variants", files)
	if err != nil {
		return nil, err
	}
	// Parse every variant once through the flame-graph API first: kbench
	// keeps parsed profiles in an LRU of 32, so what grows afterwards is
	// the pprof handler sets.
	for _, id := range ids {
		if _, err := timeGET(ctx, c, fmt.Sprintf("%s/api/profiles/%d/flamegraph?format=rows", base, id), cfg.acceptEncoding); err != nil {
			return nil, err
		}
	}
	m.AfterPrefill, _ = procMem(pid)
	m.PrefillGC = lastGC(gclog)
	logf("memory: %d variants imported (%d samples each, ~%s), server RSS %.1f MB before import, %.1f MB with all parsed",
		len(ids), m.SamplesEach[0], mb(m.BytesEach[0]), m.BeforeRSSMB, m.AfterPrefill)
	for pass := 1; pass <= 2; pass++ {
		for i, id := range ids {
			ds, err := timeGET(ctx, c, fmt.Sprintf("%s/profiles/%d/pprof/flamegraph", base, id), cfg.acceptEncoding)
			if err != nil {
				return nil, err
			}
			r, h := procMem(pid)
			g := lastGC(gclog)
			m.Points = append(m.Points, memPoint{Pass: pass, Open: i + 1, Profile: id, MS: ds.MS, Bytes: ds.Bytes, RSSMB: r, HWMMB: h, GC: g})
			logf("memory pass %d open %2d (profile %d): %6.0f ms, RSS %6.1f MB, HWM %6.1f MB, live heap at GC %d: %d MB", pass, i+1, id, ds.MS, r, h, g.Num, g.LiveMB)
		}
	}
	return m, nil
}

// --- the report ---

func report(w io.Writer, cfg config, res *results) {
	fmt.Fprintf(w, "kbench flame graph vs go tool pprof -http: medians of %d rounds (interleaved; warm-up and cold first requests not in the medians)\n", cfg.rounds)
	if cfg.rounds < minRounds {
		fmt.Fprintf(w, "WARNING: %d rounds is fewer than %d: first paints on a shared machine move 0.7–1.4× between runs, read these medians as a quick look only\n", cfg.rounds, minRounds)
	}
	fmt.Fprintf(w, "host: %d CPUs; %s; %s; viewport %dx%d\n\n", res.Host.CPUs, res.Host.Go, res.Host.Chromium, cfg.width, cfg.height)
	fmt.Fprintln(w, "commands:")
	for _, c := range res.Commands {
		fmt.Fprintln(w, "  "+c)
	}
	fmt.Fprintln(w, "\"drawn\" signals:")
	for _, s := range res.Signals {
		fmt.Fprintln(w, "  "+s)
	}
	fmt.Fprintln(w, "page loads: warm = a fresh tab in the browser's default context (kbench's static files cached by the warm-up, as on a repeat visit);")
	fmt.Fprintln(w, "            cold = a fresh tab in a fresh browser context (own renderer process, empty HTTP cache).")
	fmt.Fprintln(w)
	for _, in := range res.Inputs {
		fmt.Fprintf(w, "== %s (kbench profile %d)\n", in.Name, in.KbenchID)
		if in.PprofNote != "" {
			fmt.Fprintf(w, "   NOTE: %s\n", in.PprofNote)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "metric\tkbench\tpprof\tpprof/kbench\t")
		data := func(side string, round func(int) bool, f func(dataSample) float64) float64 {
			var xs []float64
			for _, d := range res.Data {
				if d.Input == in.Name && d.Side == side && d.What == dataRows && round(d.Round) {
					xs = append(xs, f(d))
				}
			}
			return med(xs)
		}
		kbPageData := func(f func(dataSample) float64) float64 {
			var xs []float64
			for _, d := range res.Data {
				if d.Input == in.Name && d.Side == sideKbench && d.What == dataPage && d.Round > 0 {
					xs = append(xs, f(d))
				}
			}
			return med(xs)
		}
		measured := func(r int) bool { return r > 0 }
		cold := func(r int) bool { return r == 0 }
		row := func(name string, k, p float64, unit string) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, num(k, unit), num(p, unit), ratio(p, k))
		}
		drow := func(name string, f func(dataSample) float64, unit string, round func(int) bool) {
			row(name, data(sideKbench, round, f), data(sidePprof, round, f), unit)
		}
		drow("time to data: GET, full body (ms)", func(d dataSample) float64 { return d.MS }, "ms", measured)
		drow("  time to first byte (ms)", func(d dataSample) float64 { return d.TTFBMS }, "ms", measured)
		drow("  body on the wire (kB)", func(d dataSample) float64 { return float64(d.Bytes) / 1e3 }, "n", measured)
		drow("  body decoded (kB)", func(d dataSample) float64 { return float64(d.Decoded) / 1e3 }, "n", measured)
		drow("  cold first request (ms, 1 sample)", func(d dataSample) float64 { return d.MS }, "ms", cold)
		row("  kbench's profile page instead: HTML, first view inline (ms)", kbPageData(func(d dataSample) float64 { return d.MS }), data(sidePprof, measured, func(d dataSample) float64 { return d.MS }), "ms")
		row("  kbench's profile page on the wire (kB)", kbPageData(func(d dataSample) float64 { return float64(d.Bytes) / 1e3 }), data(sidePprof, measured, func(d dataSample) float64 { return float64(d.Bytes) / 1e3 }), "n")
		encs := map[string]string{}
		for _, d := range res.Data {
			if d.Input == in.Name && d.Round > 0 && d.What == dataRows {
				encs[d.Side] = cmp.Or(d.Encoding, "identity")
			}
		}
		target := cfg.target(in.Name)
		var verdicts []string
		var notes []string
		notes = append(notes, spreadNote("time to data (GET, ms)", pairData(res.Data, in.Name)))
		for _, mode := range cfg.modes {
			paint := func(side string, f func(paintSample) float64) float64 {
				var xs []float64
				for _, p := range res.Paint {
					if p.Input == in.Name && p.Side == side && p.Mode == mode && p.Round > 0 {
						xs = append(xs, f(p))
					}
				}
				return med(xs)
			}
			prow := func(name string, f func(paintSample) float64, unit string) {
				row(name, paint(sideKbench, f), paint(sidePprof, f), unit)
			}
			fmt.Fprintf(tw, "-- %s page loads\t\t\t\t\n", mode)
			prow("first paint: nav start → drawn (ms)", func(p paintSample) float64 { return p.DrawnMS }, "ms")
			prow("first paint: nav start → frame rendered (ms)", func(p paintSample) float64 { return p.PaintedMS }, "ms")
			prow("  wall, Go: navigate → painted seen (ms)", func(p paintSample) float64 { return p.WallMS }, "ms")
			prow("  graph data received by the browser (kB)", func(p paintSample) float64 { return float64(p.DataTransfer) / 1e3 }, "n")
			prow("  graph data decoded by the browser (kB)", func(p paintSample) float64 { return float64(p.DataDecoded) / 1e3 }, "n")
			prow("  HTML response end (ms)", func(p paintSample) float64 { return p.ResponseEnd }, "ms")
			prow("  DOMContentLoaded end (ms)", func(p paintSample) float64 { return p.DCL }, "ms")
			prow("  page script time (ms)", func(p paintSample) float64 { return p.Metrics["ScriptDuration"] * 1000 }, "ms")
			prow("  page layout + style time (ms)", func(p paintSample) float64 {
				return (p.Metrics["LayoutDuration"] + p.Metrics["RecalcStyleDuration"]) * 1000
			}, "ms")
			prow("JS heap used after paint (MB)", func(p paintSample) float64 { return p.HeapUsedMB }, "MB")
			prow("JS heap used after GC (MB)", func(p paintSample) float64 { return p.HeapAfterGCMB }, "MB")
			prow("DOM nodes", func(p paintSample) float64 { return p.Metrics["Nodes"] }, "n")
			prow("server RSS after the page (MB)", func(p paintSample) float64 { return p.ServerRSSMB }, "MB")
			prow("server peak RSS, VmHWM (MB)", func(p paintSample) float64 { return p.ServerHWMMB }, "MB")
			kt := func(k string) float64 { return paint(sideKbench, func(p paintSample) float64 { return p.Timing[k] }) }
			notes = append(notes, fmt.Sprintf("   %s: kbench data-timing medians: fetch %.1f, decode %.1f, layout %.1f, paint %.1f ms (%.0f frames); pprof drew %.0f boxes",
				mode, kt("fetch"), kt("decode"), kt("layout"), kt("paint"), kt("nodes"), paint(sidePprof, func(p paintSample) float64 { return float64(p.Boxes) })))
			drawn := pairPaint(res.Paint, in.Name, mode, func(p paintSample) float64 { return p.DrawnMS })
			painted := pairPaint(res.Paint, in.Name, mode, func(p paintSample) float64 { return p.PaintedMS })
			notes = append(notes, spreadNote(mode+": first paint, nav start → drawn (ms)", drawn), spreadNote(mode+": first paint, nav start → frame rendered (ms)", painted))
			ofMedians, perRound := painted.ratios()
			floor := pairFloor(res.Paint, in.Name, mode)
			if len(floor.kbench) > 0 {
				fOfMedians, fPerRound := floor.ratios()
				notes = append(notes, fmt.Sprintf("   %s: the floor, an empty page's first paint (nav start → frame rendered, ms), %d rounds: %s; kbench's page %.0f ms above it (medians); pprof / floor: ratio of medians %.2f×, per round %s×: the most any page could reach against pprof here",
					mode, len(floor.kbench), spreadOf(floor.kbench).String(1), med(painted.kbench)-med(floor.kbench), fOfMedians, spreadOf(floor.perRound()).String(2)))
				if min(fOfMedians, fPerRound) < target {
					notes = append(notes, fmt.Sprintf("   %s: the target %.2g× is above the floor's %.2f×: no page reaches it on this machine", mode, target, min(fOfMedians, fPerRound)))
				}
			}
			for _, name := range pageNames(res.Paint) {
				pg := pairSide(res.Paint, sidePage, name, in.Name, mode)
				if len(pg.kbench) == 0 {
					continue
				}
				pOfMedians, _ := pg.ratios()
				notes = append(notes, fmt.Sprintf("   %s: page %s (nav start → frame rendered, ms), %d rounds: %s; pprof / page: ratio of medians %.2f×, per round %s× (kbench's page: %.2f×, %.2f×)",
					mode, name, len(pg.kbench), spreadOf(pg.kbench).String(1), pOfMedians, spreadOf(pg.perRound()).String(2), ofMedians, perRound))
			}
			verdicts = append(verdicts, fmt.Sprintf("first paint (%s) %s (median of per-round ratios %.2f×, ratio of medians %.2f×)",
				mode, verdict(min(ofMedians, perRound), target), perRound, ofMedians))
		}
		tw.Flush()
		fmt.Fprintf(w, "   Go GET sent Accept-Encoding %q; Content-Encoding: kbench %s, pprof %s\n", cfg.acceptEncoding, encs[sideKbench], encs[sidePprof])
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
		fmt.Fprintf(w, "   first-paint target ≥ %.1f× (met when both the median of the per-round ratios and the ratio of the medians reach it): %s\n\n", target, strings.Join(verdicts, "; "))
	}
	for _, t := range res.Traces {
		fmt.Fprintf(w, "== trace %s %s %s (one traced load, %s): painted at %.0f ms; main thread busy %.0f ms\n", t.Input, t.Side, t.Mode, filepath.Base(t.File), t.PaintedMS, t.BusyMS)
		var parts []string
		for _, x := range t.SelfMS {
			parts = append(parts, fmt.Sprintf("%s %.0f", x.Name, x.MS))
		}
		fmt.Fprintf(w, "   main-thread self time (ms): %s\n", strings.Join(parts, ", "))
		for _, k := range t.Tasks {
			fmt.Fprintf(w, "   task at %6.0f ms, %5.0f ms: %s\n", k.StartMS, k.MS, k.Top)
		}
		for _, r := range t.Requests {
			end := "unfinished"
			if r.EndMS > 0 {
				end = fmt.Sprintf("%.0f ms", r.EndMS)
			}
			fmt.Fprintf(w, "   request %6.0f ms → %s  %s\n", r.StartMS, end, r.URL)
		}
	}
	if len(res.Traces) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "server RSS: kbench is one process holding every input (and the variants at the end); pprof is one process per input.")
	fmt.Fprintln(w, "ratio = pprof / kbench: above 1 means kbench is faster or smaller.")
	if m := res.Memory; m != nil {
		fmt.Fprintf(w, "\n== embedded pprof UI memory: %d variants of the first pprof input (every %dth sample, %d samples, ~%s each), /profiles/{id}/pprof/flamegraph opened twice over\n",
			m.Variants, cfg.variantEvery, m.SamplesEach[0], mb(m.BytesEach[0]))
		fmt.Fprintf(w, "   kbench RSS before the import %.1f MB; after importing and parsing all (flame-graph API, parsed-profile LRU of 32) %.1f MB, live heap at GC %d: %d MB\n", m.BeforeRSSMB, m.AfterPrefill, m.PrefillGC.Num, m.PrefillGC.LiveMB)
		fmt.Fprintln(w, "   live heap = what the most recent garbage collection (GODEBUG=gctrace=1) marked live; Δ RSS is against the row above")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "pass\topen\tprofile\tms\tRSS MB\tΔ RSS MB\tHWM MB\tlast GC\tlive heap MB\t")
		prev := m.AfterPrefill
		for _, p := range m.Points {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.1f\t%+.1f\t%.1f\t%d\t%d\t\n", p.Pass, p.Open, p.Profile, p.MS, p.RSSMB, p.RSSMB-prev, p.HWMMB, p.GC.Num, p.GC.LiveMB)
			prev = p.RSSMB
		}
		tw.Flush()
		// rssAt is the RSS after open k of a pass; open 0 is the state before it.
		rssAt := func(pass, k int) float64 {
			if k == 0 {
				if pass == 1 {
					return m.AfterPrefill
				}
				pass, k = pass-1, m.Variants
			}
			for _, p := range m.Points {
				if p.Pass == pass && p.Open == k {
					return p.RSSMB
				}
			}
			return 0
		}
		growth := func(pass, from, to int) float64 { return rssAt(pass, to) - rssAt(pass, from-1) }
		n := m.Variants
		liveMax := func(pass, from, to int) (mx int) {
			for _, p := range m.Points {
				if p.Pass == pass && p.Open >= from && p.Open <= to && p.GC.LiveMB > mx {
					mx = p.GC.LiveMB
				}
			}
			return mx
		}
		if n > 16 {
			fmt.Fprintf(w, "   live heap (largest seen): after prefill %d MB; pass 1 opens 1–16 %d MB, opens 17–%d %d MB; pass 2 %d MB\n",
				m.PrefillGC.LiveMB, liveMax(1, 1, 16), n, liveMax(1, 17, n), liveMax(2, 1, n))
		}
		if n > 16 {
			fmt.Fprintf(w, "   RSS growth: opens 1–16 %+.1f MB (%.1f MB per handler set); opens 17–%d %+.1f MB (%.1f per open, cache full, evicting); second pass, all %d rebuilt: %+.1f MB\n",
				growth(1, 1, 16), growth(1, 1, 16)/16, n, growth(1, 17, n), growth(1, 17, n)/float64(n-16), n, growth(2, 1, n))
		} else {
			fmt.Fprintf(w, "   RSS growth: pass 1 %+.1f MB, pass 2 %+.1f MB (fewer than 17 variants: the cache never evicts)\n", growth(1, 1, n), growth(2, 1, n))
		}
	}
}

func verdict(r, target float64) string {
	if r >= target {
		return "MET"
	}
	return "NOT MET"
}

// paired is one measure of both sides over the rounds: the rounds where
// both sides have a sample, in round order.
type paired struct {
	kbench, pprof []float64
}

// pairPaint pairs the two sides' first paints of one input and load mode
// by round (the warm-up, round 0, is left out).
func pairPaint(ps []paintSample, input, mode string, f func(paintSample) float64) paired {
	by := map[int]map[string]float64{}
	for _, p := range ps {
		if p.Input == input && p.Mode == mode && p.Round > 0 {
			if by[p.Round] == nil {
				by[p.Round] = map[string]float64{}
			}
			by[p.Round][p.Side] = f(p)
		}
	}
	return pairRounds(by)
}

// pairFloor pairs, by round, the empty page's first paint (in the
// kbench slot) with pprof's of one input: its ratios are pprof / floor.
func pairFloor(ps []paintSample, input, mode string) paired {
	return pairSide(ps, sideFloor, "", input, mode)
}

// pageNames are the -page pages' names among the samples, in their
// first sample's order.
func pageNames(ps []paintSample) []string {
	var names []string
	for _, p := range ps {
		if p.Side == sidePage && !slices.Contains(names, p.Input) {
			names = append(names, p.Input)
		}
	}
	return names
}

// pairSide pairs, by round, the first paints of one side (its samples of
// input name, any when name is empty) in the kbench slot with pprof's of
// one input: its ratios are pprof / that side.
func pairSide(ps []paintSample, side, name, input, mode string) paired {
	by := map[int]map[string]float64{}
	for _, p := range ps {
		if p.Mode != mode || p.Round <= 0 {
			continue
		}
		slot := ""
		switch {
		case p.Side == side && (name == "" || p.Input == name):
			slot = sideKbench
		case p.Side == sidePprof && p.Input == input:
			slot = sidePprof
		default:
			continue
		}
		if by[p.Round] == nil {
			by[p.Round] = map[string]float64{}
		}
		by[p.Round][slot] = p.PaintedMS
	}
	return pairRounds(by)
}

// pairData pairs the two sides' times to data (kbench's rows answer,
// pprof's page) of one input by round.
func pairData(ds []dataSample, input string) paired {
	by := map[int]map[string]float64{}
	for _, d := range ds {
		if d.Input == input && d.What == dataRows && d.Round > 0 {
			if by[d.Round] == nil {
				by[d.Round] = map[string]float64{}
			}
			by[d.Round][d.Side] = d.MS
		}
	}
	return pairRounds(by)
}

func pairRounds(by map[int]map[string]float64) paired {
	var rounds []int
	for r := range by {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	var p paired
	for _, r := range rounds {
		k, okK := by[r][sideKbench]
		q, okP := by[r][sidePprof]
		if okK && okP && k > 0 && q > 0 {
			p.kbench = append(p.kbench, k)
			p.pprof = append(p.pprof, q)
		}
	}
	return p
}

// perRound is each round's ratio pprof / kbench.
func (p paired) perRound() []float64 {
	rs := make([]float64, len(p.kbench))
	for i := range p.kbench {
		rs[i] = p.pprof[i] / p.kbench[i]
	}
	return rs
}

// ratios gives the ratio of the medians (pprof's median / kbench's) and
// the median of the per-round ratios; 0 without pairs.
func (p paired) ratios() (ofMedians, perRound float64) {
	if len(p.kbench) == 0 {
		return 0, 0
	}
	return med(p.pprof) / med(p.kbench), med(p.perRound())
}

// spread is a sample's median, quartiles and range.
type spread struct {
	n                       int
	min, p25, p50, p75, max float64
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return spread{n: len(s), min: s[0], p25: quantile(s, 0.25), p50: median.Sorted(s), p75: quantile(s, 0.75), max: s[len(s)-1]}
}

// quantile is the q-quantile of sorted s, interpolated between the two
// nearest ranks (R's type 7, numpy's default).
func quantile(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	lo := int(h)
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

func (s spread) String(digits int) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', digits, 64) }
	return fmt.Sprintf("%s [p25–p75 %s–%s, min–max %s–%s]", f(s.p50), f(s.p25), f(s.p75), f(s.min), f(s.max))
}

// spreadNote is one measure's line of the report: each side's median and
// spread, the ratio of the medians and the per-round ratios' median and
// spread.
func spreadNote(name string, p paired) string {
	if len(p.kbench) == 0 {
		return "   " + name + ": no paired rounds"
	}
	ofMedians, _ := p.ratios()
	return fmt.Sprintf("   %s, %d paired rounds: kbench %s; pprof %s; pprof/kbench: ratio of medians %.2f×, per round %s×",
		name, len(p.kbench), spreadOf(p.kbench).String(1), spreadOf(p.pprof).String(1), ofMedians, spreadOf(p.perRound()).String(2))
}

func num(v float64, unit string) string {
	switch unit {
	case "n":
		return strconv.FormatFloat(v, 'f', 0, 64)
	case "MB":
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratio(p, k float64) string {
	if k <= 0 || p <= 0 {
		return "—"
	}
	return strconv.FormatFloat(p/k, 'f', 1, 64) + "×"
}

// med is the median of xs (internal/median), 0 for none.
func med(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return median.Of(xs)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mb(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.0f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
