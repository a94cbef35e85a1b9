package lifecycle

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// outputText joins the text of a list of output events.
func outputText(t *testing.T, evs []Event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		if ev.Name != "output" {
			continue
		}
		m, ok := ev.Data.(map[string]string)
		if !ok {
			t.Fatalf("output event data %T, want map[string]string", ev.Data)
		}
		b.WriteString(m["text"])
	}
	return b.String()
}

// drain takes every event buffered on ch.
func drain(ch <-chan Event) []Event {
	var out []Event
	for {
		select {
		case ev := <-ch:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestHubOutputSameLiveAndCatchUp: a page that follows a run from its start
// and one that joins late show the same text, notes on lines of their own.
func TestHubOutputSameLiveAndCatchUp(t *testing.T) {
	h := NewHub()
	const id = 7
	live, _, cancel := h.Subscribe(id)
	defer cancel()
	for _, e := range []rundoc.Event{
		{Type: "note", Text: "kbench: embedded broker at 127.0.0.1:1234 (pid 19587)"},
		{Type: "output", Text: "99900 records sent, 19980.0 records/sec (1.91 MB/sec), 1.2 ms avg latency, 9.0 ms max latency.\n"},
		{Type: "note", Text: "kbench: a note that ends with its newline\n"},
		{Type: "output", Text: "100000 records sent, 20000.000000 records/sec (1.91 MB/sec), 1.20 ms avg latency, 9.00 ms max latency, 1 ms 50th, 2 ms 95th, 3 ms 99th, 9 ms 99.9th.\n"},
	} {
		h.PublishRunner(id, e)
	}
	want := "# kbench: embedded broker at 127.0.0.1:1234 (pid 19587)\n" +
		"99900 records sent, 19980.0 records/sec (1.91 MB/sec), 1.2 ms avg latency, 9.0 ms max latency.\n" +
		"# kbench: a note that ends with its newline\n" +
		"100000 records sent, 20000.000000 records/sec (1.91 MB/sec), 1.20 ms avg latency, 9.00 ms max latency, 1 ms 50th, 2 ms 95th, 3 ms 99th, 9 ms 99.9th.\n"
	if got := outputText(t, drain(live)); got != want {
		t.Errorf("live output:\n%q\nwant\n%q", got, want)
	}
	_, catchUp, cancel2 := h.Subscribe(id)
	defer cancel2()
	if got := outputText(t, catchUp); got != want {
		t.Errorf("catch-up output:\n%q\nwant\n%q", got, want)
	}
}

// TestHubNoteStartsItsOwnLine: a note after text that stopped mid-line
// still gets a line of its own, live and on catch-up alike.
func TestHubNoteStartsItsOwnLine(t *testing.T) {
	h := NewHub()
	const id = 8
	live, _, cancel := h.Subscribe(id)
	defer cancel()
	h.PublishRunner(id, rundoc.Event{Type: "output", Text: "half a line"})
	h.PublishRunner(id, rundoc.Event{Type: "note", Text: "kbench: note"})
	h.PublishRunner(id, rundoc.Event{Type: "output", Text: "next\n"})
	want := "half a line\n# kbench: note\nnext\n"
	if got := outputText(t, drain(live)); got != want {
		t.Errorf("live output %q, want %q", got, want)
	}
	_, catchUp, cancel2 := h.Subscribe(id)
	defer cancel2()
	if got := outputText(t, catchUp); got != want {
		t.Errorf("catch-up output %q, want %q", got, want)
	}
}

// TestHubCatchUpSeriesBounded: a long run's points are kept for late
// joiners as the run keeps them, coarsened past runner.MaxSeriesPoints, so
// catching up never replays tens of thousands of events.
func TestHubCatchUpSeriesBounded(t *testing.T) {
	h := NewHub()
	const id = 9
	var all []rundoc.SeriesPoint
	var records int64
	for i := 1; i <= rundoc.MaxSeriesPoints+1; i++ {
		p := rundoc.SeriesPoint{T: float64(i) / 4, Records: 250, RecordsPerSec: 1000}
		all = append(all, p)
		records += p.Records
		h.PublishRunner(id, rundoc.Event{Type: "interval", Point: &p})
	}
	_, catchUp, cancel := h.Subscribe(id)
	defer cancel()
	var got []rundoc.SeriesPoint
	for _, ev := range catchUp {
		if ev.Name == "interval" {
			got = append(got, ev.Data.(rundoc.SeriesPoint))
		}
	}
	want := rundoc.CoarsenSeries(all)
	if len(got) != len(want) {
		t.Fatalf("%d points to catch up on, want %d (coarsened as the run does)", len(got), len(want))
	}
	var sum int64
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("point %d = %+v, want %+v", i, got[i], want[i])
		}
		sum += got[i].Records
	}
	if sum != records {
		t.Errorf("catch-up points hold %d records, want %d", sum, records)
	}
}
