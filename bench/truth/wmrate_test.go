package main

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)

// steadyPolls are readings every step from t0 of a topic that gets rate
// records/s from start for dur, starting at base.
func steadyPolls(base int64, rate float64, start, dur, step, until time.Duration) []hwmPoll {
	var ps []hwmPoll
	for d := time.Duration(0); d <= until; d += step {
		h := base
		switch {
		case d >= start+dur:
			h += int64(rate * dur.Seconds())
		case d > start:
			h += int64(rate * (d - start).Seconds())
		}
		ps = append(ps, hwmPoll{T: t0.Add(d), HWM: h})
	}
	return ps
}

func TestWatermarkRateSteady(t *testing.T) {
	// 200,000 records/s for 3 s starting at 1.013 s, read every 25 ms: the
	// first and last append fall between readings.
	ps := steadyPolls(1000, 200000, 1013*time.Millisecond, 3*time.Second, 25*time.Millisecond, 5*time.Second)
	r, err := watermarkRate(ps, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Base != 1000 || r.Final != 601000 {
		t.Errorf("base %d, final %d; want 1000, 601000", r.Base, r.Final)
	}
	if r.Rate < 199999 || r.Rate > 200001 {
		t.Errorf("rate %.1f, want 200,000", r.Rate)
	}
	if r.From.T.Before(t0.Add(1013*time.Millisecond)) || r.To.T.After(t0.Add(4013*time.Millisecond)) {
		t.Errorf("span %v – %v outside the appends", r.From.T, r.To.T)
	}
}

func TestWatermarkRateWindow(t *testing.T) {
	// A warm-up at 50,000/s for 1 s, a pause, then the measured window at
	// 200,000/s from 2 s to 4 s: only the window's readings count.
	var ps []hwmPoll
	for d := time.Duration(0); d <= 5*time.Second; d += 20 * time.Millisecond {
		var h float64
		switch {
		case d <= 1*time.Second:
			h = 50000 * d.Seconds()
		case d <= 2*time.Second:
			h = 50000
		case d <= 4*time.Second:
			h = 50000 + 200000*(d-2*time.Second).Seconds()
		default:
			h = 450000
		}
		ps = append(ps, hwmPoll{T: t0.Add(d), HWM: int64(h)})
	}
	r, err := watermarkRate(ps, t0.Add(2*time.Second), t0.Add(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r.Rate < 199999 || r.Rate > 200001 {
		t.Errorf("rate %.1f, want 200,000 (the window's, not the warm-up's)", r.Rate)
	}
	all, err := watermarkRate(ps, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Rate > 150000 {
		t.Errorf("without the window the warm-up should drag the rate down; got %.0f", all.Rate)
	}
}

func TestWatermarkRateErrors(t *testing.T) {
	tests := []struct {
		name  string
		polls []hwmPoll
		want  string
	}{
		{"one reading", []hwmPoll{{t0, 5}}, "fewer than two"},
		{"no change", []hwmPoll{{t0, 5}, {t0.Add(time.Second), 5}}, "did not move"},
		{"too short", []hwmPoll{{t0, 0}, {t0.Add(25 * time.Millisecond), 500}, {t0.Add(50 * time.Millisecond), 1000}}, "too short"},
		{"back", []hwmPoll{{t0, 0}, {t0.Add(time.Second), 500}, {t0.Add(2 * time.Second), 400}, {t0.Add(3 * time.Second), 1000}}, "went back"},
		{"time order", []hwmPoll{{t0, 0}, {t0.Add(time.Second), 500}, {t0.Add(time.Second), 600}, {t0.Add(3 * time.Second), 1000}}, "time order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := watermarkRate(tt.polls, time.Time{}, time.Time{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
