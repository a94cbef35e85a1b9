package acceptance

import (
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestE2ELatencyTarget: a latency-target search started from /slos in
// Chromium (tiny producer runs on the embedded broker, a max_rate far
// above what it can reach, precision 100 % so that the first pass after
// a failure answers) runs to its answer; its page says it, draws failed
// and passed runs linked to their runs, lists every run with its
// verdict, and saves as a report that shows the search.
func TestE2ELatencyTarget(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	b.do(t, "open the runs list", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/slos"]`)))
	b.do(t, "follow the nav entry", chromedp.Click(chromedp.CSS(`a[href="/slos"]`)))
	b.waitFor(t, "the search page", `location.pathname === '/slos' && !!document.getElementById('slo-form')`)
	b.do(t, "fill the form",
		chromedp.SetValue(chromedp.ID("f-label"), "trunk"),
		chromedp.SetValue(chromedp.ID("f-params"), `{"workload": "producer", "num-records": 3000, "record-size": 100, "profile": ["none"]}`),
		chromedp.SetValue(chromedp.ID("f-latency_ms"), "1000"),
		chromedp.SetValue(chromedp.ID("f-precision_pct"), "100"),
		chromedp.SetValue(chromedp.ID("f-max_rate"), "20000000"))
	b.do(t, "click Start search", chromedp.Click(chromedp.ID("slo-submit")))
	b.waitFor(t, "the search's page", `/^\/slos\/[0-9a-f]{12}$/.test(location.pathname)`)
	b.waitFor(t, "the answer", `document.readyState === 'complete' && document.getElementById('slo-phase').dataset.phase === 'done' && !document.querySelector('meta[http-equiv="refresh"]')`)
	b.screenshot(t, "slo-result")

	answer := e2eEval[string](t, b, "read the answer", `document.getElementById('slo-answer').textContent`)
	if !regexp.MustCompile(`between [0-9,.]+ records/s \(met it\) and [0-9,.]+ records/s \(missed it\)`).MatchString(answer) {
		t.Errorf("answer %q, want a bracket", answer)
	}
	verdicts := e2eEval[[]string](t, b, "read the verdicts", `Array.from(document.querySelectorAll('#slo-runs tbody tr')).map(r => r.dataset.verdict)`)
	if len(verdicts) < 2 || verdicts[0] != "fail" || verdicts[len(verdicts)-1] != "pass" {
		t.Errorf("verdicts %q, want failures from the top down to one pass", verdicts)
	}
	for i, v := range verdicts[:len(verdicts)-1] {
		if v != "fail" {
			t.Errorf("run %d: %q before the pass, want fail (halving from the top)", i, v)
		}
	}
	dots := e2eEval[[]string](t, b, "read the chart's links", `Array.from(document.querySelectorAll('#slo-chart svg.chart .chart-points a')).map(a => a.getAttribute('href'))`)
	if len(dots) != len(verdicts) {
		t.Errorf("%d dots for %d runs", len(dots), len(verdicts))
	}
	for _, h := range dots {
		if !regexp.MustCompile(`^/runs/[0-9]+$`).MatchString(h) {
			t.Errorf("a dot links to %q, want a run", h)
		}
	}
	b.do(t, "save as report", chromedp.Click(chromedp.ID("save-report")))
	b.waitFor(t, "the report", `location.pathname.startsWith('/r/') && !!document.getElementById('report-slo')`)
	if got := e2eEval[string](t, b, "read the report's answer", `document.querySelector('#report-slo #slo-answer').textContent`); got != answer {
		t.Errorf("the report says %q, the search %q", got, answer)
	}
	b.checkConsole(t)
}
