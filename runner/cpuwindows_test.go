package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestProfWindowBoundaries: the windows end at series ticks once they
// reach 2 s (8 steps of 250 ms, 4 of a coarsened 500 ms), a late tick
// still ends one, and a last window shorter than 2 s joins the one
// before. The profiler is not started (goProfile false): only the
// boundaries are at stake.
func TestProfWindowBoundaries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(secs float64) time.Time { return t0.Add(time.Duration(secs * float64(time.Second))) }
	step := rundoc.SeriesStep
	for _, c := range []struct {
		name  string
		ticks []float64 // seconds since the start, at step
		steps []time.Duration
		end   float64
		want  []string
	}{
		{name: "8.3 s at 250 ms", ticks: ticksUntil(8.3, 0.25), end: 8.3, want: []string{"0-2", "2-4", "4-6", "6-8", "6-8"}},
		{name: "9.2 s: a last window of 1.2 s joins the one before", ticks: ticksUntil(9.2, 0.25), end: 9.2, want: []string{"0-2", "2-4", "4-6", "6-9", "6-9"}},
		{name: "10.1 s", ticks: ticksUntil(10.1, 0.25), end: 10.1, want: []string{"0-2", "2-4", "4-6", "6-8", "8-10", "8-10"}},
		{name: "late ticks", ticks: []float64{0.26, 0.51, 1.3, 1.9, 2.01, 3.5, 4.003, 5}, end: 6.1, want: []string{"0-2", "2-4", "4-6"}},
		{name: "shorter than a window", ticks: ticksUntil(1.5, 0.25), end: 1.5, want: []string{"0-2"}},
		{name: "coarsened to 500 ms", ticks: ticksUntil(4.2, 0.5), steps: []time.Duration{2 * step}, end: 4.2, want: []string{"0-2", "2-4", "2-4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pw := &profWindows{cpuTime: func() (time.Duration, error) { return 0, nil }}
			if err := pw.startProfile(t0); err != nil {
				t.Fatal(err)
			}
			pw.begin(t0)
			s := step
			if len(c.steps) > 0 {
				s = c.steps[0]
			}
			for _, tk := range c.ticks {
				pw.tick(at(tk), s)
			}
			if err := pw.stop(at(c.end)); err != nil {
				t.Fatal(err)
			}
			if got := pw.names(); !slices.Equal(got, c.want) {
				t.Errorf("windows %v, want %v", got, c.want)
			}
			for i, sp := range pw.spans {
				if i > 0 && !sp.from.Equal(pw.spans[i-1].to) {
					t.Errorf("window %d starts at %v, the one before ends at %v: they must share the boundary", i, sp.from, pw.spans[i-1].to)
				}
				if i < len(pw.spans)-1 && !slices.ContainsFunc(c.ticks, func(tk float64) bool { return at(tk).Equal(sp.to) }) {
					t.Errorf("window %d ends at %v, not at a series tick", i, sp.to.Sub(t0))
				}
			}
			// A tick after the stop changes nothing.
			pw.tick(at(c.end+5), s)
			if got := pw.names(); !slices.Equal(got, c.want) {
				t.Errorf("after a late tick: windows %v, want %v", got, c.want)
			}
		})
	}
}

// TestProfWindowNamer: the JVM's samples are named by the window their
// time falls in, the first before the window and the last after it.
func TestProfWindowNamer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(secs float64) time.Time { return t0.Add(time.Duration(secs * float64(time.Second))) }
	pw := &profWindows{cpuTime: func() (time.Duration, error) { return 0, nil }}
	if err := pw.startProfile(t0); err != nil {
		t.Fatal(err)
	}
	pw.begin(t0)
	for _, tk := range ticksUntil(6.4, 0.25) {
		pw.tick(at(tk), rundoc.SeriesStep)
	}
	if err := pw.stop(at(6.4)); err != nil {
		t.Fatal(err)
	}
	name := pw.namer()
	for _, c := range []struct {
		secs float64
		want string
	}{{-0.2, "0-2"}, {0, "0-2"}, {1.99, "0-2"}, {2.0, "2-4"}, {4.4, "4-6"}, {6.3, "4-6"}, {7, "4-6"}} {
		if got := name(at(c.secs)); got != c.want {
			t.Errorf("window of %v s = %q, want %q", c.secs, got, c.want)
		}
	}
}

// ticksUntil are the series' ticks every step seconds before end.
func ticksUntil(end, step float64) []float64 {
	var ts []float64
	for k := 1; float64(k)*step < end; k++ {
		ts = append(ts, float64(k)*step)
	}
	return ts
}
