package acceptance

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// e2eProfileComplete says the profile page's second stage is done: the
// forms, the search box and the write-path table are shown, and
// flameviews.js (the views, the keys) has run.
const e2eProfileComplete = `document.getElementById("profile").dataset.later === "ready"`

// e2eFirstFrame runs before the page's own scripts: when the graph is
// drawn (flamegraph:rendered, in the task whose frame is the page's
// first) and in that frame's requestAnimationFrame callback it notes
// what the frame holds, and window.__look() reads the same again later.
// Reading boxes there lays out what the frame will.
const e2eFirstFrame = `(function () {
  var box = function (sel) {
    var e = document.querySelector(sel);
    if (!e) { return null; }
    var r = e.getBoundingClientRect();
    return [r.left, r.top, r.width, r.height].map(function (v) { return Math.round(v * 10) / 10; });
  };
  var css = function (sel, props) {
    var e = document.querySelector(sel);
    if (!e) { return ''; }
    var cs = getComputedStyle(e);
    return props.map(function (p) { return cs.getPropertyValue(p); }).join('|');
  };
  window.__look = function () {
    return {
      boxes: {header: box('.site-header'), h1: box('h1'), facts: box('.facts'), heading: box('#flamegraph-heading'),
        graph: box('#flamegraph'), canvas: box('#flamegraph-canvas'), legend: box('#flamegraph-legend')},
      looks: {body: css('body', ['font-family', 'font-size', 'color', 'background-color']), h1: css('h1', ['font-size', 'font-weight']),
        facts: css('.facts', ['display', 'background-color', 'border-top-color', 'padding-top']),
        nav: css('.site-nav li a', ['color', 'padding-left']),
        graph: css('#flamegraph', ['background-color', 'border-top-color', 'padding-left', 'border-radius'])}
    };
  };
  // The rest of the frame's notes in its requestAnimationFrame callback.
  // The parser may not have reached the write-path table by then (it
  // yields on a busy machine): a table not parsed yet is not shown.
  var seen = false;
  document.addEventListener('flamegraph:rendered', function () {
    if (seen) { return; }
    seen = true;
    var look = window.__look();
    requestAnimationFrame(function () {
      look.sheets = Array.prototype.map.call(document.styleSheets, function (s) { return s.href || 'inline'; });
      look.files = performance.getEntriesByType('resource').map(function (r) { return r.name; });
      look.later = Array.prototype.map.call(document.querySelectorAll('.fp-later'), function (e) { return e.className; });
      look.searchShown = document.getElementById('flamegraph-search').checkVisibility();
      var table = document.getElementById('write-paths');
      look.tableShown = !!table && table.checkVisibility();
      window.__first = look;
    });
  }, true);
})();`

type e2eLook struct {
	Boxes       map[string][]float64 `json:"boxes"`
	Looks       map[string]string    `json:"looks"`
	Sheets      []string             `json:"sheets"`
	Files       []string             `json:"files"`
	Later       []string             `json:"later"`
	SearchShown bool                 `json:"searchShown"`
	TableShown  bool                 `json:"tableShown"`
}

// TestE2EProfilePaintsTheGraphFirst: the profile page's first frame holds
// the graph, styled by the page's inline style sheet alone (no style
// sheet file was asked for), without the forms, the filter bar, the search
// box and the write-path table (class fp-later). After that frame the page
// loads its full style sheets and flameviews.js and shows those parts
// where the first frame kept their place: nothing the first frame drew
// moves or looks different (1280 px wide), and the search box, the views
// and the keys work. No CSP violation: the inline style sheet is allowed
// by its hash.
func TestE2EProfilePaintsTheGraphFirst(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.e2eImport(t, "views", e2eViewsFolded)
	b.do(t, "watch the first frame", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: e2eFirstFrame})
		return err
	}))
	b.do(t, "open the profile", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d?sample=samples", srv.URL, id)))
	b.waitFor(t, "the first frame's notes", `!!window.__first`)
	b.waitFor(t, "the page's second stage", e2eProfileComplete)
	first := e2eEval[e2eLook](t, b, "the first frame", `window.__first`)

	if len(first.Sheets) != 1 || first.Sheets[0] != "inline" {
		t.Errorf("style sheets at the first frame: %v, want the inline one only", first.Sheets)
	}
	for _, f := range first.Files {
		if strings.Contains(f, ".css") {
			t.Errorf("the first frame waited for %s", f)
		}
	}
	later := strings.Join(first.Later, ",")
	for _, want := range []string{"profile-links", "fg-filters-slot", "fg-viewbar", "fg-toolbar"} {
		if !strings.Contains(later, want) {
			t.Errorf("the first frame draws .%s (fp-later: %s)", want, later)
		}
	}
	if first.SearchShown || first.TableShown {
		t.Errorf("the first frame shows the search box (%v) or the write-path table (%v)", first.SearchShown, first.TableShown)
	}

	now := e2eEval[e2eLook](t, b, "the page now", `(() => { const l = window.__look(); l.sheets = Array.from(document.styleSheets).map(s => s.href || "inline"); l.later = Array.from(document.querySelectorAll(".fp-later")).map(e => e.className); l.searchShown = document.getElementById("flamegraph-search").checkVisibility(); l.tableShown = document.getElementById("write-paths").checkVisibility(); return l; })()`)
	for _, want := range []string{"/static/app.css", "/static/flamegraph.css", "/static/flameviews.css"} {
		if !strings.Contains(strings.Join(now.Sheets, " "), want) {
			t.Errorf("style sheets after the first frame: %v, want %s among them", now.Sheets, want)
		}
	}
	if len(now.Later) != 0 || !now.SearchShown || !now.TableShown {
		t.Errorf("after the second stage: still later %v, search box shown %v, write-path table shown %v", now.Later, now.SearchShown, now.TableShown)
	}
	for name, was := range first.Boxes {
		is := now.Boxes[name]
		if len(was) != 4 || len(is) != 4 {
			t.Errorf("%s: box %v then %v", name, was, is)
			continue
		}
		for k := range was {
			if math.Abs(was[k]-is[k]) > 0.5 {
				t.Errorf("%s moved once the page was complete: %v (left, top, width, height) in the first frame, %v after", name, was, is)
				break
			}
		}
	}
	for name, was := range first.Looks {
		if now.Looks[name] != was {
			t.Errorf("%s looks different once the full style sheets apply: %q in the first frame, %q after", name, was, now.Looks[name])
		}
	}

	// What the second stage brought works: the views, the search box and
	// the keys (flameviews.js).
	if n := e2eEval[int](t, b, "view links", `document.querySelectorAll("#profile .fg-viewbar .fg-view-link").length`); n != 2 {
		t.Errorf("the view bar holds %d links, want 2", n)
	}
	b.do(t, "search", chromedp.SendKeys("#flamegraph-search", "enc"))
	b.waitFor(t, "the match", `(document.getElementById("flamegraph-match").dataset.totalPct || "") !== ""`)
	b.do(t, "focus the graph", chromedp.Focus("#flamegraph-canvas"))
	b.do(t, "?", chromedp.KeyEvent("?"))
	if shown := e2eEval[bool](t, b, "keys", `(() => { const k = document.querySelector(".fg-keys"); return !!k && !k.hidden; })()`); !shown {
		t.Error("? shows no keys")
	}
	b.checkConsole(t)
}
