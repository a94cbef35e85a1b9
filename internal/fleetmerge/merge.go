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

// GridTolerance is how far apart two shards' points may end and still
// be one point of the merged series: their intervals are measured from
// their own window openings, which the barrier puts within milliseconds
// of each other.
const GridTolerance = 0.05

// primary are the count and rate metrics a workload's merged result
// carries, named as a single run's are so that pages line them up.
var primary = map[rundoc.Workload]struct{ total, rate, totalHelp, rateHelp string }{
	rundoc.Producer: {"records-sent", "record-send-rate", "records acknowledged", "acknowledged records / window seconds"},
	rundoc.E2E:      {"records-received", "consume-rate", "records received", "records received / window seconds"},
}

// Merge merges shards of a workload. The common window starts at the
// fleet's start and ends with the earliest shard's window: its series
// points are those every shard has on the same grid (the last point of a
// shard that ended later is left out), and counts and rates add over
// them. Latency percentiles come from the shards' interval histograms
// within that window, merged per kind; a kind some shard lacks is left
// out, with a note.
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
	m.Series = mergeSeries(series, false)
	if len(m.Series) == 0 {
		return nil, errors.New("fleetmerge: the shards have no interval in common: no series point ends at the same time in all of them")
	}
	m.WindowS = m.Series[len(m.Series)-1].T
	var records, bytes int64
	for _, p := range m.Series {
		records += p.Records
		bytes += p.Bytes
	}
	n := len(shards)
	over := fmt.Sprintf(" of the %d shards over their common window of %.3f s", n, m.WindowS)
	add := func(name string, v float64, unit string, better rundoc.Better, help string) {
		m.Metrics = append(m.Metrics, rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better, Help: help})
	}
	add(names.total, float64(records), "records", "", names.totalHelp+over)
	add(names.rate, float64(records)/m.WindowS, "records/s", rundoc.HigherIsBetter, names.rateHelp+", summed"+over)
	add("mb-per-sec", float64(bytes)/m.WindowS/(1<<20), "MB/s", rundoc.HigherIsBetter, "MiB of records / window seconds, summed"+over)
	if err := m.mergeLatency(shards); err != nil {
		return nil, err
	}
	m.SkewMs = skew(shards)
	m.Notes = append(m.Notes, fmt.Sprintf("fleet of %d shards: counts and rates add over the common window, the %d series point(s) every shard has "+
		"(%.3f s, each shard's counted from its own window's opening); latency percentiles come from the shards' interval histograms in that window, merged; "+
		"the shards' windows opened within %.1f ms of each other on the database's clock", n, len(m.Series), m.WindowS, m.SkewMs))
	return m, nil
}

// LiveSeries merges the series a running fleet's shards have reported
// so far, for its live charts: the points every shard has on the same
// grid, summed as Merge sums them. No percentile of a merged point can be
// had from the shards' points, so it carries the largest shard's, marked
// PercentilesApprox (as rundoc.MergePoints does); the stored result's
// come from the merged histograms.
func LiveSeries(series [][]rundoc.SeriesPoint) []rundoc.SeriesPoint {
	return mergeSeries(series, true)
}

// mergeSeries sums the shards' points while every shard has a point
// ending at the same time; rates are recomputed over each point's
// interval. bound keeps the largest shard's percentiles as the merged
// point's upper bound.
func mergeSeries(series [][]rundoc.SeriesPoint, bound bool) []rundoc.SeriesPoint {
	var out []rundoc.SeriesPoint
	if len(series) == 0 {
		return out // no shard: no point (and no end to the loop below)
	}
	prev := 0.0
	for j := 0; ; j++ {
		var p rundoc.SeriesPoint
		var latSum float64
		for i, s := range series {
			if j >= len(s) {
				return out
			}
			q := s[j]
			if i == 0 {
				p.T = q.T
			} else if math.Abs(q.T-p.T) > GridTolerance {
				return out
			}
			p.Records += q.Records
			p.Bytes += q.Bytes
			p.LatencyMaxMs = max(p.LatencyMaxMs, q.LatencyMaxMs)
			latSum += q.LatencyAvgMs * float64(q.Records)
			if bound && (q.LatencyP50Ms > 0 || q.LatencyP99Ms > 0 || q.LatencyP999Ms > 0) {
				p.LatencyP50Ms = max(p.LatencyP50Ms, q.LatencyP50Ms)
				p.LatencyP99Ms = max(p.LatencyP99Ms, q.LatencyP99Ms)
				p.LatencyP999Ms = max(p.LatencyP999Ms, q.LatencyP999Ms)
				p.PercentilesApprox = true
			}
		}
		if secs := p.T - prev; secs > 0 {
			p.RecordsPerSec = float64(p.Records) / secs
			p.MBPerSec = float64(p.Bytes) / secs / (1 << 20)
		}
		if p.Records > 0 {
			p.LatencyAvgMs = latSum / float64(p.Records)
		}
		out = append(out, p)
		prev = p.T
	}
}

// mergeLatency merges each kind's interval histograms that end within
// the common window, per second and over it, into the whole-window
// histograms and the avg, percentile and max metrics the shards report
// for that kind.
func (m *Merged) mergeLatency(shards []Shard) error {
	for _, kind := range rundoc.HistogramKinds {
		var missing []string
		perSecond := map[int64]*hdr.Histogram{}
		ends := map[int64]float64{}
		whole := newHist()
		for _, s := range shards {
			found := false
			for _, h := range s.Intervals {
				// An interval in the window: one that starts at or after its
				// end (a shard's last, short one, the window's tail by its
				// own clock) is not.
				if h.Kind != kind || h.StartS >= m.WindowS || h.EndS > m.WindowS+GridTolerance {
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
				key := int64(math.Round(h.StartS * 1000))
				if perSecond[key] == nil {
					perSecond[key] = newHist()
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
			start := float64(k) / 1000
			m.Intervals = append(m.Intervals, rundoc.Histogram{Kind: kind, Scope: rundoc.HistogramInterval, StartS: start,
				EndS: max(start, min(ends[k], m.WindowS)), Count: h.TotalCount(), Data: h.Encode()})
		}
		m.Histograms = append(m.Histograms, rundoc.Histogram{Kind: kind, Scope: rundoc.HistogramWindow, StartS: 0, EndS: m.WindowS,
			Count: whole.TotalCount(), Data: whole.Encode()})
		m.latencyMetrics(kind, whole, shards[0].Metrics, len(shards))
	}
	return nil
}

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
