package runner

import (
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// everyInWindow calls fn with each tick's time, every step from now on,
// until the window ends or stop is called; fn returns the step from then
// on (the series doubles its step as it coarsens). stop waits for the
// last call to return and gives the window's end (now, when it has not
// ended), up to which the caller takes what the ticks left.
func (r *run) everyInWindow(step time.Duration, fn func(now time.Time) time.Duration) (stop func() (end time.Time)) {
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
					return
				}
				if next := fn(now); next != step {
					step = next
					tick.Reset(step)
				}
			}
		}
	}()
	return func() time.Time {
		close(quit)
		<-done
		if r.win.end.IsZero() {
			return time.Now()
		}
		return r.win.end
	}
}

// recordSeries samples the run's counters every SeriesStep from the
// window's start, each sample one point: sample returns the counts and
// rates of the interval that lasted secs and resets what it read. stop,
// called once the window has ended, adds the window's last part, so the
// points cover the whole window and hold every measured record; a tail
// shorter than half a step joins the last point instead of becoming a
// point of its own whose rate would rest on a few milliseconds.
func (r *run) recordSeries(sample func(secs float64) rundoc.SeriesPoint) (stop func()) {
	last := r.win.start
	step := rundoc.SeriesStep
	stopTicks := r.everyInWindow(step, func(now time.Time) time.Duration {
		pt := sample(now.Sub(last).Seconds())
		pt.T = r.win.since(now)
		last = now
		if r.addPoint(pt) {
			step *= 2
		}
		r.win.tick(now, step)
		return step
	})
	return func() {
		// stop adds the rest up to the window's end.
		end := stopTicks()
		if last.After(end) {
			// A tick after the window's end, taken while window.stop was
			// between reading the clock and publishing the end (ended said
			// no), sampled up to its own time. Nothing is counted after the
			// end, so that point's interval ends at the window's end.
			r.rep.mu.Lock()
			r.endLastPointAt(r.win.since(end))
			r.rep.mu.Unlock()
			return
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
			r.res.Series[n-1] = rundoc.MergePoints(start, []rundoc.SeriesPoint{r.res.Series[n-1], pt})
			r.rep.mu.Unlock()
			return
		}
		r.rep.mu.Unlock()
		r.addPoint(pt)
	}
}

// endLastPointAt moves the last point's end back to t, its rates over the
// interval it then covers. The caller holds r.rep.mu.
func (r *run) endLastPointAt(t float64) {
	n := len(r.res.Series)
	if n == 0 {
		return
	}
	start := 0.0
	if n > 1 {
		start = r.res.Series[n-2].T
	}
	p := &r.res.Series[n-1]
	p.T = t
	if secs := t - start; secs > 0 {
		p.RecordsPerSec = float64(p.Records) / secs
		p.MBPerSec = float64(p.Bytes) / secs / (1 << 20)
	}
}

// addPoint stores a point and sends it to the live view. It reports
// whether the series was coarsened to stay within MaxSeriesPoints; the
// server's live state coarsens the same way when it has as many points.
func (r *run) addPoint(pt rundoc.SeriesPoint) (coarsened bool) {
	r.rep.mu.Lock()
	r.res.Series = append(r.res.Series, pt)
	if len(r.res.Series) > rundoc.MaxSeriesPoints {
		r.res.Series = rundoc.CoarsenSeries(r.res.Series)
		coarsened = true
	}
	r.rep.mu.Unlock()
	r.rep.emit(rundoc.Event{Type: rundoc.EventInterval, Point: &pt, Elapsed: pt.T})
	return coarsened
}

// ivCounters are what one interval accumulates: records (or requests),
// payload bytes and latencies. The text lines and the series each keep
// their own, as they report at different paces.
type ivCounters struct {
	records, bytes int64
	latSum, latMax time.Duration
	// lat, when set (pointCounters), holds the interval's latencies for
	// its percentiles; spare is the previous interval's, which the
	// caller of take reads until it takes again.
	lat, spare *hdr.Histogram
}

// pointCounters are the counters of a series point: with its latencies'
// histogram, so the point has their percentiles.
func pointCounters() ivCounters { return ivCounters{lat: newHist(), spare: newHist()} }

func (c *ivCounters) add(records, bytes int64, lat time.Duration) {
	c.records += records
	c.bytes += bytes
	c.latSum += lat
	c.latMax = max(c.latMax, lat)
	if c.lat != nil {
		v, _ := histValue(lat)
		_ = c.lat.RecordValue(v)
	}
}

// take returns the counters and resets them. A histogram of latencies
// goes with them and is read before the next take, which reuses it.
func (c *ivCounters) take() ivCounters {
	v := *c
	next := c.spare
	if next != nil {
		next.Reset()
	}
	*c = ivCounters{lat: next, spare: v.lat}
	return v
}

// point is the interval's series point (T left for the caller), for
// latencies measured per record or per request (n of them).
func (c ivCounters) point(secs float64, records, bytes, n int64) rundoc.SeriesPoint {
	pt := rundoc.SeriesPoint{Records: records, Bytes: bytes, LatencyMaxMs: ms(c.latMax)}
	if secs > 0 {
		pt.RecordsPerSec = float64(records) / secs
		pt.MBPerSec = float64(bytes) / secs / (1 << 20)
	}
	if n > 0 {
		pt.LatencyAvgMs = ms(c.latSum) / float64(n)
	}
	if c.lat != nil && c.lat.TotalCount() > 0 {
		q := func(p float64) float64 { return float64(c.lat.ValueAtQuantile(p)) / 1000 }
		pt.LatencyP50Ms, pt.LatencyP99Ms, pt.LatencyP999Ms = q(50), q(99), q(99.9)
	}
	return pt
}
