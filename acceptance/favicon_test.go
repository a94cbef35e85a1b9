package acceptance

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// e2eNarrowStacks is a profile whose flame graph is shallow where it is
// wide and deep only where it is far too narrow to draw: one heavy path
// three frames deep, and 300 one-sample stacks 43 frames deep whose
// frames merge into a grey "too narrow" strip under main.main.
func e2eNarrowStacks() string {
	var b strings.Builder
	b.WriteString("main.main;main.wide;main.work 100000\n")
	deep := make([]string, 40)
	for i := range deep {
		deep[i] = fmt.Sprintf("main.d%02d", i)
	}
	for i := range 300 {
		fmt.Fprintf(&b, "main.main;main.narrow%03d;%s 1\n", i, strings.Join(deep, ";"))
	}
	return b.String()
}

// e2eRowsJS reads the flame graph's canvas: its CSS height, the rows it
// has room for and the deepest row holding any painted pixel.
const e2eRowsJS = `(() => {
	const cv = document.getElementById("flamegraph-canvas");
	const box = cv.getBoundingClientRect();
	const k = cv.width / box.width, ctx = cv.getContext("2d");
	const rows = Math.round(box.height / 18);
	let painted = 0;
	for (let r = 0; r < rows; r++) {
		const d = ctx.getImageData(0, Math.floor((r * 18 + 8) * k), cv.width, 1).data;
		for (let i = 3; i < d.length; i += 4) { if (d[i] > 0) { painted = r + 1; break; } }
	}
	const scroll = cv.parentElement;
	return {height: box.height, rows: rows, painted: painted,
		viewHeight: scroll.clientHeight, scrollHeight: scroll.scrollHeight, scrolls: getComputedStyle(scroll).overflowY};
})()`

type e2eRows struct {
	Height       float64 `json:"height"`
	Rows         int     `json:"rows"`
	Painted      int     `json:"painted"`
	ViewHeight   float64 `json:"viewHeight"`
	ScrollHeight float64 `json:"scrollHeight"`
	Scrolls      string  `json:"scrolls"`
}

// TestE2EFlameGraphFitsItsRows: the canvas is as tall as the rows it
// draws (not as deep as the deepest stack, most of which is too narrow to
// see), grows when a zoom makes deep frames wide and scrolls past a
// sensible height; the tooltip over the grey "too narrow" strip says what
// the strip is, and is never an empty box.
func TestE2EFlameGraphFitsItsRows(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.e2eImport(t, "narrow", e2eNarrowStacks())

	b.do(t, "open the profile page", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d?sample=samples", srv.URL, id)))
	b.waitFor(t, "the flame graph's first paint", `document.querySelector("#flamegraph[data-rendered=true]") !== null`)
	// The graph is painted once: nothing repaints it in the frames after
	// (the ResizeObserver's first call reports the size already drawn).
	e2eEval[bool](t, b, "let three frames pass", `window.__frames = 0; (function next() { if (++window.__frames < 4) { requestAnimationFrame(next); } })(); true`)
	b.poll(t, "three frames after the first paint", `window.__frames >= 4`)
	if n := e2eEval[int](t, b, "count the paints", `document.getElementById("flamegraph").flameGraph.state().draws`); n != 1 {
		t.Errorf("the canvas was painted %d times by the first frames after the page loaded, want once", n)
	}
	rows := e2eEval[e2eRows](t, b, "read the canvas", e2eRowsJS)
	// root, main.main, the strip and main.wide, main.work: 4 rows, where
	// the deepest stack has 43 frames under the root.
	if rows.Painted != 4 || rows.Rows != 4 || rows.Height != 4*18 {
		t.Errorf("the canvas is %v px tall (%d rows) and paints %d rows, want 72 px for the 4 rows drawn", rows.Height, rows.Rows, rows.Painted)
	}

	// The strip: the run of NARROW grey pixels in row 2.
	strip := e2eEval[map[string]float64](t, b, "find the strip", `(() => {
		const cv = document.getElementById("flamegraph-canvas");
		const box = cv.getBoundingClientRect(), k = cv.width / box.width;
		const d = cv.getContext("2d").getImageData(0, Math.floor((2 * 18 + 8) * k), cv.width, 1).data;
		let first = -1, last = -1;
		for (let x = 0; x < cv.width; x++) {
			if (d[x * 4] === 228 && d[x * 4 + 1] === 231 && d[x * 4 + 2] === 235) { if (first < 0) { first = x; } last = x; }
		}
		return first < 0 ? {} : {x: box.left + (first + last + 1) / 2 / k, y: box.top + 2 * 18 + 9, top: box.top};
	})()`)
	if strip["x"] == 0 {
		t.Fatal("no grey strip of narrow frames in row 2")
	}
	tooltip := func() (bool, string) {
		v := e2eEval[[]any](t, b, "read the tooltip", `(() => { const tip = document.querySelector("#flamegraph .fg-tooltip"); return [tip.hidden, tip.textContent]; })()`)
		return v[0].(bool), v[1].(string)
	}
	// Straight from outside the canvas onto the strip: the first hover of
	// the page.
	b.do(t, "move onto the strip",
		chromedp.MouseEvent(chromedp.MouseMoved, strip["x"], strip["top"]-30),
		chromedp.MouseEvent(chromedp.MouseMoved, strip["x"], strip["y"]))
	hidden, text := tooltip()
	if hidden || !strings.Contains(text, "300 frames too narrow to draw") {
		t.Errorf("tooltip over the strip: hidden %v, text %q; want it to name the 300 narrow frames", hidden, text)
	}
	// A hover still repaints (the frame under the pointer is outlined).
	b.poll(t, "the hover's repaint", `document.getElementById("flamegraph").flameGraph.state().draws > 1`)
	b.screenshot(t, "flamegraph-fit")
	b.do(t, "leave the canvas", chromedp.MouseEvent(chromedp.MouseMoved, strip["x"], strip["top"]-30))
	if hidden, text := tooltip(); !hidden {
		t.Errorf("the tooltip stays shown (%q) after the pointer left the canvas", text)
	}
	// Below the last row, inside the graph's box: nothing to describe.
	b.do(t, "move below the rows", chromedp.MouseEvent(chromedp.MouseMoved, strip["x"], strip["top"]+rows.Height+2))
	if hidden, text := tooltip(); !hidden {
		t.Errorf("a tooltip (%q) shows below the drawn rows", text)
	}

	// Zoomed into one of the deep stacks, every frame of it is wide: the
	// canvas grows to all its rows and its box scrolls.
	if got := e2eEval[string](t, b, "zoom into a deep stack", `document.getElementById("flamegraph").flameGraph.zoomTo("main.main;main.narrow007")`); got != "main.main;main.narrow007" {
		t.Fatalf("zoomed to %q", got)
	}
	b.poll(t, "the taller canvas", `document.getElementById("flamegraph-canvas").getBoundingClientRect().height > 72`)
	deep := e2eEval[e2eRows](t, b, "read the zoomed canvas", e2eRowsJS)
	if deep.Painted != 43 || deep.Rows != 43 {
		t.Errorf("zoomed: %d rows, %d painted, want 43 (root, main.main, main.narrow007 and 40 frames)", deep.Rows, deep.Painted)
	}
	if deep.Scrolls != "auto" || deep.ViewHeight >= deep.Height || deep.ScrollHeight < deep.Height {
		t.Errorf("zoomed: a %v px canvas shown in a %v px box (scroll height %v, overflow-y %s), want a shorter box that scrolls",
			deep.Height, deep.ViewHeight, deep.ScrollHeight, deep.Scrolls)
	}
	b.screenshot(t, "flamegraph-zoomed-deep")
	e2eEval[bool](t, b, "reset the zoom", `(document.getElementById("flamegraph").flameGraph.reset(), true)`)
	b.poll(t, "the short canvas again", `document.getElementById("flamegraph-canvas").getBoundingClientRect().height === 72`)
	b.checkConsole(t)
}

// e2eResponses records the HTTP responses a tab receives.
type e2eResponses struct {
	mu   sync.Mutex
	seen []*network.Response
}

func (r *e2eResponses) listen(t *testing.T, b *e2eBrowser) {
	t.Helper()
	if err := chromedp.Listen(b.ctx, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok {
			r.mu.Lock()
			r.seen = append(r.seen, e.Response)
			r.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
}

// wait returns the first response whose URL ends with suffix (before any
// query), waiting for it.
func (r *e2eResponses) wait(t *testing.T, b *e2eBrowser, suffix string) *network.Response {
	t.Helper()
	deadline := time.Now().Add(e2eStepTimeout)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, resp := range r.seen {
			u, _, _ := strings.Cut(resp.URL, "?")
			if strings.HasSuffix(u, suffix) {
				r.mu.Unlock()
				return resp
			}
		}
		r.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no request for %s within %v\n%s", suffix, e2eStepTimeout, b.state())
	return nil
}

func (r *e2eResponses) failed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, resp := range r.seen {
		if resp.Status >= 400 {
			out = append(out, fmt.Sprintf("%d %s", resp.Status, resp.URL))
		}
	}
	return out
}

// TestE2EFavicon: kbench's pages and the embedded pprof UI's (which name
// no icon, so the browser asks for /favicon.ico) get an icon, not a 404.
func TestE2EFavicon(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.e2eImport(t, "icon", "main.main;main.work 10\n")
	var seen e2eResponses
	seen.listen(t, b)

	b.do(t, "open the pprof UI", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d/pprof/flamegraph", srv.URL, id)))
	icon := seen.wait(t, b, "/favicon.ico")
	if icon.Status != http.StatusOK || !strings.HasPrefix(icon.MimeType, "image/") {
		t.Errorf("the pprof page's /favicon.ico: %d %s, want 200 and an image", icon.Status, icon.MimeType)
	}
	b.do(t, "open the runs page", chromedp.Navigate(srv.URL+"/"))
	own := seen.wait(t, b, "/static/favicon.ico")
	if own.Status != http.StatusOK || !strings.HasPrefix(own.MimeType, "image/") {
		t.Errorf("kbench's icon %s: %d %s, want 200 and an image", own.URL, own.Status, own.MimeType)
	}
	if bad := seen.failed(); len(bad) > 0 {
		t.Errorf("failed requests: %s", strings.Join(bad, ", "))
	}
	b.checkConsole(t)
}

// TestE2ERunsLabelOneLine: in the runs list (a full row: throughput,
// latency, a repetition group) a short label such as kafka-go-conn
// stays on one line.
func TestE2ERunsLabelOneLine(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	var created struct {
		Runs []struct{ ID uint } `json:"runs"`
	}
	srv.api(t, http.MethodPost, "/api/runs", map[string]any{"workload": "producer", "label": "kafka-go-conn", "repetitions": 2, "warmup_runs": 1,
		"params": map[string]any{"num-records": 20000, "record-size": 100, "throughput": -1, "profile": "none"}}, http.StatusCreated, &created)
	if len(created.Runs) != 3 {
		t.Fatalf("%d runs created, want 3", len(created.Runs))
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, r := range created.Runs {
		for s := srv.runStatus(t, r.ID); s != "succeeded"; s = srv.runStatus(t, r.ID) {
			if s != "queued" && s != "running" || time.Now().After(deadline) {
				t.Fatalf("run %d: %s", r.ID, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	b.do(t, "open the runs list", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("compare-link")))
	lines := e2eEval[[]int](t, b, "count the label's lines", `Array.from(document.querySelectorAll("td.label-cell")).map(td => {
		const r = document.createRange();
		r.selectNodeContents(td);
		return new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top))).size;
	})`)
	if len(lines) != 3 {
		t.Fatalf("%d label cells, want 3", len(lines))
	}
	for i, n := range lines {
		if n != 1 {
			t.Errorf("row %d: the label kafka-go-conn takes %d lines", i+1, n)
		}
	}
	b.screenshot(t, "runs-labels")
	b.checkConsole(t)
}
