package rundoc

import "time"

// EventVersion is the version of the progress events (Event) this code
// writes, carried by each event so that a server reading a child built
// from other code notices a change of meaning instead of misreading it.
// Events without one (0) predate versions and read as version 1.
const EventVersion = 1

// EventType is what an Event reports.
type EventType string

// Event types.
const (
	EventPhase    EventType = "phase"    // a phase began (Phase, Total)
	EventProgress EventType = "progress" // records done in the phase
	EventInterval EventType = "interval" // one interval of the series (Point)
	EventOutput   EventType = "output"   // Kafka-format text (Text)
	EventNote     EventType = "note"     // a remark of kbench's (Text)
	EventDone     EventType = "done"     // the run ended (Complete, Error)
	// EventReady: a fleet's shard is set up (topics, connections,
	// consumers) and waits for its start on stdin (ShardStartLine).
	EventReady EventType = "ready"
)

// Event is one line of `kbench run --progress json`: what the server reads
// from its child to drive live pages. Every field a type does not use is
// omitted.
type Event struct {
	// V is EventVersion.
	V    int       `json:"v,omitempty"`
	Type EventType `json:"type"`
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
