package acceptance

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kbench/kbench/client"
)

// TestE2ELiveTimeAndWorkloadFilter follows a run of --duration live in
// the browser, loaded while it waits in the queue: once it runs, the page
// shows when it started, the time since and the time left (run.js, not a
// reload). Then the runs list's workload filter, used as a user would:
// choosing e2e lists the e2e run alone, choosing producer the producer's.
func TestE2ELiveTimeAndWorkloadFilter(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	e2eRun := srv.createRun(t, map[string]any{"workload": "e2e", "label": "through",
		"params": map[string]any{"num-records": 3000, "record-size": 100, "profile": "none"}})
	timed := srv.createRun(t, map[string]any{"workload": "producer", "label": "timed",
		"params": map[string]any{"duration": 8, "throughput": 2000, "record-size": 100, "profile": "none"}})

	b.do(t, "open the timed run's page", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, timed)), chromedp.WaitVisible(chromedp.ID("progress")))
	b.waitFor(t, "the started time, elapsed time and time left", `(() => {
		const text = id => (document.getElementById(id) || {}).textContent || '';
		return text('progress-eta-label') === 'left' && /\d/.test(text('progress-eta')) &&
			/\d/.test(text('progress-elapsed')) && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(text('run-started'));
	})()`)

	deadline := time.Now().Add(90 * time.Second)
	for _, id := range []uint{e2eRun, timed} {
		for s := srv.runStatus(t, id); s != "succeeded"; s = srv.runStatus(t, id) {
			if s != "queued" && s != "running" || time.Now().After(deadline) {
				t.Fatalf("run %d: %s", id, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// The run's page reloads itself when the run ends (run.js); leaving
	// it before that reload would race it, and the browser aborts one of
	// the two navigations.
	b.waitFor(t, "the timed run's page reloaded as finished", `document.readyState === 'complete' && !document.getElementById('progress')`)

	for _, tt := range []struct {
		workload string
		want     uint
	}{{"e2e", e2eRun}, {"producer", timed}} {
		b.do(t, "filter the runs by "+tt.workload,
			chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("filter-workload")),
			chromedp.SetValue(chromedp.ID("filter-workload"), tt.workload),
			chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
		b.waitFor(t, "the filtered list", `location.search.includes('workload=`+tt.workload+`') && document.readyState === 'complete'`)
		rows := e2eEval[[]string](t, b, "read the rows", `Array.from(document.querySelectorAll('#runs-table tbody tr')).map(tr => tr.getAttribute('data-run-id') + ' ' + tr.children[2].textContent.trim())`)
		if want := fmt.Sprintf("%d %s", tt.want, tt.workload); strings.Join(rows, ",") != want {
			t.Errorf("filtered by %s, the list shows %v, want %q", tt.workload, rows, want)
		}
	}
	srv.api(t, http.MethodGet, "/api/runs?workload=e2e", nil, http.StatusOK, nil)
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

// TestE2ERunsLabelOneLine: in the runs list (a full row: throughput,
// latency, a repetition group) a short label such as kafka-go-conn
// stays on one line.
func TestE2ERunsLabelOneLine(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	var created client.Created
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
