package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eLiveOutputLine is a line the live output of a producer run may show:
// a kbench note or one of Kafka's producer lines, each starting its line.
var e2eLiveOutputLine = regexp.MustCompile(`^(# kbench: .*|\d+ records sent, .*\.)$`)

// TestE2ELiveOutputKeepsLines follows a producer run on its page from
// before it starts, so its notes and Kafka's interval lines arrive as live
// events (not the catch-up copy), and reads the live output while the run
// goes: every note and every interval line stands on a line of its own.
func TestE2ELiveOutputKeepsLines(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	// The queue runs one run at a time: the run under test waits behind a
	// slow one while its page connects.
	blocker := srv.createRun(t, map[string]any{"workload": "producer", "label": "blocker",
		"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})
	id := srv.createRun(t, map[string]any{"workload": "producer", "label": "lines",
		"params": map[string]any{"num-records": 200000, "throughput": 5000, "reporting-interval": 200, "profile": "none"}})

	b.do(t, "open the queued run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, id)))
	b.poll(t, "the live connection of the queued run", `document.getElementById('run').getAttribute('data-live') === 'true' &&
		document.getElementById('run-status').textContent.trim() === 'queued' &&
		/^Live/.test(document.getElementById('connection-state').textContent)`)
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", blocker), nil, http.StatusAccepted, nil)

	// Two interval lines after the broker's note, while the page is live.
	b.poll(t, "a note and two interval lines in the live output", `(() => {
		const out = document.getElementById('live-output');
		return !!out && out.textContent.includes('(pid ') && (out.textContent.match(/records sent/g) || []).length >= 2;
	})()`)
	text := e2eEval[string](t, b, "read the live output", `document.getElementById('live-output').textContent`)
	live := e2eEval[string](t, b, "read data-live", `document.getElementById('run').getAttribute('data-live') || ''`)
	if live != "true" {
		t.Fatalf("the run page stopped being live before the output was read (data-live=%q)", live)
	}
	t.Logf("live output:\n%s", text)
	if !regexp.MustCompile(`\(pid \d+\)\n`).MatchString(text) {
		t.Errorf("the broker note does not end its line:\n%q", text)
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !e2eLiveOutputLine.MatchString(line) {
			t.Errorf("live output line %d is not one note or one Kafka line: %q", i+1, line)
		}
	}
	srv.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", id), nil, http.StatusAccepted, nil)
	b.waitFor(t, "the canceled run's final page", e2eFinalView)
	b.checkConsole(t)
}
