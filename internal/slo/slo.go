// Package slo finds the highest rate at which a latency percentile stays
// under a target (issue 26's "the rate a latency target allows"): it
// brackets the rate, then bisects until the bracket is as narrow as the
// asked precision, and answers the interval [lo, hi] between the highest
// rate that passed and the lowest that failed.
//
// The search holds no state of its own: Decide reads the probes done so
// far and says what to do next, so a search interrupted anywhere (a
// server restart, another server taking it over) goes on from its stored
// probes exactly as it would have. A probe is one rate measured by
// Config.Repetitions runs; it passes only when every run passes: it
// reached its rate (at least MinAchieved of it, and kbench's load
// generator kept up), held enough samples for the percentile, and kept
// the percentile's latency under the target. A probe's first failing run
// decides it: the repetitions after it are not measured.
package slo

import (
	"fmt"
	"math"

	"github.com/kbench/kbench/internal/median"
)

// MinAchieved is the share of its target rate a run must reach to pass:
// a producer that cannot keep to its schedule has not measured the
// latency of that rate.
const MinAchieved = 0.98

// Limits of a search's configuration.
const (
	MaxRepetitions = 20
	// MaxProbes bounds a search: bracketing from a rate a million times
	// too high and bisecting to 0.1 % take fewer than 40.
	MaxProbes = 60
	// MinPrecisionPct is the narrowest bracket asked for, in percent.
	MinPrecisionPct = 0.1
)

// Config is what a search is asked.
type Config struct {
	// Percentile is the percentile (0 < p < 100) whose latency must stay
	// under LatencyMs.
	Percentile float64
	LatencyMs  float64
	// PrecisionPct: the search ends when hi/lo ≤ 1 + PrecisionPct/100.
	PrecisionPct float64
	Repetitions  int
	// MinRate and MaxRate bound the rates probed (records/s); 0 for
	// none. Without MaxRate the search first measures the maximum with an
	// unthrottled probe.
	MinRate, MaxRate float64
	// Probes is the most probes the search may make before it gives up
	// (GaveUp); 0 or above MaxProbes means MaxProbes.
	Probes int
}

// ProbeLimit is the most probes c allows.
func (c Config) ProbeLimit() int {
	if c.Probes <= 0 || c.Probes > MaxProbes {
		return MaxProbes
	}
	return c.Probes
}

// FieldError is an invalid field of a Config, named as the API names it.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate checks c, naming the first field that is wrong.
func (c Config) Validate() error {
	if errs := c.Errors(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Errors are every wrong field of c, in the API's order.
func (c Config) Errors() []*FieldError {
	var errs []*FieldError
	bad := func(cond bool, field, format string, args ...any) {
		if cond {
			errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
		}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	bad(!finite(c.Percentile) || c.Percentile <= 0 || c.Percentile >= 100, "percentile", "must be above 0 and below 100, got %v", c.Percentile)
	bad(!finite(c.LatencyMs) || c.LatencyMs <= 0, "latency_ms", "must be a positive number of milliseconds, got %v", c.LatencyMs)
	bad(!finite(c.PrecisionPct) || c.PrecisionPct < MinPrecisionPct || c.PrecisionPct > 100, "precision_pct", "must be between %v and 100, got %v", MinPrecisionPct, c.PrecisionPct)
	bad(c.Repetitions < 1 || c.Repetitions > MaxRepetitions, "repetitions", "must be between 1 and %d, got %d", MaxRepetitions, c.Repetitions)
	minOK, maxOK := finite(c.MinRate) && c.MinRate >= 0, finite(c.MaxRate) && c.MaxRate >= 0
	bad(!minOK, "min_rate", "must be a positive rate or 0 for none, got %v", c.MinRate)
	bad(!maxOK, "max_rate", "must be a positive rate or 0 for none, got %v", c.MaxRate)
	bad(minOK && maxOK && c.MaxRate > 0 && c.MinRate >= c.MaxRate, "min_rate", "must be below max_rate (%v), got %v", c.MaxRate, c.MinRate)
	return errs
}

// MinSamples is how many latencies a run must hold for its percentile to
// rest on at least 10 values beyond it: 1000/(100 − p), 100,000 for the
// 99.99th.
func (c Config) MinSamples() int64 {
	return int64(math.Ceil(1000/(100-c.Percentile) - 1e-9))
}

// Run is one repetition of a probe, as measured.
type Run struct {
	// ID is the stored run; 0 while it has not finished.
	ID uint `json:"run"`
	// Achieved is the rate the run reached (records/s); LatencyMs its
	// latency at the percentile; Samples how many latencies it holds.
	Achieved  float64 `json:"achieved"`
	LatencyMs float64 `json:"latency_ms"`
	Samples   int64   `json:"samples"`
	// HarnessLimited is set when kbench's own load generator limited
	// the run (the runner's harness-limited flag): a throttled producer
	// behind its rate schedule while the broker answered quickly, or
	// kbench out of CPU. Such a run measured kbench, not the rate.
	HarnessLimited bool `json:"harness_limited,omitempty"`
	// Err is why the run failed to measure, "" when it did.
	Err string `json:"error,omitempty"`
}

// Probe is one rate measured: Repetitions runs at Rate, or the
// unthrottled measure of the maximum (Max, Rate 0).
type Probe struct {
	Rate float64 `json:"rate"`
	Max  bool    `json:"max,omitempty"`
	Runs []Run   `json:"runs"`
}

// Verdict is a run's or a probe's result against the target.
type Verdict struct {
	Pass   bool
	Reason string
}

// Judge is run r's verdict at target rate (records/s) under c.
func (c Config) Judge(rate float64, r Run) Verdict {
	switch {
	case r.Err != "":
		return Verdict{false, "the run failed: " + r.Err}
	case r.Achieved < MinAchieved*rate:
		return Verdict{false, fmt.Sprintf("reached %.4g records/s, short of %.0f%% of %.4g", r.Achieved, MinAchieved*100, rate)}
	case r.HarnessLimited:
		return Verdict{false, "kbench's load generator limited it (behind its rate schedule, or out of CPU; the run's notes say which)"}
	case r.Samples < c.MinSamples():
		return Verdict{false, fmt.Sprintf("held %d latencies, fewer than the %d the p%v needs", r.Samples, c.MinSamples(), c.Percentile)}
	case !(r.LatencyMs < c.LatencyMs):
		return Verdict{false, fmt.Sprintf("p%v latency %.4g ms, not under %v ms", c.Percentile, r.LatencyMs, c.LatencyMs)}
	}
	return Verdict{true, fmt.Sprintf("p%v latency %.4g ms, under %v ms", c.Percentile, r.LatencyMs, c.LatencyMs)}
}

// Measured reports whether probe p needs no further run: it holds its
// Repetitions runs, or (at a rate) one of its runs failed already, which
// decides it. The unthrottled probe measures all its runs: their median
// is the maximum.
func (c Config) Measured(p Probe) bool {
	if len(p.Runs) >= c.Repetitions {
		return true
	}
	if p.Max {
		return false
	}
	for _, r := range p.Runs {
		if !c.Judge(p.Rate, r).Pass {
			return true
		}
	}
	return false
}

// JudgeProbe is p's verdict: it passes when every one of its
// Repetitions runs passes, and fails at its first run that fails.
func (c Config) JudgeProbe(p Probe) Verdict {
	for i, r := range p.Runs[:min(len(p.Runs), c.Repetitions)] {
		if v := c.Judge(p.Rate, r); !v.Pass {
			v.Reason = fmt.Sprintf("run %d of %d: %s", i+1, c.Repetitions, v.Reason)
			return v
		}
	}
	if len(p.Runs) < c.Repetitions {
		return Verdict{false, fmt.Sprintf("%d of %d runs measured", len(p.Runs), c.Repetitions)}
	}
	return Verdict{true, fmt.Sprintf("all %d runs under the target", c.Repetitions)}
}

// Outcomes of a finished search.
const (
	// Found: lo passed and hi failed (or hi is the maximum, which
	// passed), and hi/lo is within the precision.
	Found = "found"
	// AtMaximum: the highest rate allowed (max_rate, or the measured
	// maximum) passed: the target holds at every rate the search may try.
	AtMaximum = "at-maximum"
	// NoneAllowed: the lowest rate tried (min_rate, or the floor the
	// bracketing reached) failed: no rate the search may try meets it.
	NoneAllowed = "none"
	// GaveUp: the most probes allowed (Config.Probes, at most
	// MaxProbes) were measured without an answer.
	GaveUp = "gave-up"
)

// Decision is what a search does next: measure Next, or end (Done) with
// Outcome. Lo and Hi are the bracket so far (0 where not known yet).
type Decision struct {
	Done    bool
	Outcome string
	Next    *Probe
	Lo, Hi  float64
	// MinRecords is how many records each run of Next must measure: its
	// percentile needs MinSamples latencies.
	MinRecords int64
}

// floorRate is the lowest rate bracketing goes down to without a
// min_rate: below one record a second a latency percentile of a rate is
// not worth the wait.
const floorRate = 1

// Decide is the search's next step after probes (in the order they were
// measured). A probe not yet Measured is measured on (its
// runs so far are kept).
//
// The search: without MaxRate, an unthrottled probe measures the
// maximum first (its achieved rate, the runs' median). The first rate
// probed is the maximum; when it passes, the answer is AtMaximum. From a
// failing hi the search brackets down, halving (or to MinRate, when
// given), until a rate passes (lo), then bisects at the geometric mean
// of lo and hi until hi/lo ≤ 1 + precision. hi is the lowest rate that
// failed and lo the highest that passed below it, so a noisy probe
// passing above a failure, or failing below a pass, narrows nothing it
// should not.
func Decide(c Config, probes []Probe) Decision {
	d := Decision{MinRecords: c.MinSamples()}
	if len(probes) > 0 {
		last := probes[len(probes)-1]
		if !c.Measured(last) {
			d.Next = &Probe{Rate: last.Rate, Max: last.Max, Runs: last.Runs}
			return d
		}
	}
	if len(probes) >= c.ProbeLimit() {
		d.Done, d.Outcome = true, GaveUp
		d.Lo, d.Hi = bracket(c, probes)
		return d
	}
	top := c.MaxRate
	if top == 0 {
		i := -1
		for j, p := range probes {
			if p.Max {
				i = j
				break
			}
		}
		if i < 0 {
			d.Next = &Probe{Max: true}
			return d
		}
		top = MaxOf(probes[i])
		if !(top > 0) {
			d.Done, d.Outcome = true, NoneAllowed
			return d
		}
	}
	d.Lo, d.Hi = bracket(c, probes)
	switch {
	case d.Hi == 0 && d.Lo == 0:
		// Nothing measured at a rate yet: try the top.
		d.Next = &Probe{Rate: top}
	case d.Hi == 0:
		// Only passes: the top passed.
		d.Done, d.Outcome, d.Hi = true, AtMaximum, d.Lo
	case d.Lo == 0:
		// Only failures so far: go down.
		next := d.Hi / 2
		switch {
		case c.MinRate > 0 && d.Hi <= c.MinRate:
			d.Done, d.Outcome = true, NoneAllowed
		case c.MinRate > 0 && next < c.MinRate:
			d.Next = &Probe{Rate: c.MinRate}
		case next < floorRate:
			d.Done, d.Outcome = true, NoneAllowed
		default:
			d.Next = &Probe{Rate: next}
		}
	case d.Hi/d.Lo <= 1+c.PrecisionPct/100:
		d.Done, d.Outcome = true, Found
	default:
		d.Next = &Probe{Rate: math.Sqrt(d.Lo * d.Hi)}
	}
	return d
}

// bracket is the search's bracket after probes: hi the lowest rate that
// failed (0 for none), lo the highest rate below it that passed (0 for
// none). The unthrottled probe is not a rate probed.
func bracket(c Config, probes []Probe) (lo, hi float64) {
	for _, p := range probes {
		if p.Max || !c.Measured(p) {
			continue
		}
		if !c.JudgeProbe(p).Pass && (hi == 0 || p.Rate < hi) {
			hi = p.Rate
		}
	}
	for _, p := range probes {
		if p.Max || !c.Measured(p) {
			continue
		}
		if c.JudgeProbe(p).Pass && (hi == 0 || p.Rate < hi) && p.Rate > lo {
			lo = p.Rate
		}
	}
	return lo, hi
}

// MaxOf is the maximum the unthrottled probe p measured: the median of
// its runs' achieved rates, over the runs that measured; 0 for none.
func MaxOf(p Probe) float64 {
	var rates []float64
	for _, r := range p.Runs {
		if r.Err == "" && r.Achieved > 0 {
			rates = append(rates, r.Achieved)
		}
	}
	if len(rates) == 0 {
		return 0
	}
	return median.Of(rates)
}
