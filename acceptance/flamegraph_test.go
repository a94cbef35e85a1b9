package acceptance

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eFG is the flame graph's test API on the profile page.
const e2eFG = `document.getElementById("flamegraph").flameGraph`

// TestE2EFlameGraphPrunedZoomAndSearch: the profile page draws a pruned
// first view (the 300 one-sample stacks of e2eNarrowStacks are one grey
// run, not sent); a search still finds frames the view left out (the
// server searches every frame), a zoom into one of them fetches its
// subtree and draws it, the zoom back out needs no request, a shared link
// opens the zoomed view at once, and a search the server's regular
// expressions cannot read is shown as the server's refusal.
func TestE2EFlameGraphPrunedZoomAndSearch(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.e2eImport(t, "narrow", e2eNarrowStacks())

	b.do(t, "open the profile page", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d?sample=samples", srv.URL, id)))
	b.waitFor(t, "the flame graph's first paint", `document.querySelector("#flamegraph[data-rendered=true]") !== null`)
	type state struct {
		Zoom    string `json:"zoom"`
		Search  string `json:"search"`
		Nodes   int    `json:"nodes"`
		Match   string `json:"match"`
		Pruned  bool   `json:"pruned"`
		Fetches int    `json:"fetches"`
	}
	st := e2eEval[state](t, b, "state", e2eFG+`.state()`)
	// 1 root + main.main + main.wide + main.work + 300 × 41 narrow frames.
	if !st.Pruned || st.Nodes >= 100 || st.Fetches != 0 {
		t.Fatalf("first view: %+v, want a pruned view of a few frames, drawn without a request", st)
	}
	// The top table under the graph (view=top) asks once the page is drawn.
	if n := e2eEval[int](t, b, "requests", `performance.getEntriesByType("resource").filter(r => r.name.includes("/flamegraph?") && !r.name.includes("view=top")).length`); n != 0 {
		t.Errorf("the first paint made %d flame-graph requests, want 0 (the view is in the page)", n)
	}
	if box := e2eEval[bool](t, b, "hidden frame", e2eFG+`.frameBox("main.main;main.narrow007") === null`); !box {
		t.Error("main.narrow007 is drawn at the first paint; the test needs it hidden")
	}

	// Search a frame that is only in the left-out stacks: the server
	// counts all 300 of them.
	matchPct := func(what string) float64 {
		t.Helper()
		b.waitFor(t, what, `(document.getElementById("flamegraph-match").dataset.totalPct || "") !== ""`)
		pct := e2eEval[string](t, b, what, `document.getElementById("flamegraph-match").dataset.totalPct`)
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			t.Fatalf("%s: %q", what, pct)
		}
		return f
	}
	b.waitFor(t, "the search box (the page's second stage)", e2eProfileComplete)
	b.do(t, "search a hidden frame", chromedp.SendKeys("#flamegraph-search", "main.d39"))
	if f := matchPct("the hidden frames' share"); f < 0.298 || f > 0.3 {
		t.Errorf("main.d39 holds 300 of 100300 samples (0.299%%); the page says %v%%", f)
	}
	if m := e2eEval[string](t, b, "match text", `document.getElementById("flamegraph-match").textContent`); strings.Contains(m, "no frame matches") {
		t.Errorf("match text %q", m)
	}

	// Zoom into one of the hidden stacks: its subtree is fetched and drawn.
	if got := e2eEval[string](t, b, "zoom into a hidden frame", e2eFG+`.zoomTo("main.main;main.narrow007")`); got != "main.main;main.narrow007" {
		t.Fatalf("zoomTo = %q", got)
	}
	b.poll(t, "the zoomed subtree", e2eFG+`.state().zoom === "main.main;main.narrow007" && `+e2eFG+`.frameBox("main.main;main.narrow007;main.d00;main.d01") !== null`)
	st = e2eEval[state](t, b, "state", e2eFG+`.state()`)
	if st.Fetches != 1 {
		t.Errorf("zoomed: %+v, want one fetch", st)
	}
	if u := e2eEval[string](t, b, "url", `location.href`); !strings.Contains(u, "zoom=main.main%3Bmain.narrow007") || !strings.Contains(u, "search=main.d39") {
		t.Errorf("the zoom and search are not in the URL: %s", u)
	}
	// Within the zoom, the search's share of the zoomed frame: all of it
	// is main.d00…d39, one stack, and main.d39 is 1 of its 1 sample.
	b.waitFor(t, "the zoomed share", `(document.getElementById("flamegraph-match").dataset.zoomPct || "") === "100"`)
	// 43 rows: the box scrolls over all of them, and the canvas (no
	// taller than the box, see TestE2EFlameGraphDrawsWhatIsScrolledIntoView)
	// paints every row it shows.
	rows := e2eEval[e2eRows](t, b, "read the zoomed canvas", e2eRowsJS)
	if rows.ScrollHeight != 43*18 || rows.Painted != rows.Rows {
		t.Errorf("zoomed: the graph scrolls over %v px and %d of the canvas's %d rows are painted, want 774 px (43 rows), every row shown painted", rows.ScrollHeight, rows.Painted, rows.Rows)
	}

	// Back to the whole profile: the first view is kept, no new request.
	e2eEval[bool](t, b, "reset", `(`+e2eFG+`.reset(), true)`)
	b.poll(t, "the first view again", e2eFG+`.state().zoom === "" && `+e2eFG+`.state().pruned`)
	if st := e2eEval[state](t, b, "state", e2eFG+`.state()`); st.Fetches != 1 {
		t.Errorf("zooming out fetched again: %+v", st)
	}

	// The shared link opens the zoomed view from the page itself; a
	// link from before the rename (focus= holding a zoom path) is
	// redirected to zoom= and opens the same view.
	shared := fmt.Sprintf("%s/profiles/%d?sample=samples&focus=%s&search=main.d39", srv.URL, id, "main.main%3Bmain.narrow150")
	b.do(t, "open a shared zoom of before the rename", chromedp.Navigate(shared))
	b.waitFor(t, "the shared view", `(() => { const g = document.getElementById("flamegraph").flameGraph; return !!g && g.state().zoom === "main.main;main.narrow150"; })()`)
	if u := e2eEval[string](t, b, "url", `location.href`); !strings.Contains(u, "zoom=main.main%3Bmain.narrow150") || strings.Contains(u, "focus=") || !strings.Contains(u, "search=main.d39") {
		t.Errorf("the legacy link was not redirected to zoom=: %s", u)
	}
	b.poll(t, "the shared zoom drawn", e2eFG+`.frameBox("main.main;main.narrow150;main.d00") !== null`)
	if st := e2eEval[state](t, b, "state", e2eFG+`.state()`); st.Fetches != 0 || st.Search != "main.d39" {
		t.Errorf("shared view: %+v, want it drawn from the page with the search", st)
	}

	// A look-ahead is JavaScript's, not Go's: the page shows the server's
	// refusal and runs nothing itself; the view stays the pruned one.
	e2eEval[bool](t, b, "reset", `(`+e2eFG+`.reset(), true)`)
	e2eEval[bool](t, b, "search with a look-ahead", `(`+e2eFG+`.search("main\\.d(?=39)"), true)`)
	// Polled for the syntax's name, not read once after the refusal
	// shows: a search typed again in between says "searching…" until
	// its own refusal arrives.
	b.poll(t, "the refusal naming the syntax (RE2)", `(() => { const m = document.getElementById("flamegraph-match").textContent; return m.startsWith("Search refused: ") && m.includes("RE2"); })()`)
	if st := e2eEval[state](t, b, "state", e2eFG+`.state()`); !st.Pruned {
		t.Errorf("a refused search loaded the whole tree: %+v", st)
	}
	// The server's 400 for the look-ahead is the one console error.
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}

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
	b.waitFor(t, "the zoom", `document.getElementById("flamegraph").flameGraph.state().zoom === "main.main;main.encode"`)
	if u := e2eEval[string](t, b, "url", `location.href`); !strings.Contains(u, "zoom=") {
		t.Errorf("the zoom is not in the URL: %s", u)
	}
	b.waitFor(t, "the search box (the page's second stage)", e2eProfileComplete)
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
	b.waitFor(t, "the shared view", `(() => { const s = document.getElementById("flamegraph").flameGraph; return s && s.state().zoom === "main.main;main.encode" && s.state().search === "crc"; })()`)

	b.do(t, "open the comparison", chromedp.Navigate(fmt.Sprintf("%s/compare/profiles?base=%d&target=%d&normalize=none&sample=samples", srv.URL, base, target)))
	b.waitFor(t, "the differential graph, whole", `document.querySelector("#diff-flamegraph[data-rendered=true]:not([data-clipped])") !== null`)
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
	// Its tooltip needs format.js, which comes after the first frame: on
	// a loaded machine the pointer may arrive first, and the tooltip then
	// follows when it has come.
	b.poll(t, "the strip's tooltip", `(() => { const tip = document.querySelector("#flamegraph .fg-tooltip"); return !tip.hidden && tip.textContent.includes("300 frames too narrow to draw"); })()`)
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
	// graph grows to all its rows and its box scrolls; the canvas grows
	// only to the box's height and is painted all the way down
	// (TestE2EFlameGraphDrawsWhatIsScrolledIntoView scrolls it).
	if got := e2eEval[string](t, b, "zoom into a deep stack", `document.getElementById("flamegraph").flameGraph.zoomTo("main.main;main.narrow007")`); got != "main.main;main.narrow007" {
		t.Fatalf("zoomed to %q", got)
	}
	b.poll(t, "the taller canvas", `document.getElementById("flamegraph-canvas").getBoundingClientRect().height > 72`)
	deep := e2eEval[e2eRows](t, b, "read the zoomed canvas", e2eRowsJS)
	// root, main.main, main.narrow007 and 40 frames: 43 rows.
	if deep.ScrollHeight != 43*18 || deep.Painted != deep.Rows || deep.Rows < 5 {
		t.Errorf("zoomed: the box scrolls over %v px and the canvas paints %d of its %d rows, want 774 px (43 rows) and every row the canvas holds painted",
			deep.ScrollHeight, deep.Painted, deep.Rows)
	}
	if deep.Scrolls != "auto" || deep.ViewHeight >= deep.ScrollHeight || math.Abs(deep.Height-deep.ViewHeight) >= 1 {
		t.Errorf("zoomed: a %v px canvas shown in a %v px box (scroll height %v, overflow-y %s), want a shorter box that scrolls and a canvas as tall as the box",
			deep.Height, deep.ViewHeight, deep.ScrollHeight, deep.Scrolls)
	}
	b.screenshot(t, "flamegraph-zoomed-deep")
	e2eEval[bool](t, b, "reset the zoom", `(document.getElementById("flamegraph").flameGraph.reset(), true)`)
	b.poll(t, "the short canvas again", `document.getElementById("flamegraph-canvas").getBoundingClientRect().height === 72`)
	b.checkConsole(t)
}
