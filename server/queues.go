// Queues: the queues of live workers, and the clusters they name, that
// the new-run form offers (launch checks a submission's queue).

package server

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// newRunForm is the new-run form holding form's values and errs, with
// the named clusters a run may target and, when other workers can share
// this server's store (PostgreSQL), the queue field; both from one read
// of the live workers. On SQLite the form offers the server's own
// clusters and no queue, every run going to the server's own worker.
func (s *Server) newRunForm(ctx context.Context, form url.Values, errs map[string]string) ui.NewRunFormView {
	if !s.store.Postgres() {
		var choices []ui.ClusterChoice
		if !s.cfg.NoLocalWorker {
			for _, n := range s.cfg.Clusters.Names() {
				choices = append(choices, ui.ClusterChoice{Name: n})
			}
		}
		v := ui.NewRunFormClusters(form, errs, choices)
		v.AddToolField(form, s.formTools(nil, false), errs)
		return v
	}
	workers, err := s.store.LiveWorkers(ctx, lifecycle.WorkerLostAfter)
	if err != nil {
		s.log.Warn("live workers", "err", err)
	}
	v := ui.NewRunFormClusters(form, errs, s.formClusters(workers))
	v.AddQueueField(form, liveQueues(workers), errs)
	v.AddWorkersField(form, errs)
	v.AddToolField(form, s.formTools(workers, true), errs)
	return v
}

// liveQueues are the queues the new-run form offers: the server's own
// and those of live workers, sorted, the default first.
func liveQueues(workers []store.Worker) []string {
	queues := []string{jobs.DefaultQueue}
	for _, w := range workers {
		if !slices.Contains(queues, w.Queue) {
			queues = append(queues, w.Queue)
		}
	}
	slices.Sort(queues[1:])
	return queues
}

// formClusters are the named clusters the new-run form offers on a
// PostgreSQL store, by name, each with the queues whose workers name it,
// exactly as launch accepts them for a queue: queue local's are the server's
// own (--cluster), unless it runs no worker, and every other queue's are
// those its live workers registered.
func (s *Server) formClusters(workers []store.Worker) []ui.ClusterChoice {
	queues := map[string][]string{}
	add := func(name, queue string) {
		if name != "" && !slices.Contains(queues[name], queue) {
			queues[name] = append(queues[name], queue)
		}
	}
	local := !s.cfg.NoLocalWorker
	if local {
		for _, n := range s.cfg.Clusters.Names() {
			add(n, jobs.DefaultQueue)
		}
	}
	for _, w := range workers {
		if w.Queue == jobs.DefaultQueue && local {
			continue // the server's own worker decides what queue local names
		}
		for _, n := range strings.Split(w.Clusters, ",") {
			add(n, w.Queue)
		}
	}
	choices := make([]ui.ClusterChoice, 0, len(queues))
	for name, qs := range queues {
		slices.SortFunc(qs, func(a, b string) int {
			switch {
			case a == b:
				return 0
			case a == jobs.DefaultQueue:
				return -1
			case b == jobs.DefaultQueue:
				return 1
			}
			return strings.Compare(a, b)
		})
		choices = append(choices, ui.ClusterChoice{Name: name, Queues: qs})
	}
	slices.SortFunc(choices, func(a, b ui.ClusterChoice) int { return strings.Compare(a.Name, b.Name) })
	return choices
}
