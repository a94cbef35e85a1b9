package ui

import (
	"strings"
	"testing"
)

// TestRunPageOutputNotes: the notes on how Kafka's output differs from
// the precise figures stand beside the output, not among the other
// measurement notes.
func TestRunPageOutputNotes(t *testing.T) {
	u := newTestUI(t)
	run := finishedRun()
	const note = "Kafka's line cuts latency percentiles to whole milliseconds, as Kafka's tool does: 50th 776 ms is 776.412 ms (record-latency-p50); the metrics and result.json hold the precise values."
	run.SetDocuments(run.Documents.Environment, `{"measured_records":900000,"window_seconds":12.3456,"notes":["throughput unthrottled"],"output_notes":["`+note+`"]}`)
	v, err := NewRunView(run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.OutputNotes) != 1 || v.OutputNotes[0] != note {
		t.Fatalf("output notes = %q, want [%q]", v.OutputNotes, note)
	}
	page := render(t, u, "run", v)
	out := strings.Index(page, `id="run-output"`)
	metrics := strings.Index(page, `id="metrics-heading"`)
	at := strings.Index(page, "Kafka&#39;s line cuts latency percentiles")
	if out < 0 || metrics < 0 || at < out || at > metrics {
		t.Errorf("note at %d, want between the output (%d) and the metrics (%d)", at, out, metrics)
	}
	if strings.Count(page, "Kafka&#39;s line cuts") != 1 {
		t.Errorf("note shown %d times, want once", strings.Count(page, "Kafka&#39;s line cuts"))
	}

	// A run without such notes shows none.
	v, err = NewRunView(finishedRun(), 0)
	if err != nil {
		t.Fatal(err)
	}
	v.OutputNotes = nil
	if page := render(t, u, "run", v); strings.Contains(page, "output-notes") {
		t.Errorf("page without output notes has an output-notes list")
	}
}
