// Kafka tools: a run that names one ("tool" in POST /api/runs and the
// new-run form) is executed by the worker's program of that name (serve's
// or worker's --tool NAME=PATH) with an argument template filled from the
// run's fields, instead of by kbench's client. A request names the tool
// only: never a path, never an argument.

package server

import (
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/toolcatalog"
	"github.com/kbench/kbench/ui"
)

// formTools are the tools the new-run form offers, by name, each with its
// kind and the queues whose workers offer it, as launch accepts them:
// queue local's are the server's own (--tool), unless it runs no worker,
// and every other queue's those its live workers registered. On SQLite
// (queues false) the server's own alone, without queues.
func (s *Server) formTools(workers []store.Worker, queues bool) []ui.ToolChoice {
	byName := map[string]*ui.ToolChoice{}
	add := func(name string, kind toolcatalog.Kind, queue string) {
		c := byName[name]
		if c == nil {
			c = &ui.ToolChoice{Name: name, Script: kind.Script(), Workload: string(kind.Workload())}
			byName[name] = c
		}
		if queues && !slices.Contains(c.Queues, queue) {
			c.Queues = append(c.Queues, queue)
		}
	}
	local := !s.cfg.NoLocalWorker
	if local {
		for n, k := range s.cfg.Tools.Kinds() {
			add(n, k, jobs.DefaultQueue)
		}
	}
	for _, w := range workers {
		if w.Queue == jobs.DefaultQueue && local {
			continue // the server's own worker decides what queue local offers
		}
		for n, k := range toolcatalog.ParseOffered(w.Tools) {
			add(n, k, w.Queue)
		}
	}
	out := make([]ui.ToolChoice, 0, len(byName))
	for _, c := range byName {
		slices.Sort(c.Queues)
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ui.ToolChoice) int { return strings.Compare(a.Name, b.Name) })
	return out
}
