package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eLiveOutputLine is a line the live output of a producer run may show:
// a kbench note or one of Kafka's producer lines, each starting its line.
var e2eLiveOutputLine = regexp.MustCompile(`^(# kbench: .*|\d+ records sent, .*\.)$`)

// TestE2ELiveOutputKeepsLines follows a producer run on its page from
// before it starts, so its notes and Kafka's interval lines arrive as live
// events (not the catch-up copy), and reads the live output while the run
// goes: every note and every interval line stands on a line of its own.
func TestE2ELiveOutputKeepsLines(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	// The queue runs one run at a time: the run under test waits behind a
	// slow one while its page connects.
	blocker := srv.createRun(t, map[string]any{"workload": "producer", "label": "blocker",
		"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})
	id := srv.createRun(t, map[string]any{"workload": "producer", "label": "lines",
		"params": map[string]any{"num-records": 200000, "throughput": 5000, "reporting-interval": 200, "profile": "none"}})

	b.do(t, "open the queued run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, id)))
	b.poll(t, "the live connection of the queued run", `document.getElementById('run').getAttribute('data-live') === 'true' &&
		document.getElementById('run-status').textContent.trim() === 'queued' &&
		/^Live/.test(document.getElementById('connection-state').textContent)`)
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", blocker), nil, http.StatusAccepted, nil)

	// Two interval lines after the broker's note, while the page is live.
	b.poll(t, "a note and two interval lines in the live output", `(() => {
		const out = document.getElementById('live-output');
		return !!out && out.textContent.includes('(pid ') && (out.textContent.match(/records sent/g) || []).length >= 2;
	})()`)
	text := e2eEval[string](t, b, "read the live output", `document.getElementById('live-output').textContent`)
	live := e2eEval[string](t, b, "read data-live", `document.getElementById('run').getAttribute('data-live') || ''`)
	if live != "true" {
		t.Fatalf("the run page stopped being live before the output was read (data-live=%q)", live)
	}
	t.Logf("live output:\n%s", text)
	if !regexp.MustCompile(`\(pid \d+\)\n`).MatchString(text) {
		t.Errorf("the broker note does not end its line:\n%q", text)
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !e2eLiveOutputLine.MatchString(line) {
			t.Errorf("live output line %d is not one note or one Kafka line: %q", i+1, line)
		}
	}
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", id), nil, http.StatusAccepted, nil)
	b.waitFor(t, "the canceled run's final page", e2eFinalView)
	b.checkConsole(t)
}

// TestE2ERunsListRefreshes opens the runs list while a run waits in the
// queue and watches, without a reload, its row turn running and then
// succeeded with its figures; the refreshed row reads as a reload shows it.
func TestE2ERunsListRefreshes(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	blocker := srv.createRun(t, map[string]any{"workload": "producer", "label": "blocker",
		"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})
	id := srv.createRun(t, map[string]any{"workload": "producer", "label": "refresh",
		"params": map[string]any{"num-records": 20000, "profile": "none"}})

	rowOf := func(id uint) string {
		return fmt.Sprintf(`Array.from(document.querySelectorAll('table.runs-table tbody tr')).find(tr => !!tr.querySelector('a[href="/runs/%d"]'))`, id)
	}
	row := rowOf(id)
	cell := func(name string) string {
		// The row's cells as the list shows them, by column heading.
		return fmt.Sprintf(`(() => {
			const heads = Array.from(document.querySelectorAll('table.runs-table thead th')).map(th => th.textContent.trim());
			const r = %s;
			return r ? r.children[heads.indexOf(%s)].textContent.trim() : '';
		})()`, row, e2eJS(name))
	}
	b.do(t, "open the runs list", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.runs-table")))
	if s := e2eEval[string](t, b, "read the status", cell("Status")); s != "queued" {
		t.Fatalf("run %d shows %q on the list, want queued (the blocker runs)", id, s)
	}
	// A reload would drop this mark: it tells that the page refreshed itself.
	e2eEval[bool](t, b, "mark the page", `(window.kbenchE2EMark = true)`)
	b.do(t, "tick the run", chromedp.Click(chromedp.ID(fmt.Sprintf("select-run-%d", id))))

	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", blocker), nil, http.StatusAccepted, nil)
	b.poll(t, "the blocker's row to turn canceled", `(() => {
		const r = `+rowOf(blocker)+`;
		return !!r && r.querySelector('.badge').textContent.trim() === 'canceled';
	})()`)
	b.poll(t, "the run's row to turn succeeded", cell("Status")+` === 'succeeded'`)
	if !e2eEval[bool](t, b, "read the mark", `window.kbenchE2EMark === true`) {
		t.Fatal("the runs list reloaded; it should refresh its rows in place")
	}
	if !e2eEval[bool](t, b, "read the tick", fmt.Sprintf(`document.getElementById('select-run-%d').checked`, id)) {
		t.Error("refreshing the row lost its tick")
	}
	for _, col := range []string{"Duration", "Throughput", "Data rate", "p99 latency"} {
		if v := e2eEval[string](t, b, "read "+col, cell(col)); v == "" || v == "—" {
			t.Errorf("finished run's %s shows %q after the refresh, want its figure", col, v)
		}
	}
	rowText := `Array.from(` + row + `.children).slice(1).map(td => td.innerHTML.trim())`
	refreshed := e2eEval[[]string](t, b, "read the refreshed row", rowText)
	b.do(t, "reload the list", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("table.runs-table")))
	if reloaded := e2eEval[[]string](t, b, "read the reloaded row", rowText); strings.Join(reloaded, "\n") != strings.Join(refreshed, "\n") {
		t.Errorf("the refreshed row differs from a reload:\nrefreshed %q\nreloaded  %q", refreshed, reloaded)
	}
	b.checkConsole(t)
}
