package acceptance

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eSearchStacks have frame names long enough that a backtracking regexp
// engine cannot finish ^(.+)+#$ on them (2^n steps for a name of n
// characters without a '#'), and one frame, main.handler#, it matches.
func e2eSearchStacks(handler int) string {
	long := "github.com/segmentio/kafka-go/protocol.(*encoder).writeCompactArray"
	return fmt.Sprintf("main.main;%s;main.handler# %d\nmain.main;%s;github.com/kbench/kbench/runner.(*measurement).recordLatencyHistogram %d\n",
		long, handler, long, 100-handler)
}

// TestE2EFlameSearchNeverRunsInThePage: a link whose search is the
// catastrophic ^(.+)+#$ (minutes of backtracking in JavaScript's regexp
// engine) opens a profile page and a profile comparison that stay
// responsive and show the server's answer (Go's RE2): the share of the
// frame it matches. Typed searches take the same way, and one RE2
// cannot read is shown as the server's refusal.
func TestE2EFlameSearchNeverRunsInThePage(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	base := srv.e2eImport(t, "base", e2eSearchStacks(5))
	target := srv.e2eImport(t, "target", e2eSearchStacks(20))
	evil := url.QueryEscape(`^(.+)+#$`)

	pct := func(sel string) float64 {
		t.Helper()
		b.waitFor(t, "the search's share in "+sel, `(document.querySelector(`+strconv.Quote(sel)+`).dataset.totalPct || "") !== ""`)
		s := e2eEval[string](t, b, "share", `document.querySelector(`+strconv.Quote(sel)+`).dataset.totalPct`)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: share %q", sel, s)
		}
		return f
	}
	// The page answers a script at once: its main thread is not stuck.
	responsive := func(what string) {
		t.Helper()
		if v := e2eEval[int](t, b, what, `6 * 7`); v != 42 {
			t.Fatalf("%s: %d", what, v)
		}
	}

	b.do(t, "open a profile with the catastrophic search", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d?sample=samples&search=%s", srv.URL, base, evil)))
	b.waitFor(t, "the flame graph", `document.querySelector("#flamegraph[data-rendered=true]") !== null`)
	responsive("the profile page")
	if f := pct("#flamegraph-match"); f != 5 {
		t.Errorf("^(.+)+#$ matches main.handler#, 5 of 100 samples; the page says %v%%", f)
	}
	if v := e2eEval[string](t, b, "search box", `document.getElementById("flamegraph-search").value`); v != `^(.+)+#$` {
		t.Errorf("the search box holds %q", v)
	}

	// Typed: another catastrophic expression, answered by the server.
	e2eEval[bool](t, b, "type a search", `(document.getElementById("flamegraph").flameGraph.search("^(.+)+r#$"), true)`)
	b.poll(t, "the typed search's answer", `document.getElementById("flamegraph").flameGraph.state().search === "^(.+)+r#$" && document.getElementById("flamegraph").dataset.searchState === "ready"`)
	responsive("the profile page after typing")
	if f := pct("#flamegraph-match"); f != 5 {
		t.Errorf("^(.+)+r#$: the page says %v%%, want 5", f)
	}
	// An expression RE2 cannot read is the server's refusal.
	e2eEval[bool](t, b, "type a back-reference", `(() => {
		const i = document.getElementById("flamegraph-search");
		i.value = "(a)\\1";
		i.dispatchEvent(new Event("input"));
		return true;
	})()`)
	b.poll(t, "the refusal", `document.getElementById("flamegraph-match").textContent.startsWith("Search refused: ")`)

	// The comparison: the differential graph and both profiles' graphs.
	b.do(t, "open the comparison with the catastrophic search",
		chromedp.Navigate(fmt.Sprintf("%s/compare/profiles?base=%d&target=%d&search=%s", srv.URL, base, target, evil)))
	b.waitFor(t, "the graphs", `document.querySelectorAll(".flamegraph[data-rendered=true]").length === 3`)
	responsive("the comparison")
	if f := pct("#diff-flamegraph .fg-match"); f != 20 {
		t.Errorf("differential graph: ^(.+)+#$ matches 20 of the target's 100 samples; the page says %v%%", f)
	}
	if f := pct("#base-flamegraph .fg-match"); f != 5 {
		t.Errorf("base graph: the page says %v%%, want 5", f)
	}
	if m := e2eEval[string](t, b, "diff match", `document.querySelector("#diff-flamegraph .fg-match").textContent`); !strings.Contains(m, "base: 5") {
		t.Errorf("the differential graph's match %q lacks the base's share", m)
	}
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}
