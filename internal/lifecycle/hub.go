package lifecycle

import (
	"slices"
	"strings"
	"sync"

	"github.com/kbench/kbench/internal/rundoc"
)

// Event is one live event of a run, as the server sends it to a page or
// an API client (one Server-Sent Event): its name ("status", "progress",
// "interval", "output", "done") and a JSON-encodable payload.
type Event struct {
	Name string
	Data any
}

// liveState is what a late subscriber needs to catch up on a running run.
type liveState struct {
	status   string
	progress *rundoc.Event
	points   []rundoc.SeriesPoint
	output   strings.Builder
	// midLine is true when the text so far does not end with a newline.
	midLine bool
}

// outputText is how an output or note event reads in the run page's
// output, the same for the live stream and the catch-up copy: Kafka's
// text as printed, a note as a "# " comment on a line of its own.
func (st *liveState) outputText(e rundoc.Event) string {
	text := e.Text
	if e.Type == rundoc.EventNote {
		text = "# " + strings.TrimRight(text, "\n") + "\n"
		if st.midLine {
			text = "\n" + text
		}
	}
	if text != "" {
		st.midLine = !strings.HasSuffix(text, "\n")
	}
	return text
}

// maxLiveOutput bounds the Kafka text kept for catching up; the full text
// is stored with the result.
const maxLiveOutput = 256 << 10

// Hub fans a run's live events out to its subscribers (browser tabs on
// the run page, API clients) and keeps enough state for late joiners.
// What it keeps is for display only: no decision about a run is taken
// from it (the store's status is the run's state).
type Hub struct {
	mu    sync.Mutex
	subs  map[uint]map[chan Event]struct{}
	state map[uint]*liveState
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{subs: map[uint]map[chan Event]struct{}{}, state: map[uint]*liveState{}}
}

// Subscribe returns a channel of the run's events and the events that
// catch a new subscriber up. cancel must be called when done.
func (h *Hub) Subscribe(id uint) (events <-chan Event, catchUp []Event, cancel func()) {
	ch := make(chan Event, 512)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id] == nil {
		h.subs[id] = map[chan Event]struct{}{}
	}
	h.subs[id][ch] = struct{}{}
	if st := h.state[id]; st != nil {
		if st.status != "" {
			catchUp = append(catchUp, Event{"status", map[string]any{"status": st.status}})
		}
		if st.progress != nil {
			catchUp = append(catchUp, Event{"progress", progressData(*st.progress)})
		}
		for _, p := range st.points {
			catchUp = append(catchUp, Event{"interval", p})
		}
		if st.output.Len() > 0 {
			catchUp = append(catchUp, Event{"output", map[string]string{"text": st.output.String()}})
		}
	}
	return ch, catchUp, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[id], ch)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
		}
	}
}

// Series returns a copy of the interval points a run has reported so
// far (coarsened as the run's result will be); ok is false when the hub
// holds nothing of the run: not started yet, finished, or unknown.
func (h *Hub) Series(id uint) (pts []rundoc.SeriesPoint, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.state[id]
	if st == nil {
		return nil, false
	}
	return slices.Clone(st.points), true
}

func progressData(e rundoc.Event) map[string]any {
	return map[string]any{"phase": e.Phase, "done": e.Done, "total": e.Total, "elapsed": e.Elapsed}
}

// PublishRunner forwards one progress line of a run's child process.
func (h *Hub) PublishRunner(id uint, e rundoc.Event) {
	h.mu.Lock()
	st := h.stateLocked(id)
	var ev Event
	switch e.Type {
	case rundoc.EventPhase, rundoc.EventProgress:
		st.progress = &e
		ev = Event{"progress", progressData(e)}
	case rundoc.EventInterval:
		if e.Point == nil {
			h.mu.Unlock()
			return
		}
		st.points = append(st.points, *e.Point)
		if len(st.points) > rundoc.MaxSeriesPoints {
			// The run coarsens its series at the same length: late joiners
			// get what the result will hold.
			st.points = rundoc.CoarsenSeries(st.points)
		}
		ev = Event{"interval", *e.Point}
	case rundoc.EventOutput, rundoc.EventNote:
		text := st.outputText(e)
		if st.output.Len() < maxLiveOutput {
			st.output.WriteString(text)
		}
		ev = Event{"output", map[string]string{"text": text, "kind": string(e.Type)}}
	default:
		h.mu.Unlock()
		return // "done" is published once the result is stored
	}
	h.sendLocked(id, ev)
	h.mu.Unlock()
}

// Publish sends an event the lifecycle makes itself (status, done).
func (h *Hub) Publish(id uint, ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Name == "status" {
		if m, ok := ev.Data.(map[string]any); ok {
			// rundoc.Status from the lifecycle, a string replayed from JSON.
			switch s := m["status"].(type) {
			case rundoc.Status:
				h.stateLocked(id).status = string(s)
			case string:
				h.stateLocked(id).status = s
			}
		}
	}
	h.sendLocked(id, ev)
	if ev.Name == "done" {
		delete(h.state, id) // the stored run is the truth from now on
	}
}

// Subscribers is how many subscribers run id has.
func (h *Hub) Subscribers(id uint) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[id])
}

// Forget drops what the hub keeps of run id for late joiners, unless it
// has subscribers: a follower that stops replaying a run nobody watches
// leaves nothing behind that a later one would replay twice.
func (h *Hub) Forget(id uint) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs[id]) == 0 {
		delete(h.state, id)
	}
}

func (h *Hub) stateLocked(id uint) *liveState {
	st := h.state[id]
	if st == nil {
		st = &liveState{}
		h.state[id] = st
	}
	return st
}

// sendLocked never blocks: a subscriber too slow to keep 512 events
// buffered misses some, and its page still reloads on "done".
func (h *Hub) sendLocked(id uint, ev Event) {
	for ch := range h.subs[id] {
		select {
		case ch <- ev:
		default:
		}
	}
}
