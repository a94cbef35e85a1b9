package acceptance

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/client"
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
	var list client.RunList
	srv.api(t, http.MethodGet, "/api/runs", nil, http.StatusOK, &list)
	if list.Total != 0 {
		t.Errorf("GET /api/runs: total %d after a rejected form, want 0", list.Total)
	}
	b.screenshot(t, "new-run-two-errors")
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}

// e2eProgressRecorder is injected into a live run page: a MutationObserver on
// the progress bar, the progress text, the phase and the status badge that
// appends what they show to sessionStorage on every change. sessionStorage
// outlives the reload that run.js does on "done", so the finished page can
// still be asked what the live page showed.
const e2eProgressRecorder = `(() => {
	const key = 'kbench-e2e-progress';
	const bar = document.getElementById('progress-bar');
	const text = document.getElementById('progress-text');
	const phase = document.getElementById('progress-phase');
	const badge = document.getElementById('run-status');
	if (!bar || !text || !phase || !badge) { return false; }
	sessionStorage.setItem(key, '[]');
	const record = () => {
		const seen = JSON.parse(sessionStorage.getItem(key) || '[]');
		seen.push({
			text: text.textContent,
			value: bar.getAttribute('value') || '',
			valuetext: bar.getAttribute('aria-valuetext') || '',
			phase: phase.textContent,
			status: badge.textContent
		});
		sessionStorage.setItem(key, JSON.stringify(seen));
	};
	const observer = new MutationObserver(record);
	for (const node of [bar, text, phase, badge]) {
		observer.observe(node, { attributes: true, childList: true, characterData: true, subtree: true });
	}
	record();
	return true;
})()`

// e2eProgress is one state of the live progress display.
type e2eProgress struct {
	Text      string `json:"text"`
	Value     string `json:"value"`
	ValueText string `json:"valuetext"`
	Phase     string `json:"phase"`
	Status    string `json:"status"`
}

// e2eProgressText matches run.js's "150,000 of 200,000 records (75%)" and,
// for a phase without a total, "150,000 records".
var e2eProgressText = regexp.MustCompile(`^([\d,]+)(?: of ([\d,]+))? records(?: \((\d+)%\))?$`)

// e2eCount reads "200,000" as 200000.
func e2eCount(s string) int {
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		return -1
	}
	return n
}

// TestE2ENewRunWatchAndInspect starts a run from the form, follows it live
// on its page until the page turns into the result, and inspects the result:
// metrics, Kafka's output and downloadable profiles.
//
// A 200000-record run on the embedded broker can finish before the browser
// has even loaded the run page, and then there is nothing live to watch. So
// the test first occupies the queue (concurrency 1) with a slow run: the
// form's run waits, queued, while its page connects; the slow run is then
// canceled, and every event of the form's run reaches the page.
func TestE2ENewRunWatchAndInspect(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	blocker := srv.createRun(t, map[string]any{"workload": "producer", "label": "blocker",
		"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})

	// Fill the form.
	b.do(t, "open the new-run form",
		chromedp.Navigate(srv.URL+"/runs/new"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
		chromedp.Click(chromedp.CSS(`input[name="workload"][value="producer"]`)),
		chromedp.SendKeys(chromedp.ID("f-label"), "e2e"),
		chromedp.SendKeys(chromedp.ID("f-num-records"), "200000"),
		chromedp.SendKeys(chromedp.ID("f-record-size"), "100"),
	)
	type profileBox struct {
		Value   string `json:"value"`
		Checked bool   `json:"checked"`
	}
	boxes := e2eEval[[]profileBox](t, b, "read the profile checkboxes",
		`Array.from(document.querySelectorAll('input[type="checkbox"][name="profile"]')).map(i => ({value: i.value, checked: i.checked}))`)
	var ticked []string
	for _, box := range boxes {
		if box.Checked {
			ticked = append(ticked, box.Value)
		}
	}
	if strings.Join(ticked, ",") != "cpu,heap" {
		t.Fatalf("profile boxes ticked by default: %v, want cpu and heap", ticked)
	}
	for id, want := range map[string]string{"f-label": "e2e", "f-num-records": "200000", "f-record-size": "100"} {
		if got := e2eEval[string](t, b, "read "+id, `document.getElementById(`+e2eJS(id)+`).value`); got != want {
			t.Fatalf("#%s holds %q after typing, want %q", id, got, want)
		}
	}

	// Submit: the browser follows the redirect to the run's page.
	start := time.Now()
	b.do(t, "submit the form", chromedp.Click(chromedp.CSS(`#run-form button[type="submit"]`)))
	b.waitFor(t, "the run page", `/^\/runs\/\d+$/.test(location.pathname) && !!document.getElementById('run') && document.readyState === 'complete'`)
	loc := e2eEval[string](t, b, "read the location", `location.pathname`)
	id64, _ := strconv.ParseUint(strings.TrimPrefix(loc, "/runs/"), 10, 32)
	id := uint(id64)
	if id == 0 || id == blocker {
		t.Fatalf("landed on %s, want the new run's page (the blocker is run %d)", loc, blocker)
	}
	t.Logf("run %d created from the form", id)

	// The run waits behind the blocker; its page is live.
	if live := e2eEval[string](t, b, "read data-live", `document.getElementById('run').getAttribute('data-live') || ''`); live != "true" {
		t.Fatalf("run page of a queued run: data-live=%q, want true\n%s", live, b.state())
	}
	b.poll(t, "the live connection", `/^Live/.test(document.getElementById('connection-state').textContent)`)
	if status := e2eEval[string](t, b, "read the status", `document.getElementById('run-status').textContent.trim()`); status != "queued" {
		t.Fatalf("status badge %q while the blocker runs, want queued", status)
	}
	if q := e2eEval[string](t, b, "read the queue position", `(() => { const q = document.getElementById('queue-position'); return q.hidden ? '' : q.textContent; })()`); !strings.Contains(q, "queue") {
		t.Errorf("queue position shows %q, want a visible queue position", q)
	}
	if !e2eEval[bool](t, b, "record the progress", e2eProgressRecorder) {
		t.Fatalf("the live page has no progress display\n%s", b.state())
	}

	// Let the form's run go, and wait for its result to replace the live view.
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", blocker), nil, http.StatusAccepted, nil)
	released := time.Now()
	b.waitFor(t, "the finished run page", e2eFinalView)
	t.Logf("submit → run page live: %v; blocker canceled → finished page: %v",
		released.Sub(start).Round(time.Millisecond), time.Since(released).Round(time.Millisecond))

	seen := e2eEval[[]e2eProgress](t, b, "read the recorded progress",
		`JSON.parse(sessionStorage.getItem('kbench-e2e-progress') || '[]')`)
	var shown []string
	for _, p := range seen {
		shown = append(shown, fmt.Sprintf("[%s | %s | %s | bar %s]", strings.TrimSpace(p.Status), strings.TrimSpace(p.Phase), strings.TrimSpace(p.Text), p.Value))
	}
	t.Logf("the live page showed %d states:\n%s", len(seen), strings.Join(shown, "\n"))
	var sawRunning, saw100, wentBack bool
	measured := 0 // the highest count the measure phase showed
	for _, p := range seen {
		sawRunning = sawRunning || strings.TrimSpace(p.Status) == "running"
		saw100 = saw100 || p.Value == "100" || strings.HasSuffix(p.ValueText, ": 100%")
		m := e2eProgressText.FindStringSubmatch(strings.TrimSpace(p.Text))
		if m == nil {
			continue
		}
		done := e2eCount(m[1])
		if m[2] != "" && e2eCount(m[2]) != 200000 {
			t.Errorf("live progress %q: total %s, want 200,000", p.Text, m[2])
		}
		// No warm-up: once records were measured, no later state may
		// show fewer (the finishing phase must not claim "0 records").
		if measured > 0 && done < measured && !wentBack {
			wentBack = true
			t.Errorf("live progress went back from %d to %q (phase %q) after the measured records were shown",
				measured, strings.TrimSpace(p.Text), strings.TrimSpace(p.Phase))
		}
		if strings.TrimSpace(p.Phase) == "Measuring" && done > measured {
			measured = done
		}
	}
	if !sawRunning || measured == 0 || !saw100 {
		t.Errorf("live view: saw status running %v, a measure progress with done>0 %v, the bar at 100%% %v; want all three",
			sawRunning, measured > 0, saw100)
	}

	// The result.
	if status := e2eEval[string](t, b, "read the status", `document.getElementById('run-status').textContent.trim()`); status != "succeeded" {
		t.Fatalf("finished run's status %q, want succeeded\n%s", status, b.state())
	}
	type metricRow struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	metrics := e2eEval[[]metricRow](t, b, "read the metrics table",
		`Array.from(document.querySelectorAll('table.metrics-table tbody tr')).map(tr => ({
			name: tr.querySelector('th').textContent.trim(),
			value: tr.querySelector('td.num').textContent.trim()}))`)
	var rate string
	for _, m := range metrics {
		if m.Name == "record-send-rate" {
			rate = m.Value
		}
	}
	if v, ok := strings.CutSuffix(rate, " records/s"); !ok {
		t.Errorf("metrics table: record-send-rate shows %q, want a value in records/s (table: %+v)", rate, metrics)
	} else if n, err := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64); err != nil || n <= 0 {
		t.Errorf("metrics table: record-send-rate %q is not a positive number", rate)
	}
	output := e2eEval[string](t, b, "read the output", `(document.getElementById('run-output') || {}).textContent || ''`)
	if !strings.Contains(output, "200000 records sent, ") {
		t.Errorf("Kafka output %q lacks the summary line \"200000 records sent, …\"", output)
	}

	type profileLink struct {
		Role     string `json:"role"`
		Kind     string `json:"kind"`
		Href     string `json:"href"`
		Download string `json:"download"`
	}
	links := e2eEval[[]profileLink](t, b, "read the profile links",
		`(() => {
			const table = document.querySelector('table.profiles-table');
			if (!table) { return []; }
			const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.textContent.trim());
			const cell = (tr, name) => {
				const c = tr.children[heads.indexOf(name)];
				return c ? c.textContent.trim() : '';
			};
			return Array.from(table.querySelectorAll('tbody tr')).map(tr => {
				const a = tr.querySelector('a[download][href]');
				return {role: cell(tr, 'Role'), kind: cell(tr, 'Kind'),
					href: a ? a.getAttribute('href') : '', download: a ? a.getAttribute('download') : ''};
			});
		})()`)
	kinds := map[string]bool{}
	for _, l := range links {
		kinds[l.Role+"/"+l.Kind] = true
		if l.Href == "" {
			t.Errorf("profile %s/%s has no download link", l.Role, l.Kind)
			continue
		}
		e2eCheckProfile(t, srv, l.Href, l.Download, l.Kind)
	}
	if !kinds["client/cpu"] || !kinds["client/heap"] {
		t.Errorf("profiles listed: %+v, want the client's cpu and heap", links)
	}

	b.screenshot(t, fmt.Sprintf("run-%d-finished", id))
	b.checkConsole(t)
}

// e2eCheckProfile fetches a profile link as a browser would follow it
// and checks it is a pprof profile of the kind the page says.
func e2eCheckProfile(t *testing.T, srv *e2eServer, href, download, kind string) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := url.Parse(href)
	if err != nil {
		t.Errorf("profile link %q: %v", href, err)
		return
	}
	resp, err := srv.http.Get(u.ResolveReference(ref).String())
	if err != nil {
		t.Errorf("GET %s: %v", href, err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: status %d, %v", href, resp.StatusCode, err)
		return
	}
	if cd := resp.Header.Get("Content-Disposition"); download == "" || !strings.Contains(cd, `filename="`+download+`"`) {
		t.Errorf("GET %s: Content-Disposition %q, want the link's download name %q", href, cd, download)
	}
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Errorf("GET %s: %d bytes that pprof cannot parse: %v", href, len(data), err)
		return
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	want := map[string]string{"cpu": "cpu", "heap": "inuse_space"}[kind]
	if want != "" && !strings.Contains(" "+strings.Join(types, " ")+" ", " "+want+" ") {
		t.Errorf("GET %s: a %s profile with sample types %v, want %s among them", href, kind, types, want)
	}
}

// TestE2EFormErrors submits the form with a bad number: the form comes back
// with the error next to the field, the other values kept, and no run.
func TestE2EFormErrors(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	b.do(t, "open the new-run form",
		chromedp.Navigate(srv.URL+"/runs/new"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
		chromedp.SendKeys(chromedp.ID("f-label"), "keep me"),
	)
	// num-records is <input type="number">: Chrome drops letters typed into
	// it, and a value set from script is sanitized to "". Make it a text
	// field, as a browser without number inputs has, to send "abc".
	e2eEval[bool](t, b, "make num-records a text field", `(() => { document.getElementById('f-num-records').type = 'text'; return true; })()`)
	b.do(t, "type abc", chromedp.SendKeys(chromedp.ID("f-num-records"), "abc"))
	if v := e2eEval[string](t, b, "read num-records", `document.getElementById('f-num-records').value`); v != "abc" {
		t.Fatalf("num-records holds %q, want abc", v)
	}
	b.do(t, "submit the form", chromedp.Click(chromedp.CSS(`#run-form button[type="submit"]`)))
	b.waitFor(t, "the form with its errors", `document.readyState === 'complete' && !!document.getElementById('error-summary')`)

	type formState struct {
		Path        string `json:"path"`
		Label       string `json:"label"`
		NumRecords  string `json:"numRecords"`
		Invalid     string `json:"invalid"`
		DescribedBy string `json:"describedBy"`
		FieldError  string `json:"fieldError"`
		ErrorID     string `json:"errorID"`
		ErrorShown  bool   `json:"errorShown"`
		Summary     string `json:"summary"`
		SummaryItem string `json:"summaryItem"`
		SummaryLink string `json:"summaryLink"`
		Focused     string `json:"focused"`
		Workload    string `json:"workload"`
		Profiles    string `json:"profiles"`
	}
	st := e2eEval[formState](t, b, "read the form", `(() => {
		const input = document.getElementById('f-num-records');
		const err = input.closest('.field').querySelector('.field-error');
		const link = document.querySelector('#error-summary a[href]');
		const workload = document.querySelector('input[name="workload"]:checked');
		return {
			path: location.pathname,
			label: document.getElementById('f-label').value,
			numRecords: input.value,
			invalid: input.getAttribute('aria-invalid') || '',
			describedBy: input.getAttribute('aria-describedby') || '',
			fieldError: err ? err.textContent.trim() : '',
			errorID: err ? err.id : '',
			errorShown: !!err && err.offsetParent !== null && err.getBoundingClientRect().height > 0,
			summary: document.getElementById('error-summary').textContent.replace(/\s+/g, ' ').trim(),
			summaryItem: Array.from(document.querySelectorAll('#error-summary li')).map(li => li.textContent.replace(/\s+/g, ' ').trim()).join(' | '),
			summaryLink: link ? link.getAttribute('href') : '',
			focused: document.activeElement ? document.activeElement.id : '',
			workload: workload ? workload.value : '',
			profiles: Array.from(document.querySelectorAll('input[type="checkbox"][name="profile"]:checked')).map(i => i.value).join(',')
		};
	})()`)
	if st.Path != "/runs" {
		t.Errorf("after the bad form the browser is at %s, want /runs (the form re-rendered, no redirect to a run)", st.Path)
	}
	if !strings.Contains(st.FieldError, `"abc"`) || !st.ErrorShown {
		t.Errorf("num-records field error %q (shown %v), want a visible message quoting the bad value", st.FieldError, st.ErrorShown)
	}
	// One line per field, "<field>: <message>", the field named once.
	if !strings.HasPrefix(st.SummaryItem, "num-records: ") || strings.Contains(st.SummaryItem, "num-records: num-records") ||
		!strings.Contains(st.SummaryItem, `"abc"`) {
		t.Errorf("error summary line %q, want \"num-records: <message about \"abc\">\" naming the field once", st.SummaryItem)
	}
	if st.Invalid != "true" || st.ErrorID == "" || !strings.Contains(" "+st.DescribedBy+" ", " "+st.ErrorID+" ") {
		t.Errorf("num-records: aria-invalid=%q aria-describedby=%q, want invalid and described by the error %q", st.Invalid, st.DescribedBy, st.ErrorID)
	}
	if st.SummaryLink != "#f-num-records" {
		t.Errorf("error summary %q links to %q, want #f-num-records", st.Summary, st.SummaryLink)
	}
	if st.Focused != "error-summary" {
		t.Errorf("focus on %q after the bad submit, want the error summary (new_run.js focuses it)", st.Focused)
	}
	if st.Label != "keep me" || st.NumRecords != "abc" {
		t.Errorf("re-rendered form: label %q, num-records %q; want the values sent, \"keep me\" and \"abc\"", st.Label, st.NumRecords)
	}
	if st.Workload != "producer" || st.Profiles != "cpu,heap" {
		t.Errorf("re-rendered form: workload %q, profiles %q; want producer and cpu,heap kept", st.Workload, st.Profiles)
	}

	var list client.RunList
	srv.api(t, http.MethodGet, "/api/runs", nil, http.StatusOK, &list)
	if list.Total != 0 {
		t.Errorf("GET /api/runs: total %d after a rejected form, want 0", list.Total)
	}
	b.screenshot(t, "new-run-form-errors")
	// The re-rendered form comes with status 400, which Chrome logs.
	b.checkConsole(t, regexp.MustCompile(`status of 400`))
}
