package runner

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestEventsCarryTheirVersion: every event the reporter writes carries
// "v": rundoc.EventVersion, whatever its type, so a server reading a child
// built from other code notices a change of meaning; in text mode stdout
// gets only Kafka's text.
func TestEventsCarryTheirVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	r := &reporter{stdout: &out, stderr: &errOut, json: true}
	r.phase("measure", 10)
	r.progress("measure", 5, 10, 0.5)
	r.kafka("10 records sent\n")
	r.note("a note for %s", "humans")
	pt := rundoc.SeriesPoint{T: 0.25, Records: 3}
	r.emit(rundoc.Event{Type: rundoc.EventInterval, Point: &pt})
	r.emit(rundoc.Event{Type: rundoc.EventDone, Complete: true})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var types []string
	for _, line := range lines {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("not an event: %q", line)
		}
		if v := string(raw["v"]); v != "1" || rundoc.EventVersion != 1 {
			t.Errorf("event %s: \"v\" is %q, want 1 (rundoc.EventVersion %d)", line, v, rundoc.EventVersion)
		}
		var e rundoc.Event
		json.Unmarshal([]byte(line), &e)
		types = append(types, string(e.Type))
	}
	if got, want := strings.Join(types, " "), "phase progress output note interval done"; got != want {
		t.Errorf("event types %q, want %q", got, want)
	}
	if errOut.Len() != 0 {
		t.Errorf("JSON mode wrote to stderr: %q", errOut.String())
	}

	out.Reset()
	text := &reporter{stdout: &out, stderr: &errOut, json: false}
	text.phase("measure", 10)
	text.kafka("10 records sent\n")
	text.emit(rundoc.Event{Type: rundoc.EventDone})
	if out.String() != "10 records sent\n" {
		t.Errorf("text mode stdout = %q, want only Kafka's text", out.String())
	}
}
