package acceptance

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// TestE2ECompareAndReport: two real runs (trunk and branch), ticked on the
// runs page and compared; the comparison saved as a report; the report's
// link opened in a fresh browser context (no cookies, nothing shared)
// shows the same table, and "Copy Markdown" puts the report's Markdown on
// the clipboard.
func TestE2ECompareAndReport(t *testing.T) {
	e2eSkip(t)
	t.Parallel() // waits on its processes most of the time: see test.sh
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	params := map[string]any{"num-records": 20000, "record-size": 100, "throughput": 20000, "reporting-interval": 200}
	trunk := srv.createRun(t, map[string]any{"workload": "producer", "label": "trunk", "params": params})
	branch := srv.createRun(t, map[string]any{"workload": "producer", "label": "branch", "params": params})
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range []uint{trunk, branch} {
		for {
			s := srv.runStatus(t, id)
			if s == "succeeded" {
				break
			}
			if s != "queued" && s != "running" {
				t.Fatalf("run %d ended %s", id, s)
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d still %s after 60 s", id, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Tick both runs on the runs page and follow "Compare selected".
	b.do(t, "open the runs list", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("compare-link")))
	b.do(t, "tick both runs",
		chromedp.Click(chromedp.ID(fmt.Sprintf("select-run-%d", branch))),
		chromedp.Click(chromedp.ID(fmt.Sprintf("select-run-%d", trunk))))
	b.poll(t, "the link to count 2", `document.getElementById('compare-link').textContent === 'Compare selected (2)'`)
	b.do(t, "click Compare", chromedp.Click(chromedp.ID("compare-link")))
	b.waitFor(t, "the comparison", `location.pathname === '/compare' && document.readyState === 'complete' && !!document.getElementById('comparison')`)
	if q := e2eEval[string](t, b, "read the query", `new URLSearchParams(location.search).get('runs')`); q != fmt.Sprintf("%d,%d", trunk, branch) {
		t.Errorf("compare link sent runs=%q, want the oldest (trunk) first", q)
	}
	heads := e2eEval[[]string](t, b, "read the column heads", `Array.from(document.querySelectorAll('#comparison thead th .col-name')).map(e => e.textContent)`)
	if want := []string{fmt.Sprintf("#%d trunk", trunk), fmt.Sprintf("#%d branch", branch)}; !reflect.DeepEqual(heads, want) {
		t.Errorf("columns %q, want %q", heads, want)
	}
	table := e2eEval[[][]string](t, b, "read the table", e2eTableJS)
	metrics := map[string][]string{}
	for _, row := range table {
		metrics[row[0]] = row[1:]
	}
	if rate := metrics["record-send-rate"]; len(rate) != 2 || !strings.Contains(rate[0], "records/s") || !strings.Contains(rate[1], "%") {
		t.Errorf("record-send-rate row %q: want values with units and a change", rate)
	}
	if n := e2eEval[int](t, b, "count coloured changes", `document.querySelectorAll('#comparison .delta-better, #comparison .delta-worse').length`); n == 0 {
		t.Error("no change is coloured better or worse")
	}
	// Descriptive rows are not judged; single runs cannot decide the
	// headline changes, and the page says how many more runs would.
	if n := e2eEval[int](t, b, "count judged descriptive rows", `document.querySelectorAll('#comparison tr.descriptive .delta-better, #comparison tr.descriptive .delta-worse').length`); n != 0 {
		t.Errorf("%d descriptive changes are coloured better or worse", n)
	}
	if more := e2eEval[string](t, b, "read the suggestion", `(document.getElementById('suggest-repetitions') || {dataset: {}}).dataset.moreRepetitions || ''`); more != "3" {
		t.Errorf("suggested more repetitions %q, want 3 (single runs: 4 per side to test)", more)
	}
	b.screenshot(t, "compare")

	// Save it as a report.
	const title = "E2E: trunk vs branch"
	b.do(t, "fill the report form",
		chromedp.SetValue(chromedp.ID("report-title"), title),
		chromedp.SendKeys(chromedp.ID("report-notes"), "Saved by the end-to-end test."),
		chromedp.Click(chromedp.ID("save-report")))
	b.waitFor(t, "the report page", `/^\/r\/[a-z2-7]{26}$/.test(location.pathname) && document.readyState === 'complete' && !!document.getElementById('comparison')`)
	link := e2eEval[string](t, b, "read the link", `location.href`)
	if got := e2eEval[[][]string](t, b, "read the report's table", e2eTableJS); !reflect.DeepEqual(got, table) {
		t.Errorf("the report's table differs from the comparison:\n%q\nvs\n%q", got, table)
	}
	b.checkConsole(t)

	// A fresh browser context: no cookies, no cache.
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	// The first action on a context opens its tab for the context's
	// lifetime: run it on ctx itself, not on a step's timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("open a tab in a new browser context: %v", err)
	}
	fresh := &e2eBrowser{ctx: ctx}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			fresh.console.mu.Lock()
			fresh.console.msgs = append(fresh.console.msgs, m)
			fresh.console.mu.Unlock()
		}
	}()
	fresh.do(t, "open the link in a fresh context", chromedp.Navigate(link))
	fresh.waitFor(t, "the shared report", `document.readyState === 'complete' && !!document.getElementById('comparison')`)
	if h := e2eEval[string](t, fresh, "read the title", `document.getElementById('report-title').textContent`); h != title {
		t.Errorf("shared report titled %q, want %q", h, title)
	}
	if got := e2eEval[[][]string](t, fresh, "read the shared table", e2eTableJS); !reflect.DeepEqual(got, table) {
		t.Errorf("the shared report's table differs:\n%q\nvs\n%q", got, table)
	}
	if n := e2eEval[int](t, fresh, "count the run links", fmt.Sprintf(`document.querySelectorAll('.report-runs a[href="/runs/%d"], .report-runs a[href="/runs/%d"]').length`, trunk, branch)); n != 2 {
		t.Errorf("%d run links, want 2", n)
	}
	if n := e2eEval[int](t, fresh, "count charts", `document.querySelectorAll('.charts svg').length`); n == 0 {
		t.Error("no throughput chart")
	}
	// Both runs captured the client's CPU profile (the default --profile), so
	// the report draws their differential flame graph.
	if n := e2eEval[int](t, fresh, "count diff graphs", `document.querySelectorAll('.flamegraph[data-mode="diff"]').length`); n != 1 {
		t.Errorf("%d differential flame graphs on the report, want 1 (both runs have a client CPU profile)", n)
	} else {
		fresh.waitFor(t, "the differential flame graph", `document.querySelector('.flamegraph[data-mode="diff"][data-rendered=true]') !== null`)
	}
	fresh.screenshot(t, "report")

	// Copy Markdown: grant the clipboard to this context, click, read back.
	bctx := chromedp.FromContext(ctx).BrowserContextID
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted, Origin: srv.URL, BrowserContextID: bctx})
		if err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
	fresh.do(t, "click Copy Markdown", chromedp.Click(chromedp.ID("copy-markdown")))
	fresh.poll(t, "the copy status", `document.getElementById('copy-status').textContent !== ''`)
	status := e2eEval[string](t, fresh, "read the status", `document.getElementById('copy-status').textContent`)
	var copied string
	if status == "Copied." {
		rctx, rcancel := context.WithTimeout(ctx, e2eStepTimeout)
		var err error
		copied, err = chromedp.Run(rctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		rcancel()
		if err != nil {
			t.Fatalf("read the clipboard: %v", err)
		}
	} else {
		// The fallback selects the text for the user to copy.
		t.Logf("copy status %q: checking the fallback's selection", status)
		copied = e2eEval[string](t, fresh, "read the selection", `(() => { const ta = document.getElementById('markdown-text');
			return document.activeElement === ta ? ta.value.substring(ta.selectionStart, ta.selectionEnd) : ''; })()`)
	}
	if !strings.HasPrefix(copied, "## "+title+"\n") {
		t.Errorf("copied Markdown starts %q, want the report title %q", copied[:min(len(copied), 80)], "## "+title)
	}
	if !strings.Contains(copied, "| **record-send-rate** (records/s) ↑ |") || !strings.Contains(copied, link) {
		t.Errorf("copied Markdown lacks the table or the link:\n%s", copied)
	}
	md := e2eEval[string](t, fresh, "read the Markdown box", `document.getElementById('markdown-text').value`)
	if md != copied && status == "Copied." {
		t.Error("the clipboard holds something else than the Markdown box")
	}
	fresh.checkConsole(t)
}
