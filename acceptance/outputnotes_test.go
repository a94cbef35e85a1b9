package acceptance

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eConsumerNote reads the consumer's output note: Kafka's figures, then
// the measured ones.
var e2eConsumerNote = regexp.MustCompile(`^Kafka's line uses whole-millisecond start and end times, as Kafka's tool does: ` +
	`[\d,]+ ms → ([\d,.]+) records/s, rebalance (\d+) ms, .*; measured: [\d,.]+ ms → ([\d,.]+) records/s, rebalance ([\d.]+) ms, `)

// TestE2EConsumerOutputNote runs a group-mode consumer and reads its
// finished page: beside Kafka's summary row stands the note that explains,
// with the row's own figures and the measured ones, why they differ; the
// API's measurement holds the same note.
func TestE2EConsumerOutputNote(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	id := srv.createRun(t, map[string]any{"workload": "consumer", "label": "note",
		"params": map[string]any{"messages": 50000, "record-size": 100, "mode": "group", "profile": "none"}})
	b.do(t, "open the run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, id)))
	b.waitFor(t, "the finished run page", e2eFinalView)
	if status := e2eEval[string](t, b, "read the status", `document.getElementById('run-status').textContent.trim()`); status != "succeeded" {
		t.Fatalf("run %d ended %q\n%s", id, status, b.state())
	}

	type view struct {
		Output string   `json:"output"`
		Notes  []string `json:"notes"`
		After  bool     `json:"after"`
	}
	v := e2eEval[view](t, b, "read the output and its notes", `(() => {
		const out = document.getElementById('run-output');
		const list = document.querySelector('ul.output-notes');
		return {output: out ? out.textContent : '',
			notes: list ? Array.from(list.querySelectorAll('li')).map(li => li.textContent) : [],
			after: !!out && !!list && out.parentElement === list.parentElement &&
				!!(out.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING)};
	})()`)
	if len(v.Notes) != 1 || !v.After {
		t.Fatalf("output notes %q (after the output: %v), want one note right after Kafka's output\n%s", v.Notes, v.After, b.state())
	}
	m := e2eConsumerNote.FindStringSubmatch(v.Notes[0])
	if m == nil {
		t.Fatalf("note %q does not read as expected", v.Notes[0])
	}
	// Kafka's side quotes the row the page shows.
	var row []string
	for _, line := range strings.Split(v.Output, "\n") {
		if f := strings.Split(line, ", "); len(f) == 10 && f[4] == "50000" {
			row = f
		}
	}
	if row == nil {
		t.Fatalf("no summary row for 50000 records in the output:\n%s", v.Output)
	}
	if strings.ReplaceAll(m[1], ",", "") != row[5] || m[2] != row[6] {
		t.Errorf("note's Kafka figures %s records/s, rebalance %s ms; the row says %s and %s", m[1], m[2], row[5], row[6])
	}
	if m[3] == m[1] && m[4] == m[2] {
		t.Errorf("note's measured figures repeat Kafka's: %q", v.Notes[0])
	}

	var run struct {
		Measurement struct {
			OutputNotes []string `json:"output_notes"`
		} `json:"measurement"`
	}
	srv.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &run)
	if len(run.Measurement.OutputNotes) != 1 || run.Measurement.OutputNotes[0] != v.Notes[0] {
		t.Errorf("API measurement output_notes %q, page %q", run.Measurement.OutputNotes, v.Notes)
	}
	b.checkConsole(t)
}
