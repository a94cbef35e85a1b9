package acceptance

// The harness of the acceptance tests (see doc.go): the real kbench
// binary (`kbench serve`, which launches real `kbench run` children on the
// embedded broker) driven by a real headless Chromium through chromedp.
// The tests check what a user sees: the form,
// the live run page fed by Server-Sent Events, the finished result, the runs
// list, cancellation, and that profile downloads are real pprof files.
//
// Set KBENCH_E2E_SCREENSHOTS=DIR to keep the screenshots the tests take
// (they always go to the test's temporary directory, which is removed).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/testutil/kbenchbin"
	"github.com/kbench/kbench/internal/testutil/tier"
)

const (
	// e2eChromium is Debian's chromium; test.sh installs it.
	e2eChromium = "/usr/bin/chromium"
	// e2eTimeout bounds each test: browser, server and every step in it.
	// It only ends a test that hangs: the parallel tests (those that wait
	// on their runs) share two loaded cores, and a passing one may take
	// twice its time alone.
	e2eTimeout = 240 * time.Second
	// e2eStepTimeout bounds one wait inside a test, so a failure names its step.
	e2eStepTimeout = 120 * time.Second
)

// e2eHTTPClient is the client of a test's requests to kbench serve. Its
// timeout only ends a request to a server that hangs: under the whole
// suite's load a request that kbench answered in 165 ms once waited
// 15 s for its answer (a shorter timeout failed the test that sent it).
func e2eHTTPClient() *http.Client {
	return &http.Client{Timeout: e2eStepTimeout}
}

// e2eKbench returns the kbench binary (kbenchbin: built once per
// checkout, without the race detector, as users run it). Under -short it
// fails the test: see tier.RefuseTest.
func e2eKbench(t *testing.T) string {
	t.Helper()
	return kbenchbin.Path(t)
}

// e2eSkip skips when the environment cannot run browser tests.
func e2eSkip(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench and starts Chromium")
	}
	if _, err := os.Stat(e2eChromium); err != nil {
		t.Skipf("%s is missing (%v): ./test.sh installs it (apt-get install chromium), and CI always has it", e2eChromium, err)
	}
}

// e2eBuffer is a bytes.Buffer safe for concurrent writers and readers.
type e2eBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *e2eBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *e2eBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// e2eTail returns the last n bytes of s, for logs.
func e2eTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// e2eWithoutDBus drops the lines in which Chromium complains that a container
// has no D-Bus: they are many and never the problem.
func e2eWithoutDBus(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.Contains(line, "dbus") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// --- the server ---

// e2eServer is a running `kbench serve`.
type e2eServer struct {
	URL     string // http://127.0.0.1:PORT
	cmd     *exec.Cmd
	stdout  e2eBuffer
	stderr  e2eBuffer
	exited  chan struct{}
	waitErr error
	http    *http.Client
}

var e2eServingLine = regexp.MustCompile(`kbench serving on (http://127\.0\.0\.1:\d+) \(data in .*\)`)

// startE2EServer starts `kbench serve --listen 127.0.0.1:0` on a fresh data
// directory, reads its address from stdout, and stops it with SIGINT when
// the test ends, failing the test unless it exits 0.
func startE2EServer(t *testing.T) *e2eServer {
	t.Helper()
	bin := e2eKbench(t)
	data := t.TempDir()
	s := &e2eServer{exited: make(chan struct{}), http: e2eHTTPClient()}
	s.cmd = exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", data)
	// KBENCH_* variables would configure the server (a token, say): drop them.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start kbench serve: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("kbench serve stderr:\n%s", e2eTail(s.stderr.String(), 6000))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := e2eServingLine.FindStringSubmatch(s.stdout.String()); m != nil {
			s.URL = m[1]
			break
		}
		select {
		case <-s.exited:
			t.Fatalf("kbench serve exited before serving: %v\nstdout: %s\nstderr: %s", s.waitErr, s.stdout.String(), s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("kbench serve printed no address within 30 s\nstdout: %s\nstderr: %s", s.stdout.String(), s.stderr.String())
		}
	}
	t.Logf("kbench serve at %s (data in %s)", s.URL, data)
	return s
}

// stop interrupts the server as Ctrl-C would and checks it exits 0.
func (s *e2eServer) stop(t *testing.T) {
	select {
	case <-s.exited:
		t.Errorf("kbench serve exited before the test stopped it: %v", s.waitErr)
		return
	default:
	}
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Errorf("SIGINT to kbench serve: %v", err)
	}
	start := time.Now()
	select {
	case <-s.exited:
		t.Logf("kbench serve exited %v after SIGINT", time.Since(start).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("kbench serve still running 30 s after SIGINT; killed it")
		return
	}
	if s.waitErr != nil {
		t.Errorf("kbench serve after SIGINT: %v, want exit status 0", s.waitErr)
	}
}

// api calls the JSON API and decodes the answer into out (when not nil).
func (s *e2eServer) api(t *testing.T, method, path string, body any, wantStatus int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, wantStatus, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

// createRun creates one run through the API and returns its id.
func (s *e2eServer) createRun(t *testing.T, body map[string]any) uint {
	t.Helper()
	var created client.Created
	s.api(t, http.MethodPost, "/api/runs", body, http.StatusCreated, &created)
	if created.ID == 0 || created.URL != fmt.Sprintf("/runs/%d", created.ID) {
		t.Fatalf("POST /api/runs: answer %+v has no id and url", created)
	}
	return created.ID
}

// runStatus returns a run's status from the API.
func (s *e2eServer) runStatus(t *testing.T, id uint) string {
	t.Helper()
	var run client.Run
	s.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &run)
	return string(run.Status)
}

// --- the browser ---

// e2eBrowser is one headless Chromium with one tab.
type e2eBrowser struct {
	ctx     context.Context // the tab; bounded by e2eTimeout
	console struct {
		mu   sync.Mutex
		msgs []chromedp.ConsoleMessage
	}
}

// startE2EBrowser starts headless Chromium with exactly the flags the project
// allows (chromedp adds only its pipe and about:blank) and a fresh profile,
// and closes it when the test ends.
func startE2EBrowser(t *testing.T) *e2eBrowser {
	t.Helper()
	tier.RefuseTest(t, "Chromium")
	testCtx, cancelTest := context.WithTimeout(context.Background(), e2eTimeout)
	var output e2eBuffer
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(testCtx,
		chromedp.ExecPath(e2eChromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.CombinedOutput(&output),
	)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	b := &e2eBrowser{ctx: ctx}
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		chromedp.Cancel(closeCtx)
		cancelTab()
		cancelAlloc() // waits for the browser process
		cancelTest()
		if t.Failed() {
			t.Logf("chromium output (without D-Bus complaints):\n%s", e2eTail(e2eWithoutDBus(output.String()), 4000))
		}
	})
	// The first action starts the browser; a wide viewport for screenshots.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start chromium: %v\n%s", err, e2eTail(e2eWithoutDBus(output.String()), 4000))
	}
	// Every console message, to fail on script errors and CSP violations.
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.console.mu.Lock()
			b.console.msgs = append(b.console.msgs, m)
			b.console.mu.Unlock()
		}
	}()
	return b
}

// checkConsole fails the test on uncaught exceptions and console errors
// (Content-Security-Policy violations among them). allowed lists regexps
// of errors that are expected, such as a 400 answer to a bad form.
func (b *e2eBrowser) checkConsole(t *testing.T, allowed ...*regexp.Regexp) {
	t.Helper()
	b.console.mu.Lock()
	defer b.console.mu.Unlock()
next:
	for _, m := range b.console.msgs {
		if !m.IsException() && m.Type != chromedp.ConsoleError {
			continue
		}
		for _, re := range allowed {
			if re.MatchString(m.Text) {
				continue next
			}
		}
		t.Errorf("browser console: %s (at %s:%d)", m, m.URL, m.Line+1)
	}
}

// do runs actions with a step timeout, failing the test with the page's
// state when they fail.
func (b *e2eBrowser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, e2eStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, b.state())
	}
}

// e2eEval evaluates a JavaScript expression and decodes its value into T.
func e2eEval[T any](t *testing.T, b *e2eBrowser, what, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, e2eStepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, b.state())
	}
	return v
}

// waitFor evaluates expr, a JavaScript expression of a boolean, until it is
// true. Unlike chromedp.Poll it survives navigations and reloads: an
// evaluation that fails while a page is replaced is simply tried again.
func (b *e2eBrowser) waitFor(t *testing.T, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(e2eStepTimeout)
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		lastErr = err
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			t.Fatalf("waiting for %s: not within %v (last error: %v)\n%s", what, e2eStepTimeout, lastErr, b.state())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// poll waits with chromedp.Poll for expr, a JavaScript expression of a
// boolean, to be true on the current page (no navigation in between).
func (b *e2eBrowser) poll(t *testing.T, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, e2eStepTimeout+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(e2eStepTimeout))); err != nil {
		t.Fatalf("waiting for %s: %v\n%s", what, err, b.state())
	}
}

// state describes the page for failure messages.
func (b *e2eBrowser) state() string {
	if b.ctx.Err() != nil {
		return "(browser context ended: " + b.ctx.Err().Error() + ")"
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`location.href + "\n" + (document.body ? document.body.innerText.slice(0, 3000) : "(no body)")`))
	if err != nil {
		return "(page state unavailable: " + err.Error() + ")"
	}
	return "page " + s
}

// screenshot saves a PNG of the whole page into the test's temporary
// directory (and into $KBENCH_E2E_SCREENSHOTS when set) and logs its path.
func (b *e2eBrowser) screenshot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, e2eStepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	if dir := os.Getenv("KBENCH_E2E_SCREENSHOTS"); dir != "" {
		keep := filepath.Join(dir, name+".png")
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if err := os.WriteFile(keep, png, 0o644); err == nil {
				t.Logf("screenshot kept: %s", keep)
			}
		}
	}
}

// e2eJS quotes s for JavaScript.
func e2eJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// --- the tests ---

// e2eFinalView is true once a run page shows a final run's result.
const e2eFinalView = `(() => {
	const run = document.getElementById('run');
	return document.readyState === 'complete' && !!run && run.getAttribute('data-live') !== 'true' &&
		!document.getElementById('progress') && !!document.getElementById('metrics-heading');
})()`

// e2eImport posts folded stacks to /api/import and returns the profile id.
func (s *e2eServer) e2eImport(t *testing.T, label, folded string) uint {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("label", label)
	w, _ := mw.CreateFormFile("profile", label+".collapsed")
	io.WriteString(w, folded)
	mw.Close()
	resp, err := s.http.Post(s.URL+"/api/import", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run client.Run
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &run) != nil || len(run.Profiles) != 1 {
		t.Fatalf("import %s: %d %s", label, resp.StatusCode, data)
	}
	return run.Profiles[0].ID
}

// Two write paths of the same request builder: the candidate spends more in
// one write per buffer and less in encoding than the base.
const (
	e2eBaseStacks = `main.main;main.send;net.(*conn).Write;internal/poll.(*FD).Writev;syscall.Syscall6 300
main.main;main.encode;main.appendRecord 500
main.main;main.encode;main.crc 200
`
	e2eTargetStacks = `main.main;main.send;net.(*conn).Write;internal/poll.(*FD).Write;syscall.Syscall 900
main.main;main.encode;main.appendRecord 100
main.main;main.encode;main.crc 200
`
)

// e2eTableJS reads the comparison table: one entry per metric row, the
// metric name then every cell's text.
const e2eTableJS = `Array.from(document.querySelectorAll('#comparison tbody tr[data-metric]')).map(tr =>
	[tr.getAttribute('data-metric')].concat(Array.from(tr.querySelectorAll('td')).map(td => td.innerText.replace(/\s+/g, ' ').trim())))`

// e2eImportPerfTest posts one kafka-producer-perf-test summary line to
// /api/import with the run's time and tags, and returns the run's id.
func (s *e2eServer) e2eImportPerfTest(t *testing.T, rate float64, at time.Time, meta ...string) uint {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("label", "perf")
	mw.WriteField("time", at.Format(time.RFC3339))
	for _, m := range meta {
		mw.WriteField("meta", m)
	}
	w, _ := mw.CreateFormFile("output", "perf.txt")
	fmt.Fprintf(w, "1000000 records sent, %.1f records/sec (%.2f MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th.\n",
		rate, rate*512/(1024*1024))
	mw.Close()
	resp, err := s.http.Post(s.URL+"/api/import", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var run client.Run
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &run) != nil || run.ID == 0 {
		t.Fatalf("import: %d %s", resp.StatusCode, data)
	}
	return run.ID
}

// e2eProc is what /proc says of one process.
type e2eProc struct {
	pid, ppid int
	state     byte
	start     uint64 // tells a reused pid apart
	args      []string
}

func e2eReadProc(pid int) (e2eProc, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return e2eProc{}, false
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // state ppid pgrp … starttime (20th)
	if len(f) < 20 {
		return e2eProc{}, false
	}
	p := e2eProc{pid: pid, state: f[0][0]}
	p.ppid, _ = strconv.Atoi(f[1])
	p.start, _ = strconv.ParseUint(f[19], 10, 64)
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		p.args = strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	}
	return p, true
}

// e2eChild finds the child of ppid whose second argument is verb ("run",
// "broker"), or returns false.
func e2eChild(ppid int, verb string) (e2eProc, bool) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := e2eReadProc(pid); ok && p.ppid == ppid && len(p.args) > 1 && p.args[1] == verb && p.alive() {
			return p, true
		}
	}
	return e2eProc{}, false
}

// alive: the same process (pid and start time) still exists and is not a
// zombie (a killed orphan may stay one where nobody reaps it).
func (p e2eProc) alive() bool {
	now, ok := e2eReadProc(p.pid)
	return ok && now.start == p.start && now.state != 'Z' && now.state != 'X'
}

// e2eProcess is a kbench process a test started, stopped when it ends.
type e2eProcess struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr e2eBuffer
	exited         chan struct{}
	waitErr        error
}

// startE2EProcess starts kbench with args and no KBENCH_* variable, and
// waits for its stdout to match ready; it is interrupted (SIGINT) when
// the test ends, if still running.
func startE2EProcess(t *testing.T, name string, ready *regexp.Regexp, args ...string) (*e2eProcess, []string) {
	t.Helper()
	p := &e2eProcess{name: name, cmd: exec.Command(e2eKbench(t), args...), exited: make(chan struct{})}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Signal(os.Interrupt)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				p.cmd.Process.Kill()
				<-p.exited
			}
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, e2eTail(p.stderr.String(), 4000))
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		if m := ready.FindStringSubmatch(p.stdout.String()); m != nil {
			return p, m
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before it was ready: %v\nstdout: %s\nstderr: %s", name, p.waitErr, p.stdout.String(), p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within 30 s\nstdout: %s\nstderr: %s", name, p.stdout.String(), p.stderr.String())
		}
	}
}

// signal sends sig and waits for the process to exit 0.
func (p *e2eProcess) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%v to %s: %v", sig, p.name, err)
	}
	select {
	case <-p.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s still running 60 s after %v", p.name, sig)
	}
	if p.waitErr != nil {
		t.Errorf("%s after %v: %v, want exit status 0", p.name, sig, p.waitErr)
	}
}

var e2eWorkerLine = regexp.MustCompile(`kbench worker on (\S+) taking runs from queue (\S+) `)

// startE2EWorker starts `kbench worker` on queue with its own data
// directory, which it returns.
func startE2EWorker(t *testing.T, database, queue string) (*e2eProcess, string) {
	t.Helper()
	data := t.TempDir()
	p, m := startE2EProcess(t, "kbench worker "+queue, e2eWorkerLine, "worker", "--database", database, "--queue", queue, "--data", data)
	if m[2] != queue {
		t.Fatalf("worker says it takes runs from %s, want %s", m[2], queue)
	}
	return p, data
}

// e2eWorkerRun is a run as the test reads it.
type e2eWorkerRun = client.Run

// waitRun polls run id until done says so.
func waitRun(t *testing.T, s *e2eServer, id uint, what string, done func(e2eWorkerRun) bool) e2eWorkerRun {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var r e2eWorkerRun
		s.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &r)
		if done(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d: %s %q, still not %s after 2 minutes", id, r.Status, r.Error, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// get fetches a page and returns its body, failing unless 200.
func (s *e2eServer) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := s.http.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	return b.String()
}

// waitEvent reads run id's live events from the server until one named
// name arrives (within two minutes).
func waitEvent(t *testing.T, s *e2eServer, id uint, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/runs/%d/events", s.URL, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("run %d: events: %v", id, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if sc.Text() == "event: "+name {
			return
		}
	}
	t.Fatalf("run %d: no %q event before the stream ended (%v)", id, name, sc.Err())
}

// kbenchCmd runs the built kbench without the caller's KBENCH_*
// variables (plus env), returning its exit code, stdout and stderr.
func kbenchCmd(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(e2eKbench(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kbench %v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}
