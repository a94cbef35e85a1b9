package server

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// TestRunningRunPageShowsElapsedAndLeft: the page of a running run says
// when it started, how long it has run and, for a run of --duration, the
// time left (here no progress has come yet: the whole duration, after
// start-up); a run of a count keeps its ETA. The values are the server's
// rendering, which run.js then keeps current from data-started-at,
// data-server-now and data-duration.
func TestRunningRunPageShowsElapsedAndLeft(t *testing.T) {
	ts := newTestServer(t, nil)
	started := time.Now().Add(-90 * time.Second).UTC().Truncate(time.Millisecond)
	mk := func(params string) uint {
		r := &store.Run{Label: "live", Workload: rundoc.Producer, Status: rundoc.StatusRunning, StartedAt: &started,
			Spec: `{"workload":"producer","params":{` + params + `}}`}
		if err := ts.st.CreateRuns(t.Context(), []*store.Run{r}); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	timed, counted := mk(`"duration":60`), mk(`"num-records":1000000`)
	get := func(id uint) string {
		rec := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /runs/%d = %d", id, rec.Code)
		}
		return rec.Body.String()
	}
	span := func(body, id string) string {
		m := regexp.MustCompile(`<span id="` + id + `">([^<]*)</span>`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("the page has no #%s", id)
		}
		return m[1]
	}
	body := get(timed)
	if !strings.Contains(body, `<dd id="run-started">`+ui.FormatTime(started)+`</dd>`) {
		t.Errorf("Started is not the run's start %s", ui.FormatTime(started))
	}
	if !strings.Contains(body, fmt.Sprintf(`data-started-at="%d"`, started.UnixMilli())) || !strings.Contains(body, `data-duration="60"`) ||
		!regexp.MustCompile(`data-server-now="[1-9][0-9]*"`).MatchString(body) {
		t.Error("the live page lacks data-started-at, data-duration or data-server-now for run.js")
	}
	if e := span(body, "progress-elapsed"); e == "—" || !regexp.MustCompile(`^\d+m \d\ds$`).MatchString(e) {
		t.Errorf("elapsed %q, want the time since the start (about 1m 30s)", e)
	}
	if l, v := span(body, "progress-eta-label"), span(body, "progress-eta"); l != "left" || v != ui.FormatDuration(time.Minute)+" after start-up" {
		t.Errorf("%s %q, want left %q", l, v, ui.FormatDuration(time.Minute)+" after start-up")
	}
	body = get(counted)
	if l := span(body, "progress-eta-label"); l != "ETA" || strings.Contains(body, "data-duration=") {
		t.Errorf("a run of a count shows %q and data-duration: want its ETA", l)
	}
	if e := span(body, "progress-elapsed"); e == "—" {
		t.Error("a running run of a count shows no elapsed time")
	}
}
