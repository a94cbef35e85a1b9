// Queues: which workers take a submission's runs ("queue" in POST
// /api/runs and the new-run form), and the queues of live workers the
// form offers.

package server

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
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
	v.AddToolField(form, s.formTools(workers, true), errs)
	return v
}

// checkQueue checks a submission's queue, "" meaning jobs.DefaultQueue
// (the server's own worker), and sets req.Queue to the one its runs go
// to. A queue other workers take from exists only on a shared PostgreSQL
// store; a per-run password (held in this server's memory, never stored)
// stays with this server's own worker, so specs holding one are refused
// for any other queue, and for every queue when the server has no worker.
func (s *Server) checkQueue(req *createRequest, specs []rundoc.Spec, errs *rundoc.FieldErrors) {
	req.Queue = strings.TrimSpace(req.Queue)
	if req.Queue == "" {
		req.Queue = jobs.DefaultQueue
	}
	if err := jobs.ValidQueue(req.Queue); err != nil {
		errs.Add("queue", "%q is not a queue name: lower-case letters, digits, '-' and '_' (at most 128), starting with a letter or digit", req.Queue)
		return
	}
	if req.Queue != jobs.DefaultQueue && !s.store.Postgres() {
		errs.Add("queue", "%q: this server keeps its runs in SQLite, which only its own worker (queue %s) uses; kbench worker needs a shared PostgreSQL store (kbench serve --database postgres://…)", req.Queue, jobs.DefaultQueue)
		return
	}
	for _, spec := range specs {
		if _, secrets := rundoc.SplitSecrets(spec); len(secrets) == 0 {
			continue
		}
		switch {
		case s.cfg.NoLocalWorker:
			errs.Add("queue", "a per-run password is held in this server's memory for its own worker, and this server runs none (--local-worker=false): name a cluster whose credentials a worker holds instead (kbench worker --cluster NAME=FILE)")
		case req.Queue != jobs.DefaultQueue:
			errs.Add("queue", "a per-run password stays on this server's own worker (queue %s), never in the database: for queue %s, name a cluster whose credentials its worker holds instead (kbench worker --cluster NAME=FILE)", jobs.DefaultQueue, req.Queue)
		}
		return
	}
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
// exactly as unnamedCluster accepts them: queue local's are the server's
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

// unnamedCluster says why a run on queue may not target the named
// cluster, "" when it may: on the server's own queue, the server must
// name it (--cluster); on another, a live worker of that queue must.
// While no worker of that queue is live the name cannot be checked here
// and is taken: the worker that takes the run fails it, naming its
// clusters, if it does not name the cluster. One read of the live
// workers decides and words it.
func (s *Server) unnamedCluster(name, queue string) string {
	if queueOrDefault(queue) == jobs.DefaultQueue && !s.cfg.NoLocalWorker {
		if s.cfg.Clusters.Has(name) {
			return ""
		}
		return clusters.UnknownMessage(name, s.cfg.Clusters.Names())
	}
	names, live := s.queueClusters(queue)
	if !live || slices.Contains(names, name) {
		return ""
	}
	return fmt.Sprintf("the workers of queue %s: %s", queueOrDefault(queue), clusters.UnknownMessage(name, names))
}

// queueWorkers are the live workers of queue, and whether any is live
// (never on SQLite, where the server is the only worker). The lookup has
// its own short deadline: it runs inside request validation, which has no
// context. queueClusters and queueTools read what those workers offer.
func (s *Server) queueWorkers(queue string) ([]store.Worker, bool) {
	if !s.store.Postgres() {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	workers, err := s.store.LiveWorkers(ctx, lifecycle.WorkerLostAfter)
	if err != nil {
		s.log.Warn("live workers", "err", err)
		return nil, false
	}
	queue = queueOrDefault(queue)
	var of []store.Worker
	for _, w := range workers {
		if w.Queue == queue {
			of = append(of, w)
		}
	}
	return of, len(of) > 0
}

// queueClusters are the clusters the live workers of queue name, sorted,
// and whether any worker of it is live.
func (s *Server) queueClusters(queue string) (names []string, live bool) {
	workers, live := s.queueWorkers(queue)
	for _, w := range workers {
		for _, n := range strings.Split(w.Clusters, ",") {
			if n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names, live
}

// queueOrDefault is a submission's queue as checkQueue settles it.
func queueOrDefault(queue string) string {
	if q := strings.TrimSpace(queue); q != "" {
		return q
	}
	return jobs.DefaultQueue
}
