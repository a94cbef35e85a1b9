package acceptance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// e2eViewsFolded: enc called from send and flush; gc beside main.
const e2eViewsFolded = "main;send;enc;memmove 30\nmain;send;enc 10\nmain;flush;enc;memmove 20\nmain;flush 5\ngc 25\n"

// TestE2EFlameViews: the profile page's top table (sorted on the server,
// the sort kept in the URL; a click on a function focuses the graph on
// it), a function's sandwich (its callers and callees graphs), the
// inverted view, the keyboard (arrows select, Enter zooms, Escape zooms
// out one level then resets, / searches, ? lists the keys), copying the
// selected stack (read from the page's DOM, not the headless clipboard),
// and a diff's top table with Δ columns and its inverted view.
func TestE2EFlameViews(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.e2eImport(t, "views", e2eViewsFolded)
	rendered := func(id string) string { return `document.querySelector("#` + id + `[data-rendered=true]") !== null` }
	rowsOf := func(id string) [][]string {
		t.Helper()
		return e2eEval[[][]string](t, b, id+" rows", `document.getElementById("`+id+`").flameGraph.state().rows`)
	}
	topNames := func() []string {
		t.Helper()
		return e2eEval[[]string](t, b, "top names", `Array.from(document.querySelectorAll("#flamegraph-top-table tbody tr")).map(r => r.dataset.name)`)
	}
	page := fmt.Sprintf("%s/profiles/%d?sample=samples", srv.URL, id)

	// The top table, by self (the default), then by total.
	b.do(t, "open the profile", chromedp.Navigate(page))
	b.waitFor(t, "the top table", rendered("flamegraph")+` && document.querySelector("#flamegraph-top[data-state=ready]") !== null`)
	if got := strings.Join(topNames(), ","); got != "memmove,gc,enc,flush,main,send" {
		t.Errorf("top by self: %s", got)
	}
	b.do(t, "sort by total", chromedp.Click(`#flamegraph-top .fg-top-sort[data-sort="total"]`))
	b.waitFor(t, "the sorted table", `document.querySelector("#flamegraph-top[data-state=ready][data-sort=total]") !== null`)
	if got := strings.Join(topNames(), ","); got != "main,enc,memmove,send,flush,gc" {
		t.Errorf("top by total: %s", got)
	}
	if cells := e2eEval[[]string](t, b, "enc's cells", `Array.from(document.querySelectorAll('#flamegraph-top-table tr[data-name="enc"] td')).map(c => c.textContent)`); len(cells) != 5 || cells[1] != "10" || cells[3] != "60" {
		t.Errorf("enc's cells: %q", cells)
	}
	// A click on a function focuses the graph on it (pprof's focus=^flush$).
	b.do(t, "focus flush", chromedp.Click(`#flamegraph-top-table tr[data-name="flush"] a.fg-top-focus`))
	b.waitFor(t, "the focused graph", `location.search.includes("focus=%5Eflush%24") && `+rendered("flamegraph")+` && `+e2eFG+`.state().total === 25`)
	if u := e2eEval[string](t, b, "url", `location.href`); !strings.Contains(u, "sort=total") {
		t.Errorf("the sort left the URL: %s", u)
	}

	// The sandwich of enc: callers (flush, send) and callees (memmove).
	b.do(t, "open the profile", chromedp.Navigate(page))
	b.waitFor(t, "the top table", `document.querySelector("#flamegraph-top[data-state=ready]") !== null`)
	b.do(t, "enc's sandwich", chromedp.Click(`#flamegraph-top-table tr[data-name="enc"] a.fg-top-sandwich`))
	b.waitFor(t, "the sandwich", `location.search.includes("sandwich=enc") && `+rendered("flamegraph-callers")+` && `+rendered("flamegraph-callees"))
	if r := rowsOf("flamegraph-callers"); len(r) < 3 || strings.Join(r[0], ",") != "enc" || strings.Join(r[1], ",") != "flush,send" || strings.Join(r[2], ",") != "main,main" {
		t.Errorf("callers of enc: %v", r)
	}
	if r := rowsOf("flamegraph-callees"); len(r) != 2 || strings.Join(r[1], ",") != "memmove" {
		t.Errorf("callees of enc: %v", r)
	}
	b.poll(t, "the function's totals", `document.querySelector(".fg-sandwich-totals[data-total]") !== null`)
	if tot := e2eEval[[]string](t, b, "totals", `[document.querySelector(".fg-sandwich-totals").dataset.total, document.querySelector(".fg-sandwich-totals").dataset.self]`); strings.Join(tot, "/") != "60/10" {
		t.Errorf("enc's total/self: %v", tot)
	}

	// The inverted view: the leaves under the root.
	b.do(t, "open the profile", chromedp.Navigate(page+"&zoom=main"))
	b.waitFor(t, "the first paint", rendered("flamegraph"))
	b.do(t, "inverted", chromedp.Click(`.fg-view-link[data-view="inverted"]`))
	b.waitFor(t, "the inverted graph", `location.search.includes("view=inverted") && !location.search.includes("zoom=") && `+rendered("flamegraph"))
	if r := rowsOf("flamegraph"); len(r) < 3 || strings.Join(r[1], ",") != "enc,flush,gc,memmove" || strings.Join(r[2], ",") != "send,main,enc" {
		t.Errorf("inverted: %v", r)
	}

	// The keyboard: flameviews.js, which the profile page loads after
	// its first paint (its second stage).
	b.do(t, "open the profile", chromedp.Navigate(page))
	b.waitFor(t, "the first paint and the second stage", rendered("flamegraph")+" && "+e2eProfileComplete)
	sel := func() string {
		t.Helper()
		return e2eEval[string](t, b, "selected", `document.getElementById("flamegraph").dataset.selected || ""`)
	}
	zoom := func() string { t.Helper(); return e2eEval[string](t, b, "zoom", e2eFG+`.state().zoom`) }
	b.do(t, "focus the graph", chromedp.Focus("#flamegraph-canvas"))
	b.do(t, "down, down", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	if s := sel(); s != "main;send" {
		t.Errorf("down twice: selected %q, want main;send (the widest callees)", s)
	}
	outlined := e2eEval[bool](t, b, "outline", `(() => { const o = document.querySelector("#flamegraph .fg-selected"); return !!o && !o.hidden && o.offsetWidth > 0 && o.offsetHeight > 0; })()`)
	if !outlined {
		t.Error("the selected frame is not outlined")
	}
	b.do(t, "copy", chromedp.KeyEvent("c"))
	if got := e2eEval[string](t, b, "copied", `document.querySelector("#flamegraph .fg-copied").value`); got != "main\nsend" {
		t.Errorf("copied %q", got)
	}
	b.do(t, "left, up, right", chromedp.KeyEvent(kb.ArrowLeft))
	if s := sel(); s != "main;flush" {
		t.Errorf("left: selected %q", s)
	}
	b.do(t, "enter", chromedp.KeyEvent(kb.Enter))
	b.poll(t, "the zoom", e2eFG+`.state().zoom === "main;flush"`)
	b.do(t, "down, enter", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
	b.poll(t, "the deeper zoom", e2eFG+`.state().zoom === "main;flush;enc"`)
	if u := e2eEval[string](t, b, "url", `location.search`); !strings.Contains(u, "zoom=main%3Bflush%3Benc") {
		t.Errorf("the zoom is not in the URL: %s", u)
	}
	b.do(t, "the copy button", chromedp.Click("#flamegraph .fg-copy"))
	if got := e2eEval[string](t, b, "copied", `document.getElementById("flamegraph").dataset.copied`); got != "main\nflush\nenc" {
		t.Errorf("the button copied %q", got)
	}
	b.do(t, "focus the graph", chromedp.Focus("#flamegraph-canvas"))
	b.do(t, "escape", chromedp.KeyEvent(kb.Escape))
	if z := zoom(); z != "main;flush" {
		t.Errorf("escape: zoom %q, want one level up", z)
	}
	b.do(t, "escape again", chromedp.KeyEvent(kb.Escape))
	if z := zoom(); z != "" {
		t.Errorf("escape twice: zoom %q, want the reset", z)
	}
	b.do(t, "?", chromedp.KeyEvent("?"))
	if shown := e2eEval[bool](t, b, "keys", `(() => { const k = document.querySelector(".fg-keys"); return !!k && !k.hidden && k.textContent.includes("Enter"); })()`); !shown {
		t.Error("? shows no keys")
	}
	b.do(t, "escape closes", chromedp.KeyEvent(kb.Escape))
	b.do(t, "/", chromedp.KeyEvent("/"))
	if a := e2eEval[string](t, b, "active", `document.activeElement.id + (document.querySelector(".fg-keys").hidden ? " closed" : " open")`); a != "flamegraph-search closed" {
		t.Errorf("after Escape and /: %s", a)
	}

	// A diff: the top table's Δ columns, sorted by |Δ self|; the
	// inverted differential graph.
	base := srv.e2eImport(t, "base", "main;a 30\nmain;gone 10\n")
	target := srv.e2eImport(t, "target", "main;a 45\nmain;new 5\n")
	b.do(t, "open the comparison", chromedp.Navigate(fmt.Sprintf("%s/compare/profiles?base=%d&target=%d&sample=samples&normalize=none", srv.URL, base, target)))
	b.waitFor(t, "the diff's top table", rendered("diff-flamegraph")+` && document.querySelector("#diff-flamegraph-top[data-state=ready]") !== null`)
	names := e2eEval[[]string](t, b, "diff top", `Array.from(document.querySelectorAll("#diff-flamegraph-top-table tbody tr")).map(r => r.dataset.name)`)
	if strings.Join(names, ",") != "a,gone,new,main" {
		t.Errorf("diff top by |Δ self|: %v", names)
	}
	heads := e2eEval[[]string](t, b, "diff heads", `Array.from(document.querySelectorAll("#diff-flamegraph-top-table th")).map(c => c.textContent)`)
	cells := e2eEval[[]string](t, b, "a's cells", `Array.from(document.querySelectorAll('#diff-flamegraph-top-table tr[data-name="a"] td')).map(c => c.textContent)`)
	if strings.Join(heads, "|") != "Function|Base self|Self|Δ self|Base total|Total|Δ total" || len(cells) != 7 || cells[3] != "+15" {
		t.Errorf("diff top: heads %q, a's cells %q", heads, cells)
	}
	b.do(t, "inverted diff", chromedp.Click(`.fg-view-link[data-view="inverted"]`))
	b.waitFor(t, "the inverted diff", `location.search.includes("view=inverted") && `+rendered("diff-flamegraph"))
	if r := rowsOf("diff-flamegraph"); len(r) < 3 || strings.Join(r[1], ",") != "a,gone,new" {
		t.Errorf("inverted diff: %v", r)
	}
	b.checkConsole(t)
}
