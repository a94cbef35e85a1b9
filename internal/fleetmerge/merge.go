// Package fleetmerge merges the results of a fleet run's shards into
// the parent's: counts and rates over the common window, latency from
// merged HdrHistograms (never averaged percentiles), and the merged
// interval histograms. It is pure: the launcher reads the shards from
// the store and stores what Merge returns.
package fleetmerge

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// Shard is one shard's result as stored.
type Shard struct {
	// Index is the shard's place in the fleet, 0 to N-1.
	Index int
	// Series is its series, in time order; Intervals its interval
	// histograms (its histogram log), Metrics its metrics.
	Series    []rundoc.SeriesPoint
	Intervals []rundoc.Histogram
	Metrics   []rundoc.Metric
	// Start is its measurement's shard_start: when its window opened by
	// its clock. ClockOffsetMs is its worker's clock against the
	// database's (positive: ahead).
	Start         *rundoc.ShardStart
	ClockOffsetMs float64
}

// Merged is the parent's result.
type Merged struct {
	Metrics    []rundoc.Metric
	Series     []rundoc.SeriesPoint
	Histograms []rundoc.Histogram
	// Intervals are the merged interval histograms, one per kind and
	// second of the common window, for the parent's histogram log.
	Intervals []rundoc.Histogram
	// WindowS is the common window's length in seconds; SkewMs the
	// spread of the shards' window openings on the database's clock.
	WindowS float64
	SkewMs  float64
	Notes   []string
}

// primary are the count and rate metrics a workload's merged result
// carries, named as a single run's are so that pages line them up.
var primary = map[rundoc.Workload]struct{ total, rate, totalHelp, rateHelp string }{
	rundoc.Producer: {"records-sent", "record-send-rate", "records acknowledged", "acknowledged records / window seconds"},
	rundoc.E2E:      {"records-received", "consume-rate", "records received", "records received / window seconds"},
}

// Merge merges shards of a workload. The common window starts at the
// fleet's start and ends with the earliest shard's window: its series
// points are the boundaries every shard's series shares (commonGrid), and
// counts and rates add over them, each shard's rate over its own
// window. Latency percentiles come from the shards' interval histograms
// that start within that window, merged per kind; a kind some shard
// lacks is left out, with a note.
func Merge(workload rundoc.Workload, shards []Shard) (*Merged, error) {
	names, ok := primary[workload]
	if !ok {
		return nil, fmt.Errorf("fleetmerge: a %s run is no fleet", workload)
	}
	if len(shards) < 2 {
		return nil, fmt.Errorf("fleetmerge: %d shard(s): a fleet has at least 2", len(shards))
	}
	m := &Merged{}
	series := make([][]rundoc.SeriesPoint, len(shards))
	for i, s := range shards {
		series[i] = s.Series
	}
	g := commonGrid(series, false)
	if len(g.points) == 0 {
		return nil, errors.New("fleetmerge: the shards have no interval in common: their series share no point's end")
	}
	m.Series = g.points
	m.WindowS = m.Series[len(m.Series)-1].T
	var records int64
	var rate, mbps, last float64
	for i := range shards {
		records += g.records[i]
		if g.ends[i] > 0 { // a shard's part of no length adds no rate
			rate += float64(g.records[i]) / g.ends[i]
			mbps += float64(g.bytes[i]) / g.ends[i] / (1 << 20)
		}
		last = max(last, g.ends[i])
	}
	n := len(shards)
	over := fmt.Sprintf(" of the %d shards over their common window of %.3f s", n, m.WindowS)
	add := func(name string, v float64, unit string, better rundoc.Better, help string) {
		m.Metrics = append(m.Metrics, rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better, Help: help})
	}
	add(names.total, float64(records), "records", "", names.totalHelp+over)
	add(names.rate, rate, "records/s", rundoc.HigherIsBetter, names.rateHelp+", each shard's over its own window, summed"+over)
	add("mb-per-sec", mbps, "MB/s", rundoc.HigherIsBetter, "MiB of records / window seconds, each shard's over its own window, summed"+over)
	if err := m.mergeLatency(shards); err != nil {
		return nil, err
	}
	m.SkewMs = skew(shards)
	m.Notes = append(m.Notes, fmt.Sprintf("fleet of %d shards: counts add over the common window, the %d series point(s) every shard has "+
		"(each shard's counted from its own window's opening; the last ends at %.3f to %.3f s by the shards' clocks), and each shard's rate over its own "+
		"part of it adds; latency percentiles come from the shards' interval histograms that start in that window, merged; "+
		"the shards' windows opened within %.1f ms of each other on the database's clock", n, len(m.Series), m.WindowS, last, m.SkewMs))
	return m, nil
}

// LiveSeries merges the series a running fleet's shards have reported
// so far, for its live charts: the points every shard has on a common
// grid, summed as Merge sums them. No percentile of a merged point can be
// had from the shards' points, so it carries the largest shard's, marked
// PercentilesApprox (as rundoc.MergePoints does); the stored result's
// come from the merged histograms.
func LiveSeries(series [][]rundoc.SeriesPoint) []rundoc.SeriesPoint {
	return commonGrid(series, true).points
}

// grid is the shards' series merged on their common boundaries.
type grid struct {
	points []rundoc.SeriesPoint
	// ends is each shard's own time at the last common boundary (the
	// length of its part of the common window); records and bytes are
	// what its points up to there hold.
	ends           []float64
	records, bytes []int64
}

// commonGrid merges the shards' series at the boundaries they share.
// Every shard's points are on the grid of rundoc.SeriesStep (or its
// doubles, once coarsened) counted from its own window's opening, but
// each point ends when its ticker fired, which on a loaded machine is
// late by tens or hundreds of milliseconds, and a late tick that
// outlasted a whole step is dropped. So points are paired by grid slot,
// not by index or exact time: a boundary is a set of points, one per
// shard, ending less than half a step apart, and a shard's points that
// end well before it (a tick another shard's series lacks) join the
// shard's part of the merged point. A merged point ends at the earliest
// of its shards' ends; its rate is the sum of each shard's rate over its
// own interval.
//
// live says the series are still growing (LiveSeries): a merged point
// then keeps the largest shard's percentiles as its upper bound. Whole
// series (Merge) end together: once a boundary holds a shard's last
// point, every shard whose last point ends less than half a step from
// it joins with its last point too (joinLast), so a window closed a
// little late by one shard's clock, with a tick just before its end,
// does not leave that shard's last point out.
func commonGrid(series [][]rundoc.SeriesPoint, live bool) grid {
	n := len(series)
	g := grid{ends: make([]float64, n), records: make([]int64, n), bytes: make([]int64, n)}
	if n == 0 {
		return g
	}
	half := halfStep(series)
	if half <= 0 {
		return g // a shard with no point yet
	}
	next := make([]int, n)   // each shard's first point not yet merged
	parts := make([]part, n) // each shard's points since the last boundary
	prevEnd := make([]float64, n)
	for {
		// Raise the boundary to the latest next end until every shard's
		// next end is within half a step of it; what ends before that is
		// the shard's part of the merged point.
		hi := 0.0
		for i, s := range series {
			if next[i] >= len(s) {
				return g
			}
			hi = max(hi, s[next[i]].T)
		}
		for settled := false; !settled; {
			settled = true
			for i, s := range series {
				for s[next[i]].T <= hi-half {
					parts[i].add(s[next[i]], live)
					if next[i]++; next[i] >= len(s) {
						return g // this shard ends before the boundary
					}
				}
				if t := s[next[i]].T; t > hi {
					hi, settled = t, false
				}
			}
			if settled && !live && joinLast(series, next, parts, half) {
				settled = false
			}
		}
		var p rundoc.SeriesPoint
		var latSum float64
		for i, s := range series {
			q := &parts[i]
			q.add(s[next[i]], live)
			end := s[next[i]].T
			next[i]++
			if i == 0 || end < p.T {
				p.T = end
			}
			p.Records += q.records
			p.Bytes += q.bytes
			if secs := end - prevEnd[i]; secs > 0 {
				p.RecordsPerSec += float64(q.records) / secs
				p.MBPerSec += float64(q.bytes) / secs / (1 << 20)
			}
			latSum += q.latSum
			p.LatencyMaxMs = max(p.LatencyMaxMs, q.maxMs)
			if q.approx {
				p.LatencyP50Ms = max(p.LatencyP50Ms, q.p50)
				p.LatencyP99Ms = max(p.LatencyP99Ms, q.p99)
				p.LatencyP999Ms = max(p.LatencyP999Ms, q.p999)
				p.PercentilesApprox = true
			}
			g.records[i] += q.records
			g.bytes[i] += q.bytes
			g.ends[i] = end
			prevEnd[i] = end
			*q = part{}
		}
		if p.Records > 0 {
			p.LatencyAvgMs = latSum / float64(p.Records)
		}
		g.points = append(g.points, p)
	}
}

// joinLast moves the shards to their last points when a boundary holds
// one shard's last point and every other shard's last point ends less
// than half a step from the earliest of those: their points before it
// join their parts. It reports whether it moved any shard.
func joinLast(series [][]rundoc.SeriesPoint, next []int, parts []part, half float64) bool {
	end, lo, hi := false, math.Inf(1), math.Inf(-1)
	for i, s := range series {
		last := s[len(s)-1].T
		lo, hi = min(lo, last), max(hi, last)
		end = end || next[i] == len(s)-1
	}
	if !end || hi-lo >= half {
		return false
	}
	moved := false
	for i, s := range series {
		for ; next[i] < len(s)-1; next[i]++ {
			parts[i].add(s[next[i]], false)
			moved = true
		}
	}
	return moved
}

// part is one shard's points that make one merged point.
type part struct {
	records, bytes int64
	latSum, maxMs  float64 // latSum: the avg latency × records
	p50, p99, p999 float64
	approx         bool
}

func (q *part) add(p rundoc.SeriesPoint, bound bool) {
	q.records += p.Records
	q.bytes += p.Bytes
	q.latSum += p.LatencyAvgMs * float64(p.Records)
	q.maxMs = max(q.maxMs, p.LatencyMaxMs)
	if bound && (p.LatencyP50Ms > 0 || p.LatencyP99Ms > 0 || p.LatencyP999Ms > 0) {
		q.p50, q.p99, q.p999 = max(q.p50, p.LatencyP50Ms), max(q.p99, p.LatencyP99Ms), max(q.p999, p.LatencyP999Ms)
		q.approx = true
	}
}

// halfStep is half the finest step of the shards' series. A series'
// step is rundoc.SeriesStep, doubled each time the series was coarsened:
// its points' mean length (its end over its count) rounded to the
// nearest such step, which late ticks (the ticker keeps its grid), a
// dropped tick or a short last point do not move that far. It takes no
// sort, as the live merge recomputes it on every shard's interval. 0
// when a shard has no point.
func halfStep(series [][]rundoc.SeriesPoint) float64 {
	base := rundoc.SeriesStep.Seconds()
	step := math.Inf(1)
	for _, s := range series {
		if len(s) == 0 {
			return 0
		}
		mean := s[len(s)-1].T / float64(len(s))
		if !(mean > 0) {
			return 0
		}
		doublings := max(0, math.Round(math.Log2(mean/base)))
		step = min(step, base*math.Exp2(doublings))
	}
	return step / 2
}

// mergeLatency merges each kind's interval histograms that end within
// the common window, per second and over it, into the whole-window
// histograms and the avg, percentile and max metrics the shards report
// for that kind.
func (m *Merged) mergeLatency(shards []Shard) error {
	for _, kind := range rundoc.HistogramKinds {
		var missing []string
		perSecond := map[int64]*hdr.Histogram{}
		starts, ends := map[int64]float64{}, map[int64]float64{}
		whole := newHist()
		for _, s := range shards {
			found := false
			for _, h := range s.Intervals {
				// An interval in the window is one that starts before its
				// end: a shard's last ends with its own window, at most half
				// a series step after the earliest shard's; one that starts
				// at or after the end (a shard's tail past the common
				// window) is not.
				if h.Kind != kind || h.StartS >= m.WindowS {
					continue
				}
				found = true
				d, err := hdr.Decode(h.Data)
				if err != nil {
					return fmt.Errorf("fleetmerge: shard %d: %s at %v s: %w", s.Index+1, kind, h.StartS, err)
				}
				if d.Lowest() != rundoc.HistogramLowest || d.Highest() != rundoc.HistogramHighest || d.Digits() != rundoc.HistogramDigits {
					// Only histograms of one configuration merge.
					return fmt.Errorf("fleetmerge: shard %d: %s at %v s is not in the run contract's layout", s.Index+1, kind, h.StartS)
				}
				// The shards' intervals of one slot of the log's grid
				// start apart by as much as their tickers fired late.
				key := int64(math.Round(h.StartS / logStep))
				if perSecond[key] == nil {
					perSecond[key] = newHist()
				}
				if s, ok := starts[key]; !ok || h.StartS < s {
					starts[key] = h.StartS
				}
				ends[key] = max(ends[key], h.EndS)
				if err := perSecond[key].Merge(d); err != nil {
					return err
				}
				if err := whole.Merge(d); err != nil {
					return err
				}
			}
			if !found {
				missing = append(missing, strconv.Itoa(s.Index+1))
			}
		}
		if len(missing) == len(shards) {
			continue
		}
		if len(missing) > 0 {
			m.Notes = append(m.Notes, fmt.Sprintf("%s: left out, shard(s) %s have no interval histogram of it in the common window", kind, strings.Join(missing, ", ")))
			continue
		}
		if whole.TotalCount() == 0 {
			continue
		}
		keys := make([]int64, 0, len(perSecond))
		for k := range perSecond {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			h := perSecond[k]
			start := starts[k]
			m.Intervals = append(m.Intervals, rundoc.Histogram{Kind: kind, Scope: rundoc.HistogramInterval, StartS: start,
				EndS: max(start, min(ends[k], m.WindowS)), Count: h.TotalCount(), Data: h.Encode()})
		}
		m.Histograms = append(m.Histograms, rundoc.Histogram{Kind: kind, Scope: rundoc.HistogramWindow, StartS: 0, EndS: m.WindowS,
			Count: whole.TotalCount(), Data: whole.Encode()})
		m.latencyMetrics(kind, whole, shards[0].Metrics, len(shards))
	}
	return nil
}

// logStep is the histogram log's grid, in seconds.
var logStep = rundoc.HistogramLogStep.Seconds()

func newHist() *hdr.Histogram {
	return hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
}

// latencyMetrics adds kind's metrics from the merged histogram h: those
// the first shard reports (KIND-avg, KIND-pNN, KIND-max), each computed
// from h, in ms.
func (m *Merged) latencyMetrics(kind string, h *hdr.Histogram, like []rundoc.Metric, n int) {
	const usPerMs = 1000.0
	for _, lm := range like {
		suffix, ok := strings.CutPrefix(lm.Name, kind+"-")
		if !ok {
			continue
		}
		var v float64
		switch {
		case suffix == "avg":
			v = h.Mean() / usPerMs
		case suffix == "max":
			v = float64(h.Max()) / usPerMs
		default:
			q, ok := quantileOf(suffix)
			if !ok {
				continue
			}
			v = float64(h.ValueAtQuantile(q)) / usPerMs
		}
		help := fmt.Sprintf("%s of the %d shards' merged histograms over the common window (%d values)", suffix, n, h.TotalCount())
		m.Metrics = append(m.Metrics, rundoc.Metric{Name: lm.Name, Value: v, Unit: "ms", Better: rundoc.LowerIsBetter, Help: help})
	}
}

// quantileOf reads a percentile's suffix as the percent
// hdr.Histogram.ValueAtQuantile takes: p50 is 50, p99 99, p999 99.9,
// p9999 99.99 (the digits after the first two are decimals).
func quantileOf(suffix string) (float64, bool) {
	digits, ok := strings.CutPrefix(suffix, "p")
	if !ok || len(digits) < 2 {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 32)
	if err != nil {
		return 0, false
	}
	return float64(n) / math.Pow10(len(digits)-2), true
}

// skew is the spread of the shards' window openings (StartSpread); 0
// when a shard has no start recorded.
func skew(shards []Shard) float64 {
	starts := make([]*rundoc.ShardStart, len(shards))
	offsets := make([]float64, len(shards))
	for i, s := range shards {
		starts[i], offsets[i] = s.Start, s.ClockOffsetMs
	}
	ms, _ := StartSpread(starts, offsets)
	return ms
}

// StartSpread is the barrier's skew: the spread, in ms, of shards'
// measured-window openings (starts[i].Window, by shard i's clock)
// converted to the database's clock with each worker's offset
// (offsetsMs[i], positive when its clock is ahead). ok is false when a
// shard has no start recorded.
func StartSpread(starts []*rundoc.ShardStart, offsetsMs []float64) (ms float64, ok bool) {
	var lo, hi time.Time
	for i, s := range starts {
		if s == nil {
			return 0, false
		}
		t := s.Window.Add(-time.Duration(offsetsMs[i] * float64(time.Millisecond)))
		if i == 0 || t.Before(lo) {
			lo = t
		}
		if i == 0 || t.After(hi) {
			hi = t
		}
	}
	return float64(hi.Sub(lo)) / float64(time.Millisecond), len(starts) > 0
}
