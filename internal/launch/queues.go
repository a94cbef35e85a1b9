// Queues: which workers take a submission's runs ("queue" in POST
// /api/runs and the new-run form), and the clusters and tools the live
// workers of a queue name.

package launch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// checkQueue checks a submission's queue, "" meaning jobs.DefaultQueue
// (the server's own worker), and sets req.Queue to the one its runs go
// to. A queue other workers take from exists only on a shared PostgreSQL
// store; a per-run password (held in this server's memory, never stored)
// stays with this server's own worker, so specs holding one are refused
// for any other queue, and for every queue when the server has no worker.
func (l *Launcher) checkQueue(req *Request, specs []rundoc.Spec, errs *rundoc.FieldErrors) {
	req.Queue = strings.TrimSpace(req.Queue)
	if req.Queue == "" {
		req.Queue = jobs.DefaultQueue
	}
	if err := jobs.ValidQueue(req.Queue); err != nil {
		errs.Add("queue", "%q is not a queue name: lower-case letters, digits, '-' and '_' (at most 128), starting with a letter or digit", req.Queue)
		return
	}
	if req.Queue != jobs.DefaultQueue && !l.store.Postgres() {
		errs.Add("queue", "%q: this server keeps its runs in SQLite, which only its own worker (queue %s) uses; kbench worker needs a shared PostgreSQL store (kbench serve --database postgres://…)", req.Queue, jobs.DefaultQueue)
		return
	}
	for _, spec := range specs {
		if _, secrets := rundoc.SplitSecrets(spec); len(secrets) == 0 {
			continue
		}
		switch {
		case l.opts.NoLocalWorker:
			errs.Add("queue", "a per-run password is held in this server's memory for its own worker, and this server runs none (--local-worker=false): name a cluster whose credentials a worker holds instead (kbench worker --cluster NAME=FILE)")
		case req.Queue != jobs.DefaultQueue:
			errs.Add("queue", "a per-run password stays on this server's own worker (queue %s), never in the database: for queue %s, name a cluster whose credentials its worker holds instead (kbench worker --cluster NAME=FILE)", jobs.DefaultQueue, req.Queue)
		}
		return
	}
}

// unnamedCluster says why a run on queue may not target the named
// cluster, "" when it may: on the server's own queue, the server must
// name it (--cluster); on another, a live worker of that queue must.
// While no worker of that queue is live the name cannot be checked here
// and is taken: the worker that takes the run fails it, naming its
// clusters, if it does not name the cluster. One read of the live
// workers decides and words it.
func (l *Launcher) unnamedCluster(name, queue string) string {
	if QueueOrDefault(queue) == jobs.DefaultQueue && !l.opts.NoLocalWorker {
		if l.opts.Clusters.Has(name) {
			return ""
		}
		return clusters.UnknownMessage(name, l.opts.Clusters.Names())
	}
	names, live := l.queueClusters(queue)
	if !live || slices.Contains(names, name) {
		return ""
	}
	return fmt.Sprintf("the workers of queue %s: %s", QueueOrDefault(queue), clusters.UnknownMessage(name, names))
}

// queueWorkers are the live workers of queue, and whether any is live
// (never on SQLite, where the server is the only worker). The lookup has
// its own short deadline: it runs inside request validation, which has no
// context. queueClusters and queueTools read what those workers offer.
func (l *Launcher) queueWorkers(queue string) ([]store.Worker, bool) {
	if !l.store.Postgres() {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	workers, err := l.store.LiveWorkers(ctx, lifecycle.WorkerLostAfter)
	if err != nil {
		l.log.Warn("live workers", "err", err)
		return nil, false
	}
	queue = QueueOrDefault(queue)
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
func (l *Launcher) queueClusters(queue string) (names []string, live bool) {
	workers, live := l.queueWorkers(queue)
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

// QueueOrDefault is a submission's queue as checkQueue settles it.
func QueueOrDefault(queue string) string {
	if q := strings.TrimSpace(queue); q != "" {
		return q
	}
	return jobs.DefaultQueue
}
