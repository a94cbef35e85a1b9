// Latency-target searches (POST /api/presets/slo): the highest rate at
// which a configuration's latency percentile stays under a target.
// internal/slo decides each next probe from the probes stored so far;
// here the probes are read from the stored runs, their runs queued one
// step at a time and the search ended, exactly once across servers: each
// step is stored by a conditional update of the search's step count
// (store.AdvanceSLO, store.EndSLO), so two servers that decide the same
// step store it once.

package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/slo"
	"github.com/kbench/kbench/internal/store"
)

// SLORequest is the body of POST /api/presets/slo.
type SLORequest = wire.CreateSLO

// Defaults of a search's settings.
const (
	sloDefaultPercentile = 99
	sloDefaultPrecision  = 2
	sloDefaultReps       = 1
)

var sloSets = rateSetter{noun: "the search", verb: "searched", labels: "runs"}

// sloLatency is the histogram whose percentile a search holds to its
// target, per workload: the latency from each record's intended send
// time, which a throttled run measures (coordinated omission corrected),
// so a producer that falls behind its schedule shows the wait.
var sloLatency = map[rundoc.Workload]string{
	rundoc.Producer: rundoc.HistRecordLatencyIntended,
	rundoc.E2E:      rundoc.HistE2ELatencyIntended,
}

// SLOSettings are a search's settings as it stores them (store.SLO's
// Search), named as the API names them.
type SLOSettings struct {
	Percentile   float64 `json:"percentile"`
	LatencyMs    float64 `json:"latency_ms"`
	PrecisionPct float64 `json:"precision_pct"`
	Repetitions  int     `json:"repetitions"`
	MinRate      float64 `json:"min_rate"`
	MaxRate      float64 `json:"max_rate"`
	// MaxProbes is the most probes the search makes before it gives up:
	// slo.MaxProbes, or fewer when its repetitions would otherwise queue
	// more runs than one request may (--max-runs-per-request).
	MaxProbes int `json:"max_probes"`
}

// Config is the settings as internal/slo takes them.
func (s SLOSettings) Config() slo.Config {
	return slo.Config{Percentile: s.Percentile, LatencyMs: s.LatencyMs, PrecisionPct: s.PrecisionPct,
		Repetitions: s.Repetitions, MinRate: s.MinRate, MaxRate: s.MaxRate, Probes: s.MaxProbes}
}

// sloMinProbes is the fewest probes a search is allowed: the maximum,
// a bracket of a few halvings and a few bisections.
const sloMinProbes = 10

// PrepareSLO validates a request into the configuration it measures,
// its spec and its settings, reporting every bad field.
func (l *Launcher) PrepareSLO(req *SLORequest) (SweepConfig, rundoc.Spec, SLOSettings, error) {
	var errs rundoc.FieldErrors
	set := SLOSettings{Percentile: sloDefaultPercentile, LatencyMs: req.LatencyMs, PrecisionPct: sloDefaultPrecision,
		Repetitions: sloDefaultReps, MinRate: req.MinRate, MaxRate: req.MaxRate}
	if req.Percentile != nil {
		set.Percentile = *req.Percentile
	}
	if req.PrecisionPct != nil {
		set.PrecisionPct = *req.PrecisionPct
	}
	if req.Repetitions != nil {
		set.Repetitions = *req.Repetitions
	}
	for _, fe := range set.Config().Errors() {
		errs.Add(fe.Field, "%s", fe.Msg)
	}
	cfg, spec, err := l.prepareRateConfig(&errs, map[string]int{}, 0, "config.", &req.Config, sloSets)
	if err != nil {
		return SweepConfig{}, rundoc.Spec{}, SLOSettings{}, err
	}
	// A search queues a run at a time, at most MaxProbes probes of its
	// repetitions: they count against the request's limit, which bounds
	// the probes of a search with many repetitions.
	if !errs.Has("repetitions") && set.Repetitions > 0 {
		set.MaxProbes = min(slo.MaxProbes, l.opts.MaxRunsPerRequest/set.Repetitions)
		if set.MaxProbes < sloMinProbes {
			_ = errs.Append(l.tooManyForRequest("repetitions", fmt.Sprintf("%d repetitions leave room for %d probes, fewer than the %d a search needs", set.Repetitions, set.MaxProbes, sloMinProbes)))
		}
	}
	if err := errs.Err(); err != nil {
		return SweepConfig{}, rundoc.Spec{}, SLOSettings{}, err
	}
	cfg.Spec, err = specFileJSON(spec)
	return cfg, spec, set, err
}

// ValidSLOID reports whether id is a search id as CreateSLO makes them.
func ValidSLOID(id string) bool { return sweepIDRE.MatchString(id) }

// SLOGroup is the repetition group of search id's probe at rate ("max"
// for the unthrottled probe).
func SLOGroup(id string, probe int, rate string) string {
	return "slo-" + id + "-p" + strconv.Itoa(probe) + "-" + rate
}

// CreateSLO validates and stores a search with its first run queued;
// it returns the search's id.
func (l *Launcher) CreateSLO(ctx context.Context, req *SLORequest) (string, error) {
	cfg, spec, set, err := l.PrepareSLO(req)
	if err != nil {
		return "", err
	}
	id := randomID(6)
	d := slo.Decide(set.Config(), nil)
	if d.Done || d.Next == nil {
		return "", fmt.Errorf("launch: slo %s: a search with no probe to start with", id)
	}
	run, err := l.probeRun(id, cfg, spec, 0, *d.Next, d.MinRecords)
	if err != nil {
		return "", err
	}
	if err := l.admitQueued(ctx, 1); err != nil {
		return "", err
	}
	cj, _ := json.Marshal(cfg)
	sj, _ := json.Marshal(set)
	rec := &store.SLO{ID: id, Config: string(cj), Search: string(sj)}
	if err := l.store.CreateSLO(ctx, rec, []*store.Run{run}, []store.SLORun{{Probe: 0, Rate: d.Next.Rate, Max: d.Next.Max}}); err != nil {
		return "", err
	}
	if err := l.runs.Submit(ctx, run.ID, nil); err != nil {
		return "", err
	}
	return id, nil
}

// probeRun is the queued run of probe number probe of search id: the
// configuration throttled to the probe's rate (unthrottled for the
// maximum), measuring at least minRecords records after its warm-up so
// that its histogram holds what the percentile needs.
func (l *Launcher) probeRun(id string, cfg SweepConfig, base rundoc.Spec, probe int, p slo.Probe, minRecords int64) (*store.Run, error) {
	kind := sweepKinds[cfg.Workload]
	rate, name := p.Rate, strconv.FormatFloat(p.Rate, 'f', -1, 64)
	if p.Max {
		rate, name = -1, "max"
	}
	spec, err := throttled(kind, base, rate, l.opts.Validate)
	if err != nil {
		return nil, fmt.Errorf("launch: slo %s: %w", id, err)
	}
	if spec, err = withSamples(spec, rate, minRecords, l.opts.Validate); err != nil {
		return nil, fmt.Errorf("launch: slo %s: %w", id, err)
	}
	side, err := newSide(cfg.Label, SLOGroup(id, probe, name), spec)
	if err != nil {
		return nil, err
	}
	side.queue = cfg.Queue
	runs, _ := interleavedRuns("slo-"+id, []abSide{side}, 0, 1)
	return runs[0], nil
}

// withSamples is spec made to measure at least n records after its
// warm-up: its count raised, or its duration lengthened at rate
// (records/s; -1 unthrottled, whose duration stays).
func withSamples(spec rundoc.Spec, rate float64, n int64, validate rundoc.Check) (rundoc.Spec, error) {
	file, err := spec.Redacted().Params()
	if err != nil {
		return rundoc.Spec{}, err
	}
	switch {
	case spec.Duration > 0 && rate > 0:
		// 10 % over: a run's first and last moments are not measured.
		need := math.Ceil(1.1 * float64(n) / rate)
		if spec.Duration >= need {
			return spec, nil
		}
		file["duration"] = json.RawMessage(strconv.FormatFloat(need, 'f', -1, 64))
	case spec.Duration > 0:
		return spec, nil
	default:
		if spec.NumRecords >= spec.WarmupRecords+n {
			return spec, nil
		}
		file["num-records"] = json.RawMessage(strconv.FormatInt(spec.WarmupRecords+n, 10))
	}
	return rundoc.SpecFromParams(spec.Workload, file, validate)
}

// SLOState is a stored search as read back: its record, configuration
// and settings, every run of its probes, and, once none of them is
// still going, what it decides next.
type SLOState struct {
	Record   *store.SLO
	Config   SweepConfig
	Settings SLOSettings
	// RateMetric is the metric of a run's achieved rate; Latency the
	// histogram whose percentile is held to the target.
	RateMetric, Latency string
	// Probes are the probes in the order they were made, as Decide
	// reads them, with the runs that still exist and have ended;
	// Numbers their probe numbers and Runs every linked run that still
	// exists, ended or not.
	Probes  []slo.Probe
	Numbers []int
	Runs    []SLOProbeRun
	// Pending counts the runs that have not ended; Decision is valid
	// when it is 0.
	Pending  int
	Decision slo.Decision
}

// SLOProbeRun is one run of a search: its link and, once it ended, what
// it measured.
type SLOProbeRun struct {
	Link   store.SLORun
	Status rundoc.Status
	Run    slo.Run
}

// LoadSLO reads search id with its probes.
func (l *Launcher) LoadSLO(ctx context.Context, id string) (*SLOState, error) {
	if !ValidSLOID(id) {
		return nil, fmt.Errorf("launch: slo %q: %w", id, store.ErrNotFound)
	}
	rec, links, err := l.store.GetSLO(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.sloState(ctx, rec, links)
}

func (l *Launcher) sloState(ctx context.Context, rec *store.SLO, links []store.SLORun) (*SLOState, error) {
	st := &SLOState{Record: rec}
	if err := json.Unmarshal([]byte(rec.Config), &st.Config); err != nil {
		return nil, fmt.Errorf("launch: slo %s: configuration: %w", rec.ID, err)
	}
	if err := json.Unmarshal([]byte(rec.Search), &st.Settings); err != nil {
		return nil, fmt.Errorf("launch: slo %s: settings: %w", rec.ID, err)
	}
	kind, ok := sweepKinds[st.Config.Workload]
	if !ok {
		return nil, fmt.Errorf("launch: slo %s: workload %q cannot be searched", rec.ID, st.Config.Workload)
	}
	st.RateMetric, st.Latency = kind.RateMetric, sloLatency[st.Config.Workload]
	ids := make([]uint, len(links))
	for i, ln := range links {
		ids[i] = ln.RunID
	}
	runs, err := l.store.SweepRunsMetrics(ctx, ids, []string{kind.RateMetric, "harness-limited"})
	if err != nil {
		return nil, err
	}
	hists, err := l.store.RunsHistograms(ctx, ids, st.Latency)
	if err != nil {
		return nil, err
	}
	byID := map[uint]rundoc.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	cfg := st.Settings.Config()
	last := -1
	for _, ln := range links {
		r, ok := byID[ln.RunID]
		if !ok {
			continue // deleted since: its probe is measured on
		}
		pr := SLOProbeRun{Link: ln, Status: r.Status}
		if !r.Final() {
			st.Pending++
			st.Runs = append(st.Runs, pr)
			continue
		}
		pr.Run = measuredRun(cfg, r, ln.Max, kind.RateMetric, st.Latency, hists[r.ID])
		st.Runs = append(st.Runs, pr)
		if ln.Probe != last {
			st.Probes = append(st.Probes, slo.Probe{Rate: ln.Rate, Max: ln.Max})
			st.Numbers = append(st.Numbers, ln.Probe)
			last = ln.Probe
		}
		p := &st.Probes[len(st.Probes)-1]
		p.Runs = append(p.Runs, pr.Run)
	}
	if st.Pending == 0 {
		st.Decision = slo.Decide(cfg, st.Probes)
	}
	return st, nil
}

// measuredRun is what run r measured for a search under cfg: its
// achieved rate (metric rateMetric), its latency at the percentile from
// its window histogram of kind latency, and how many latencies that
// holds; a run that did not succeed, or at a rate kept no such
// histogram, carries why in Err. The unthrottled probe (max) measures
// only its rate: it keeps no intended-time histogram.
func measuredRun(cfg slo.Config, r rundoc.Run, max bool, rateMetric, latency string, hists []rundoc.Histogram) slo.Run {
	out := slo.Run{ID: r.ID}
	if m, ok := r.Metric(rateMetric); ok {
		out.Achieved = m.Value
	}
	if m, ok := r.Metric("harness-limited"); ok && m.Value > 0 {
		out.HarnessLimited = true
	}
	if r.Status != rundoc.StatusSucceeded {
		out.Err = string(r.Status)
		if r.Error != "" {
			out.Err += ": " + r.Error
		}
		return out
	}
	for _, h := range hists {
		if h.Kind != latency || h.Scope != rundoc.HistogramWindow {
			continue
		}
		d, err := hdr.Decode(h.Data)
		if err != nil {
			out.Err = fmt.Sprintf("its %s histogram does not decode: %v", latency, err)
			return out
		}
		out.Samples = d.TotalCount()
		out.LatencyMs = float64(d.ValueAtQuantile(cfg.Percentile)) / 1000
		return out
	}
	if !max {
		out.Err = "it kept no " + latency + " histogram"
	}
	return out
}

// AdvanceSLOs takes every search still searching one step on: when none
// of its runs is going, it queues the next probe's run or ends the
// search with its answer. A search that cannot be advanced (its stored
// documents unreadable, the store failing) does not hold the others
// back: its error is returned with theirs, and the loop tries again.
func (l *Launcher) AdvanceSLOs(ctx context.Context) error {
	list, err := l.store.ListSLOs(ctx, store.SLOSearching, 0)
	if err != nil {
		return err
	}
	var errs []error
	for i := range list {
		if err := l.advanceSLO(ctx, &list[i]); err != nil {
			errs = append(errs, fmt.Errorf("slo %s: %w", list[i].ID, err))
		}
	}
	return errors.Join(errs...)
}

func (l *Launcher) advanceSLO(ctx context.Context, rec *store.SLO) error {
	_, links, err := l.store.GetSLO(ctx, rec.ID)
	if err != nil {
		return err
	}
	st, err := l.sloState(ctx, rec, links)
	if err != nil {
		return err
	}
	if st.Pending > 0 {
		return nil // not yet
	}
	d := st.Decision
	if d.Done {
		end := store.SLOEnd{Phase: store.SLODone, Outcome: d.Outcome, Lo: d.Lo, Hi: d.Hi}
		if err := l.store.EndSLO(ctx, rec.ID, rec.Steps, end); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
		return nil // a conflict: canceled, or another server moved it on
	}
	if rec.Steps >= 2*st.Settings.Config().ProbeLimit()*st.Settings.Repetitions {
		// Twice the runs its probes can take: its runs were deleted over
		// and over, and a search that cannot keep its runs ends rather
		// than queue for ever.
		end := store.SLOEnd{Phase: store.SLOFailed, Lo: d.Lo, Hi: d.Hi,
			Note: fmt.Sprintf("%d steps queued without an answer: its runs were deleted before they could be read", rec.Steps)}
		if err := l.store.EndSLO(ctx, rec.ID, rec.Steps, end); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
		return nil
	}
	// The probe measured on keeps its number; a new one takes the next,
	// past every number used, by runs deleted since too.
	number := 0
	if len(d.Next.Runs) > 0 {
		number = st.Numbers[len(st.Numbers)-1]
	} else {
		for _, ln := range links {
			number = max(number, ln.Probe+1)
		}
	}
	file, err := rundoc.ParseSpecFile(st.Config.Spec)
	if err != nil {
		return fmt.Errorf("launch: slo %s: configuration: %w", rec.ID, err)
	}
	base, err := rundoc.SpecFromParams(file.Workload, file.Params, l.opts.Validate)
	if err != nil {
		end := store.SLOEnd{Phase: store.SLOFailed, Lo: d.Lo, Hi: d.Hi, Note: "its stored configuration is no longer accepted: " + err.Error()}
		if err := l.store.EndSLO(ctx, rec.ID, rec.Steps, end); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
		return nil
	}
	run, err := l.probeRun(rec.ID, st.Config, base, number, *d.Next, d.MinRecords)
	if err != nil {
		return err
	}
	link := store.SLORun{Probe: number, Rate: d.Next.Rate, Max: d.Next.Max}
	if err := l.store.AdvanceSLO(ctx, rec.ID, rec.Steps, []*store.Run{run}, []store.SLORun{link}); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // another server stored this step
		}
		return err
	}
	// A run whose Submit fails stays queued and the lifecycle's next
	// Start queues it.
	if err := l.runs.Submit(ctx, run.ID, nil); err != nil {
		l.log.Warn("slo: submit", "slo", rec.ID, "run", run.ID, "err", err)
	}
	return nil
}

// CancelSLO ends search id as canceled, then cancels its runs that have
// not ended, as CancelSweep does for a sweep.
func (l *Launcher) CancelSLO(ctx context.Context, id string) (int, error) {
	if !ValidSLOID(id) {
		return 0, fmt.Errorf("launch: slo %q: %w", id, store.ErrNotFound)
	}
	if err := l.store.EndSLO(ctx, id, -1, store.SLOEnd{Phase: store.SLOCanceled, Note: "canceled: its running run was stopped and no further probe is queued"}); err != nil {
		return 0, err
	}
	_, links, err := l.store.GetSLO(ctx, id)
	if err != nil {
		return 0, err
	}
	ids := make([]uint, len(links))
	for i, ln := range links {
		ids[i] = ln.RunID
	}
	return l.cancelUnended(ctx, ids)
}
