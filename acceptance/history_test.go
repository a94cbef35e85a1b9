package acceptance

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestE2EHistory back-fills the KAFKA-14020 story with a second, weaker
// step (20 runs near 115,000 records/s, 25 near 105,000, 15 near 103,000,
// ±2%), opens the history page, and checks that it draws every point
// linked to its run and a marker for each change point; that the strong
// marker opens the before/after comparison, split at the right run, which
// saves as a report with the same columns; and that a stricter maximum
// p-value set in the page's form removes the weak marker.
func TestE2EHistory(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	rng := rand.New(rand.NewPCG(14020, 2))
	t0 := time.Date(2022, 5, 1, 10, 0, 0, 0, time.UTC)
	var ids []uint
	for i := 0; i < 60; i++ {
		base := 115000.0
		switch {
		case i >= 45:
			base = 103000
		case i >= 20:
			base = 105000
		}
		rate := base * (1 + 0.02*(2*rng.Float64()-1))
		ids = append(ids, srv.e2eImportPerfTest(t, rate, t0.Add(time.Duration(i)*24*time.Hour), fmt.Sprintf("commit=c%d", i), "branch=trunk"))
	}

	// From a run's page to its history.
	b.do(t, "open a run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, ids[7])), chromedp.WaitVisible(chromedp.CSS("a.history-link")))
	b.do(t, "follow its history link", chromedp.Click(chromedp.CSS("a.history-link")))
	b.waitFor(t, "the history page", `location.pathname === '/history' && document.readyState === 'complete' && !!document.querySelector('svg.chart')`)
	if n := e2eEval[int](t, b, "count the points", `document.querySelectorAll('svg.chart a > circle.chart-point').length`); n != 60 {
		t.Errorf("%d linked points, want 60", n)
	}
	if href := e2eEval[string](t, b, "read the last point's link", `Array.from(document.querySelectorAll('svg.chart a > circle.chart-point')).pop().parentNode.getAttribute('href')`); href != fmt.Sprintf("/runs/%d", ids[59]) {
		t.Errorf("the last point links %q, want run %d", href, ids[59])
	}
	markers := func() []string {
		return e2eEval[[]string](t, b, "read the markers", `Array.from(document.querySelectorAll('svg.chart a.chart-mark-link > .cp-mark')).map(m => m.parentNode.getAttribute('href'))`)
	}
	got := markers()
	if len(got) != 2 {
		t.Fatalf("%d change-point markers %q, want 2 (the KAFKA-14020 step and the weaker one)", len(got), got)
	}
	if !strings.Contains(got[0], fmt.Sprintf("at=%d&", ids[20])) || !strings.Contains(got[0], "by=change") {
		t.Errorf("the first marker links %q, want the comparison split at run %d", got[0], ids[20])
	}
	if rows := e2eEval[[]string](t, b, "read the change table", `Array.from(document.querySelectorAll('table.history-changes tbody tr')).map(r => r.cells[3].textContent)`); len(rows) != 2 || rows[0] != "c19..c20" {
		t.Errorf("change table commit ranges %q, want c19..c20 first", rows)
	}
	b.screenshot(t, "history")
	b.checkConsole(t)

	// The marker opens the before/after comparison.
	b.do(t, "click the first marker", chromedp.Click(chromedp.CSS("svg.chart a.chart-mark-link text")))
	b.waitFor(t, "the comparison", `location.pathname === '/compare' && document.readyState === 'complete' && !!document.getElementById('comparison')`)
	heads := e2eEval[[]string](t, b, "read the column heads", `Array.from(document.querySelectorAll('#comparison thead th .col-name')).map(e => e.textContent)`)
	if want := []string{fmt.Sprintf("before #%d", ids[20]), fmt.Sprintf("from #%d", ids[20])}; strings.Join(heads, "|") != strings.Join(want, "|") {
		t.Errorf("comparison columns %q, want %q", heads, want)
	}
	table := e2eEval[[][]string](t, b, "read the table", e2eTableJS)
	b.do(t, "save it as a report", chromedp.SetValue(chromedp.ID("report-title"), "KAFKA-14020"), chromedp.Click(chromedp.ID("save-report")))
	b.waitFor(t, "the report page", `/^\/r\/[a-z2-7]{26}$/.test(location.pathname) && document.readyState === 'complete' && !!document.getElementById('comparison')`)
	if got := e2eEval[[][]string](t, b, "read the report's table", e2eTableJS); fmt.Sprint(got) != fmt.Sprint(table) {
		t.Errorf("the report's table differs from the comparison:\n%q\nvs\n%q", got, table)
	}

	// A stricter p-value in the page's form leaves the strong change only.
	b.do(t, "back to the history", chromedp.Navigate(fmt.Sprintf("%s/history?run=%d", srv.URL, ids[7])), chromedp.WaitVisible(chromedp.ID("history-pvalue")))
	b.do(t, "set max p-value 1e-12", chromedp.SetValue(chromedp.ID("history-pvalue"), "1e-12"), chromedp.Click(chromedp.ID("history-apply")))
	b.waitFor(t, "the stricter history", `new URLSearchParams(location.search).get('max_pvalue') === '1e-12' && document.readyState === 'complete' && !!document.querySelector('svg.chart')`)
	if got := markers(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("at=%d&", ids[20])) {
		t.Errorf("markers with max_pvalue=1e-12: %q, want only the one at run %d", got, ids[20])
	}
	if v := e2eEval[string](t, b, "read the field", `document.getElementById('history-pvalue').value`); v != "1e-12" {
		t.Errorf("the form shows max p-value %q, want 1e-12", v)
	}
	b.screenshot(t, "history-strict")
	b.checkConsole(t)
}

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
