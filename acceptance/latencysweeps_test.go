package acceptance

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestE2ELatencySweep: a sweep of two labels started from /sweeps (tiny
// producer runs, two rates, one repetition), its page waited on until
// both phases end; in Chromium each of the three charts draws one line
// per label, and following a chart's point opens that point's run.
func TestE2ELatencySweep(t *testing.T) {
	e2eSkip(t)
	t.Parallel() // waits on its processes most of the time: see test.sh
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	b.do(t, "open the runs list", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/sweeps"]`)))
	b.do(t, "follow the nav entry", chromedp.Click(chromedp.CSS(`a[href="/sweeps"]`)))
	b.waitFor(t, "the sweeps page", `location.pathname === '/sweeps' && !!document.getElementById('sweep-form')`)
	params := `{"workload": "producer", "num-records": 3000, "record-size": 100, "profile": ["none"]}`
	b.do(t, "fill the form",
		chromedp.SetValue(chromedp.ID("f-label-0"), "trunk"),
		chromedp.SetValue(chromedp.ID("f-params-0"), params),
		chromedp.SetValue(chromedp.ID("f-label-1"), "linger"),
		chromedp.SetValue(chromedp.ID("f-params-1"), strings.Replace(params, `"profile"`, `"producer-props": ["linger.ms=5"], "profile"`, 1)),
		chromedp.SetValue(chromedp.ID("f-rates"), "30, 60"),
		chromedp.SetValue(chromedp.ID("f-repetitions"), "1"))
	b.do(t, "click Start sweep", chromedp.Click(chromedp.ID("sweep-submit")))
	b.waitFor(t, "the sweep page", `/^\/sweeps\/[0-9a-f]{12}$/.test(location.pathname)`)
	b.waitFor(t, "both phases ended", `document.readyState === 'complete' && document.getElementById('sweep-phase').dataset.phase === 'done' && !document.querySelector('meta[http-equiv="refresh"]')`)
	b.screenshot(t, "sweep-result")

	lines := e2eEval[[]int](t, b, "count each chart's lines", `Array.from(document.querySelectorAll('#sweep-charts svg.chart')).map(s => s.querySelectorAll('.chart-series polyline').length)`)
	if len(lines) != 3 {
		t.Fatalf("%d charts, want 3 (p50, p99, p99.9)", len(lines))
	}
	for i, n := range lines {
		if n != 2 {
			t.Errorf("chart %d draws %d lines, want one per label (2)", i, n)
		}
	}
	legend := e2eEval[[]string](t, b, "read the legend", `Array.from(document.querySelectorAll('#sweep-charts svg.chart')[0].querySelectorAll('.chart-legend text')).map(e => e.textContent)`)
	if strings.Join(legend, ",") != "trunk,linger" {
		t.Errorf("legend %q, want trunk, linger", legend)
	}
	hrefs := e2eEval[[]string](t, b, "read the points' links", `Array.from(document.querySelectorAll('#sweep-charts svg.chart')[1].querySelectorAll('.chart-points a')).map(a => a.getAttribute('href'))`)
	if len(hrefs) != 4 {
		t.Fatalf("points %q, want 4 linked runs (2 labels × 2 rates)", hrefs)
	}
	for _, h := range hrefs {
		if !regexp.MustCompile(`^/runs/[0-9]+$`).MatchString(h) {
			t.Errorf("point links to %q, want a run", h)
		}
	}
	// The sweep's chart text renders at the size of every other chart's
	// (issue 23 item 17: it was about twice as large): measured as the
	// title's font size times the SVG's scale on screen, here and on the
	// run page the point opens.
	sweepPx := e2eEval[float64](t, b, "measure the sweep chart's title", chartTitlePx(`#sweep-charts svg.chart`))
	// Clicking lands on whichever point is drawn on top where the first
	// one is (points of two labels can overlap): any of the chart's runs.
	b.do(t, "follow a point", chromedp.Click(chromedp.CSS(`#sweep-charts svg.chart .chart-points a circle`)))
	linked, err := json.Marshal(hrefs)
	if err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "a point's run page", string(linked)+`.includes(location.pathname)`)
	b.waitFor(t, "the run's interval charts", `!!document.querySelector('section[aria-labelledby="charts-heading"] svg.chart')`)
	runPx := e2eEval[float64](t, b, "measure the run chart's title", chartTitlePx(`section[aria-labelledby="charts-heading"] svg.chart`))
	t.Logf("chart titles render at %.2f px on the sweep page, %.2f px on a run page", sweepPx, runPx)
	if math.Abs(sweepPx-runPx) > 0.5 || runPx <= 0 {
		t.Errorf("the sweep's chart titles render at %.2f px, a run's at %.2f px: want the same size", sweepPx, runPx)
	}
	b.checkConsole(t)
}

// chartTitlePx is a script giving the on-screen font size, in CSS pixels,
// of the title of the first chart sel matches: its font-size attribute
// (SVG units) times the SVG's scale.
func chartTitlePx(sel string) string {
	return `(() => { const svg = document.querySelector(` + "`" + sel + "`" + `); const t = svg.querySelector('.chart-title');
		return parseFloat(t.getAttribute('font-size')) * svg.getScreenCTM().a; })()`
}
