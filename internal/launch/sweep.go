package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// A latency-vs-throughput sweep runs in two phases. Phase 1 measures each
// configuration's maximum rate: `repetitions` unthrottled runs, interleaved
// across configurations; the maximum is the median of the succeeded
// ones' achieved rate. Phase 2, queued by the sweep loop (AdvanceSweeps) once
// every phase-1 run has ended, runs each configuration at each target rate
// (a percentage of its maximum), interleaved across configurations and
// rates, `repetitions` times. The sweep is stored (store.Sweep), so a
// server that was down when phase 1 ended queues phase 2 when it starts.

// SweepKind is what a sweep needs to know of a workload: the parameter
// that throttles it (records/s, -1 for none), the metric of the rate it
// achieved, its latency percentiles p50, p99 and p99.9, and the
// parameters the sweep sets on every run of it (fixed), so that the
// unthrottled runs of phase 1 measure the maximum of the same mode that
// phase 2 throttles. A workload absent from sweepKinds cannot be swept.
type SweepKind struct {
	RateParam, RateMetric string
	Latency               [3]string
	fixed                 map[string]string
}

// SweepKindOf is what a sweep knows of workload w; ok is false when w
// cannot be swept.
func SweepKindOf(w rundoc.Workload) (kind SweepKind, ok bool) {
	kind, ok = sweepKinds[w]
	return kind, ok
}

// sweepKinds: adding a workload to sweeps is one entry here.
//
// e2e: --throughput -1 alone is Kafka's one-at-a-time mode, which has no
// maximum rate, so every e2e run of a sweep is rate mode (mode=rate);
// phase 1's are unthrottled there: the producer as fast as it can with the
// consumer reading concurrently. The achieved rate is consume-rate, the
// records the consumer received per second of a window that closes only
// once every acknowledged record arrived: the rate that crossed end to
// end, which is what the latency is plotted against (in a run that passed
// its count check it equals record-send-rate).
var sweepKinds = map[rundoc.Workload]SweepKind{
	rundoc.Producer: {RateParam: "throughput", RateMetric: "record-send-rate",
		Latency: [3]string{"record-latency-p50", "record-latency-p99", "record-latency-p999"}},
	rundoc.E2E: {RateParam: "throughput", RateMetric: "consume-rate",
		Latency: [3]string{"e2e-latency-p50", "e2e-latency-p99", "e2e-latency-p999"},
		fixed:   map[string]string{"mode": rundoc.ModeRate}},
}

// Sweep limits. A sweep's runs, both phases, count against
// Options.MaxRunsPerRequest.
const (
	sweepDefaultReps = 3
	sweepMaxReps     = 10
	sweepMaxRates    = 20
	sweepMinPct      = 0.1
	sweepMaxPct      = 1000
	sweepPollEvery   = 500 * time.Millisecond
	// sweepMinRate is the lowest target rate (records/s) a second-phase
	// run is queued at: a lower percentage of a configuration's maximum
	// is left out, with a note saying so.
	sweepMinRate = 1.0
)

var sweepIDRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

// ValidSweepID reports whether id is a sweep id as CreateSweep makes
// them (12 hexadecimal digits): any other names no sweep.
func ValidSweepID(id string) bool { return sweepIDRE.MatchString(id) }

// SweepRequest is the body of POST /api/presets/sweep, as the API
// client declares it.
type SweepRequest = wire.CreateSweep

// SweepConfigRequest is one configuration of a SweepRequest.
type SweepConfigRequest = wire.SweepConfigRequest

// SweepConfig is a configuration as the sweep stores it (store.Sweep's
// Configs): the redacted spec file, which holds no secret (sweeps refuse
// them), so phase 2 rebuilds the spec from it.
type SweepConfig struct {
	Label    string          `json:"label"`
	Queue    string          `json:"queue"`
	Workload rundoc.Workload `json:"workload"`
	Spec     json.RawMessage `json:"spec"`
}

// SweepMax is what phase 1 found for one configuration (store.Sweep's
// MaxRates).
type SweepMax = wire.SweepMax

// PrepareSweep validates a request into its configurations (with specs),
// rates and repetitions, reporting every bad field.
func (l *Launcher) PrepareSweep(req *SweepRequest) ([]SweepConfig, []rundoc.Spec, []float64, int, error) {
	var errs rundoc.FieldErrors
	if req.Workers > 1 {
		errs.Add("workers", "a sweep runs in one process per run: its first phase finds each configuration's maximum with an unthrottled run, "+
			"which a fleet cannot divide among workers (its shards need a common duration); submit fleet runs at the rates you want "+
			"(POST /api/runs with workers, or configs for an A/B comparison of them)")
	}
	reps := sweepDefaultReps
	if req.Repetitions != nil {
		reps = *req.Repetitions
	}
	if reps < 1 || reps > sweepMaxReps {
		errs.Add("repetitions", "must be between 1 and %d, got %d", sweepMaxReps, reps)
	}
	rates := req.RatesPct
	if rates == nil {
		rates = ui.DefaultSweepRates
	}
	switch {
	case len(rates) == 0:
		errs.Add("rates_pct", "needs at least one target rate (percent of the maximum rate)")
	case len(rates) > sweepMaxRates:
		errs.Add("rates_pct", "at most %d target rates, got %d", sweepMaxRates, len(rates))
	}
	seen := map[float64]bool{}
	for i, r := range rates {
		switch {
		case !(r >= sweepMinPct && r <= sweepMaxPct):
			errs.Add("rates_pct", "rates_pct[%d] must be at least %v and at most %d (percent of the maximum rate; a target must give at least %v record/s), got %v", i, sweepMinPct, sweepMaxPct, sweepMinRate, r)
		case seen[r]:
			errs.Add("rates_pct", "rates_pct[%d]: %v%% is given twice", i, r)
		}
		seen[r] = true
	}
	n := len(req.Configs)
	switch {
	case n == 0:
		errs.Add("configs", "needs at least one configuration")
	case n > ui.MaxConfigs:
		errs.Add("configs", "at most %d configurations, got %d", ui.MaxConfigs, n)
	}
	if total := n * reps * (1 + len(rates)); !errs.Has("repetitions") && n <= ui.MaxConfigs && total > l.opts.MaxRunsPerRequest {
		_ = errs.Append(l.tooManyForRequest("repetitions", fmt.Sprintf("%d configurations × %d repetitions × (1 maximum + %d rates) make %d runs, both phases", n, reps, len(rates), total)))
	}
	if n > ui.MaxConfigs {
		return nil, nil, nil, 0, errs
	}
	configs := make([]SweepConfig, n)
	specs := make([]rundoc.Spec, n)
	labels := map[string]int{}
	for i := range req.Configs {
		c, spec, err := l.prepareRateConfig(&errs, labels, i, fmt.Sprintf("configs[%d].", i), &req.Configs[i], sweepSets)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		configs[i], specs[i] = c, spec
	}
	return configs, specs, rates, reps, errs.Err()
}

// rateSetter is who throttles a configuration's runs, as its messages
// name it: a sweep or a latency-target search.
// labels says what its label names.
type rateSetter struct{ noun, verb, labels string }

var sweepSets = rateSetter{noun: "the sweep", verb: "swept", labels: "line on the chart"}

// prepareRateConfig validates configuration c of a sweep or a search
// (field names start with p; i is its index, labels the labels so far)
// into what it stores and its spec. The workload must be one whose runs
// can be throttled (sweepKinds); its rate parameter is the sweep's or
// search's to set, and its fixed parameters are set. Bad fields go into
// errs; the error returned is for a failure that is not the request's.
func (l *Launcher) prepareRateConfig(errs *rundoc.FieldErrors, labels map[string]int, i int, p string, c *SweepConfigRequest, by rateSetter) (SweepConfig, rundoc.Spec, error) {
	c.Label = checkConfigLabel(errs, labels, i, p, c.Label, by.labels)
	workload := rundoc.Producer
	params := map[string]json.RawMessage{}
	for k, v := range c.Params {
		params[k] = v
	}
	if raw, ok := params["workload"]; ok {
		delete(params, "workload")
		var w string
		if err := json.Unmarshal(raw, &w); err != nil {
			errs.Add(p+"params.workload", "must be a string")
			return SweepConfig{}, rundoc.Spec{}, nil
		}
		workload = rundoc.Workload(w)
	}
	kind, ok := sweepKinds[workload]
	if !ok {
		errs.Add(p+"params.workload", "%q cannot be %s: %s throttles its runs and reads their latency, which %s", workload, by.verb, by.noun, sweepableList())
		return SweepConfig{}, rundoc.Spec{}, nil
	}
	if _, ok := params[kind.RateParam]; ok {
		errs.Add(p+"params."+kind.RateParam, "is set by %s: unthrottled (-1) for the maximum, then each rate it tries", by.noun)
		delete(params, kind.RateParam)
	}
	for k, v := range kind.fixed {
		var given string
		if raw, ok := params[k]; ok && (json.Unmarshal(raw, &given) != nil || given != v) {
			errs.Add(p+"params."+k, "is set by %s to %q for %s: %s", by.noun, v, workload, fixedReason(workload))
		}
		params[k] = json.RawMessage(strconv.Quote(v))
	}
	spec, target, opts, err := l.prepareConfig(string(workload), params, c.Target, c.Queue, "")
	if err != nil {
		return SweepConfig{}, rundoc.Spec{}, err
	}
	addConfigErrors(errs, p, target, opts, c.Target != nil)
	if _, secrets := rundoc.SplitSecrets(spec); len(secrets) > 0 {
		errs.Add(p+"params", "holds a password: %s queues runs later, possibly after a restart, and passwords are never stored; name a cluster whose credentials the server or worker holds (\"target\": {\"cluster\": NAME})", by.noun)
	}
	var qerrs rundoc.FieldErrors
	qreq := Request{Queue: c.Queue}
	l.checkQueue(&qreq, []rundoc.Spec{spec}, &qerrs)
	for _, fe := range qerrs {
		errs.Add(p+"queue", "%s", fe.Msg)
	}
	return SweepConfig{Label: c.Label, Queue: qreq.Queue, Workload: workload}, spec, nil
}

// fixedReason says why a sweep sets a workload's fixed parameters.
func fixedReason(w rundoc.Workload) string {
	if w == rundoc.E2E {
		return "Kafka's mode sends one record at a time and has no maximum rate to sweep; rate mode's maximum is its producer unthrottled, with the consumer reading concurrently"
	}
	return "the sweep needs it"
}

// sweepableList names the workloads sweeps take, in a stable order.
func sweepableList() string {
	var names []string
	for w := range sweepKinds {
		names = append(names, string(w))
	}
	slices.Sort(names)
	return "only " + strings.Join(names, ", ") + " do"
}

// throttled is spec with its rate parameter set to rate (records/s; -1
// for no limit).
func throttled(kind SweepKind, spec rundoc.Spec, rate float64, validate rundoc.Check) (rundoc.Spec, error) {
	file, err := spec.Redacted().Params()
	if err != nil {
		return rundoc.Spec{}, err
	}
	file[kind.RateParam] = json.RawMessage(strconv.FormatFloat(rate, 'g', -1, 64))
	for k, v := range kind.fixed {
		file[k] = json.RawMessage(strconv.Quote(v))
	}
	return rundoc.SpecFromParams(spec.Workload, file, validate)
}

// SweepGroup is the repetition group of sweep id's configuration config
// at one rate ("max" for phase 1).
func SweepGroup(id string, config int, rate string) string {
	return "sw-" + id + "-c" + strconv.Itoa(config) + "-" + rate
}

// CreateSweep validates and stores a sweep with its phase-1 runs, then
// queues them; it returns the sweep's id.
func (l *Launcher) CreateSweep(ctx context.Context, req *SweepRequest) (string, error) {
	configs, specs, rates, reps, err := l.PrepareSweep(req)
	if err != nil {
		return "", err
	}
	id := randomID(6)
	sides := make([]abSide, len(configs))
	for i := range configs {
		kind := sweepKinds[configs[i].Workload]
		spec, err := throttled(kind, specs[i], -1, l.opts.Validate)
		if err != nil {
			return "", fmt.Errorf("launch: sweep: %w", err)
		}
		if sides[i], err = newSide(configs[i].Label, SweepGroup(id, i, "max"), spec); err != nil {
			return "", err
		}
		sides[i].queue = configs[i].Queue
		if configs[i].Spec, err = specFileJSON(specs[i]); err != nil {
			return "", err
		}
	}
	runs, order := interleavedRuns("sw-"+id+"-max", sides, 0, reps)
	// The second phase, admitted with the request, is queued when the
	// first ends whatever the queues hold then.
	if err := l.admitQueued(ctx, len(runs)); err != nil {
		return "", err
	}
	links := make([]store.SweepRun, len(runs))
	for k := range runs {
		links[k] = store.SweepRun{Config: order[k], Phase: 1, TargetRate: -1}
	}
	cj, _ := json.Marshal(configs)
	rj, _ := json.Marshal(rates)
	sw := &store.Sweep{ID: id, Phase: store.SweepMaxRate, Configs: string(cj), RatesPct: string(rj), Repetitions: reps}
	if err := l.store.CreateSweep(ctx, sw, runs, links); err != nil {
		return "", err
	}
	for _, r := range runs {
		if err := l.runs.Submit(ctx, r.ID, nil); err != nil {
			return "", err
		}
	}
	return id, nil
}

// specFileJSON is the spec file of spec (redacted) as JSON.
func specFileJSON(spec rundoc.Spec) (json.RawMessage, error) {
	specJSON, _, err := EncodeSpec(spec)
	return json.RawMessage(specJSON), err
}

// AdvanceSweeps queues the second phase of every sweep whose phase-1 runs
// have all ended, and ends every sweep whose phase-2 runs have: done, or
// failed when its runs were deleted (a sweep whose phase-1 runs were all
// deleted fails too). A canceled sweep is in neither phase, so nothing
// is ever queued for it. Then it takes every latency-target search a
// step on (AdvanceSLOs) and every fleet run (AdvanceFleets): the same
// loop drives them all.
func (l *Launcher) AdvanceSweeps(ctx context.Context) error {
	sweeps, err := l.store.ListSweeps(ctx, store.SweepMaxRate, 0)
	if err != nil {
		return err
	}
	for i := range sweeps {
		if err := l.advanceSweep(ctx, &sweeps[i]); err != nil {
			return err
		}
	}
	if sweeps, err = l.store.ListSweeps(ctx, store.SweepRates, 0); err != nil {
		return err
	}
	for i := range sweeps {
		if err := l.finishSweep(ctx, sweeps[i].ID); err != nil {
			return err
		}
	}
	if err := l.AdvanceSLOs(ctx); err != nil {
		return err
	}
	return l.AdvanceFleets(ctx)
}

// finishSweep ends sweep id, in SweepRates, once every run of its second
// phase has ended (done), or when none is left (failed: they were
// deleted).
func (l *Launcher) finishSweep(ctx context.Context, id string) error {
	_, links, err := l.store.GetSweep(ctx, id)
	if err != nil {
		return err
	}
	var ids []uint
	for _, l := range links {
		if l.Phase == 2 {
			ids = append(ids, l.RunID)
		}
	}
	runs, err := l.store.SweepRunsMetrics(ctx, ids, nil)
	if err != nil {
		return err
	}
	end := store.SweepFailed
	if len(runs) > 0 {
		end = store.SweepDone
	}
	for _, r := range runs {
		if !r.Final() {
			return nil // not yet
		}
	}
	if err := l.store.EndSweep(ctx, id, end, store.SweepRates); err != nil && !errors.Is(err, store.ErrConflict) {
		return err // a conflict: canceled, or another server ended it
	}
	return nil
}

// rateMetrics are the rate metrics of every sweepable workload.
func rateMetrics() []string {
	var out []string
	for _, k := range sweepKinds {
		out = append(out, k.RateMetric)
	}
	return out
}

// advanceSweep queues the second phase of sw once its first has ended.
func (l *Launcher) advanceSweep(ctx context.Context, sw *store.Sweep) error {
	_, links, err := l.store.GetSweep(ctx, sw.ID)
	if err != nil {
		return err
	}
	var configs []SweepConfig
	var rates []float64
	if err := json.Unmarshal([]byte(sw.Configs), &configs); err != nil {
		return fmt.Errorf("sweep %s: configurations: %w", sw.ID, err)
	}
	if err := json.Unmarshal([]byte(sw.RatesPct), &rates); err != nil {
		return fmt.Errorf("sweep %s: rates: %w", sw.ID, err)
	}
	var ids []uint
	cfgOf := map[uint]int{}
	for _, l := range links {
		if l.Phase == 1 {
			ids = append(ids, l.RunID)
			cfgOf[l.RunID] = l.Config
		}
	}
	runs, err := l.store.SweepRunsMetrics(ctx, ids, rateMetrics())
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		// Every phase-1 run was deleted: nothing to measure, ever.
		if err := l.store.EndSweep(ctx, sw.ID, store.SweepFailed, store.SweepMaxRate); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
		return nil
	}
	values := make([][]float64, len(configs))
	for _, r := range runs {
		if !r.Final() {
			return nil // not yet
		}
		c := cfgOf[r.ID]
		if c < 0 || c >= len(configs) || r.Status != rundoc.StatusSucceeded {
			continue
		}
		if m, ok := r.Metric(sweepKinds[configs[c].Workload].RateMetric); ok && m.Value > 0 && !math.IsInf(m.Value, 0) {
			values[c] = append(values[c], m.Value)
		}
	}
	maxes := make([]SweepMax, len(configs))
	var sides []abSide
	var sideRate []float64
	var sideCfg []int
	for c, cfg := range configs {
		maxes[c] = SweepMax{Config: c, Runs: len(values[c])}
		if len(values[c]) == 0 {
			maxes[c].Note = "no unthrottled run succeeded: no rates to sweep"
			continue
		}
		max := median.Of(values[c])
		maxes[c].RecordsPerSec = max
		kind := sweepKinds[cfg.Workload]
		file, err := rundoc.ParseSpecFile(cfg.Spec)
		if err != nil {
			return fmt.Errorf("sweep %s: configs[%d]: %w", sw.ID, c, err)
		}
		base, err := rundoc.SpecFromParams(file.Workload, file.Params, l.opts.Validate)
		if err != nil {
			maxes[c].Note = "stored configuration no longer accepted: " + err.Error()
			continue
		}
		var low []string
		for _, pct := range rates {
			target := max * pct / 100
			if target < sweepMinRate {
				low = append(low, fmt.Sprintf("%v%% (%s records/s)", pct, numfmt.Number(target)))
				continue
			}
			spec, err := throttled(kind, base, target, l.opts.Validate)
			if err != nil {
				maxes[c].Note = "cannot throttle: " + err.Error()
				break
			}
			side, err := newSide(cfg.Label, SweepGroup(sw.ID, c, strconv.FormatFloat(pct, 'g', -1, 64)), spec)
			if err != nil {
				return err
			}
			side.queue = cfg.Queue
			sides, sideRate, sideCfg = append(sides, side), append(sideRate, pct), append(sideCfg, c)
		}
		switch {
		case len(low) == len(rates):
			maxes[c].Note = fmt.Sprintf("every target rate is below %v record/s of its maximum: no runs at target rates", sweepMinRate)
		case len(low) > 0 && maxes[c].Note == "":
			maxes[c].Note = fmt.Sprintf("left out, below %v record/s: %s", sweepMinRate, strings.Join(low, ", "))
		}
	}
	var newRuns []*store.Run
	var newLinks []store.SweepRun
	phase := store.SweepDone
	if len(sides) > 0 {
		phase = store.SweepRates
		var order []int
		newRuns, order = interleavedRuns("sw-"+sw.ID+"-rates", sides, 0, sw.Repetitions)
		newLinks = make([]store.SweepRun, len(newRuns))
		for k, i := range order {
			c := sideCfg[i]
			newLinks[k] = store.SweepRun{Config: c, Phase: 2, RatePct: sideRate[i], TargetRate: maxes[c].RecordsPerSec * sideRate[i] / 100}
		}
	}
	mj, _ := json.Marshal(maxes)
	if err := l.store.AdvanceSweep(ctx, sw.ID, phase, string(mj), newRuns, newLinks); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // another server advanced it
		}
		return err
	}
	for _, r := range newRuns {
		// A run whose Submit fails stays queued and the lifecycle's next
		// Start queues it.
		if err := l.runs.Submit(ctx, r.ID, nil); err != nil {
			l.log.Warn("sweeps: submit", "sweep", sw.ID, "run", r.ID, "err", err)
		}
	}
	return nil
}
