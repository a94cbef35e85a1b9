// A running fleet's parent, live: its page follows the merge of its
// shards' live events (progress, intervals, output), since the parent
// itself runs nothing and reports nothing until the merge.

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/fleetmerge"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// phaseOrder ranks the runner's phases: a fleet is in the phase of its
// least advanced shard.
var phaseOrder = map[string]int{"starting": 0, "prefill": 1, "warmup": 2, "measure": 3, "finishing": 4}

// shardProgress is a shard's latest progress event, whatever form its
// payload took on the way (a map of the lifecycle's types, or JSON
// replayed from the database).
type shardProgress struct {
	Phase   string  `json:"phase"`
	Done    float64 `json:"done"`
	Total   float64 `json:"total"`
	Elapsed float64 `json:"elapsed"`
}

// maxFleetCatchUp bounds the shards' output a new subscriber is sent
// at once, as the run page keeps about as much.
const maxFleetCatchUp = 256 << 10

// fleetLive is the merge of a fleet's shards' live events, for one
// subscriber.
type fleetLive struct {
	runIDs   []uint
	progress []*shardProgress
	series   [][]rundoc.SeriesPoint
	status   []string
	// partial is each shard's output after its last newline, held until
	// the line ends so that every line carries its shard's prefix.
	partial []string
	// sent is how many merged series points the subscriber has.
	sent int
}

func newFleetLive(links []store.FleetShard) *fleetLive {
	n := len(links)
	l := &fleetLive{runIDs: make([]uint, n), progress: make([]*shardProgress, n), series: make([][]rundoc.SeriesPoint, n),
		status: make([]string, n), partial: make([]string, n)}
	for i, sh := range links {
		l.runIDs[i] = sh.RunID
	}
	return l
}

// apply takes shard i's event and returns the events the subscriber gets
// for it. The payload is read through JSON: it is a map of the
// lifecycle's types, or JSON replayed from the database.
func (l *fleetLive) apply(i int, ev lifecycle.Event) []lifecycle.Event {
	raw, err := json.Marshal(ev.Data)
	if err != nil {
		return nil
	}
	switch ev.Name {
	case "progress":
		var p shardProgress
		if json.Unmarshal(raw, &p) != nil {
			return nil
		}
		l.progress[i] = &p
		if m := l.mergedProgress(); m != nil {
			return []lifecycle.Event{{Name: "progress", Data: m}}
		}
	case "interval":
		var p rundoc.SeriesPoint
		if json.Unmarshal(raw, &p) != nil {
			return nil
		}
		l.series[i] = append(l.series[i], p)
		if len(l.series[i]) > rundoc.MaxSeriesPoints {
			l.series[i] = rundoc.CoarsenSeries(l.series[i])
		}
		return l.newPoints()
	case "output":
		var out struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &out) != nil {
			return nil
		}
		if text := l.lines(i, out.Text); text != "" {
			return []lifecycle.Event{{Name: "output", Data: map[string]string{"text": text}}}
		}
	case "status", "done":
		var st struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if json.Unmarshal(raw, &st) != nil || st.Status == "" || st.Status == l.status[i] {
			return nil
		}
		l.status[i] = st.Status
		note := fmt.Sprintf("# shard %d/%d (run #%d): %s", i+1, len(l.runIDs), l.runIDs[i], st.Status)
		if st.Error != "" {
			note += ": " + st.Error
		}
		return []lifecycle.Event{{Name: "output", Data: map[string]string{"text": l.flush(i) + note + "\n"}}}
	}
	return nil
}

// lines prefixes each complete line of shard i's text with its shard,
// keeping what follows the last newline for later.
func (l *fleetLive) lines(i int, text string) string {
	text = l.partial[i] + text
	end := strings.LastIndexByte(text, '\n')
	if end < 0 {
		l.partial[i] = text
		return ""
	}
	l.partial[i] = text[end+1:]
	var b strings.Builder
	prefix := fmt.Sprintf("[shard %d] ", i+1)
	for line := range strings.SplitSeq(text[:end], "\n") {
		b.WriteString(prefix)
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// flush returns shard i's unfinished line, ended, so that a note does not
// land in its middle.
func (l *fleetLive) flush(i int) string {
	if l.partial[i] == "" {
		return ""
	}
	return l.lines(i, "\n")
}

// mergedProgress is the fleet's progress: the least advanced shard's
// phase, the records of all shards, and the shortest measured time (the
// common window so far). nil until every shard has reported.
func (l *fleetLive) mergedProgress() map[string]any {
	phase, rank := "", len(phaseOrder)
	var done, total, elapsed float64
	for _, p := range l.progress {
		if p == nil {
			return nil
		}
		r, ok := phaseOrder[p.Phase]
		if !ok {
			r = 0
		}
		if r < rank {
			phase, rank = p.Phase, r
		}
		done += p.Done
		total += p.Total
	}
	for _, p := range l.progress {
		if p.Phase == phase && (elapsed == 0 || p.Elapsed < elapsed) {
			elapsed = p.Elapsed
		}
	}
	return map[string]any{"phase": phase, "done": int64(done), "total": int64(total), "elapsed": elapsed}
}

// newPoints are the merged series points the subscriber has not had: one
// "interval" event each, once every shard has reported its part.
func (l *fleetLive) newPoints() []lifecycle.Event {
	merged := fleetmerge.LiveSeries(l.series)
	if len(merged) < l.sent {
		l.sent = 0 // a shard coarsened its series: the grid starts over
	}
	var out []lifecycle.Event
	for _, p := range merged[l.sent:] {
		out = append(out, lifecycle.Event{Name: "interval", Data: p})
	}
	l.sent = len(merged)
	return out
}

// fleetLiveSeries is the merged series of a running fleet's shards so
// far, for its live charts; ok is false when no shard is running. A shard
// that has ended (the hub keeps nothing of it) takes part with its stored
// series, so the merge does not vanish while the others finish.
func (s *Server) fleetLiveSeries(ctx context.Context, links []store.FleetShard) ([]rundoc.SeriesPoint, bool, error) {
	series := make([][]rundoc.SeriesPoint, len(links))
	var ended []uint
	where := map[uint]int{}
	live := false
	for i, sh := range links {
		pts, ok := s.runs.Series(sh.RunID)
		if !ok {
			ended = append(ended, sh.RunID)
			where[sh.RunID] = i
			continue
		}
		live = true
		series[i] = pts
	}
	if !live {
		return nil, false, nil
	}
	if len(ended) > 0 {
		runs, err := s.store.GetRunsParts(ctx, ended, store.RunParts{Series: true})
		if err != nil {
			return nil, false, err
		}
		for _, r := range runs {
			series[where[r.ID]] = r.Series
		}
	}
	return fleetmerge.LiveSeries(series), true, nil
}

// fleetEvents streams a running fleet parent's events (see runEvents):
// its own status, and the merge of its shards' live events (fleetLive).
// It ends with "done" when the parent has ended: the fleet pass ends it
// once every shard has, merged.
func (s *Server) fleetEvents(c *gin.Context, run *rundoc.Run, links []store.FleetShard, send func(lifecycle.Event) bool) {
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	type tagged struct {
		i  int
		ev lifecycle.Event
	}
	in := make(chan tagged, 64)
	live := newFleetLive(links)
	var intervals []lifecycle.Event
	var output strings.Builder
	for i, sh := range links {
		ch, past, unsubscribe := s.runs.Subscribe(sh.RunID)
		defer unsubscribe()
		for _, ev := range past {
			// A replayed progress only moves the merge: it is sent once,
			// as it stands after the replay.
			for _, m := range live.apply(i, ev) {
				switch m.Name {
				case "output":
					output.WriteString(m.Data.(map[string]string)["text"])
				case "interval":
					intervals = append(intervals, m)
				}
			}
		}
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-ch:
					select {
					case in <- tagged{i, ev}:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}
	status := map[string]any{"status": run.Status}
	if run.StartedAt != nil {
		status["started_at"] = run.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	if !send(lifecycle.Event{Name: "status", Data: status}) {
		return
	}
	catchUp := intervals
	if p := live.mergedProgress(); p != nil {
		catchUp = append([]lifecycle.Event{{Name: "progress", Data: p}}, intervals...)
	}
	for _, ev := range catchUp {
		if !send(ev) {
			return
		}
	}
	if text := output.String(); text != "" {
		if len(text) > maxFleetCatchUp {
			text = text[len(text)-maxFleetCatchUp:]
			if k := strings.IndexByte(text, '\n'); k >= 0 {
				text = text[k+1:]
			}
		}
		if !send(lifecycle.Event{Name: "output", Data: map[string]string{"text": text}}) {
			return
		}
	}
	ping := time.NewTicker(heartbeat)
	defer ping.Stop()
	// The parent's own state changes in the store (the fleet pass sets
	// it): polled, as a queued run's position is.
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-in:
			for _, ev := range live.apply(t.i, t.ev) {
				if !send(ev) {
					return
				}
			}
		case <-ping.C:
			if !send(lifecycle.Event{}) {
				return
			}
		case <-poll.C:
			// Its status alone: no output, series or profiles.
			rs, err := s.store.GetRunsParts(ctx, []uint{run.ID}, store.RunParts{})
			if err != nil {
				return
			}
			r := &rs[0]
			if r.Final() {
				send(lifecycle.Event{Name: "done", Data: map[string]string{"status": string(r.Status), "error": r.Error}})
				return
			}
			if r.Status != run.Status {
				run.Status = r.Status
				if !send(lifecycle.Event{Name: "status", Data: map[string]any{"status": r.Status}}) {
					return
				}
			}
		}
	}
}
