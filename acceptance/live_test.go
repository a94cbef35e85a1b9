package acceptance

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
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

// e2eChartRecorder is injected into a live run page: on every redraw of the
// live records/s chart it keeps, in sessionStorage (which outlives the
// reload on "done"), the drawing with the most points: their count, the
// last point's x, the plot's right edge, the time axis' tick labels, and
// whether it is the server's chart (ui.LineChart marks its parts with
// classes such as chart-series).
const e2eChartRecorder = `(() => {
	const key = 'kbench-e2e-chart';
	const box = document.getElementById('live-chart-records');
	if (!box) { return false; }
	sessionStorage.setItem(key, JSON.stringify({points: 0}));
	const record = () => {
		const line = box.querySelector('polyline');
		if (!line) { return; }
		const pts = line.getAttribute('points').trim().split(/\s+/);
		const best = JSON.parse(sessionStorage.getItem(key));
		if (pts.length < best.points) { return; }
		const axis = box.querySelector('svg > g[stroke="#6b7280"] line');
		sessionStorage.setItem(key, JSON.stringify({
			points: pts.length,
			lastX: pts[pts.length - 1].split(',')[0],
			right: axis ? axis.getAttribute('x2') : '',
			labels: Array.from(box.querySelectorAll('.chart-ticks text[y="230.0"]')).map(t => t.textContent),
			server: !!box.querySelector('svg.chart > g.chart-series > polyline')
		}));
	};
	new MutationObserver(record).observe(box, {childList: true, subtree: true});
	record();
	return true;
})()`

// e2eChart is what e2eChartRecorder keeps.
type e2eChart struct {
	Points int      `json:"points"`
	LastX  string   `json:"lastX"`
	Right  string   `json:"right"`
	Labels []string `json:"labels"`
	Server bool     `json:"server"`
}

// TestE2EDefaultRunCharts follows a default producer run, whose measured
// window is about a second (far shorter than the 5 s reporting interval):
// its live page draws the interval chart as points arrive, with the time
// axis ending at the last point, and the finished page has its charts,
// their time axis ending where the data ends too.
func TestE2EDefaultRunCharts(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	blocker := srv.createRun(t, map[string]any{"workload": "producer", "label": "blocker",
		"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})
	id := srv.createRun(t, map[string]any{"workload": "producer", "label": "default"})

	b.do(t, "open the queued run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, id)))
	b.poll(t, "the live connection of the queued run", `document.getElementById('run').getAttribute('data-live') === 'true' &&
		/^Live/.test(document.getElementById('connection-state').textContent)`)
	if !e2eEval[bool](t, b, "record the live chart", e2eChartRecorder) {
		t.Fatalf("the live page has no records chart\n%s", b.state())
	}
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", blocker), nil, http.StatusAccepted, nil)
	b.waitFor(t, "the finished run page", e2eFinalView)

	live := e2eEval[e2eChart](t, b, "read the recorded live chart", `JSON.parse(sessionStorage.getItem('kbench-e2e-chart') || '{}')`)
	t.Logf("live chart at its fullest: %+v", live)
	if live.Points < 2 {
		t.Errorf("the live chart drew at most %d points of a run of about a second, want a line", live.Points)
	}
	if live.Points > 0 && !live.Server {
		t.Errorf("the live chart is not the server's (ui.LineChart): %+v", live)
	}
	if live.Points > 0 && (live.Right == "" || live.LastX != live.Right+".0" && live.LastX != live.Right) {
		t.Errorf("the live chart's last point is at x=%s, the time axis ends at x=%s: the axis should end at the data", live.LastX, live.Right)
	}

	type finalChart struct {
		Title  string   `json:"title"`
		Points int      `json:"points"`
		LastX  string   `json:"lastX"`
		Labels []string `json:"labels"`
	}
	charts := e2eEval[[]finalChart](t, b, "read the result's charts", `Array.from(document.querySelectorAll('figure.chart-box svg')).map(svg => {
		const line = svg.querySelector('polyline');
		const pts = line ? line.getAttribute('points').trim().split(/\s+/) : [];
		return {title: svg.getAttribute('aria-label'), points: pts.length,
			lastX: pts.length ? pts[pts.length - 1].split(',')[0] : '',
			labels: Array.from(svg.querySelectorAll('.chart-ticks text[y="230.0"]')).map(t => t.textContent)};
	})`)
	t.Logf("result charts: %+v", charts)
	if len(charts) < 2 {
		t.Fatalf("the finished default run shows %d interval charts, want records/s and MB/s at least\n%s", len(charts), b.state())
	}
	for _, c := range charts {
		if c.Points < 2 {
			t.Errorf("chart %q draws %d points, want a line", c.Title, c.Points)
		}
		if c.LastX != "620.0" {
			t.Errorf("chart %q: last point at x=%s, want the plot's right edge (620.0): the time axis should end at the data", c.Title, c.LastX)
		}
	}
	// The latency distribution: the run's whole histogram by percentile.
	if !slices.ContainsFunc(charts, func(c finalChart) bool { return c.Title == "Latency by percentile" }) {
		t.Errorf("the finished run shows no latency spectrum among its charts %+v", charts)
	}
	b.screenshot(t, fmt.Sprintf("run-%d-default-charts", id))
	b.checkConsole(t)
}
