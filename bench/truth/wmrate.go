package main

import (
	"errors"
	"fmt"
	"time"
)

// hwmPoll is one reading of a topic's high watermarks (summed over its
// partitions) by the poller, stamped with the poller's clock at the
// middle of its ListOffsets round trip.
type hwmPoll struct {
	T   time.Time
	HWM int64
}

// hwmRate is the produce rate the broker's watermarks show.
type hwmRate struct {
	// Rate is records/s between From and To.
	Rate     float64
	From, To hwmPoll
	// Base and Final are the watermarks before and after the run.
	Base, Final int64
	// Moving is how many readings inside the window saw the watermark
	// mid-run (above Base, below Final).
	Moving int
}

// Span is the time the rate was taken over.
func (r hwmRate) Span() time.Duration { return r.To.T.Sub(r.From.T) }

// watermarkRate computes the rate records were appended at from polls (in
// time order; the first taken before the run, the last after it): the
// records added between the first and the last reading that saw the
// watermark moving (above its value before the run, below its final
// value), divided by the time between those two readings. Both ends are
// readings taken while records were arriving, so for a steady rate
// neither the unknown moment of the first append nor of the last biases
// it. Only readings within [ws, we] count, when they are set: the run's
// measured window, so that warm-up records, also appended to the topic,
// stay out.
func watermarkRate(polls []hwmPoll, ws, we time.Time) (hwmRate, error) {
	if len(polls) < 2 {
		return hwmRate{}, errors.New("fewer than two watermark readings")
	}
	r := hwmRate{Base: polls[0].HWM, Final: polls[len(polls)-1].HWM}
	if r.Final <= r.Base {
		return r, fmt.Errorf("the watermark did not move (%d → %d)", r.Base, r.Final)
	}
	from, to := -1, -1
	for i, p := range polls {
		if i > 0 && p.HWM < polls[i-1].HWM {
			return r, fmt.Errorf("the watermark went back from %d to %d at reading %d", polls[i-1].HWM, p.HWM, i)
		}
		if i > 0 && !p.T.After(polls[i-1].T) {
			return r, fmt.Errorf("readings %d and %d are not in time order", i-1, i)
		}
		if !ws.IsZero() && p.T.Before(ws) || !we.IsZero() && p.T.After(we) {
			continue
		}
		if p.HWM > r.Base && p.HWM < r.Final {
			r.Moving++
			if from < 0 {
				from = i
			}
			to = i
		}
	}
	if r.Moving < 2 || polls[to].HWM == polls[from].HWM {
		return r, fmt.Errorf("%d readings saw the watermark move inside the window: it was too short for the poll interval", r.Moving)
	}
	r.From, r.To = polls[from], polls[to]
	r.Rate = float64(r.To.HWM-r.From.HWM) / r.To.T.Sub(r.From.T).Seconds()
	return r, nil
}
