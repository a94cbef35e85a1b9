package acceptance

import (
	"fmt"
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
		Focus   string `json:"focus"`
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
	if n := e2eEval[int](t, b, "requests", `performance.getEntriesByType("resource").filter(r => r.name.includes("/flamegraph?")).length`); n != 0 {
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
	b.poll(t, "the zoomed subtree", e2eFG+`.state().focus === "main.main;main.narrow007" && `+e2eFG+`.frameBox("main.main;main.narrow007;main.d00;main.d01") !== null`)
	st = e2eEval[state](t, b, "state", e2eFG+`.state()`)
	if st.Fetches != 1 {
		t.Errorf("zoomed: %+v, want one fetch", st)
	}
	if u := e2eEval[string](t, b, "url", `location.href`); !strings.Contains(u, "focus=main.main%3Bmain.narrow007") || !strings.Contains(u, "search=main.d39") {
		t.Errorf("the zoom and search are not in the URL: %s", u)
	}
	// Within the zoom, the search's share of the zoomed frame: all of it
	// is main.d00…d39, one stack, and main.d39 is 1 of its 1 sample.
	b.waitFor(t, "the zoomed share", `(document.getElementById("flamegraph-match").dataset.zoomPct || "") === "100"`)
	rows := e2eEval[e2eRows](t, b, "read the zoomed canvas", e2eRowsJS)
	if rows.Painted != 43 {
		t.Errorf("zoomed: %d rows painted, want 43", rows.Painted)
	}

	// Back to the whole profile: the first view is kept, no new request.
	e2eEval[bool](t, b, "reset", `(`+e2eFG+`.reset(), true)`)
	b.poll(t, "the first view again", e2eFG+`.state().focus === "" && `+e2eFG+`.state().pruned`)
	if st := e2eEval[state](t, b, "state", e2eFG+`.state()`); st.Fetches != 1 {
		t.Errorf("zooming out fetched again: %+v", st)
	}

	// The shared link opens the zoomed view from the page itself.
	shared := fmt.Sprintf("%s/profiles/%d?sample=samples&focus=%s&search=main.d39", srv.URL, id, "main.main%3Bmain.narrow150")
	b.do(t, "open a shared zoom", chromedp.Navigate(shared))
	b.waitFor(t, "the shared view", `(() => { const g = document.getElementById("flamegraph").flameGraph; return !!g && g.state().focus === "main.main;main.narrow150"; })()`)
	b.poll(t, "the shared zoom drawn", e2eFG+`.frameBox("main.main;main.narrow150;main.d00") !== null`)
	if st := e2eEval[state](t, b, "state", e2eFG+`.state()`); st.Fetches != 0 || st.Search != "main.d39" {
		t.Errorf("shared view: %+v, want it drawn from the page with the search", st)
	}

	// A look-ahead is JavaScript's, not Go's: the page shows the server's
	// refusal and runs nothing itself; the view stays the pruned one.
	e2eEval[bool](t, b, "reset", `(`+e2eFG+`.reset(), true)`)
	e2eEval[bool](t, b, "search with a look-ahead", `(`+e2eFG+`.search("main\\.d(?=39)"), true)`)
	b.poll(t, "the refusal", `document.getElementById("flamegraph-match").textContent.startsWith("Search refused: ")`)
	if m := e2eEval[string](t, b, "refusal", `document.getElementById("flamegraph-match").textContent`); !strings.Contains(m, "RE2") {
		t.Errorf("the refusal %q does not say which syntax the search takes", m)
	}
	if st := e2eEval[state](t, b, "state", e2eFG+`.state()`); !st.Pruned {
		t.Errorf("a refused search loaded the whole tree: %+v", st)
	}
	// The server's 400 for the look-ahead is the one console error.
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}
