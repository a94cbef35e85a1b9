package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// e2eImportPerfTest posts one kafka-producer-perf-test summary line to
// /api/import with the run's time and tags, and returns the run's id.
func (s *e2eServer) e2eImportPerfTest(t *testing.T, rate float64, at time.Time, meta ...string) uint {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("label", "perf")
	mw.WriteField("time", at.Format(time.RFC3339))
	for _, m := range meta {
		mw.WriteField("meta", m)
	}
	w, _ := mw.CreateFormFile("output", "perf.txt")
	fmt.Fprintf(w, "1000000 records sent, %.1f records/sec (%.2f MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th.\n",
		rate, rate*512/(1024*1024))
	mw.Close()
	resp, err := s.http.Post(s.URL+"/api/import", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var run struct {
		ID uint `json:"id"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &run) != nil || run.ID == 0 {
		t.Fatalf("import: %d %s", resp.StatusCode, data)
	}
	return run.ID
}

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
