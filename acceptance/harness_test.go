package acceptance

// End-to-end tests: the real kbench binary (`kbench serve`, which launches
// real `kbench run` children on the embedded broker) driven by a real
// headless Chromium through chromedp. They check what a user sees: the form,
// the live run page fed by Server-Sent Events, the finished result, the runs
// list, cancellation, and that profile downloads are real pprof files.
//
// Set KBENCH_E2E_SCREENSHOTS=DIR to keep the screenshots the tests take
// (they always go to the test's temporary directory, which is removed).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
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
	"github.com/google/pprof/profile"
)

const (
	// e2eChromium is Debian's chromium; test.sh installs it.
	e2eChromium = "/usr/bin/chromium"
	// e2eTimeout bounds each test: browser, server and every step in it.
	e2eTimeout = 90 * time.Second
	// e2eStepTimeout bounds one wait inside a test, so a failure names its step.
	e2eStepTimeout = 45 * time.Second
)

// e2eBuild is the kbench binary, built once for all E2E tests of this test
// process with buildKbench. buildKbench puts it in the calling test's
// t.TempDir, which goes away when that test ends, so the binary is moved to
// a directory of its own that TestMain removes at the very end.
var e2eBuild struct {
	once sync.Once
	dir  string
	bin  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if e2eBuild.dir != "" {
		os.RemoveAll(e2eBuild.dir)
	}
	os.Exit(code)
}

// e2eKbench returns the kbench binary, building it on first use.
func e2eKbench(t *testing.T) string {
	t.Helper()
	e2eBuild.once.Do(func() {
		start := time.Now()
		built := buildKbench(t) // t.Fatal on failure: bin stays ""
		t.Logf("built kbench in %v", time.Since(start).Round(time.Millisecond))
		dir, err := os.MkdirTemp("", "kbench-e2e-")
		if err != nil {
			t.Fatal(err)
		}
		e2eBuild.dir = dir
		bin := filepath.Join(dir, "kbench")
		if err := os.Rename(built, bin); err != nil {
			if err := e2eCopyFile(built, bin); err != nil {
				t.Fatalf("keep the kbench binary: %v", err)
			}
		}
		e2eBuild.bin = bin
	})
	if e2eBuild.bin == "" {
		t.Fatal("building kbench failed in an earlier test")
	}
	return e2eBuild.bin
}

func e2eCopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
	s := &e2eServer{exited: make(chan struct{}), http: &http.Client{Timeout: 15 * time.Second}}
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
	var created struct {
		ID     uint   `json:"id"`
		Status string `json:"status"`
		URL    string `json:"url"`
	}
	s.api(t, http.MethodPost, "/api/runs", body, http.StatusCreated, &created)
	if created.ID == 0 || created.URL != fmt.Sprintf("/runs/%d", created.ID) {
		t.Fatalf("POST /api/runs: answer %+v has no id and url", created)
	}
	return created.ID
}

// runStatus returns a run's status from the API.
func (s *e2eServer) runStatus(t *testing.T, id uint) string {
	t.Helper()
	var run struct {
		Status string `json:"status"`
	}
	s.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &run)
	return run.Status
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

// e2eProgressRecorder is injected into a live run page: a MutationObserver on
// the progress bar, the progress text, the phase and the status badge that
// appends what they show to sessionStorage on every change. sessionStorage
// outlives the reload that run.js does on "done", so the finished page can
// still be asked what the live page showed.
const e2eProgressRecorder = `(() => {
	const key = 'kbench-e2e-progress';
	const bar = document.getElementById('progress-bar');
	const text = document.getElementById('progress-text');
	const phase = document.getElementById('progress-phase');
	const badge = document.getElementById('run-status');
	if (!bar || !text || !phase || !badge) { return false; }
	sessionStorage.setItem(key, '[]');
	const record = () => {
		const seen = JSON.parse(sessionStorage.getItem(key) || '[]');
		seen.push({
			text: text.textContent,
			value: bar.getAttribute('value') || '',
			valuetext: bar.getAttribute('aria-valuetext') || '',
			phase: phase.textContent,
			status: badge.textContent
		});
		sessionStorage.setItem(key, JSON.stringify(seen));
	};
	const observer = new MutationObserver(record);
	for (const node of [bar, text, phase, badge]) {
		observer.observe(node, { attributes: true, childList: true, characterData: true, subtree: true });
	}
	record();
	return true;
})()`

// e2eProgress is one state of the live progress display.
type e2eProgress struct {
	Text      string `json:"text"`
	Value     string `json:"value"`
	ValueText string `json:"valuetext"`
	Phase     string `json:"phase"`
	Status    string `json:"status"`
}

// e2eFinalView is true once a run page shows a final run's result.
const e2eFinalView = `(() => {
	const run = document.getElementById('run');
	return document.readyState === 'complete' && !!run && run.getAttribute('data-live') !== 'true' &&
		!document.getElementById('progress') && !!document.getElementById('metrics-heading');
})()`

// e2eProgressText matches run.js's "150,000 of 200,000 records (75%)" and,
// for a phase without a total, "150,000 records".
var e2eProgressText = regexp.MustCompile(`^([\d,]+)(?: of ([\d,]+))? records(?: \((\d+)%\))?$`)

// e2eCount reads "200,000" as 200000.
func e2eCount(s string) int {
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		return -1
	}
	return n
}

// TestE2ENewRunWatchAndInspect starts a run from the form, follows it live
// on its page until the page turns into the result, and inspects the result:
// metrics, Kafka's output and downloadable profiles.
//
// A 200000-record run on the embedded broker can finish before the browser
// has even loaded the run page, and then there is nothing live to watch. So
// the test first occupies the queue (concurrency 1) with a slow run: the
// form's run waits, queued, while its page connects; the slow run is then
// canceled, and every event of the form's run reaches the page.
func TestE2ENewRunWatchAndInspect(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	blocker := srv.createRun(t, map[string]any{"workload": "producer", "label": "blocker",
		"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})

	// Fill the form.
	b.do(t, "open the new-run form",
		chromedp.Navigate(srv.URL+"/runs/new"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
		chromedp.Click(chromedp.CSS(`input[name="workload"][value="producer"]`)),
		chromedp.SendKeys(chromedp.ID("f-label"), "e2e"),
		chromedp.SendKeys(chromedp.ID("f-num-records"), "200000"),
		chromedp.SendKeys(chromedp.ID("f-record-size"), "100"),
	)
	type profileBox struct {
		Value   string `json:"value"`
		Checked bool   `json:"checked"`
	}
	boxes := e2eEval[[]profileBox](t, b, "read the profile checkboxes",
		`Array.from(document.querySelectorAll('input[type="checkbox"][name="profile"]')).map(i => ({value: i.value, checked: i.checked}))`)
	var ticked []string
	for _, box := range boxes {
		if box.Checked {
			ticked = append(ticked, box.Value)
		}
	}
	if strings.Join(ticked, ",") != "cpu,heap" {
		t.Fatalf("profile boxes ticked by default: %v, want cpu and heap", ticked)
	}
	for id, want := range map[string]string{"f-label": "e2e", "f-num-records": "200000", "f-record-size": "100"} {
		if got := e2eEval[string](t, b, "read "+id, `document.getElementById(`+e2eJS(id)+`).value`); got != want {
			t.Fatalf("#%s holds %q after typing, want %q", id, got, want)
		}
	}

	// Submit: the browser follows the redirect to the run's page.
	start := time.Now()
	b.do(t, "submit the form", chromedp.Click(chromedp.CSS(`#run-form button[type="submit"]`)))
	b.waitFor(t, "the run page", `/^\/runs\/\d+$/.test(location.pathname) && !!document.getElementById('run') && document.readyState === 'complete'`)
	loc := e2eEval[string](t, b, "read the location", `location.pathname`)
	id64, _ := strconv.ParseUint(strings.TrimPrefix(loc, "/runs/"), 10, 32)
	id := uint(id64)
	if id == 0 || id == blocker {
		t.Fatalf("landed on %s, want the new run's page (the blocker is run %d)", loc, blocker)
	}
	t.Logf("run %d created from the form", id)

	// The run waits behind the blocker; its page is live.
	if live := e2eEval[string](t, b, "read data-live", `document.getElementById('run').getAttribute('data-live') || ''`); live != "true" {
		t.Fatalf("run page of a queued run: data-live=%q, want true\n%s", live, b.state())
	}
	b.poll(t, "the live connection", `/^Live/.test(document.getElementById('connection-state').textContent)`)
	if status := e2eEval[string](t, b, "read the status", `document.getElementById('run-status').textContent.trim()`); status != "queued" {
		t.Fatalf("status badge %q while the blocker runs, want queued", status)
	}
	if q := e2eEval[string](t, b, "read the queue position", `(() => { const q = document.getElementById('queue-position'); return q.hidden ? '' : q.textContent; })()`); !strings.Contains(q, "queue") {
		t.Errorf("queue position shows %q, want a visible queue position", q)
	}
	if !e2eEval[bool](t, b, "record the progress", e2eProgressRecorder) {
		t.Fatalf("the live page has no progress display\n%s", b.state())
	}

	// Let the form's run go, and wait for its result to replace the live view.
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", blocker), nil, http.StatusAccepted, nil)
	released := time.Now()
	b.waitFor(t, "the finished run page", e2eFinalView)
	t.Logf("submit → run page live: %v; blocker canceled → finished page: %v",
		released.Sub(start).Round(time.Millisecond), time.Since(released).Round(time.Millisecond))

	seen := e2eEval[[]e2eProgress](t, b, "read the recorded progress",
		`JSON.parse(sessionStorage.getItem('kbench-e2e-progress') || '[]')`)
	var shown []string
	for _, p := range seen {
		shown = append(shown, fmt.Sprintf("[%s | %s | %s | bar %s]", strings.TrimSpace(p.Status), strings.TrimSpace(p.Phase), strings.TrimSpace(p.Text), p.Value))
	}
	t.Logf("the live page showed %d states:\n%s", len(seen), strings.Join(shown, "\n"))
	var sawRunning, saw100, wentBack bool
	measured := 0 // the highest count the measure phase showed
	for _, p := range seen {
		sawRunning = sawRunning || strings.TrimSpace(p.Status) == "running"
		saw100 = saw100 || p.Value == "100" || strings.HasSuffix(p.ValueText, ": 100%")
		m := e2eProgressText.FindStringSubmatch(strings.TrimSpace(p.Text))
		if m == nil {
			continue
		}
		done := e2eCount(m[1])
		if m[2] != "" && e2eCount(m[2]) != 200000 {
			t.Errorf("live progress %q: total %s, want 200,000", p.Text, m[2])
		}
		// No warm-up: once records were measured, no later state may
		// show fewer (the finishing phase must not claim "0 records").
		if measured > 0 && done < measured && !wentBack {
			wentBack = true
			t.Errorf("live progress went back from %d to %q (phase %q) after the measured records were shown",
				measured, strings.TrimSpace(p.Text), strings.TrimSpace(p.Phase))
		}
		if strings.TrimSpace(p.Phase) == "Measuring" && done > measured {
			measured = done
		}
	}
	if !sawRunning || measured == 0 || !saw100 {
		t.Errorf("live view: saw status running %v, a measure progress with done>0 %v, the bar at 100%% %v; want all three",
			sawRunning, measured > 0, saw100)
	}

	// The result.
	if status := e2eEval[string](t, b, "read the status", `document.getElementById('run-status').textContent.trim()`); status != "succeeded" {
		t.Fatalf("finished run's status %q, want succeeded\n%s", status, b.state())
	}
	type metricRow struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	metrics := e2eEval[[]metricRow](t, b, "read the metrics table",
		`Array.from(document.querySelectorAll('table.metrics-table tbody tr')).map(tr => ({
			name: tr.querySelector('th').textContent.trim(),
			value: tr.querySelector('td.num').textContent.trim()}))`)
	var rate string
	for _, m := range metrics {
		if m.Name == "record-send-rate" {
			rate = m.Value
		}
	}
	if v, ok := strings.CutSuffix(rate, " records/s"); !ok {
		t.Errorf("metrics table: record-send-rate shows %q, want a value in records/s (table: %+v)", rate, metrics)
	} else if n, err := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64); err != nil || n <= 0 {
		t.Errorf("metrics table: record-send-rate %q is not a positive number", rate)
	}
	output := e2eEval[string](t, b, "read the output", `(document.getElementById('run-output') || {}).textContent || ''`)
	if !strings.Contains(output, "200000 records sent, ") {
		t.Errorf("Kafka output %q lacks the summary line \"200000 records sent, …\"", output)
	}

	type profileLink struct {
		Role     string `json:"role"`
		Kind     string `json:"kind"`
		Href     string `json:"href"`
		Download string `json:"download"`
	}
	links := e2eEval[[]profileLink](t, b, "read the profile links",
		`(() => {
			const table = document.querySelector('table.profiles-table');
			if (!table) { return []; }
			const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.textContent.trim());
			const cell = (tr, name) => {
				const c = tr.children[heads.indexOf(name)];
				return c ? c.textContent.trim() : '';
			};
			return Array.from(table.querySelectorAll('tbody tr')).map(tr => {
				const a = tr.querySelector('a[download][href]');
				return {role: cell(tr, 'Role'), kind: cell(tr, 'Kind'),
					href: a ? a.getAttribute('href') : '', download: a ? a.getAttribute('download') : ''};
			});
		})()`)
	kinds := map[string]bool{}
	for _, l := range links {
		kinds[l.Role+"/"+l.Kind] = true
		if l.Href == "" {
			t.Errorf("profile %s/%s has no download link", l.Role, l.Kind)
			continue
		}
		e2eCheckProfile(t, srv, l.Href, l.Download, l.Kind)
	}
	if !kinds["client/cpu"] || !kinds["client/heap"] {
		t.Errorf("profiles listed: %+v, want the client's cpu and heap", links)
	}

	b.screenshot(t, fmt.Sprintf("run-%d-finished", id))
	b.checkConsole(t)
}

// e2eCheckProfile fetches a profile link as a browser would follow it
// and checks it is a pprof profile of the kind the page says.
func e2eCheckProfile(t *testing.T, srv *e2eServer, href, download, kind string) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := url.Parse(href)
	if err != nil {
		t.Errorf("profile link %q: %v", href, err)
		return
	}
	resp, err := srv.http.Get(u.ResolveReference(ref).String())
	if err != nil {
		t.Errorf("GET %s: %v", href, err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: status %d, %v", href, resp.StatusCode, err)
		return
	}
	if cd := resp.Header.Get("Content-Disposition"); download == "" || !strings.Contains(cd, `filename="`+download+`"`) {
		t.Errorf("GET %s: Content-Disposition %q, want the link's download name %q", href, cd, download)
	}
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Errorf("GET %s: %d bytes that pprof cannot parse: %v", href, len(data), err)
		return
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	want := map[string]string{"cpu": "cpu", "heap": "inuse_space"}[kind]
	if want != "" && !strings.Contains(" "+strings.Join(types, " ")+" ", " "+want+" ") {
		t.Errorf("GET %s: a %s profile with sample types %v, want %s among them", href, kind, types, want)
	}
}

// TestE2EFormErrors submits the form with a bad number: the form comes back
// with the error next to the field, the other values kept, and no run.
func TestE2EFormErrors(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	b.do(t, "open the new-run form",
		chromedp.Navigate(srv.URL+"/runs/new"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
		chromedp.SendKeys(chromedp.ID("f-label"), "keep me"),
	)
	// num-records is <input type="number">: Chrome drops letters typed into
	// it, and a value set from script is sanitized to "". Make it a text
	// field, as a browser without number inputs has, to send "abc".
	e2eEval[bool](t, b, "make num-records a text field", `(() => { document.getElementById('f-num-records').type = 'text'; return true; })()`)
	b.do(t, "type abc", chromedp.SendKeys(chromedp.ID("f-num-records"), "abc"))
	if v := e2eEval[string](t, b, "read num-records", `document.getElementById('f-num-records').value`); v != "abc" {
		t.Fatalf("num-records holds %q, want abc", v)
	}
	b.do(t, "submit the form", chromedp.Click(chromedp.CSS(`#run-form button[type="submit"]`)))
	b.waitFor(t, "the form with its errors", `document.readyState === 'complete' && !!document.getElementById('error-summary')`)

	type formState struct {
		Path        string `json:"path"`
		Label       string `json:"label"`
		NumRecords  string `json:"numRecords"`
		Invalid     string `json:"invalid"`
		DescribedBy string `json:"describedBy"`
		FieldError  string `json:"fieldError"`
		ErrorID     string `json:"errorID"`
		ErrorShown  bool   `json:"errorShown"`
		Summary     string `json:"summary"`
		SummaryItem string `json:"summaryItem"`
		SummaryLink string `json:"summaryLink"`
		Focused     string `json:"focused"`
		Workload    string `json:"workload"`
		Profiles    string `json:"profiles"`
	}
	st := e2eEval[formState](t, b, "read the form", `(() => {
		const input = document.getElementById('f-num-records');
		const err = input.closest('.field').querySelector('.field-error');
		const link = document.querySelector('#error-summary a[href]');
		const workload = document.querySelector('input[name="workload"]:checked');
		return {
			path: location.pathname,
			label: document.getElementById('f-label').value,
			numRecords: input.value,
			invalid: input.getAttribute('aria-invalid') || '',
			describedBy: input.getAttribute('aria-describedby') || '',
			fieldError: err ? err.textContent.trim() : '',
			errorID: err ? err.id : '',
			errorShown: !!err && err.offsetParent !== null && err.getBoundingClientRect().height > 0,
			summary: document.getElementById('error-summary').textContent.replace(/\s+/g, ' ').trim(),
			summaryItem: Array.from(document.querySelectorAll('#error-summary li')).map(li => li.textContent.replace(/\s+/g, ' ').trim()).join(' | '),
			summaryLink: link ? link.getAttribute('href') : '',
			focused: document.activeElement ? document.activeElement.id : '',
			workload: workload ? workload.value : '',
			profiles: Array.from(document.querySelectorAll('input[type="checkbox"][name="profile"]:checked')).map(i => i.value).join(',')
		};
	})()`)
	if st.Path != "/runs" {
		t.Errorf("after the bad form the browser is at %s, want /runs (the form re-rendered, no redirect to a run)", st.Path)
	}
	if !strings.Contains(st.FieldError, `"abc"`) || !st.ErrorShown {
		t.Errorf("num-records field error %q (shown %v), want a visible message quoting the bad value", st.FieldError, st.ErrorShown)
	}
	// One line per field, "<field>: <message>", the field named once.
	if !strings.HasPrefix(st.SummaryItem, "num-records: ") || strings.Contains(st.SummaryItem, "num-records: num-records") ||
		!strings.Contains(st.SummaryItem, `"abc"`) {
		t.Errorf("error summary line %q, want \"num-records: <message about \"abc\">\" naming the field once", st.SummaryItem)
	}
	if st.Invalid != "true" || st.ErrorID == "" || !strings.Contains(" "+st.DescribedBy+" ", " "+st.ErrorID+" ") {
		t.Errorf("num-records: aria-invalid=%q aria-describedby=%q, want invalid and described by the error %q", st.Invalid, st.DescribedBy, st.ErrorID)
	}
	if st.SummaryLink != "#f-num-records" {
		t.Errorf("error summary %q links to %q, want #f-num-records", st.Summary, st.SummaryLink)
	}
	if st.Focused != "error-summary" {
		t.Errorf("focus on %q after the bad submit, want the error summary (new_run.js focuses it)", st.Focused)
	}
	if st.Label != "keep me" || st.NumRecords != "abc" {
		t.Errorf("re-rendered form: label %q, num-records %q; want the values sent, \"keep me\" and \"abc\"", st.Label, st.NumRecords)
	}
	if st.Workload != "producer" || st.Profiles != "cpu,heap" {
		t.Errorf("re-rendered form: workload %q, profiles %q; want producer and cpu,heap kept", st.Workload, st.Profiles)
	}

	var list struct {
		Total int `json:"total"`
	}
	srv.api(t, http.MethodGet, "/api/runs", nil, http.StatusOK, &list)
	if list.Total != 0 {
		t.Errorf("GET /api/runs: total %d after a rejected form, want 0", list.Total)
	}
	b.screenshot(t, "new-run-form-errors")
	// The re-rendered form comes with status 400, which Chrome logs.
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}

// TestE2ERunsListAndCancel cancels a running run from its page, then finds
// it in the runs list and with the status filter.
func TestE2ERunsListAndCancel(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	slow := srv.createRun(t, map[string]any{"workload": "producer",
		"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})
	// A second run, queued behind the slow one: it must not match the filter.
	other := srv.createRun(t, map[string]any{"workload": "producer",
		"params": map[string]any{"num-records": 1000, "profile": "none"}})

	b.do(t, "open the slow run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, slow)))
	b.poll(t, "the run to be running, live", `document.getElementById('run').getAttribute('data-live') === 'true' &&
		document.getElementById('run-status').textContent.trim() === 'running' &&
		/^Live/.test(document.getElementById('connection-state').textContent)`)
	b.screenshot(t, fmt.Sprintf("run-%d-live", slow))
	b.do(t, "click Cancel run", chromedp.Click(chromedp.CSS(`#progress form.cancel-form button[type="submit"]`)))
	b.waitFor(t, "the canceled run's final page", e2eFinalView+` && document.getElementById('run-status').textContent.trim() === 'canceled'`)
	if msg := e2eEval[string](t, b, "read the error", `(document.querySelector('.error-box .error-text') || {}).textContent || ''`); !strings.Contains(msg, "canceled") {
		t.Errorf("canceled run's page shows error %q, want it to say the run was canceled", msg)
	}
	if s := srv.runStatus(t, slow); s != "canceled" {
		t.Errorf("GET /api/runs/%d: status %q, want canceled", slow, s)
	}

	type runRow struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	readRows := func() []runRow {
		return e2eEval[[]runRow](t, b, "read the runs table",
			`Array.from(document.querySelectorAll('table.runs-table tbody tr')).map(tr => {
				const link = tr.querySelector('a[href^="/runs/"]'), badge = tr.querySelector('.badge');
				return {id: link ? link.textContent.trim() : '', status: badge ? badge.textContent.trim() : ''};
			})`)
	}
	statusOf := func(rows []runRow, id uint) (string, bool) {
		for _, r := range rows {
			if r.ID == fmt.Sprintf("#%d", id) {
				return r.Status, true
			}
		}
		return "", false
	}

	b.do(t, "open the runs list", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.runs-table")))
	rows := readRows()
	if s, ok := statusOf(rows, slow); !ok || s != "canceled" {
		t.Errorf("runs list: run %d has status %q (listed %v), want canceled; rows %+v", slow, s, ok, rows)
	}
	if s, ok := statusOf(rows, other); !ok || s == "canceled" {
		t.Errorf("runs list: run %d has status %q (listed %v), want listed and not canceled; rows %+v", other, s, ok, rows)
	}

	b.do(t, "filter by status canceled",
		chromedp.SetValue(chromedp.ID("filter-status"), "canceled"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
	)
	b.waitFor(t, "the filtered list", `new URLSearchParams(location.search).get('status') === 'canceled' &&
		document.readyState === 'complete' && !!document.querySelector('table.runs-table')`)
	rows = readRows()
	if s, ok := statusOf(rows, slow); !ok || s != "canceled" {
		t.Errorf("filtered list: run %d has status %q (listed %v), want canceled; rows %+v", slow, s, ok, rows)
	}
	if _, ok := statusOf(rows, other); ok || len(rows) != 1 {
		t.Errorf("filtered list (status=canceled) shows %+v, want only run %d", rows, slow)
	}
	if v := e2eEval[string](t, b, "read the filter", `document.getElementById('filter-status').value`); v != "canceled" {
		t.Errorf("status filter shows %q on the filtered page, want canceled", v)
	}
	if c := e2eEval[string](t, b, "read the count", `document.querySelector('p.count').textContent`); !strings.HasPrefix(c, "1 run ") || !strings.Contains(c, "filters") {
		t.Errorf("count line %q, want it to count 1 run matching the filters", c)
	}
	b.screenshot(t, "runs-filtered-canceled")
	b.checkConsole(t)
}

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
	var run struct {
		Profiles []struct{ ID uint } `json:"profiles"`
	}
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

// TestE2EFlameGraph opens a profile's flame graph, zooms with a real mouse
// click, searches, checks the URL keeps that state, and opens the
// comparison whose differential graph draws frames that grew in red and
// frames that shrank in blue.
func TestE2EFlameGraph(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	base := srv.e2eImport(t, "gather", e2eBaseStacks)
	target := srv.e2eImport(t, "single", e2eTargetStacks)

	b.do(t, "open the profile page", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d?sample=samples", srv.URL, base)))
	b.waitFor(t, "the flame graph's first paint", `document.querySelector("#flamegraph[data-rendered=true]") !== null`)
	box := e2eEval[map[string]float64](t, b, "frame box", `(() => {
		const el = document.getElementById("flamegraph");
		const r = el.flameGraph.frameBox("main.main;main.encode");
		const c = document.getElementById("flamegraph-canvas").getBoundingClientRect();
		return r ? {x: c.left + r.x + r.width / 2, y: c.top + r.y + r.height / 2, w: r.width} : {};
	})()`)
	if box["w"] <= 0 {
		t.Fatalf("main.encode is not drawn: %v", box)
	}
	b.do(t, "click main.encode", chromedp.MouseClickXY(box["x"], box["y"]))
	b.waitFor(t, "the zoom", `document.getElementById("flamegraph").flameGraph.state().focus === "main.main;main.encode"`)
	if u := e2eEval[string](t, b, "url", `location.href`); !strings.Contains(u, "focus=") {
		t.Errorf("the zoom is not in the URL: %s", u)
	}
	b.do(t, "search", chromedp.SendKeys("#flamegraph-search", "crc"))
	b.waitFor(t, "the match share", `(document.getElementById("flamegraph-match").dataset.totalPct || "") !== ""`)
	pct := e2eEval[string](t, b, "match share", `document.getElementById("flamegraph-match").dataset.totalPct`)
	if f, err := strconv.ParseFloat(pct, 64); err != nil || f < 19.9 || f > 20.1 {
		t.Errorf("main.crc holds 200 of 1000 samples; the page says %q%%", pct)
	}
	shared := e2eEval[string](t, b, "url", `location.href`)
	if !strings.Contains(shared, "search=crc") {
		t.Errorf("the search is not in the URL: %s", shared)
	}
	// The link shows the same view to whoever opens it.
	b.do(t, "open the shared link", chromedp.Navigate(shared))
	b.waitFor(t, "the shared view", `(() => { const s = document.getElementById("flamegraph").flameGraph; return s && s.state().focus === "main.main;main.encode" && s.state().search === "crc"; })()`)

	b.do(t, "open the comparison", chromedp.Navigate(fmt.Sprintf("%s/compare/profiles?base=%d&target=%d&normalize=none&sample=samples", srv.URL, base, target)))
	b.waitFor(t, "the differential graph", `document.querySelector("#diff-flamegraph[data-rendered=true]") !== null`)
	colour := func(path string) [3]float64 {
		c := e2eEval[[]float64](t, b, "pixel of "+path, fmt.Sprintf(`(() => {
			const g = document.getElementById("diff-flamegraph").flameGraph;
			const r = g.frameBox(%q);
			if (!r) return [];
			const cv = document.getElementById("diff-flamegraph-canvas");
			const k = cv.width / cv.getBoundingClientRect().width;
			const d = cv.getContext("2d").getImageData(Math.floor((r.x + 3) * k), Math.floor((r.y + r.height / 2) * k), 1, 1).data;
			return [d[0], d[1], d[2]];
		})()`, path))
		if len(c) != 3 {
			t.Fatalf("%s is not drawn in the differential graph", path)
		}
		return [3]float64{c[0], c[1], c[2]}
	}
	grew := colour("main.main;main.send;net.(*conn).Write;internal/poll.(*FD).Write")
	shrank := colour("main.main;main.encode;main.appendRecord")
	vanished := colour("main.main;main.send;net.(*conn).Write;internal/poll.(*FD).Writev")
	if !(grew[0] > grew[2]+40) {
		t.Errorf("a frame that grew is drawn rgb%v, want red", grew)
	}
	if !(shrank[2] > shrank[0]+40) || !(vanished[2] > vanished[0]+40) {
		t.Errorf("frames that shrank or vanished are drawn rgb%v and rgb%v, want blue", shrank, vanished)
	}
	page := e2eEval[string](t, b, "page text", `document.body.innerText`)
	for _, want := range []string{"internal/poll.(*FD).Write", "gather", "single"} {
		if !strings.Contains(page, want) {
			t.Errorf("the comparison page lacks %q", want)
		}
	}
	b.screenshot(t, "compare-profiles")
	b.checkConsole(t)
}
