// Fleet runs (POST /api/runs with "workers": N): one run's load divided
// among N workers of a queue, stored as a parent run and N shard runs
// (store.CreateFleet). The workers' side is the lifecycle's (barrier,
// start); the parent's status and merge are advanceFleets'.

package launch

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// Fleet settings: the barrier timeout's default and bounds, and the lead
// from the last check-in to the start, which gives every shard's worker
// time to hear of the start before it comes.
const (
	DefaultBarrierTimeoutS = 60.0
	maxBarrierTimeoutS     = 3600.0
	fleetLeadS             = 3.0
)

// checkFleet checks a request for a fleet run and, when it is one, sets
// spec.Workers (the parent's spec) after the division's own checks.
// Called once the rest of the request is valid: the division needs the
// spec whole.
func (l *Launcher) checkFleet(req *Request, spec *rundoc.Spec, errs *rundoc.FieldErrors) {
	n := req.Workers
	switch {
	case n == 0 || n == 1:
		req.Workers = 0
		if req.BarrierTimeoutS != 0 {
			errs.Add("barrier_timeout_s", "applies to a fleet run only (workers 2 or more)")
		}
		return
	case n < 0 || n > rundoc.MaxFleetWorkers:
		errs.Add("workers", "must be between 1 and %d, got %d", rundoc.MaxFleetWorkers, n)
		return
	}
	if req.BarrierTimeoutS == 0 {
		req.BarrierTimeoutS = DefaultBarrierTimeoutS
	}
	if req.BarrierTimeoutS < 1 || req.BarrierTimeoutS > maxBarrierTimeoutS {
		errs.Add("barrier_timeout_s", "must be between 1 and %v seconds, got %v", maxBarrierTimeoutS, req.BarrierTimeoutS)
	}
	if !l.store.Postgres() {
		errs.Add("workers", "a fleet run needs %d kbench workers sharing this server's database, and this server keeps its runs in SQLite, "+
			"which only its own worker uses: start kbench serve --database postgres://… and one kbench worker per shard (kbench worker --database postgres://… --queue QUEUE)", n)
		return
	}
	if _, secrets := rundoc.SplitSecrets(*spec); len(secrets) > 0 {
		errs.Add("workers", "a fleet's shards run on other workers, which a per-run password never reaches (it stays in this server's memory): "+
			"name a cluster whose file each worker holds (target.cluster, kbench worker --cluster NAME=FILE)")
		return
	}
	if len(spec.Targets()) == 0 && spec.Cluster == "" {
		errs.Add("workers", "a fleet's shards share one cluster: give its bootstrap server or name it (an embedded broker would be each shard's own)")
		return
	}
	workers, _ := l.queueWorkers(req.Queue)
	if len(workers) < n {
		errs.Add("workers", "queue %s has %d live worker(s), fewer than the %d this fleet needs (one per shard, never two shards in one process): "+
			"start more with kbench worker --queue %s, or ask for fewer workers", req.Queue, len(workers), n, req.Queue)
		return
	}
	if versions := workerVersions(workers); len(versions) > 1 {
		errs.Add("workers", "the live workers of queue %s run different kbench versions (%s): a fleet's shards must run the same code to be merged; "+
			"upgrade them to one version", req.Queue, strings.Join(versions, ", "))
		return
	}
	spec.Workers = n
	if err := errs.Append(spec.Validate(l.opts.Validate)); err != nil {
		errs.Add("workers", "%v", err)
	}
	if len(*errs) > 0 {
		spec.Workers = 0
	}
}

// workerVersions are the distinct kbench versions of workers, sorted.
func workerVersions(workers []store.Worker) []string {
	var vs []string
	for _, w := range workers {
		if !slices.Contains(vs, w.Version) {
			vs = append(vs, w.Version)
		}
	}
	slices.Sort(vs)
	return vs
}

// createFleets stores one fleet run per repetition (and warm-up run) of
// the request and queues their shards. The parents are what the request
// made, returned in order; each parent joins the request's repetition
// group as a single run would, and its shards follow their own series
// (fleet-shard:FINGERPRINT:i/N), out of the parent's.
func (l *Launcher) createFleets(ctx context.Context, req Request, spec rundoc.Spec) ([]*store.Run, error) {
	shards, err := rundoc.DivideFleet(&spec, spec.Workers)
	if err != nil {
		return nil, err
	}
	specJSON, fingerprint, err := EncodeSpec(spec)
	if err != nil {
		return nil, err
	}
	shardJSON := make([]string, len(shards))
	shardFP := make([]string, len(shards))
	for i, sh := range shards {
		if shardJSON[i], shardFP[i], err = EncodeSpec(spec.ShardSpec(sh)); err != nil {
			return nil, err
		}
	}
	total := req.WarmupRuns + req.Repetitions
	made := fmt.Sprintf("%d fleet run(s) of %d shards make %d runs", total, len(shards), total*(len(shards)+1))
	if err := l.admitRuns(ctx, "repetitions", total*(len(shards)+1), made); err != nil {
		return nil, err
	}
	group := ""
	if total > 1 {
		group = randomID(8)
	}
	parents := make([]*store.Run, 0, total)
	for i := range total {
		parent := &store.Run{Label: req.Label, Workload: spec.Workload, Status: rundoc.StatusQueued, Source: rundoc.SourceLaunched,
			Spec: specJSON, Fingerprint: fingerprint, GroupID: group, Meta: req.Meta, Queue: req.Queue}
		if i < req.WarmupRuns {
			parent.Warmup = true
		} else if group != "" {
			parent.GroupIndex = i - req.WarmupRuns + 1
		}
		runs := make([]*store.Run, len(shards))
		for j, sh := range shards {
			runs[j] = &store.Run{Label: shardLabel(req.Label, sh), Workload: spec.Workload, Status: rundoc.StatusQueued,
				Source: rundoc.SourceLaunched, Spec: shardJSON[j], Fingerprint: shardFP[j], Meta: req.Meta, Queue: req.Queue,
				SeriesKey: fmt.Sprintf("fleet-shard:%s:%d/%d", fingerprint, sh.Index+1, sh.Count)}
		}
		f := &store.Fleet{Queue: req.Queue, Shards: len(shards), BarrierTimeoutS: req.BarrierTimeoutS, LeadS: fleetLeadS}
		if err := l.store.CreateFleet(ctx, f, parent, runs); err != nil {
			return nil, err
		}
		for _, r := range runs {
			if err := l.runs.Submit(ctx, r.ID, nil); err != nil {
				return nil, err
			}
		}
		parents = append(parents, parent)
	}
	return parents, nil
}

// shardLabel is the label of a fleet's shard: the run's, and which shard.
func shardLabel(label string, sh rundoc.Shard) string {
	s := fmt.Sprintf("shard %d/%d", sh.Index+1, sh.Count)
	if label == "" {
		return s
	}
	if len(label)+len(s)+3 > rundoc.MaxLabel {
		label = strings.ToValidUTF8(label[:rundoc.MaxLabel-len(s)-3], "")
	}
	return label + " (" + s + ")"
}
