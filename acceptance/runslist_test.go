package acceptance

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestE2ELiveTimeAndWorkloadFilter follows a run of --duration live in
// the browser, loaded while it waits in the queue: once it runs, the page
// shows when it started, the time since and the time left (run.js, not a
// reload). Then the runs list's workload filter, used as a user would:
// choosing e2e lists the e2e run alone, choosing producer the producer's.
func TestE2ELiveTimeAndWorkloadFilter(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	e2eRun := srv.createRun(t, map[string]any{"workload": "e2e", "label": "through",
		"params": map[string]any{"num-records": 3000, "record-size": 100, "profile": "none"}})
	timed := srv.createRun(t, map[string]any{"workload": "producer", "label": "timed",
		"params": map[string]any{"duration": 8, "throughput": 2000, "record-size": 100, "profile": "none"}})

	b.do(t, "open the timed run's page", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, timed)), chromedp.WaitVisible(chromedp.ID("progress")))
	b.waitFor(t, "the started time, elapsed time and time left", `(() => {
		const text = id => (document.getElementById(id) || {}).textContent || '';
		return text('progress-eta-label') === 'left' && /\d/.test(text('progress-eta')) &&
			/\d/.test(text('progress-elapsed')) && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(text('run-started'));
	})()`)

	deadline := time.Now().Add(90 * time.Second)
	for _, id := range []uint{e2eRun, timed} {
		for s := srv.runStatus(t, id); s != "succeeded"; s = srv.runStatus(t, id) {
			if s != "queued" && s != "running" || time.Now().After(deadline) {
				t.Fatalf("run %d: %s", id, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	for _, tt := range []struct {
		workload string
		want     uint
	}{{"e2e", e2eRun}, {"producer", timed}} {
		b.do(t, "filter the runs by "+tt.workload,
			chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("filter-workload")),
			chromedp.SetValue(chromedp.ID("filter-workload"), tt.workload),
			chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
		b.waitFor(t, "the filtered list", `location.search.includes('workload=`+tt.workload+`') && document.readyState === 'complete'`)
		rows := e2eEval[[]string](t, b, "read the rows", `Array.from(document.querySelectorAll('#runs-table tbody tr')).map(tr => tr.getAttribute('data-run-id') + ' ' + tr.children[2].textContent.trim())`)
		if want := fmt.Sprintf("%d %s", tt.want, tt.workload); strings.Join(rows, ",") != want {
			t.Errorf("filtered by %s, the list shows %v, want %q", tt.workload, rows, want)
		}
	}
	srv.api(t, http.MethodGet, "/api/runs?workload=e2e", nil, http.StatusOK, nil)
}
