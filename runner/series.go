package runner

import (
	"time"
)

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
// are weighted by records and maxima keep the largest.
func MergeSeries(pts []SeriesPoint, k int) []SeriesPoint {
	if k <= 1 || len(pts) <= 1 {
		return append([]SeriesPoint(nil), pts...)
	}
	out := make([]SeriesPoint, 0, (len(pts)+k-1)/k)
	start := 0.0
	for i := 0; i < len(pts); i += k {
		group := pts[i:min(i+k, len(pts))]
		out = append(out, mergePoints(start, group))
		start = group[len(group)-1].T
	}
	return out
}

// CoarsenSeries halves a series: MergeSeries by pairs.
func CoarsenSeries(pts []SeriesPoint) []SeriesPoint { return MergeSeries(pts, 2) }

// mergePoints merges consecutive points, the first one's interval
// starting at start.
func mergePoints(start float64, group []SeriesPoint) SeriesPoint {
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

// recordSeries samples the run's counters every SeriesStep from the
// window's start, each sample one point: sample returns the counts and
// rates of the interval that lasted secs and resets what it read. stop,
// called once the window has ended, adds the window's last part, so the
// points cover the whole window and hold every measured record; a tail
// shorter than half a step joins the last point instead of becoming a
// point of its own whose rate would rest on a few milliseconds.
func (r *run) recordSeries(sample func(secs float64) SeriesPoint) (stop func()) {
	last := r.win.start
	step := SeriesStep
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(step)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case now := <-tick.C:
				if r.win.ended(now) {
					return // stop adds the rest up to the window's end
				}
				pt := sample(now.Sub(last).Seconds())
				pt.T = r.win.since(now)
				last = now
				if r.addPoint(pt) {
					step *= 2
					tick.Reset(step)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		end := r.win.end
		if end.IsZero() {
			end = time.Now()
		}
		if !end.After(last) {
			return
		}
		pt := sample(end.Sub(last).Seconds())
		pt.T = r.win.since(end)
		r.rep.mu.Lock()
		n := len(r.res.Series)
		if n > 0 && end.Sub(last) < step/2 {
			start := 0.0
			if n > 1 {
				start = r.res.Series[n-2].T
			}
			// Not sent live: the page reloads with the stored series once
			// the run is done.
			r.res.Series[n-1] = mergePoints(start, []SeriesPoint{r.res.Series[n-1], pt})
			r.rep.mu.Unlock()
			return
		}
		r.rep.mu.Unlock()
		r.addPoint(pt)
	}
}

// addPoint stores a point and sends it to the live view. It reports
// whether the series was coarsened to stay within MaxSeriesPoints; the
// server's live state coarsens the same way when it has as many points.
func (r *run) addPoint(pt SeriesPoint) (coarsened bool) {
	r.rep.mu.Lock()
	r.res.Series = append(r.res.Series, pt)
	if len(r.res.Series) > MaxSeriesPoints {
		r.res.Series = CoarsenSeries(r.res.Series)
		coarsened = true
	}
	r.rep.mu.Unlock()
	r.rep.emit(Event{Type: "interval", Point: &pt, Elapsed: pt.T})
	return coarsened
}

// ivCounters are what one interval accumulates: records (or requests),
// payload bytes and latencies. The text lines and the series each keep
// their own, as they report at different paces.
type ivCounters struct {
	records, bytes int64
	latSum, latMax time.Duration
}

func (c *ivCounters) add(records, bytes int64, lat time.Duration) {
	c.records += records
	c.bytes += bytes
	c.latSum += lat
	c.latMax = max(c.latMax, lat)
}

// take returns the counters and resets them.
func (c *ivCounters) take() ivCounters {
	v := *c
	*c = ivCounters{}
	return v
}

// point is the interval's series point (T left for the caller), for
// latencies measured per record or per request (n of them).
func (c ivCounters) point(secs float64, records, bytes, n int64) SeriesPoint {
	pt := SeriesPoint{Records: records, Bytes: bytes, LatencyMaxMs: ms(c.latMax)}
	if secs > 0 {
		pt.RecordsPerSec = float64(records) / secs
		pt.MBPerSec = float64(bytes) / secs / (1 << 20)
	}
	if n > 0 {
		pt.LatencyAvgMs = ms(c.latSum) / float64(n)
	}
	return pt
}
