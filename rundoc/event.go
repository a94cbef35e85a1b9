package rundoc

import "time"

// EventVersion is the version of the progress events (Event) this code
// writes, carried by each event so that a server reading a child built
// from other code notices a change of meaning instead of misreading it.
// Events without one (0) predate versions and read as version 1.
const EventVersion = 1

// Event types (Event.Type).
const (
	EventPhase    = "phase"
	EventProgress = "progress"
	EventInterval = "interval"
	EventOutput   = "output"
	EventNote     = "note"
	EventDone     = "done"
)

// Event is one line of `kbench run --progress json`: what the server reads
// from its child to drive live pages. Every field a type does not use is
// omitted.
type Event struct {
	// V is EventVersion.
	V    int       `json:"v,omitempty"`
	Type string    `json:"type"` // one of the Event… constants
	Time time.Time `json:"time"`
	// Phase: starting, prefill, warmup, measure, finishing.
	Phase string `json:"phase,omitempty"`
	// Progress of the current phase, in records.
	Done  int64 `json:"done,omitempty"`
	Total int64 `json:"total,omitempty"`
	// Elapsed seconds of the measured window.
	Elapsed float64      `json:"elapsed,omitempty"`
	Point   *SeriesPoint `json:"point,omitempty"`
	// Text is Kafka-format output (type output) or a note.
	Text     string `json:"text,omitempty"`
	Complete bool   `json:"complete,omitempty"`
	Error    string `json:"error,omitempty"`
}
