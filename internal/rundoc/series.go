package rundoc

import "time"

// SeriesStep is the step of a run's interval series: fine enough that a
// run of a second has a chart and a live page moves, whatever
// --reporting-interval is (that flag governs only Kafka's text lines,
// whose format and pace users compare with Kafka's own tools).
const SeriesStep = 250 * time.Millisecond

// MaxSeriesPoints bounds a run's interval series: 30 minutes at SeriesStep.
// A longer run merges adjacent pairs of its points and doubles its step
// each time the series would grow past it, so a 2 h run keeps 3,600 to
// 7,200 points at a 1 s step instead of 28,800 at 250 ms, and result.json,
// the database, the API and the live pages stay small.
const MaxSeriesPoints = 7200

// MergeSeries merges each group of k consecutive points of pts into one
// point covering the group's intervals (a last, shorter group too). The
// first point's interval starts at 0, the window's start, and every other
// one at the previous point's T. Counts add up; rates are averaged over
// time, so they stay what the merged interval measured; latency averages
// are weighted by records and maxima keep the largest; latency
// percentiles keep the largest too, marked approximate.
func MergeSeries(pts []SeriesPoint, k int) []SeriesPoint {
	if k <= 1 || len(pts) <= 1 {
		return append([]SeriesPoint(nil), pts...)
	}
	out := make([]SeriesPoint, 0, (len(pts)+k-1)/k)
	start := 0.0
	for i := 0; i < len(pts); i += k {
		group := pts[i:min(i+k, len(pts))]
		out = append(out, MergePoints(start, group))
		start = group[len(group)-1].T
	}
	return out
}

// CoarsenSeries halves a series: MergeSeries by pairs.
func CoarsenSeries(pts []SeriesPoint) []SeriesPoint { return MergeSeries(pts, 2) }

// MergePoints merges consecutive points, the first one's interval
// starting at start.
func MergePoints(start float64, group []SeriesPoint) SeriesPoint {
	if len(group) == 1 {
		return group[0]
	}
	m := SeriesPoint{T: group[len(group)-1].T}
	var secs, rps, mbs, cpu, latRecs, latSum, latTime, latTimeSum float64
	prev := start
	for _, p := range group {
		d := max(p.T-prev, 0)
		prev = p.T
		secs += d
		rps += p.RecordsPerSec * d
		mbs += p.MBPerSec * d
		cpu += p.CPUPercent * d
		m.Records += p.Records
		m.Bytes += p.Bytes
		m.LatencyMaxMs = max(m.LatencyMaxMs, p.LatencyMaxMs)
		// No percentile of the merged interval can be had from its
		// parts' percentiles: the largest of them bounds it from above.
		if p.LatencyP50Ms > 0 || p.LatencyP99Ms > 0 || p.LatencyP999Ms > 0 {
			m.LatencyP50Ms = max(m.LatencyP50Ms, p.LatencyP50Ms)
			m.LatencyP99Ms = max(m.LatencyP99Ms, p.LatencyP99Ms)
			m.LatencyP999Ms = max(m.LatencyP999Ms, p.LatencyP999Ms)
			m.PercentilesApprox = true
		}
		if p.LatencyAvgMs > 0 {
			latRecs += float64(p.Records)
			latSum += p.LatencyAvgMs * float64(p.Records)
			latTime += d
			latTimeSum += p.LatencyAvgMs * d
		}
	}
	if secs > 0 {
		m.RecordsPerSec, m.MBPerSec, m.CPUPercent = rps/secs, mbs/secs, cpu/secs
	} else {
		// Points without duration (equal T): plain means.
		n := float64(len(group))
		for _, p := range group {
			m.RecordsPerSec += p.RecordsPerSec / n
			m.MBPerSec += p.MBPerSec / n
			m.CPUPercent += p.CPUPercent / n
		}
	}
	switch {
	case latRecs > 0:
		m.LatencyAvgMs = latSum / latRecs
	case latTime > 0:
		// Latencies without record counts (imported output): by time.
		m.LatencyAvgMs = latTimeSum / latTime
	}
	return m
}
