package acceptance

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestE2ENewRunTargetFieldsAndErrors: choosing the embedded broker
// disables the cluster and SASL fields (so they are not submitted), the
// cluster choice enables them (SASL only with a SASL protocol), and a
// submit with two bad fields shows both messages, each beside its field.
func TestE2ENewRunTargetFieldsAndErrors(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	b.do(t, "open the new-run form",
		chromedp.Navigate(srv.URL+"/runs/new"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
	)
	type enabled struct {
		Bootstrap bool `json:"bootstrap"`
		Protocol  bool `json:"protocol"`
		Mechanism bool `json:"mechanism"`
		Username  bool `json:"username"`
		Password  bool `json:"password"`
		Label     bool `json:"label"`
	}
	read := func(what string) enabled {
		return e2eEval[enabled](t, b, what, `(() => {
			const on = id => !document.getElementById(id).disabled;
			return {bootstrap: on('f-bootstrap-server'), protocol: on('f-security-protocol'), mechanism: on('f-sasl-mechanism'),
				username: on('f-sasl-username'), password: on('f-sasl-password'), label: on('f-label')};
		})()`)
	}
	if got := read("read the fresh form"); got != (enabled{Label: true}) {
		t.Errorf("embedded broker (the default): enabled %+v, want only the label among these", got)
	}
	b.do(t, "choose a Kafka cluster", chromedp.Click(chromedp.CSS(`input[name="target"][value="bootstrap"]`)))
	if got := read("read after choosing the cluster"); got != (enabled{Bootstrap: true, Protocol: true, Label: true}) {
		t.Errorf("cluster with PLAINTEXT: enabled %+v, want bootstrap servers and protocol, no SASL", got)
	}
	b.do(t, "type a bootstrap server", chromedp.SendKeys(chromedp.ID("f-bootstrap-server"), "kafka-1:9092"))
	e2eEval[bool](t, b, "choose SASL_SSL", `(() => {
		const sel = document.getElementById('f-security-protocol');
		sel.value = 'SASL_SSL';
		sel.dispatchEvent(new Event('change', {bubbles: true}));
		return true;
	})()`)
	if got := read("read after choosing SASL_SSL"); got != (enabled{true, true, true, true, true, true}) {
		t.Errorf("cluster with SASL_SSL: enabled %+v, want every field", got)
	}
	b.do(t, "choose the embedded broker again", chromedp.Click(chromedp.CSS(`input[name="target"][value="embedded"]`)))
	if got := read("read after choosing the embedded broker"); got != (enabled{Label: true}) {
		t.Errorf("embedded broker again: enabled %+v, want the cluster and SASL fields disabled", got)
	}

	// Two bad values: both are reported, each beside its field.
	b.do(t, "fill two bad fields",
		chromedp.SendKeys(chromedp.ID("f-num-records"), "0"),
		chromedp.SendKeys(chromedp.ID("f-record-size"), "0"),
	)
	b.do(t, "submit the form", chromedp.Click(chromedp.CSS(`#run-form button[type="submit"]`)))
	b.waitFor(t, "the form with its errors", `document.readyState === 'complete' && !!document.getElementById('error-summary')`)
	type result struct {
		NumRecords string   `json:"numRecords"`
		RecordSize string   `json:"recordSize"`
		Summary    []string `json:"summary"`
		Bootstrap  string   `json:"bootstrap"`
		Disabled   bool     `json:"disabled"`
	}
	res := e2eEval[result](t, b, "read the errors", `(() => {
		const msg = id => { const e = document.getElementById(id); return e && e.offsetParent !== null ? e.textContent.trim() : ''; };
		return {
			numRecords: msg('f-num-records-error'),
			recordSize: msg('f-record-size-error'),
			summary: Array.from(document.querySelectorAll('#error-summary li')).map(li => li.textContent.replace(/\s+/g, ' ').trim()),
			bootstrap: document.getElementById('f-bootstrap-server').value,
			disabled: document.getElementById('f-bootstrap-server').disabled
		};
	})()`)
	if !strings.Contains(res.NumRecords, "at least 1") || !strings.Contains(res.RecordSize, "at least 1") {
		t.Errorf("field errors: num-records %q, record-size %q; want both shown", res.NumRecords, res.RecordSize)
	}
	if len(res.Summary) != 2 || !strings.HasPrefix(res.Summary[0], "num-records: ") || !strings.HasPrefix(res.Summary[1], "record-size: ") {
		t.Errorf("error summary %q, want num-records and record-size", res.Summary)
	}
	// The disabled cluster field was not submitted, and stays disabled.
	if res.Bootstrap != "" || !res.Disabled {
		t.Errorf("bootstrap servers after the submit: %q (disabled %v), want empty and disabled", res.Bootstrap, res.Disabled)
	}
	var list struct {
		Total int `json:"total"`
	}
	srv.api(t, http.MethodGet, "/api/runs", nil, http.StatusOK, &list)
	if list.Total != 0 {
		t.Errorf("GET /api/runs: total %d after a rejected form, want 0", list.Total)
	}
	b.screenshot(t, "new-run-two-errors")
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}
