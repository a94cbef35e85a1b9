package acceptance

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestE2EHistoryNoEnvMark: three runs of one producer configuration,
// launched through the API on the embedded broker (each run starts its own
// broker, on a port it picks), make one series whose history draws no
// "Δ env" mark and lists nothing under "What else changed": the target is
// the same embedded broker, whatever port it listened on.
func TestE2EHistoryNoEnvMark(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	params := map[string]any{"num-records": 5000, "record-size": 100, "throughput": 20000, "profile": "none"}
	var ids []uint
	for range 3 {
		ids = append(ids, srv.createRun(t, map[string]any{"workload": "producer", "label": "same", "params": params}))
	}
	deadline := time.Now().Add(90 * time.Second)
	for _, id := range ids {
		for {
			s := srv.runStatus(t, id)
			if s == "succeeded" {
				break
			}
			if s != "queued" && s != "running" {
				t.Fatalf("run %d ended %s", id, s)
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d still %s after 90 s", id, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	b.do(t, "open the history", chromedp.Navigate(fmt.Sprintf("%s/history?run=%d", srv.URL, ids[2])))
	b.waitFor(t, "the history page", `document.readyState === 'complete' && !!document.querySelector('svg.chart')`)
	if n := e2eEval[int](t, b, "count the points", `document.querySelectorAll('svg.chart a > circle.chart-point').length`); n != 3 {
		t.Fatalf("%d points, want the 3 runs of one series", n)
	}
	if n := e2eEval[int](t, b, "count the Δ env marks", `document.querySelectorAll('svg.chart .env-mark').length`); n != 0 {
		t.Errorf("%d Δ env marks on a series without real changes, want none", n)
	}
	if s := e2eEval[string](t, b, "read what else changed", `(document.querySelector('.history-marks') || {textContent: ''}).textContent`); s != "" {
		t.Errorf("What else changed lists %q, want nothing", s)
	}
	b.screenshot(t, "history-no-env-mark")

	// The x-axis select redraws the history by time.
	b.do(t, "choose the time axis", chromedp.SetValue(chromedp.ID("history-x"), "time"), chromedp.Click(chromedp.ID("history-apply")))
	b.waitFor(t, "the history by time", `new URLSearchParams(location.search).get('x') === 'time' && document.readyState === 'complete' && !!document.querySelector('svg.chart')`)
	if s := e2eEval[string](t, b, "read the x-axis title", `document.querySelector('svg.chart .chart-xlabel').textContent`); s != "time (UTC)" {
		t.Errorf("x-axis title %q, want time (UTC)", s)
	}

	// The series index, from the navigation, lists the series by its label.
	b.do(t, "open the series index", chromedp.Click(`.site-nav a[href="/series"]`))
	b.waitFor(t, "the series index", `location.pathname === '/series' && document.readyState === 'complete'`)
	row := e2eEval[[]string](t, b, "read the series row", `Array.from(document.querySelectorAll('table.series-index tbody tr')).map(tr => tr.querySelector('.series-name').textContent + '|' + tr.cells[2].textContent + '|' + tr.querySelectorAll('svg.sparkline').length)`)
	if len(row) != 1 || row[0] != "same (producer)|3|1" {
		t.Errorf("series index rows %q, want one: same (producer), 3 runs, a sparkline", row)
	}
	b.screenshot(t, "series")
	b.checkConsole(t)
}
