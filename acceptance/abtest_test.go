package acceptance

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kbench/kbench/ui"
)

// TestE2EABComparison: on the new-run form, "Add a configuration to
// compare" adds a configuration in the page (and "Remove" takes one away,
// renumbering the rest); the form submits both configurations, the user
// lands on their comparison by group, which reloads itself until the runs
// have finished; then "Add interleaved repetitions" queues one more run of
// each and comes back to the grown comparison.
func TestE2EABComparison(t *testing.T) {
	e2eSkip(t)
	t.Parallel() // waits on its processes most of the time: see test.sh
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	b.do(t, "open the new-run form",
		chromedp.Navigate(srv.URL+"/runs/new"),
		chromedp.WaitVisible(chromedp.ID("add-config")))
	b.do(t, "add two configurations", chromedp.Click(chromedp.ID("add-config")), chromedp.Click(chromedp.ID("add-config")))
	type fieldset struct {
		ID     string `json:"id"`
		Letter string `json:"letter"`
		Label  string `json:"label"`
		Params string `json:"params"`
		Remove string `json:"remove"`
	}
	const readSets = `Array.from(document.querySelectorAll('#config-list .config-fieldset')).map(fs => ({
		id: fs.id, letter: fs.querySelector('legend .config-letter').textContent,
		label: fs.querySelector('input').name, params: fs.querySelector('textarea').name,
		remove: fs.querySelector('[data-remove-config]').value}))`
	sets := e2eEval[[]fieldset](t, b, "read the configurations", readSets)
	if path := e2eEval[string](t, b, "read the location", `location.pathname`); path != "/runs/new" || len(sets) != 2 ||
		sets[1] != (fieldset{"config-2", "C", "configs[2].label", "configs[2].params", "2"}) {
		t.Fatalf("after two clicks on %s: %+v, want configurations B and C added in the page", path, sets)
	}
	b.do(t, "remove B", chromedp.Click(`#config-1 [data-remove-config]`))
	sets = e2eEval[[]fieldset](t, b, "read the configurations", readSets)
	if len(sets) != 1 || sets[0] != (fieldset{"config-1", "B", "configs[1].label", "configs[1].params", "1"}) {
		t.Fatalf("after removing B: %+v, want C renumbered as B", sets)
	}
	if id := e2eEval[string](t, b, "read the label's id", `document.querySelector('#config-1 input').id + ' ' + document.querySelector('#config-1 label').htmlFor`); id != "f-configs-1-label f-configs-1-label" {
		t.Errorf("renumbered label: id and for %q", id)
	}
	b.do(t, "fill both configurations",
		chromedp.SetValue(chromedp.ID("f-label"), "A"),
		chromedp.SetValue(chromedp.ID("f-num-records"), "300"),
		chromedp.SetValue(chromedp.ID("f-repetitions"), "1"),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('input[name="profile"][type="checkbox"]').forEach(c => { c.checked = false; })`),
		chromedp.SetValue(chromedp.ID("f-configs-1-label"), "B"),
		chromedp.SetValue(chromedp.ID("f-configs-1-params"), "record-size=64"))
	b.screenshot(t, "ab-form")
	b.do(t, "start the runs", chromedp.Click(`.form-actions .button-primary`))
	b.waitFor(t, "the comparison page", `location.pathname === '/compare'`)
	q, _ := url.ParseQuery(strings.TrimPrefix(e2eEval[string](t, b, "read the query", `location.search`), "?"))
	if q.Get("by") != "group" || len(strings.Split(q.Get("runs"), ",")) != 2 {
		t.Fatalf("landed on /compare?%s, want the two runs by group", q.Encode())
	}

	// The page reloads itself until both runs have finished.
	const finished = `document.readyState === 'complete' && !document.getElementById('compare-progress') && !!document.getElementById('comparison')`
	b.waitFor(t, "the finished comparison", finished)
	heads := e2eEval[[]string](t, b, "read the columns", `Array.from(document.querySelectorAll('#comparison thead .col-name')).map(e => e.textContent)`)
	if strings.Join(heads, ",") != "A,B" {
		t.Fatalf("columns %q, want A,B", heads)
	}
	if notes := e2eEval[string](t, b, "read the notes", `document.getElementById('table-notes').innerText`); strings.Contains(notes, "interleaved") {
		t.Errorf("interleaved runs are said not to be: %s", notes)
	}
	// N starts at the table's own suggestion when it shows one (how many
	// depends on the noise of these two real runs), else at the default,
	// and never above the form's maximum.
	type nForm struct{ N, Max, Suggested string }
	nf := e2eEval[nForm](t, b, "read N", `({n: document.getElementById('add-reps-n').value, max: document.getElementById('add-reps-n').max,
		suggested: (document.getElementById('add-reps-suggested') || {}).textContent || ''})`)
	want := strconv.Itoa(ui.DefaultAddRepetitions)
	if m := regexp.MustCompile(`needs about (\d+) more`).FindStringSubmatch(nf.Suggested); m != nil {
		want = m[1]
	} else if nf.Suggested != "" {
		t.Errorf("suggestion %q does not say a number", nf.Suggested)
	}
	if w, _ := strconv.Atoi(want); nf.Max != "" {
		if mx, err := strconv.Atoi(nf.Max); err == nil && mx < w {
			want = nf.Max
		}
	}
	if nf.N != want {
		t.Errorf("repetitions to add default to %q (max %s, suggestion %q), want %s", nf.N, nf.Max, nf.Suggested, want)
	}
	b.screenshot(t, "ab-compare")
	b.do(t, "add one interleaved repetition",
		chromedp.SetValue(chromedp.ID("add-reps-n"), "1"),
		chromedp.Click(chromedp.ID("add-repetitions-button")))
	b.waitFor(t, "the grown comparison", `location.pathname === '/compare' && new URLSearchParams(location.search).get('runs').split(',').length === 4`)
	b.waitFor(t, "the grown comparison, finished", finished)
	runs := e2eEval[[]int](t, b, "count each column's runs", `Array.from(document.querySelectorAll('#comparison thead th .col-runs')).map(e => e.querySelectorAll('a').length)`)
	if len(runs) != 2 || runs[0] != 2 || runs[1] != 2 {
		t.Errorf("runs per column %v, want 2 and 2", runs)
	}
	b.screenshot(t, "ab-compare-grown")
	b.checkConsole(t)
}
