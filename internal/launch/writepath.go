package launch

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// The write-path lab's preset runs every write strategy with the same
// parameters, interleaved as an A/B submission is (abtest.go: gather,
// per-buffer, …, then the other way round) so that noise hits all alike;
// its runs' A/B batch is "wp-<batch>". Runs are labelled with their strategy; the runs
// of one strategy form a repetition group "wp-<batch>-<strategy>", which
// is how /writepath/<batch> finds them again.

// WritepathPreset is the body of POST /api/presets/writepath; every field
// is optional.
type WritepathPreset struct {
	RecordsPerRequest *int  `json:"records-per-request"`
	RecordSize        *int  `json:"record-size"`
	Requests          *int  `json:"requests"`
	Repetitions       *int  `json:"repetitions"`
	Sink              *bool `json:"sink"`
	InFlight          *int  `json:"in-flight"`
	// Duration is the measured seconds of each run; without it and
	// without Requests, ui.WPDefaultSeconds.
	Duration *float64 `json:"duration"`
}

// Preset defaults and limits. Runs measure for ui.WPDefaultSeconds unless
// a number of requests is given: a fixed count finished in 0.4–1 s here,
// a window too short to trust (compare.MinWindowSeconds).
const (
	wpDefaultRecords     = 16
	wpDefaultRecordSize  = 256
	wpDefaultRepetitions = 3
	wpDefaultInFlight    = 5
	// MaxWritepathRepetitions bounds the preset's repetitions.
	MaxWritepathRepetitions = 10
)

// wpBatchRE matches a batch id as the preset makes them.
var wpBatchRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

// ValidBatchID reports whether batch is a preset batch's id as
// CreateWritepathPreset makes them: any other names no batch.
func ValidBatchID(batch string) bool { return wpBatchRE.MatchString(batch) }

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// WritepathGroup is the repetition group of one strategy's runs in a
// batch.
func WritepathGroup(batch, strategy string) string { return WritepathPrefix + batch + "-" + strategy }

// WritepathPrefix starts the A/B batch ("wp-<batch>") and the repetition
// groups of the preset's runs.
const WritepathPrefix = "wp-"

// PresetStrategies are the strategies the preset runs: the Go ones, and
// the Java ones when this machine has a JDK (Options.FindJDK; noJava
// says why not).
func (l *Launcher) PresetStrategies() (strategies []string, noJava error) {
	strategies = rundoc.GoWritepathStrategies()
	if noJava = l.opts.FindJDK(); noJava == nil {
		strategies = append(strategies, rundoc.JavaWritepathStrategies()...)
	}
	return strategies, noJava
}

// PresetOrder is the order of the preset's fields on its form, which
// its errors follow.
var PresetOrder = []string{ui.WPFieldRecords, ui.WPFieldRecordSize, ui.WPFieldDuration, ui.WPFieldRequests, ui.WPFieldInFlight, ui.WPFieldRepetitions, ui.WPFieldSink}

// PresetSpecs validates a preset into its repetitions and one spec per
// strategy, reporting every bad field (a rundoc.FieldErrors).
func (l *Launcher) PresetSpecs(p WritepathPreset, strategies []string) (int, []rundoc.Spec, error) {
	var errs rundoc.FieldErrors
	reps := intOr(p.Repetitions, wpDefaultRepetitions)
	if reps < 1 || reps > MaxWritepathRepetitions {
		errs.Add("repetitions", "must be between 1 and %d, got %d", MaxWritepathRepetitions, reps)
	}
	sink := true
	if p.Sink != nil {
		sink = *p.Sink
	}
	// 0 requests would mean the runner's default, not none.
	if p.Requests != nil && *p.Requests < 1 {
		errs.Add("requests", "must be at least 1, got %d", *p.Requests)
	}
	num := func(n int) json.RawMessage { return json.RawMessage(strconv.Itoa(n)) }
	specs := make([]rundoc.Spec, len(strategies))
	for i, strategy := range strategies {
		params := map[string]json.RawMessage{
			"strategy":            json.RawMessage(strconv.Quote(strategy)),
			"records-per-request": num(intOr(p.RecordsPerRequest, wpDefaultRecords)),
			"record-size":         num(intOr(p.RecordSize, wpDefaultRecordSize)),
			"in-flight":           num(intOr(p.InFlight, wpDefaultInFlight)),
			"sink":                json.RawMessage(strconv.FormatBool(sink)),
		}
		// A count or a duration; both given is refused by the
		// workload's own check, naming duration.
		if p.Requests != nil {
			params["requests"] = num(*p.Requests)
		}
		switch {
		case p.Duration != nil:
			params["duration"] = json.RawMessage(strconv.FormatFloat(*p.Duration, 'g', -1, 64))
		case p.Requests == nil:
			params["duration"] = json.RawMessage(strconv.FormatFloat(ui.WPDefaultSeconds, 'g', -1, 64))
		}
		req := Request{Workload: string(rundoc.Writepath), Label: strategy, Repetitions: 1, Params: params}
		spec, err := l.Prepare(&req)
		// The strategies share every parameter but the strategy, so
		// their errors are the same ones: each field is reported once.
		if err := errs.Append(err); err != nil {
			return 0, nil, err
		}
		specs[i] = spec
	}
	errs.SortBy(PresetOrder)
	return reps, specs, errs.Err()
}

// CreateWritepathPreset validates the preset and stores and queues its
// runs; it returns the batch id and the runs in creation order.
func (l *Launcher) CreateWritepathPreset(ctx context.Context, p WritepathPreset) (string, []*store.Run, error) {
	strategies, _ := l.PresetStrategies()
	reps, specs, err := l.PresetSpecs(p, strategies)
	if err != nil {
		return "", nil, err
	}
	batch := randomID(6)
	sides := make([]abSide, len(strategies))
	for i, strategy := range strategies {
		if sides[i], err = newSide(strategy, WritepathGroup(batch, strategy), specs[i]); err != nil {
			return "", nil, err
		}
	}
	n := len(sides) * reps
	if err := l.admitRuns(ctx, "repetitions", n, strconv.Itoa(len(sides))+" strategies × "+strconv.Itoa(reps)+" repetitions make "+strconv.Itoa(n)+" runs"); err != nil {
		return "", nil, err
	}
	runs, err := l.queueInterleaved(ctx, WritepathPrefix+batch, sides, 0, reps)
	if err != nil {
		return "", nil, err
	}
	return batch, runs, nil
}
