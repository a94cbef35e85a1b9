package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// A latency-vs-throughput sweep runs in two phases. Phase 1 measures each
// configuration's maximum rate: `repetitions` unthrottled runs, interleaved
// across configurations; the maximum is the median of the succeeded
// ones' achieved rate. Phase 2, queued by the sweeper (advanceSweeps) once
// every phase-1 run has ended, runs each configuration at each target rate
// (a percentage of its maximum), interleaved across configurations and
// rates, `repetitions` times. The sweep is stored (store.Sweep), so a
// server that was down when phase 1 ended queues phase 2 when it starts.

// sweepKind is what a sweep needs to know of a workload: the parameter
// that throttles it (records/s, -1 for none), the metric of the rate it
// achieved, its latency percentiles p50, p99 and p99.9, and the
// parameters the sweep sets on every run of it (fixed), so that the
// unthrottled runs of phase 1 measure the maximum of the same mode that
// phase 2 throttles. A workload absent here cannot be swept.
type sweepKind struct {
	rateParam, rateMetric string
	latency               [3]string
	fixed                 map[string]string
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
var sweepKinds = map[rundoc.Workload]sweepKind{
	rundoc.Producer: {rateParam: "throughput", rateMetric: "record-send-rate",
		latency: [3]string{"record-latency-p50", "record-latency-p99", "record-latency-p999"}},
	rundoc.E2E: {rateParam: "throughput", rateMetric: "consume-rate",
		latency: [3]string{"e2e-latency-p50", "e2e-latency-p99", "e2e-latency-p999"},
		fixed:   map[string]string{"mode": rundoc.ModeRate}},
}

// Sweep limits. A sweep's runs, both phases, count against
// Config.MaxRunsPerRequest.
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

// sweepRequest is the body of POST /api/presets/sweep.
type sweepRequest struct {
	Configs     []sweepConfigRequest `json:"configs"`
	RatesPct    []float64            `json:"rates_pct"`
	Repetitions *int                 `json:"repetitions"`
}

// sweepConfigRequest is one configuration: params as POST /api/runs takes
// them with the workload among them ("workload", producer when absent).
type sweepConfigRequest struct {
	Label  string                     `json:"label"`
	Params map[string]json.RawMessage `json:"params"`
	Queue  string                     `json:"queue,omitempty"`
	Target *targetRequest             `json:"target,omitempty"`
}

// sweepConfig is a configuration as the sweep stores it (store.Sweep's
// Configs): the redacted spec file, which holds no secret (sweeps refuse
// them), so phase 2 rebuilds the spec from it.
type sweepConfig struct {
	Label    string          `json:"label"`
	Queue    string          `json:"queue"`
	Workload rundoc.Workload `json:"workload"`
	Spec     json.RawMessage `json:"spec"`
}

// sweepMax is what phase 1 found for one configuration.
type sweepMax struct {
	Config        int     `json:"config"`
	RecordsPerSec float64 `json:"records_per_sec"`
	Runs          int     `json:"runs"`
	Note          string  `json:"note,omitempty"`
}

// prepareSweep validates a request into its configurations (with specs),
// rates and repetitions, reporting every bad field.
func (s *Server) prepareSweep(req *sweepRequest) ([]sweepConfig, []rundoc.Spec, []float64, int, error) {
	var errs rundoc.FieldErrors
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
	case n > maxConfigs:
		errs.Add("configs", "at most %d configurations, got %d", maxConfigs, n)
	}
	if total := n * reps * (1 + len(rates)); !errs.Has("repetitions") && n <= maxConfigs && total > s.cfg.MaxRunsPerRequest {
		_ = errs.Append(asFieldError(s.tooManyForRequest("repetitions", fmt.Sprintf("%d configurations × %d repetitions × (1 maximum + %d rates) make %d runs, both phases", n, reps, len(rates), total))))
	}
	if n > maxConfigs {
		return nil, nil, nil, 0, errs
	}
	configs := make([]sweepConfig, n)
	specs := make([]rundoc.Spec, n)
	labels := map[string]int{}
	for i := range req.Configs {
		c := &req.Configs[i]
		p := fmt.Sprintf("configs[%d].", i)
		c.Label = checkConfigLabel(&errs, labels, i, c.Label, "line on the chart")
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
				continue
			}
			workload = rundoc.Workload(w)
		}
		kind, ok := sweepKinds[workload]
		if !ok {
			errs.Add(p+"params.workload", "%q cannot be swept: a sweep throttles its runs and reads their latency percentiles, which %s", workload, sweepableList())
			continue
		}
		if _, ok := params[kind.rateParam]; ok {
			errs.Add(p+"params."+kind.rateParam, "is set by the sweep: unthrottled (-1) for the maximum, then each target rate")
			delete(params, kind.rateParam)
		}
		for k, v := range kind.fixed {
			var given string
			if raw, ok := params[k]; ok && (json.Unmarshal(raw, &given) != nil || given != v) {
				errs.Add(p+"params."+k, "is set by the sweep to %q for %s: %s", v, workload, fixedReason(workload))
			}
			params[k] = json.RawMessage(strconv.Quote(v))
		}
		spec, target, opts, err := s.prepareConfig(string(workload), params, c.Target, c.Queue, "")
		if err != nil {
			return nil, nil, nil, 0, err
		}
		addConfigErrors(&errs, p, target, opts, c.Target != nil)
		if _, secrets := rundoc.SplitSecrets(spec); len(secrets) > 0 {
			errs.Add(p+"params", "holds a password: a sweep queues its second phase later, possibly after a restart, and passwords are never stored; name a cluster whose credentials the server or worker holds (\"target\": {\"cluster\": NAME})")
		}
		var qerrs rundoc.FieldErrors
		qreq := createRequest{Queue: c.Queue}
		s.checkQueue(&qreq, []rundoc.Spec{spec}, &qerrs)
		for _, fe := range qerrs {
			errs.Add(p+"queue", "%s", fe.Msg)
		}
		specs[i] = spec
		configs[i] = sweepConfig{Label: c.Label, Queue: qreq.Queue, Workload: workload}
	}
	return configs, specs, rates, reps, errs.Err()
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
	return "only " + strings.Join(names, ", ") + " report"
}

// throttled is spec with its rate parameter set to rate (records/s; -1
// for no limit), validated again with validate.
func throttled(kind sweepKind, spec rundoc.Spec, rate float64, validate rundoc.Check) (rundoc.Spec, error) {
	file, err := spec.Redacted().Params()
	if err != nil {
		return rundoc.Spec{}, err
	}
	file[kind.rateParam] = json.RawMessage(strconv.FormatFloat(rate, 'g', -1, 64))
	for k, v := range kind.fixed {
		file[k] = json.RawMessage(strconv.Quote(v))
	}
	return rundoc.SpecFromParams(spec.Workload, file, validate)
}

// sweepGroup is the repetition group of one configuration at one rate
// ("max" for phase 1).
func sweepGroup(id string, config int, rate string) string {
	return "sw-" + id + "-c" + strconv.Itoa(config) + "-" + rate
}

// createSweep validates and stores a sweep with its phase-1 runs, then
// queues them.
func (s *Server) createSweep(ctx context.Context, req *sweepRequest) (string, error) {
	configs, specs, rates, reps, err := s.prepareSweep(req)
	if err != nil {
		return "", err
	}
	id := randomID(6)
	sides := make([]abSide, len(configs))
	for i := range configs {
		kind := sweepKinds[configs[i].Workload]
		spec, err := throttled(kind, specs[i], -1, s.validate)
		if err != nil {
			return "", fmt.Errorf("server: sweep: %w", err)
		}
		if sides[i], err = newSide(configs[i].Label, sweepGroup(id, i, "max"), spec); err != nil {
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
	if err := s.admitQueued(ctx, len(runs)); err != nil {
		return "", err
	}
	links := make([]store.SweepRun, len(runs))
	for k := range runs {
		links[k] = store.SweepRun{Config: order[k], Phase: 1, TargetRate: -1}
	}
	cj, _ := json.Marshal(configs)
	rj, _ := json.Marshal(rates)
	sw := &store.Sweep{ID: id, Phase: store.SweepMaxRate, Configs: string(cj), RatesPct: string(rj), Repetitions: reps}
	if err := s.store.CreateSweep(ctx, sw, runs, links); err != nil {
		return "", err
	}
	for _, r := range runs {
		if err := s.runs.Submit(ctx, r.ID, nil); err != nil {
			return "", err
		}
	}
	return id, nil
}

// specFileJSON is the spec file of spec (redacted) as JSON.
func specFileJSON(spec rundoc.Spec) (json.RawMessage, error) {
	specJSON, _, err := encodeSpec(spec)
	return json.RawMessage(specJSON), err
}

// startSweeper runs advanceSweeps at Start and then whenever the store
// changed (a run finished here, or, on PostgreSQL, anywhere), until Close.
func (s *Server) startSweeper(ctx context.Context) {
	s.sweeper.start(ctx, func(ctx context.Context) {
		var last uint64
		first := true
		check := func() {
			g := s.store.Generation()
			if !first && g == last {
				return
			}
			if err := s.advanceSweeps(ctx); err != nil {
				if ctx.Err() == nil {
					s.log.Warn("sweeps: queue second phases", "err", err)
				}
				return // tried again at the next tick
			}
			first, last = false, g
		}
		check()
		every(ctx, sweepPollEvery, check)
	})
}

// advanceSweeps queues the second phase of every sweep whose phase-1 runs
// have all ended, and ends every sweep whose phase-2 runs have: done, or
// failed when its runs were deleted (a sweep whose phase-1 runs were all
// deleted fails too). A canceled sweep is in neither phase, so nothing
// is ever queued for it.
func (s *Server) advanceSweeps(ctx context.Context) error {
	sweeps, err := s.store.ListSweeps(ctx, store.SweepMaxRate, 0)
	if err != nil {
		return err
	}
	for i := range sweeps {
		if err := s.advanceSweep(ctx, &sweeps[i]); err != nil {
			return err
		}
	}
	if sweeps, err = s.store.ListSweeps(ctx, store.SweepRates, 0); err != nil {
		return err
	}
	for i := range sweeps {
		if err := s.finishSweep(ctx, sweeps[i].ID); err != nil {
			return err
		}
	}
	return nil
}

// finishSweep ends sweep id, in SweepRates, once every run of its second
// phase has ended (done), or when none is left (failed: they were
// deleted).
func (s *Server) finishSweep(ctx context.Context, id string) error {
	_, links, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return err
	}
	var ids []uint
	for _, l := range links {
		if l.Phase == 2 {
			ids = append(ids, l.RunID)
		}
	}
	runs, err := s.store.SweepRunsMetrics(ctx, ids, nil)
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
	if err := s.store.EndSweep(ctx, id, end, store.SweepRates); err != nil && !errors.Is(err, store.ErrConflict) {
		return err // a conflict: canceled, or another server ended it
	}
	return nil
}

// rateMetrics are the rate metrics of every sweepable workload.
func rateMetrics() []string {
	var out []string
	for _, k := range sweepKinds {
		out = append(out, k.rateMetric)
	}
	return out
}

func (s *Server) advanceSweep(ctx context.Context, sw *store.Sweep) error {
	_, links, err := s.store.GetSweep(ctx, sw.ID)
	if err != nil {
		return err
	}
	var configs []sweepConfig
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
	runs, err := s.store.SweepRunsMetrics(ctx, ids, rateMetrics())
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		// Every phase-1 run was deleted: nothing to measure, ever.
		if err := s.store.EndSweep(ctx, sw.ID, store.SweepFailed, store.SweepMaxRate); err != nil && !errors.Is(err, store.ErrConflict) {
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
		if m, ok := r.Metric(sweepKinds[configs[c].Workload].rateMetric); ok && m.Value > 0 && !math.IsInf(m.Value, 0) {
			values[c] = append(values[c], m.Value)
		}
	}
	maxes := make([]sweepMax, len(configs))
	var sides []abSide
	var sideRate []float64
	var sideCfg []int
	for c, cfg := range configs {
		maxes[c] = sweepMax{Config: c, Runs: len(values[c])}
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
		base, err := rundoc.SpecFromParams(file.Workload, file.Params, s.validate)
		if err != nil {
			maxes[c].Note = "stored configuration no longer accepted: " + err.Error()
			continue
		}
		var low []string
		for _, pct := range rates {
			target := max * pct / 100
			if target < sweepMinRate {
				low = append(low, fmt.Sprintf("%v%% (%s records/s)", pct, ui.FormatNumber(target)))
				continue
			}
			spec, err := throttled(kind, base, target, s.validate)
			if err != nil {
				maxes[c].Note = "cannot throttle: " + err.Error()
				break
			}
			side, err := newSide(cfg.Label, sweepGroup(sw.ID, c, strconv.FormatFloat(pct, 'g', -1, 64)), spec)
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
	if err := s.store.AdvanceSweep(ctx, sw.ID, phase, string(mj), newRuns, newLinks); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // another server advanced it
		}
		return err
	}
	for _, r := range newRuns {
		// A run whose Submit fails stays queued and the lifecycle's next
		// Start queues it.
		if err := s.runs.Submit(ctx, r.ID, nil); err != nil {
			s.log.Warn("sweeps: submit", "sweep", sw.ID, "run", r.ID, "err", err)
		}
	}
	return nil
}

// sweepResult is a sweep as GET /api/sweeps/{id} answers it.
type sweepResult struct {
	Sweep string `json:"sweep"`
	URL   string `json:"url"`
	Phase string `json:"phase"`
	// Note says why a sweep ended as it did when that is not plain: it
	// was canceled, its runs were deleted, or it has no points.
	Note        string          `json:"note,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	RatesPct    []float64       `json:"rates_pct"`
	Repetitions int             `json:"repetitions"`
	Configs     []sweepConfigV  `json:"configs"`
	Phases      []sweepPhaseV   `json:"phases"`
	Runs        []sweepRunV     `json:"runs"`
	Points      []ui.SweepPoint `json:"points"`

	// stored are the runs read for Runs and Points, with their plotted
	// metrics as stored (units and directions), so that a report's
	// export reads them once.
	stored map[uint]rundoc.Run
}

type sweepConfigV struct {
	sweepConfig
	Metrics map[string]string `json:"metrics"`
	MaxRate *sweepMax         `json:"max_rate,omitempty"`
}

type sweepPhaseV struct {
	Phase    int    `json:"phase"`
	Name     string `json:"name"`
	Runs     int    `json:"runs"`
	Finished int    `json:"finished"`
}

type sweepRunV struct {
	ID         uint               `json:"id"`
	URL        string             `json:"url"`
	Config     int                `json:"config"`
	Label      string             `json:"label"`
	Phase      int                `json:"phase"`
	RatePct    float64            `json:"rate_pct"`
	TargetRate float64            `json:"target_rate"`
	Status     rundoc.Status      `json:"status"`
	Metrics    map[string]float64 `json:"metrics"`
}

// loadSweep reads sweep id with its runs and points.
func (s *Server) loadSweep(ctx context.Context, id string) (*sweepResult, error) {
	if !sweepIDRE.MatchString(id) {
		return nil, errNotFound
	}
	sw, links, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &sweepResult{Sweep: sw.ID, URL: ui.SweepURL(sw.ID), Phase: sw.Phase, CreatedAt: sw.CreatedAt, Repetitions: sw.Repetitions,
		Runs: []sweepRunV{}, Points: []ui.SweepPoint{}}
	var configs []sweepConfig
	if err := json.Unmarshal([]byte(sw.Configs), &configs); err != nil {
		return nil, fmt.Errorf("server: sweep %s: configurations: %w", id, err)
	}
	if err := json.Unmarshal([]byte(sw.RatesPct), &res.RatesPct); err != nil {
		return nil, fmt.Errorf("server: sweep %s: rates: %w", id, err)
	}
	var maxes []sweepMax
	if sw.MaxRates != "" {
		if err := json.Unmarshal([]byte(sw.MaxRates), &maxes); err != nil {
			return nil, fmt.Errorf("server: sweep %s: maximum rates: %w", id, err)
		}
	}
	var names []string
	for i, c := range configs {
		kind := sweepKinds[c.Workload]
		v := sweepConfigV{sweepConfig: c, Metrics: map[string]string{
			"throughput": kind.rateMetric, "p50": kind.latency[0], "p99": kind.latency[1], "p999": kind.latency[2]}}
		for j := range maxes {
			if maxes[j].Config == i {
				v.MaxRate = &maxes[j]
			}
		}
		res.Configs = append(res.Configs, v)
		names = append(names, kind.rateMetric, kind.latency[0], kind.latency[1], kind.latency[2])
	}
	ids := make([]uint, len(links))
	for i, l := range links {
		ids[i] = l.RunID
	}
	runs, err := s.store.SweepRunsMetrics(ctx, ids, names)
	if err != nil {
		return nil, err
	}
	byID := map[uint]rundoc.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	res.stored = byID
	res.Phases = []sweepPhaseV{{Phase: 1, Name: store.SweepMaxRate}, {Phase: 2, Name: store.SweepRates}}
	deleted := 0
	for _, l := range links {
		r, ok := byID[l.RunID]
		if !ok {
			deleted++
			continue // deleted since
		}
		if l.Config < 0 || l.Config >= len(configs) {
			continue
		}
		kind := sweepKinds[configs[l.Config].Workload]
		v := sweepRunV{ID: r.ID, URL: ui.RunURL(r.ID), Config: l.Config, Label: configs[l.Config].Label, Phase: l.Phase,
			RatePct: l.RatePct, TargetRate: l.TargetRate, Status: r.Status, Metrics: map[string]float64{}}
		for _, m := range r.Metrics {
			v.Metrics[m.Name] = m.Value
		}
		res.Runs = append(res.Runs, v)
		if l.Phase == 1 || l.Phase == 2 {
			ph := &res.Phases[l.Phase-1]
			ph.Runs++
			if r.Final() {
				ph.Finished++
			}
		}
		if l.Phase != 2 || r.Status != rundoc.StatusSucceeded {
			continue
		}
		tp, ok1 := v.Metrics[kind.rateMetric]
		p50, ok2 := v.Metrics[kind.latency[0]]
		p99, ok3 := v.Metrics[kind.latency[1]]
		p999, ok4 := v.Metrics[kind.latency[2]]
		if ok1 && ok2 && ok3 && ok4 {
			res.Points = append(res.Points, ui.SweepPoint{Label: v.Label, RatePct: l.RatePct, TargetRate: l.TargetRate, RunID: r.ID,
				URL: v.URL, Throughput: tp, P50: p50, P99: p99, P999: p999})
		}
	}
	res.Note = sweepNote(res, maxes, len(links), deleted)
	return res, nil
}

// sweepNote says why a sweep ended as it did, "" when it has not ended
// or ended with points and nothing to explain.
func sweepNote(res *sweepResult, maxes []sweepMax, links, deleted int) string {
	switch res.Phase {
	case store.SweepCanceled:
		return "canceled: its queued runs were canceled and its running runs stopped; no further phase is queued"
	case store.SweepFailed:
		return fmt.Sprintf("failed: its runs were deleted (%d of %d) before it ended, so nothing was left to measure", deleted, links)
	case store.SweepDone:
	default:
		return ""
	}
	if len(res.Points) > 0 {
		return ""
	}
	var why []string
	for _, m := range maxes {
		if m.Note != "" && m.Config >= 0 && m.Config < len(res.Configs) {
			why = append(why, res.Configs[m.Config].Label+": "+m.Note)
		}
	}
	phase2, succeeded := 0, 0
	for _, r := range res.Runs {
		if r.Phase == 2 {
			phase2++
			if r.Status == rundoc.StatusSucceeded {
				succeeded++
			}
		}
	}
	switch {
	case phase2 > 0 && succeeded == 0:
		why = append(why, fmt.Sprintf("none of its %d runs at the target rates succeeded", phase2))
	case phase2 > 0:
		why = append(why, "its succeeded runs at the target rates lack a throughput or latency percentile")
	case deleted > 0:
		why = append(why, fmt.Sprintf("%d of its runs were deleted", deleted))
	}
	if len(why) == 0 {
		why = append(why, "no run at a target rate was queued")
	}
	return "no points: " + strings.Join(why, "; ")
}

// apiCreateSweep answers POST /api/presets/sweep with 201 {"sweep", "url"}.
func (s *Server) apiCreateSweep(c *gin.Context) {
	var req sweepRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	id, err := s.createSweep(c.Request.Context(), &req)
	if err != nil {
		s.fail(c, err)
		return
	}
	u := ui.SweepURL(id)
	c.Header("Location", u)
	c.JSON(http.StatusCreated, gin.H{"sweep": id, "url": u})
}

// apiGetSweep answers GET /api/sweeps/{id}.
func (s *Server) apiGetSweep(c *gin.Context) {
	res, err := s.loadSweep(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// sweepsPage is /sweeps: the form and the recent sweeps.
func (s *Server) sweepsPage(c *gin.Context) {
	s.renderSweepForm(c, http.StatusOK, url.Values{}, nil)
}

func (s *Server) renderSweepForm(c *gin.Context, status int, form url.Values, errs map[string]string) {
	list, err := s.store.ListSweeps(c.Request.Context(), "", 20)
	if err != nil {
		s.fail(c, err)
		return
	}
	var rows []ui.SweepListRow
	for _, sw := range list {
		var configs []sweepConfig
		_ = json.Unmarshal([]byte(sw.Configs), &configs)
		var labels []string
		for _, cfg := range configs {
			labels = append(labels, cfg.Label)
		}
		rows = append(rows, ui.SweepListRow{ID: sw.ID, URL: ui.SweepURL(sw.ID), Phase: sw.Phase,
			Created: sw.CreatedAt.UTC().Format("2006-01-02 15:04"), Labels: strings.Join(labels, ", ")})
	}
	v := ui.NewSweepForm(form, errs, rows)
	v.Page = s.page(c, v.Page.Title)
	s.render(c, status, "sweeps", v)
}

// sweepForm handles the form: 303 to the sweep's page, or the form again
// with the bad fields named.
func (s *Server) sweepForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	var errs rundoc.FieldErrors
	req := sweepRequest{}
	for i := 0; i < ui.SweepFormRows; i++ {
		is := strconv.Itoa(i)
		label, params, queue := strings.TrimSpace(form.Get("label-"+is)), strings.TrimSpace(form.Get("params-"+is)), form.Get("queue-"+is)
		if label == "" && params == "" && strings.TrimSpace(queue) == "" {
			continue
		}
		cfg := sweepConfigRequest{Label: label, Queue: queue, Params: map[string]json.RawMessage{}}
		if params != "" {
			if err := json.Unmarshal([]byte(params), &cfg.Params); err != nil {
				errs.Add(fmt.Sprintf("configs[%d].params", len(req.Configs)), "must be a JSON object of parameters: %v", err)
			}
		}
		req.Configs = append(req.Configs, cfg)
	}
	if raw := strings.TrimSpace(form.Get(ui.SweepFieldRates)); raw != "" {
		req.RatesPct = []float64{}
		for _, part := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '%' }) {
			f, err := strconv.ParseFloat(part, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				errs.Add("rates_pct", "%q is not a number", part)
				continue
			}
			req.RatesPct = append(req.RatesPct, f)
		}
	}
	if raw := strings.TrimSpace(form.Get(ui.SweepFieldRepetitions)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			errs.Add("repetitions", "must be a whole number, got %q", raw)
		} else {
			req.Repetitions = &n
		}
	}
	var id string
	var err error
	if len(errs) == 0 {
		id, err = s.createSweep(c.Request.Context(), &req)
	} else {
		_, _, _, _, err = s.prepareSweep(&req)
	}
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		s.renderSweepForm(c, http.StatusBadRequest, form, formErrors(errs))
		return
	}
	c.Redirect(http.StatusSeeOther, ui.SweepURL(id))
}

// sweepPage is /sweeps/<id>: the phases, maximum rates, the three charts
// and the runs; it reloads itself until every run has ended.
func (s *Server) sweepPage(c *gin.Context) {
	res, err := s.loadSweep(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := sweepView(res)
	v.Page = s.page(c, v.Page.Title)
	s.render(c, http.StatusOK, "sweeps", v)
}

// sweepView is the result page's view of res.
func sweepView(res *sweepResult) ui.SweepView {
	v := ui.SweepView{Page: ui.Page{Title: "Sweep " + res.Sweep}, Result: true, ID: res.Sweep, Phase: res.Phase,
		APIURL: "/api/sweeps/" + res.Sweep, Note: res.Note}
	if !store.SweepEnded(res.Phase) {
		v.CancelURL = ui.SweepURL(res.Sweep) + "/cancel"
	}
	var labels []string
	for _, c := range res.Configs {
		labels = append(labels, c.Label)
		row := ui.SweepMaxRow{Label: c.Label, Queue: c.Queue, Workload: string(c.Workload)}
		if c.MaxRate != nil {
			row.Runs, row.Note = c.MaxRate.Runs, c.MaxRate.Note
			if c.MaxRate.RecordsPerSec > 0 {
				row.MaxRate = ui.FormatNumber(c.MaxRate.RecordsPerSec)
			}
		}
		v.MaxRates = append(v.MaxRates, row)
	}
	v.Metrics = sweepMetricsNote(res.Configs)
	for _, r := range res.Runs {
		row := ui.SweepRunRow{ID: r.ID, URL: r.URL, Label: r.Label, Phase: r.Phase, Status: string(r.Status), Rate: "max", TargetRate: "unthrottled"}
		if r.Phase == 2 {
			row.Rate = strconv.FormatFloat(r.RatePct, 'g', -1, 64) + "%"
			row.TargetRate = ui.FormatNumber(r.TargetRate)
		}
		kind := res.Configs[r.Config].Metrics
		num := func(name string) string {
			if val, ok := r.Metrics[kind[name]]; ok {
				return ui.FormatNumber(val)
			}
			return "—"
		}
		row.Throughput, row.P50, row.P99, row.P999 = num("throughput"), num("p50"), num("p99"), num("p999")
		v.Runs = append(v.Runs, row)
		v.Total++
		if r.Status.Final() {
			v.Done++
		}
	}
	v.Refresh = !store.SweepEnded(res.Phase) || v.Done < v.Total
	v.Charts = ui.SweepCharts(labels, res.Points)
	return v
}

// sweepMetricsNote names the metrics plotted, once per workload: the
// sweep's page and a report's sweep section both show it.
func sweepMetricsNote(configs []sweepConfigV) string {
	var metrics []string
	seen := map[string]bool{}
	for _, c := range configs {
		m := c.Metrics["throughput"] + "; " + c.Metrics["p50"] + ", " + c.Metrics["p99"] + ", " + c.Metrics["p999"]
		if !seen[m] {
			seen[m] = true
			metrics = append(metrics, string(c.Workload)+": "+m)
		}
	}
	return strings.Join(metrics, "; ")
}
