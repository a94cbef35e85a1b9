package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// heartbeat keeps idle event streams open through proxies.
const heartbeat = 15 * time.Second

// runEvents streams a run's live events as Server-Sent Events: first what
// happened so far, then each event as it comes, ending with "done". A
// finished run gets "done" at once.
func (s *Server) runEvents(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	// Subscribe before reading the run, so no event between the read and
	// the subscription is lost.
	ch, catchUp, cancel := s.runs.Subscribe(id)
	defer cancel()
	run, err := s.store.GetRun(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	// A fleet's parent runs nothing itself: its events are its shards'.
	var shards []store.FleetShard
	if !run.Final() {
		_, shards, err = s.store.FleetOfParent(c.Request.Context(), id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.fail(c, err)
			return
		}
	}
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := sseSender(w)
	if run.Final() {
		send(lifecycle.Event{Name: "done", Data: map[string]string{"status": string(run.Status), "error": run.Error}})
		return
	}
	if len(shards) > 0 {
		s.fleetEvents(c, run, shards, send)
		return
	}
	status := map[string]any{"status": run.Status}
	if run.StartedAt != nil {
		// The run page counts its elapsed time from it.
		status["started_at"] = run.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	if run.Status == rundoc.StatusQueued {
		status["position"], _ = s.store.QueuePosition(c.Request.Context(), id)
	}
	if !send(lifecycle.Event{Name: "status", Data: status}) {
		return
	}
	for _, ev := range catchUp {
		if !send(ev) {
			return
		}
	}
	ping := time.NewTicker(heartbeat)
	defer ping.Stop()
	// A queued run's position changes as others finish; poll it cheaply.
	position := time.NewTicker(2 * time.Second)
	defer position.Stop()
	for {
		select {
		case <-c.Request.Context().Done():
			return
		case ev := <-ch:
			if !send(ev) || ev.Name == "done" {
				return
			}
		case <-ping.C:
			if !send(lifecycle.Event{}) {
				return
			}
		case <-position.C:
			r, err := s.store.GetRun(c.Request.Context(), id)
			if err != nil {
				return
			}
			if r.Final() { // finished while we were not told (e.g. canceled when queued)
				send(lifecycle.Event{Name: "done", Data: map[string]string{"status": string(r.Status), "error": r.Error}})
				return
			}
			if r.Status == rundoc.StatusQueued {
				pos, _ := s.store.QueuePosition(c.Request.Context(), id)
				send(lifecycle.Event{Name: "status", Data: map[string]any{"status": r.Status, "position": pos}})
			}
		}
	}
}

// sseSender returns a function that writes one Server-Sent Event to w and
// flushes it; an event without a name is a comment that keeps the stream
// open. It reports whether the write succeeded.
func sseSender(w gin.ResponseWriter) func(lifecycle.Event) bool {
	return func(ev lifecycle.Event) bool {
		if ev.Name == "" {
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return false
			}
			w.Flush()
			return true
		}
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Name, data); err != nil {
			return false
		}
		w.Flush()
		return true
	}
}
