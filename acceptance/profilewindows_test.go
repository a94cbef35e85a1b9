package acceptance

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestE2EProfileWindowSelection: a 9 s producer run records its client
// CPU profile in windows by default; on its page a drag over the records
// per second chart from 2.5 s to 5.5 s links to the flame graph of the
// windows it covers, 2-4 and 4-6, as the profile page's
// tagfocus=window=^(2-4|4-6)$, and names the flame graph API request of
// that selection, whose answer holds part of the profile: the samples of
// those windows.
func TestE2EProfileWindowSelection(t *testing.T) {
	e2eSkip(t)
	t.Parallel() // waits on its processes most of the time: see test.sh
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.createRun(t, map[string]any{"workload": "producer", "label": "windows",
		"params": map[string]any{"duration": 9, "throughput": 20000, "record-size": 256, "profile": "cpu"}})
	deadline := time.Now().Add(2 * time.Minute)
	for st := srv.runStatus(t, id); st != "succeeded"; st = srv.runStatus(t, id) {
		if st == "failed" || st == "canceled" || time.Now().After(deadline) {
			t.Fatalf("run %d: %s", id, st)
		}
		time.Sleep(200 * time.Millisecond)
	}

	b.do(t, "open the run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, id)))
	b.waitFor(t, "the selectable charts", `document.querySelector("#window-charts svg[data-x-lo]") !== null`)
	names := e2eEval[string](t, b, "the windows", `document.getElementById("window-charts").dataset.windows`)
	if !strings.HasPrefix(names, "0-2 2-4 4-6 6-") {
		t.Fatalf("windows %q, want at least 0-2 2-4 4-6 and a last one", names)
	}
	// Where 2.5 s and 5.5 s are on the screen, from the chart's own axis.
	type pos struct{ X0, X1, Y float64 }
	p := e2eEval[pos](t, b, "the drag's ends", `(() => {
		const svg = document.querySelector("#window-charts svg[data-x-lo]");
		svg.scrollIntoView();
		const d = svg.dataset, m = svg.getScreenCTM();
		const x = s => Number(d.plotLeft) + (s - Number(d.xLo)) / (Number(d.xHi) - Number(d.xLo)) * (Number(d.plotRight) - Number(d.plotLeft));
		const y = (Number(d.plotTop) + Number(d.plotBottom)) / 2;
		return {X0: m.a * x(2.5) + m.e, X1: m.a * x(5.5) + m.e, Y: m.d * y + m.f};
	})()`)
	b.do(t, "drag from 2.5 s to 5.5 s",
		chromedp.MouseEvent(chromedp.MousePressed, p.X0, p.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, (p.X0+p.X1)/2, p.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, p.X1, p.Y, chromedp.ButtonLeft))
	b.waitFor(t, "the selection's link", `document.getElementById("window-flame-link") !== null`)
	href := e2eEval[string](t, b, "the link", `document.getElementById("window-flame-link").getAttribute("href")`)
	var profileID uint
	if _, err := fmt.Sscanf(href, "/profiles/%d?", &profileID); err != nil {
		t.Fatalf("link %q: %v", href, err)
	}
	if hu, err := url.Parse(href); err != nil || hu.Path != fmt.Sprintf("/profiles/%d", profileID) || hu.Query().Get("tagfocus") != "window=^(2-4|4-6)$" || len(hu.Query()) != 1 {
		t.Errorf("the selection links to %q (%v), want /profiles/%d?tagfocus=window=^(2-4|4-6)$", href, err, profileID)
	}
	if vis := e2eEval[string](t, b, "the band", `document.querySelector("#window-charts rect.window-band[visibility=visible]") ? "shown" : "hidden"`); vis != "shown" {
		t.Error("the drag shows no band over the chart")
	}
	api := e2eEval[string](t, b, "the API request", `document.getElementById("window-flame-link").dataset.api`)
	u, err := url.Parse(api)
	if err != nil || u.Path != fmt.Sprintf("/api/profiles/%d/flamegraph", profileID) || u.Query().Get("tagfocus") != "window=^(2-4|4-6)$" || len(u.Query()) != 1 {
		t.Errorf("the selection asks %q (%v), want the flame graph of profile %d with tagfocus=window=^(2-4|4-6)$", api, err, profileID)
	}
	var fg struct {
		Total  float64             `json:"total"`
		Whole  float64             `json:"whole_total"`
		Labels map[string][]string `json:"labels"`
	}
	srv.api(t, http.MethodGet, api+"&format=rows", nil, http.StatusOK, &fg)
	if !(fg.Total > 0) || !(fg.Total < fg.Whole) || len(fg.Labels["window"]) < 4 {
		t.Errorf("the selection's flame graph holds %v of %v (labels %v): want a part of the profile, the samples of two of its windows", fg.Total, fg.Whole, fg.Labels)
	}
	if text := e2eEval[string](t, b, "the selection's text", `document.getElementById("window-selection").textContent`); text != "Flame graph of 2–6 s (client CPU, windows 2-4, 4-6)" {
		t.Errorf("the selection reads %q", text)
	}
	b.checkConsole(t)
}
