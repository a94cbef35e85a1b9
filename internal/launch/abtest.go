package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// An A/B submission queues the runs of several configurations interleaved:
// round by round, each round running every configuration once, in order
// in one round and in reverse in the next (A B, B A, A B, …), so that
// whatever drifts on the machine meanwhile reaches every configuration
// alike and none always runs first or last. The write-path preset and
// added repetitions (repetitions.go) are queued the same way. The runs of
// one submission share an A/B batch (store.Run.ABBatch), which is how a
// comparison knows they were interleaved.

// Config is one configuration of an A/B submission: what the
// single-run fields of a Request say for one configuration.
type Config struct {
	// Workload, when given, must be the submission's: its configurations
	// are compared metric by metric, which needs one workload.
	Workload *string                    `json:"workload,omitempty"`
	Label    string                     `json:"label"`
	Params   map[string]json.RawMessage `json:"params"`
	Target   *Target                    `json:"target,omitempty"`
}

// interleaveOrder is the order in which rounds rounds of n configurations
// run: the configuration index of each run, round 0 in order (0 1 … n-1),
// round 1 reversed (n-1 … 1 0), and so on.
func interleaveOrder(n, rounds int) []int {
	out := make([]int, 0, n*rounds)
	for r := 0; r < rounds; r++ {
		for i := 0; i < n; i++ {
			if r%2 == 0 {
				out = append(out, i)
			} else {
				out = append(out, n-1-i)
			}
		}
	}
	return out
}

// abSide is one configuration of an interleaved batch, as its runs are
// stored: label, repetition group, redacted spec and fingerprint, and the
// secrets its runs get from memory.
type abSide struct {
	label, group          string
	workload              rundoc.Workload
	specJSON, fingerprint string
	secrets               map[string]string
	// meta tags the side's runs.
	meta map[string]string
	// queue is the queue its runs wait in ("" for the default).
	queue string
}

// newSide is the side of spec, labelled label, in group.
func newSide(label, group string, spec rundoc.Spec) (abSide, error) {
	_, secrets := rundoc.SplitSecrets(spec)
	specJSON, fingerprint, err := EncodeSpec(spec)
	if err != nil {
		return abSide{}, err
	}
	return abSide{label: label, group: group, workload: spec.Workload, specJSON: specJSON, fingerprint: fingerprint, secrets: secrets}, nil
}

// queueInterleaved stores warmups+reps rounds of the sides' runs in one
// transaction, all in A/B batch batch, and queues them in interleaveOrder
// (warm-up rounds first). Each side's measured runs are numbered after
// the last run its group already has (1, 2, … for a new group); warm-up
// runs are marked so. The runs are returned in queue order.
func (l *Launcher) queueInterleaved(ctx context.Context, batch string, sides []abSide, warmups, reps int) ([]*store.Run, error) {
	runs, order := interleavedRuns(batch, sides, warmups, reps)
	if err := l.store.AppendRuns(ctx, runs); err != nil {
		return nil, err
	}
	for k, r := range runs {
		if err := l.runs.Submit(ctx, r.ID, sides[order[k]].secrets); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// interleavedRuns are the runs (not yet stored) of warmups+reps rounds of
// the sides in interleaveOrder, all in A/B batch batch, and the side of
// each.
func interleavedRuns(batch string, sides []abSide, warmups, reps int) ([]*store.Run, []int) {
	order := interleaveOrder(len(sides), warmups+reps)
	runs := make([]*store.Run, len(order))
	for k, i := range order {
		side := sides[i]
		runs[k] = &store.Run{Label: side.label, Workload: side.workload, Status: rundoc.StatusQueued, Source: rundoc.SourceLaunched,
			Spec: side.specJSON, Fingerprint: side.fingerprint, GroupID: side.group, ABBatch: batch, Warmup: k/len(sides) < warmups,
			Meta: side.meta, Queue: side.queue}
	}
	return runs, order
}

// PrepareConfigs validates an A/B submission into one spec per
// configuration. It reports every bad field (a rundoc.FieldErrors): the
// single-run fields given beside configs, the workload, repetitions and
// warm-up runs, then each configuration's, named by its index:
// "configs[1].label", "configs[1].params.throughput",
// "configs[1].target.bootstrap_server".
func (l *Launcher) PrepareConfigs(req *Request) ([]rundoc.Spec, error) {
	var errs rundoc.FieldErrors
	const apart = "cannot be given with configs: each configuration has its own (configs[i].%s)"
	if req.Label != "" {
		errs.Add("label", apart, "label")
	}
	if req.Params != nil {
		errs.Add("params", apart, "params")
	}
	if req.Target != nil {
		errs.Add("target", apart, "target")
	}
	workloadOK := checkWorkload(req.Workload, &errs)
	countsOK := !errs.Has("repetitions") && !errs.Has("warmup_runs")
	checkCounts(req, &errs)
	countsOK = countsOK && !errs.Has("repetitions") && !errs.Has("warmup_runs")
	if err := errs.Append(rundoc.ValidateMeta(req.Meta)); err != nil {
		return nil, err
	}
	n := len(req.Configs)
	switch {
	case n < 2:
		errs.Add("configs", "needs at least two configurations to compare, got %d (for one, send label, params and target without configs)", n)
	case n > ui.MaxConfigs:
		errs.Add("configs", "at most %d configurations can be compared, got %d", ui.MaxConfigs, n)
	}
	if total := n * (req.Repetitions + req.WarmupRuns); countsOK && n <= ui.MaxConfigs && total > MaxCompareRuns {
		errs.Add("repetitions", "%d configurations × (%d repetitions + %d warm-up runs) make %d runs; one comparison holds at most %d",
			n, req.Repetitions, req.WarmupRuns, total, MaxCompareRuns)
	}
	if !workloadOK || n > ui.MaxConfigs {
		return nil, errs
	}
	specs := make([]rundoc.Spec, n)
	labels := map[string]int{}
	for i := range req.Configs {
		c := &req.Configs[i]
		p := fmt.Sprintf("configs[%d].", i)
		c.Label = checkConfigLabel(&errs, labels, i, fmt.Sprintf("configs[%d].", i), c.Label, "column in the comparison")
		if c.Workload != nil && *c.Workload != req.Workload {
			errs.Add(p+"workload", "is %q but the submission's is %q: the configurations of one comparison share its workload", *c.Workload, req.Workload)
		}
		spec, target, opts, err := l.prepareConfig(req.Workload, c.Params, c.Target, req.Queue, "")
		if err != nil {
			return nil, err
		}
		addConfigErrors(&errs, p, target, opts, c.Target != nil)
		specs[i] = spec
	}
	l.checkQueue(req, specs, &errs)
	if len(errs) == 0 {
		// Each run of each configuration is then a fleet of its own.
		l.checkConfigFleets(req, specs, &errs)
	}
	return specs, errs.Err()
}

// ABResult is what an A/B submission made.
type ABResult struct {
	Batch  string
	Groups []string // one per configuration, in their order
	Runs   []*store.Run
}

// CreateAB validates an A/B submission, then stores and queues its runs.
// A submission that also names a tool is refused on "tool": a tool's run
// is submitted on its own. With workers, each run of each configuration
// is a fleet of its own (queueInterleavedFleets), and Runs holds their
// parents.
func (l *Launcher) CreateAB(ctx context.Context, req *Request) (*ABResult, error) {
	if req.Tool != "" {
		var errs rundoc.FieldErrors
		l.checkTool(req, &errs)
		return nil, errs
	}
	specs, err := l.PrepareConfigs(req)
	if err != nil {
		return nil, err
	}
	runs := len(specs) * (req.Repetitions + req.WarmupRuns)
	n, made := runs, fmt.Sprintf("%d configurations × (%d repetitions + %d warm-up runs) make %d runs", len(specs), req.Repetitions, req.WarmupRuns, runs)
	fleets := specs[0].Workers > 1
	if fleets {
		// A fleet stores its parent and a run per shard.
		n = runs * (specs[0].Workers + 1)
		made = fmt.Sprintf("%s, fleets of %d shards: %d runs stored", made, specs[0].Workers, n)
	}
	if err := l.admitRuns(ctx, "repetitions", n, made); err != nil {
		return nil, err
	}
	res := &ABResult{Batch: randomID(8)}
	sides := make([]abSide, len(specs))
	for i, spec := range specs {
		group := randomID(8)
		if sides[i], err = newSide(req.Configs[i].Label, group, spec); err != nil {
			return nil, err
		}
		sides[i].meta, sides[i].queue = req.Meta, req.Queue
		res.Groups = append(res.Groups, group)
	}
	if fleets {
		res.Runs, err = l.queueInterleavedFleets(ctx, res.Batch, sides, specs, req)
	} else {
		res.Runs, err = l.queueInterleaved(ctx, res.Batch, sides, req.WarmupRuns, req.Repetitions)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkConfigLabel checks the label of configuration i of an A/B or sweep
// submission, trimmed, which it returns: required (it names the
// configuration's `names`), at most rundoc.MaxLabel bytes and unlike the
// labels before it, which labels records. p is the configuration's
// field prefix ("configs[i].").
func checkConfigLabel(errs *rundoc.FieldErrors, labels map[string]int, i int, p, label, names string) string {
	field := p + "label"
	label = strings.TrimSpace(label)
	first, seen := labels[label]
	switch {
	case label == "":
		errs.Add(field, "is required: it names the configuration's %s", names)
	case len(label) > rundoc.MaxLabel:
		errs.Add(field, "must be at most %d characters", rundoc.MaxLabel)
	case seen:
		errs.Add(field, "%q is the label of configs[%d] too: each configuration needs its own", label, first)
	default:
		labels[label] = i
	}
	return label
}

// addConfigErrors adds what prepareConfig found wrong with a
// configuration, under its prefix p ("configs[i]."): the target's errors
// point at the field the address or the credentials came from (its
// target object when it has one), the options' at its params.
func addConfigErrors(errs *rundoc.FieldErrors, p string, target, opts rundoc.FieldErrors, hasTarget bool) {
	for _, fe := range target {
		field := "params." + fe.Field
		if hasTarget {
			field = "target." + strings.ReplaceAll(fe.Field, "-", "_")
		}
		errs.Add(p+field, "%s", fe.Msg)
	}
	for _, fe := range opts {
		errs.Add(p+"params."+fe.Field, "%s", fe.Msg)
	}
}
