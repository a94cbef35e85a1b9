package acceptance

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kbench/kbench/client"
)

// TestE2EImportCSV: on /import, a CSV pasted with a bad cell comes back
// with the error naming its line and column, the line at fault and the
// text kept; corrected, it back-fills the series and the browser lands on
// its history.
func TestE2EImportCSV(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	paste := func(csv string) {
		t.Helper()
		e2eEval[bool](t, b, "paste the CSV", `(() => { document.getElementById('f-csv-text').value = `+e2eJS(csv)+`; return true; })()`)
	}
	b.do(t, "open the import page",
		chromedp.Navigate(srv.URL+"/import"),
		chromedp.WaitVisible(chromedp.ID("csv-form")),
		chromedp.SendKeys(chromedp.ID("f-csv-series"), "java-producer"),
	)
	paste("time,commit,record-send-rate\n2024-01-01T10:00:00Z,a,115000\n2024-01-02T10:00:00Z,b,fast\n")
	b.do(t, "submit the bad CSV", chromedp.Click(chromedp.ID("csv-import")))
	b.waitFor(t, "the page with the CSV's error", `document.readyState === 'complete' && !!document.getElementById('csv-error')`)
	type state struct {
		Error   string `json:"error"`
		BadLine string `json:"badLine"`
		Text    string `json:"text"`
		Series  string `json:"series"`
		Invalid string `json:"invalid"`
	}
	st := e2eEval[state](t, b, "read the form", `(() => {
		const bad = document.getElementById('csv-bad-line');
		const text = document.getElementById('f-csv-text');
		return {error: document.getElementById('csv-error').textContent, badLine: bad ? bad.textContent : '',
			text: text.value, series: document.getElementById('f-csv-series').value, invalid: text.getAttribute('aria-invalid') || ''};
	})()`)
	if !strings.Contains(st.Error, "line 3, column 24") || !strings.Contains(st.Error, `"fast"`) || st.BadLine != "3: 2024-01-02T10:00:00Z,b,fast" ||
		!strings.Contains(st.Text, ",b,fast") || st.Series != "java-producer" || st.Invalid != "true" {
		t.Fatalf("after the bad CSV: %+v", st)
	}
	paste("time,commit,record-send-rate\n2024-01-01T10:00:00Z,a,115000\n2024-01-02T10:00:00Z,b,114000\n2024-01-03T10:00:00Z,c,105000\n")
	b.do(t, "submit the corrected CSV", chromedp.Click(chromedp.ID("csv-import")))
	b.waitFor(t, "the series' history", `document.readyState === 'complete' && location.pathname === '/history'`)
	if q := e2eEval[string](t, b, "read the address", `location.search`); q != "?series=java-producer" {
		t.Errorf("landed on /history%s, want ?series=java-producer", q)
	}
	var h client.History
	srv.api(t, http.MethodGet, "/api/history?series=java-producer", nil, http.StatusOK, &h)
	if len(h.Points) != 3 || h.Points[2].Meta["commit"] != "c" {
		t.Errorf("the back-filled series: %+v", h.Points)
	}
	b.screenshot(t, "import-csv")
	// The refused CSV came back with status 400, which Chrome logs.
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}
