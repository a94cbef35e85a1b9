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

// fleetPlan is a fleet run's spec divided into its shards, each encoded
// once for every fleet made of it.
type fleetPlan struct {
	spec                  rundoc.Spec
	specJSON, fingerprint string
	shards                []rundoc.Shard
	shardJSON, shardFP    []string
}

// planFleet divides spec (a parent's: spec.Workers set) into its shards.
func planFleet(spec rundoc.Spec) (*fleetPlan, error) {
	shards, err := rundoc.DivideFleet(&spec, spec.Workers)
	if err != nil {
		return nil, err
	}
	p := &fleetPlan{spec: spec, shards: shards, shardJSON: make([]string, len(shards)), shardFP: make([]string, len(shards))}
	if p.specJSON, p.fingerprint, err = EncodeSpec(spec); err != nil {
		return nil, err
	}
	for i, sh := range shards {
		if p.shardJSON[i], p.shardFP[i], err = EncodeSpec(spec.ShardSpec(sh)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// runs is how many runs a fleet of the plan stores: its parent and shards.
func (p *fleetPlan) runs() int { return len(p.shards) + 1 }

// createFleet stores one fleet of plan, whose parent is parent (its
// label, group, batch and warm-up as the caller sets them; its spec and
// fingerprint the plan's), and queues its shards. Each shard follows its
// own series (fleet-shard:FINGERPRINT:i/N), out of the parent's, and is
// in no repetition group or A/B batch: the parent is what is compared.
func (l *Launcher) createFleet(ctx context.Context, plan *fleetPlan, parent *store.Run, barrierTimeoutS float64) error {
	parent.Workload, parent.Status, parent.Source = plan.spec.Workload, rundoc.StatusQueued, rundoc.SourceLaunched
	parent.Spec, parent.Fingerprint = plan.specJSON, plan.fingerprint
	runs := make([]*store.Run, len(plan.shards))
	for j, sh := range plan.shards {
		runs[j] = &store.Run{Label: shardLabel(parent.Label, sh), Workload: plan.spec.Workload, Status: rundoc.StatusQueued,
			Source: rundoc.SourceLaunched, Spec: plan.shardJSON[j], Fingerprint: plan.shardFP[j], Meta: parent.Meta, Queue: parent.Queue,
			SeriesKey: fmt.Sprintf("fleet-shard:%s:%d/%d", plan.fingerprint, sh.Index+1, sh.Count)}
	}
	f := &store.Fleet{Queue: parent.Queue, Shards: len(plan.shards), BarrierTimeoutS: barrierTimeoutS, LeadS: fleetLeadS}
	if err := l.store.CreateFleet(ctx, f, parent, runs); err != nil {
		return err
	}
	for _, r := range runs {
		if err := l.runs.Submit(ctx, r.ID, nil); err != nil {
			return err
		}
	}
	return nil
}

// createFleets stores one fleet run per repetition (and warm-up run) of
// the request and queues their shards. The parents are what the request
// made, returned in order; each parent joins the request's repetition
// group as a single run would.
func (l *Launcher) createFleets(ctx context.Context, req Request, spec rundoc.Spec) ([]*store.Run, error) {
	plan, err := planFleet(spec)
	if err != nil {
		return nil, err
	}
	total := req.WarmupRuns + req.Repetitions
	made := fmt.Sprintf("%d fleet run(s) of %d shards make %d runs", total, len(plan.shards), total*plan.runs())
	if err := l.admitRuns(ctx, "repetitions", total*plan.runs(), made); err != nil {
		return nil, err
	}
	group := ""
	if total > 1 {
		group = randomID(8)
	}
	parents := make([]*store.Run, 0, total)
	for i := range total {
		parent := &store.Run{Label: req.Label, GroupID: group, Meta: req.Meta, Queue: req.Queue}
		if i < req.WarmupRuns {
			parent.Warmup = true
		} else if group != "" {
			parent.GroupIndex = i - req.WarmupRuns + 1
		}
		if err := l.createFleet(ctx, plan, parent, req.BarrierTimeoutS); err != nil {
			return nil, err
		}
		parents = append(parents, parent)
	}
	return parents, nil
}

// queueInterleavedFleets is queueInterleaved for an A/B submission of
// fleet runs: each run of each configuration is its own fleet, stored in
// the interleaved order. A queue gathers one fleet at a time, the oldest
// first (store.TakeShard), so the fleets run in that order too.
func (l *Launcher) queueInterleavedFleets(ctx context.Context, batch string, sides []abSide, specs []rundoc.Spec, req *Request) ([]*store.Run, error) {
	plans := make([]*fleetPlan, len(specs))
	for i, spec := range specs {
		var err error
		if plans[i], err = planFleet(spec); err != nil {
			return nil, err
		}
	}
	parents, order := interleavedRuns(batch, sides, req.WarmupRuns, req.Repetitions)
	index := make([]int, len(sides))
	for k, p := range parents {
		i := order[k]
		if !p.Warmup {
			index[i]++
			p.GroupIndex = index[i]
		}
		if err := l.createFleet(ctx, plans[i], p, req.BarrierTimeoutS); err != nil {
			return nil, err
		}
	}
	return parents, nil
}

// checkConfigFleets checks an A/B submission's fleet fields against each
// configuration's spec (checkFleet), setting their Workers. An error on
// the submission's own fields (workers, barrier_timeout_s) is reported
// once; a configuration's division errors are its own
// ("configs[1].params.partitions").
func (l *Launcher) checkConfigFleets(req *Request, specs []rundoc.Spec, errs *rundoc.FieldErrors) {
	for i := range specs {
		var fe rundoc.FieldErrors
		l.checkFleet(req, &specs[i], &fe)
		for _, e := range fe {
			switch {
			case e.Field == "workers" || e.Field == "barrier_timeout_s":
				if !errs.Has(e.Field) {
					errs.Add(e.Field, "%s", e.Msg)
				}
			default:
				errs.Add(fmt.Sprintf("configs[%d].params.%s", i, e.Field), "%s", e.Msg)
			}
		}
	}
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
