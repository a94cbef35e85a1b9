package acceptance

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eViewState is the part of the flame graph's state() about what the
// canvas shows.
type e2eViewState struct {
	Draws int `json:"draws"`
	View  struct {
		Height float64 `json:"height"` // the graph's: rows × 18 px
		Canvas float64 `json:"canvas"` // the canvas's CSS height
		Top    float64 `json:"top"`    // the graph's y at the canvas's top
		From   int     `json:"from"`   // rows [from, to) are painted
		To     int     `json:"to"`
	} `json:"view"`
}

// e2eCanvasJS reads the canvas, its box and the colours down its column
// x = 3 CSS px, one a row (the middle of each 18-px row of the canvas).
const e2eCanvasJS = `(() => {
	const cv = document.getElementById("flamegraph-canvas"), box = cv.parentElement;
	const r = cv.getBoundingClientRect(), k = cv.width / r.width, ctx = cv.getContext("2d");
	const column = [];
	for (let y = 9; y < r.height; y += 18) {
		const d = ctx.getImageData(Math.floor(3 * k), Math.floor(y * k), 1, 1).data;
		column.push([d[0], d[1], d[2], d[3]]);
	}
	return {cssHeight: r.height, bitmapHeight: cv.height, dpr: window.devicePixelRatio,
		boxHeight: box.clientHeight, boxTop: box.getBoundingClientRect().top, canvasTop: r.top,
		scrollHeight: box.scrollHeight, column: column};
})()`

type e2eCanvas struct {
	CSSHeight    float64    `json:"cssHeight"`
	BitmapHeight float64    `json:"bitmapHeight"`
	DPR          float64    `json:"dpr"`
	BoxHeight    float64    `json:"boxHeight"`
	BoxTop       float64    `json:"boxTop"`
	CanvasTop    float64    `json:"canvasTop"`
	ScrollHeight float64    `json:"scrollHeight"`
	Column       [][4]int64 `json:"column"`
}

// TestE2EFlameGraphDrawsWhatIsScrolledIntoView: a graph taller than its
// box gets a canvas no taller than the box (its bitmap too), which shows
// the top rows; scrolling the box draws the rows scrolled into view (the
// root's colour is gone from the canvas, the deepest frame is painted at
// the canvas's bottom), and hovering and clicking after the scroll find
// the frame under the pointer.
func TestE2EFlameGraphDrawsWhatIsScrolledIntoView(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.e2eImport(t, "narrow", e2eNarrowStacks())

	// Zoomed into one deep stack: root, main.main, main.narrow007 and
	// main.d00 … main.d39, 43 rows of 18 px, every frame full width.
	const zoom = "main.main;main.narrow007"
	deepest := zoom
	for i := range 40 {
		deepest += fmt.Sprintf(";main.d%02d", i)
	}
	b.do(t, "open the zoomed profile page", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d?sample=samples&zoom=%s", srv.URL, id, strings.ReplaceAll(zoom, ";", "%3B"))))
	b.waitFor(t, "the flame graph's first paint, grown to its box", `document.querySelector("#flamegraph[data-rendered=true]:not([data-clipped])") !== null`)
	b.poll(t, "the zoomed view", e2eFG+`.state().zoom === "main.main;main.narrow007"`)

	st := e2eEval[e2eViewState](t, b, "state", e2eFG+`.state()`)
	cv := e2eEval[e2eCanvas](t, b, "read the canvas", e2eCanvasJS)
	if st.View.Height != 43*18 || cv.ScrollHeight != 43*18 {
		t.Fatalf("the graph is %v px tall and its box scrolls over %v px, want 774 (43 rows)", st.View.Height, cv.ScrollHeight)
	}
	// No taller than the visible box, in CSS and in device pixels.
	if cv.CSSHeight > cv.BoxHeight+1 || cv.CSSHeight >= st.View.Height || math.Abs(cv.CSSHeight-st.View.Canvas) >= 1 {
		t.Errorf("the canvas is %v px tall (state: %v) in a %v px box, for a %v px graph: want it no taller than the box", cv.CSSHeight, st.View.Canvas, cv.BoxHeight, st.View.Height)
	}
	if cv.BitmapHeight > math.Ceil((cv.BoxHeight+1)*cv.DPR) {
		t.Errorf("the canvas's bitmap is %v device px tall for a %v px box at %v device px per px", cv.BitmapHeight, cv.BoxHeight, cv.DPR)
	}
	if st.View.Top != 0 || st.View.From != 0 || st.View.To >= 43 || st.View.To < int(cv.CSSHeight/18) {
		t.Errorf("before any scroll the canvas paints rows [%d, %d) from y %v, want the top rows only", st.View.From, st.View.To, st.View.Top)
	}
	if cv.CanvasTop != cv.BoxTop {
		t.Errorf("the canvas's top %v is not the box's %v", cv.CanvasTop, cv.BoxTop)
	}
	// The root's colour, in the canvas's first row; rows 1 … are main.*.
	root := cv.Column[0]
	if root[3] == 0 || root == cv.Column[1] {
		t.Fatalf("the root's row is not painted apart from main.main's: column %v", cv.Column)
	}
	for i, px := range cv.Column {
		if px[3] == 0 {
			t.Errorf("canvas row %d is not painted before the scroll: %v", i, px)
		}
	}
	if box := e2eEval[map[string]float64](t, b, "the deepest frame's box", e2eFG+`.frameBox(`+fmt.Sprintf("%q", deepest)+`)`); box["y"] < cv.CSSHeight {
		t.Errorf("the deepest frame is at y %v, inside the %v px canvas before any scroll", box["y"], cv.CSSHeight)
	}

	// Scroll to the bottom: the canvas now shows the last rows.
	// (The page is scrolled too, so the whole box is in the window where
	// the pointer can reach it.)
	e2eEval[bool](t, b, "scroll the graph's box", `(() => { const box = document.getElementById("flamegraph-canvas").parentElement; box.scrollIntoView({block: "start"}); box.scrollTop = box.scrollHeight; return true; })()`)
	b.poll(t, "the scrolled draw", fmt.Sprintf(`%s.state().draws > %d && %s.state().view.top > 0`, e2eFG, st.Draws, e2eFG))
	st2 := e2eEval[e2eViewState](t, b, "state after the scroll", e2eFG+`.state()`)
	cv2 := e2eEval[e2eCanvas](t, b, "read the scrolled canvas", e2eCanvasJS)
	if want := st.View.Height - st.View.Canvas; math.Abs(st2.View.Top-want) >= 1 || st2.View.To != 43 || st2.View.From != int(want/18) {
		t.Errorf("scrolled to the bottom: the canvas paints rows [%d, %d) from y %v, want [%d, 43) from y %v", st2.View.From, st2.View.To, st2.View.Top, int(want/18), want)
	}
	if cv2.CanvasTop != cv2.BoxTop || cv2.CSSHeight != cv.CSSHeight {
		t.Errorf("scrolled: the canvas is at %v (box at %v), %v px tall (was %v): want it to stay in the box's view, same size", cv2.CanvasTop, cv2.BoxTop, cv2.CSSHeight, cv.CSSHeight)
	}
	for i, px := range cv2.Column {
		if px == root {
			t.Errorf("scrolled: canvas row %d still shows the root's colour %v: the rows scrolled into view are not drawn", i, px)
		}
		if px[3] == 0 {
			t.Errorf("scrolled: canvas row %d is not painted: %v", i, px)
		}
	}
	box := e2eEval[map[string]float64](t, b, "the deepest frame's box after the scroll", e2eFG+`.frameBox(`+fmt.Sprintf("%q", deepest)+`)`)
	if box["y"] < 0 || box["y"]+box["height"] > cv2.CSSHeight+1 || box["width"] <= 0 {
		t.Fatalf("scrolled to the bottom, the deepest frame's box %v is not inside the %v px canvas", box, cv2.CSSHeight)
	}
	// Its pixels are painted where frameBox says.
	px := e2eEval[[]int64](t, b, "the deepest frame's pixel", fmt.Sprintf(`(() => {
		const cv = document.getElementById("flamegraph-canvas"), k = cv.width / cv.getBoundingClientRect().width;
		return Array.from(cv.getContext("2d").getImageData(Math.floor(%v * k), Math.floor(%v * k), 1, 1).data);
	})()`, box["x"]+3, box["y"]+box["height"]/2))
	if len(px) != 4 || px[3] == 0 {
		t.Errorf("the deepest frame's pixel is %v, want it painted", px)
	}

	// Hover over it: the tooltip names it, not the frame drawn there
	// before the scroll.
	pos := e2eEval[map[string]float64](t, b, "the canvas's position", `(() => { const r = document.getElementById("flamegraph-canvas").getBoundingClientRect(); return {left: r.left, top: r.top}; })()`)
	x, y := pos["left"]+box["x"]+box["width"]/2, pos["top"]+box["y"]+box["height"]/2
	b.do(t, "hover the deepest frame", chromedp.MouseEvent(chromedp.MouseMoved, x, y-40), chromedp.MouseEvent(chromedp.MouseMoved, x, y))
	b.poll(t, "the tooltip", `!document.querySelector("#flamegraph .fg-tooltip").hidden`)
	tip := e2eEval[string](t, b, "the tooltip's name", `document.querySelector("#flamegraph .fg-tooltip .fg-tip-name").textContent`)
	if tip != "main.d39" {
		t.Errorf("hovering the deepest frame after the scroll, the tooltip names %q, want main.d39", tip)
	}
	// A click there zooms into it.
	b.do(t, "click the deepest frame", chromedp.MouseClickXY(x, y))
	b.poll(t, "the zoom into the deepest frame", e2eFG+`.state().zoom === `+fmt.Sprintf("%q", deepest))
	b.checkConsole(t)
}
