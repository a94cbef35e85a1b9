package send

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestPacer: item i is due at start + i/rate, Ready counts the items due
// by a time, and without a rate every item is due at once.
func TestPacer(t *testing.T) {
	const ms = time.Millisecond
	cases := []struct {
		name    string
		rate    float64
		start   time.Duration
		now     time.Duration
		ready   int64
		due3    time.Duration
		limited bool
	}{
		{"1000/s at start", 1000, 10 * ms, 10 * ms, 1, 13 * ms, true},
		{"1000/s just before item 2", 1000, 10 * ms, 12*ms - 1, 2, 13 * ms, true},
		{"1000/s at item 2", 1000, 10 * ms, 12 * ms, 3, 13 * ms, true},
		{"4/s", 4, 0, time.Second, 5, 750 * ms, true},
		{"1000/s before start", 1000, 10 * ms, 10*ms - 1, 0, 13 * ms, true},
		// 1/3,000,000 s is 333.33 ns: item 3,000,000 is due at exactly 1 s,
		// not at 0.999 s as a whole-nanosecond interval would put it.
		{"3,000,000/s", 3e6, 0, 333 * time.Nanosecond, 1, 1000 * time.Nanosecond, true},
		{"no rate", 0, 5 * ms, 5 * ms, math.MaxInt64, 5 * ms, false},
		{"negative rate (e2e's --throughput -1)", -1, 0, time.Hour, math.MaxInt64, 0, false},
	}
	for _, c := range cases {
		p := NewPacer(c.rate, c.start)
		if got := p.Limited(); got != c.limited {
			t.Errorf("%s: Limited %v, want %v", c.name, got, c.limited)
		}
		if got := p.Ready(c.now); got != c.ready {
			t.Errorf("%s: Ready(%v) = %d, want %d", c.name, c.now, got, c.ready)
		}
		if got := p.Due(3); got != c.due3 {
			t.Errorf("%s: Due(3) = %v, want %v", c.name, got, c.due3)
		}
	}
	if got := NewPacer(3e6, 0).Due(3_000_000); got != time.Second {
		t.Errorf("3,000,000/s: Due(3,000,000) = %v, want 1s", got)
	}
}

// TestSleepWakes: Sleep ends on a value from wake and on ctx's end, long
// before its duration.
func TestSleepWakes(t *testing.T) {
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	done := make(chan struct{})
	go func() { Sleep(context.Background(), time.Hour, wake); close(done) }()
	<-done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Sleep(ctx, time.Hour, nil)
}
