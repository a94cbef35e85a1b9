package acceptance

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestE2EImportOMB: on /import, an OpenMessaging Benchmark result pasted
// with a string where a number belongs comes back with the error naming
// the key, inside the OMB form's section, the text kept and the text box
// marked; corrected, it becomes a run and the browser lands on its page,
// labelled by the result's driver.
func TestE2EImportOMB(t *testing.T) {
	e2eSkip(t)
	sample, err := os.ReadFile("../internal/omb/testdata/kafka-1-topic-16-partitions-1kb.json")
	if err != nil {
		t.Fatal(err)
	}
	good := string(sample)
	bad := strings.Replace(good, `"backlog" : [ 25,`, `"backlog" : [ "25",`, 1)
	if bad == good {
		t.Fatal("the sample changed: the test no longer breaks it")
	}
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	paste := func(text string) {
		t.Helper()
		e2eEval[bool](t, b, "paste the result", `(() => { document.getElementById('f-omb-text').value = `+e2eJS(text)+`; return true; })()`)
	}
	b.do(t, "open the import page",
		chromedp.Navigate(srv.URL+"/import"),
		chromedp.WaitVisible(chromedp.ID("omb-form")),
		chromedp.SendKeys(chromedp.ID("f-omb-meta"), "branch=trunk"),
	)
	paste(bad)
	b.do(t, "submit the bad result", chromedp.Click(chromedp.ID("omb-import")))
	b.waitFor(t, "the page with the result's error", `document.readyState === 'complete' && !!document.getElementById('omb-error')`)
	type state struct {
		Error    string `json:"error"`
		InForm   bool   `json:"inForm"`
		Text     string `json:"text"`
		Meta     string `json:"meta"`
		Invalid  string `json:"invalid"`
		TopError bool   `json:"topError"`
	}
	st := e2eEval[state](t, b, "read the form", `(() => {
		const err = document.getElementById('omb-error'), text = document.getElementById('f-omb-text');
		const form = document.getElementById('omb-form');
		return {error: err.textContent, inForm: err.nextElementSibling === form, text: text.value,
			meta: document.getElementById('f-omb-meta').value, invalid: text.getAttribute('aria-invalid') || '',
			topError: !!document.getElementById('import-error')};
	})()`)
	if !strings.Contains(st.Error, "omb[0].backlog[0]") || !st.InForm || !strings.Contains(st.Text, `"backlog" : [ "25",`) ||
		st.Meta != "branch=trunk" || st.Invalid != "true" || st.TopError {
		t.Fatalf("after the bad result: %+v", st)
	}
	paste(good)
	b.do(t, "submit the corrected result", chromedp.Click(chromedp.ID("omb-import")))
	b.waitFor(t, "the run's page", `document.readyState === 'complete' && /^\/runs\/\d+$/.test(location.pathname)`)
	if h1 := e2eEval[string](t, b, "read the heading", `document.querySelector('h1').textContent`); !strings.Contains(h1, "Kafka") {
		t.Errorf("the run's heading %q, want the driver's label Kafka", h1)
	}
	b.screenshot(t, "import-omb")
	// The refused result came back with status 400, which Chrome logs.
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}
