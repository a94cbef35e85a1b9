package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// cpuWindow is the external view of a process's CPU over a window.
type cpuWindow struct {
	Wall float64 // seconds
	// RunSecs is the CPU time of the window from the threads' scheduler
	// runtime (Σ /proc/PID/task/*/schedstat), interpolated at the edges.
	RunSecs float64
	AvgPct  float64
	// StatSecs is the same from /proc/PID/stat utime+stime (clock ticks,
	// dead threads included), interpolated at the edges.
	StatSecs   float64
	StatAvgPct float64
	StatOK     bool
	// Samples are the utilisations of the sampler's intervals inside the
	// window, in % of one core; P99 (nearest rank) and Max summarise
	// them.
	Samples []float64
	P99     float64
	Max     float64
	// Threads is the number of threads seen in the window; Busiest the
	// largest shares of the window's runtime, by thread.
	Threads int
	Busiest []threadShare
	Notes   []string
}

// threadShare is one thread's CPU in the window, in % of one core.
type threadShare struct {
	TID int
	Pct float64
}

// interpolate returns the value of a counter at t from readings at ts
// (ascending): linear between the readings that bracket t. It reports
// false when t lies outside the readings.
func interpolate(ts []time.Time, vs []float64, t time.Time) (float64, bool) {
	if len(ts) == 0 || t.Before(ts[0]) || t.After(ts[len(ts)-1]) {
		return 0, false
	}
	i := sort.Search(len(ts), func(i int) bool { return !ts[i].Before(t) })
	if ts[i].Equal(t) || i == 0 {
		return vs[i], true
	}
	t0, t1 := ts[i-1], ts[i]
	f := float64(t.Sub(t0)) / float64(t1.Sub(t0))
	return vs[i-1] + f*(vs[i]-vs[i-1]), true
}

// nearestRankP99 is the 99th percentile of xs by the nearest-rank method
// (the value at 1-based rank ceil(0.99·n) of the sorted values): what
// kbench's sampler reports, so both sides use one definition.
func nearestRankP99(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	r := (99*len(s) + 99) / 100
	return s[max(r, 1)-1]
}

// analyzeCPU computes the CPU of the window [ws, we] from the sampler's
// readings. clkTck is USER_HZ, the unit of /proc/PID/stat's times;
// interval the sampler's.
func analyzeCPU(samples []sample, ws, we time.Time, clkTck float64, interval time.Duration) (cpuWindow, error) {
	var w cpuWindow
	if !we.After(ws) {
		return w, errors.New("empty window")
	}
	w.Wall = we.Sub(ws).Seconds()
	// Readings after the first one past the window's end are of a
	// process that is finishing (or already a zombie, its threads gone).
	for i, s := range samples {
		if !s.T.Before(we) {
			samples = samples[:i+1]
			break
		}
	}
	// The threads' runtime as one counter that survives thread exits: from
	// one reading to the next, each thread still alive adds what it ran,
	// a thread born in between adds all it ran; a thread that exited adds
	// nothing more (what it ran after its last reading is lost: at most
	// one interval per exited thread, said in Notes).
	var ts, stat []time.Time
	var runV, statV []float64
	var prev map[int]uint64
	cum, exited := 0.0, 0
	for _, s := range samples {
		if s.StatOK {
			stat = append(stat, s.T)
			statV = append(statV, float64(s.Stat.UtimeTicks+s.Stat.StimeTicks)/clkTck)
		}
		if !s.RunOK {
			continue
		}
		if prev != nil {
			for tid, ns := range s.Threads.RunNs {
				if p, ok := prev[tid]; ok {
					if ns >= p {
						cum += float64(ns-p) / 1e9
					}
				} else {
					cum += float64(ns) / 1e9
				}
			}
			for tid := range prev {
				if _, ok := s.Threads.RunNs[tid]; !ok && !s.T.Before(ws) {
					exited++
				}
			}
		}
		prev = s.Threads.RunNs
		ts = append(ts, s.T)
		runV = append(runV, cum)
	}
	if exited > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d threads exited during the window: what each ran after the sampler's last reading of it (at most one interval) is missing from the schedstat figure, not from /proc/PID/stat's", exited))
	}
	r0, ok0 := interpolate(ts, runV, ws)
	r1, ok1 := interpolate(ts, runV, we)
	if !ok0 || !ok1 {
		return w, fmt.Errorf("no thread readings on both sides of the window (%d readings)", len(ts))
	}
	w.RunSecs = r1 - r0
	w.AvgPct = 100 * w.RunSecs / w.Wall
	if s0, ok := interpolate(stat, statV, ws); ok {
		if s1, ok := interpolate(stat, statV, we); ok {
			w.StatSecs, w.StatAvgPct, w.StatOK = s1-s0, 100*(s1-s0)/w.Wall, true
		}
	}

	// Per-interval utilisation, as kbench's sampler defines it: from the
	// window's start (interpolated), each reading inside the window ends
	// an interval and starts the next, except one that comes less than
	// half an interval after the last (the schedule catching up, or an
	// edge reading), which is folded into the next.
	lastT, lastV := ws, r0
	for i := range ts {
		if !ts[i].After(ws) {
			continue
		}
		if ts[i].After(we) {
			break
		}
		dt := ts[i].Sub(lastT)
		if dt < interval/2 {
			continue
		}
		w.Samples = append(w.Samples, 100*(runV[i]-lastV)/dt.Seconds())
		lastT, lastV = ts[i], runV[i]
	}
	if len(w.Samples) > 0 {
		w.P99 = nearestRankP99(w.Samples)
		w.Max = slices.Max(w.Samples)
	}

	// Threads: the readings nearest the edges, inside the window.
	var first, last *sample
	for i := range samples {
		s := &samples[i]
		if !s.RunOK || s.T.Before(ws) || s.T.After(we) {
			continue
		}
		if first == nil {
			first = s
		}
		last = s
	}
	if first != nil && last != first {
		span := last.T.Sub(first.T).Seconds()
		seen := map[int]bool{}
		for tid, ns := range last.Threads.RunNs {
			seen[tid] = true
			// A thread born in the window has no first reading: all its
			// runtime is the window's.
			before := first.Threads.RunNs[tid]
			if before > ns {
				continue
			}
			d := ns - before
			w.Busiest = append(w.Busiest, threadShare{TID: tid, Pct: 100 * float64(d) / 1e9 / span})
		}
		for tid := range first.Threads.RunNs {
			seen[tid] = true
		}
		w.Threads = len(seen)
		slices.SortFunc(w.Busiest, func(a, b threadShare) int {
			switch {
			case a.Pct > b.Pct:
				return -1
			case a.Pct < b.Pct:
				return 1
			}
			return a.TID - b.TID
		})
		if len(w.Busiest) > 3 {
			w.Busiest = w.Busiest[:3]
		}
	}
	return w, nil
}
