package ui

import (
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestSetLiveTiming: a running run of --duration shows the time since its
// start and what remains of its measured window once it measures; before,
// the whole duration after start-up or warm-up; a run of a count keeps
// its ETA (from progress, in run.js).
func TestSetLiveTiming(t *testing.T) {
	started := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := started.Add(100 * time.Second)
	run := func(params string) RunView {
		v, err := NewRunView(&rundoc.Run{ID: 1, Status: rundoc.StatusRunning, StartedAt: &started,
			Spec: `{"workload":"producer","params":{` + params + `}}`}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct {
		phase         string
		window        float64
		label, left   string
		params, first string
	}{
		{"measure", 20, "left", FormatDuration(40 * time.Second), `"duration":60`, ""},
		{"measure", 61, "left", "any moment", `"duration":60`, ""},
		{"warmup", 0, "left", FormatDuration(time.Minute) + " after the warm-up", `"duration":60`, ""},
		{"", 0, "left", FormatDuration(time.Minute) + " after start-up", `"duration":60`, ""},
		{"measure", 20, "ETA", "—", `"num-records":1000`, ""},
	} {
		v := run(tt.params)
		v.SetLiveTiming(now, tt.phase, tt.window)
		if v.Elapsed != FormatDuration(100*time.Second) || v.LeftLabel != tt.label || v.Left != tt.left || v.StartedAtMs != started.UnixMilli() {
			t.Errorf("%s %s at %v: elapsed %q, %s %q; want %q, %s %q", tt.params, tt.phase, tt.window, v.Elapsed, v.LeftLabel, v.Left,
				FormatDuration(100*time.Second), tt.label, tt.left)
		}
	}
	// Queued: nothing has started.
	v, _ := NewRunView(&rundoc.Run{ID: 1, Status: rundoc.StatusQueued, Spec: `{"workload":"producer","params":{"duration":60}}`}, 1)
	v.SetLiveTiming(now, "", 0)
	if v.Elapsed != "—" || v.StartedAtMs != 0 || !v.Volatile() {
		t.Errorf("queued run: elapsed %q, started %d, volatile %v", v.Elapsed, v.StartedAtMs, v.Volatile())
	}
}
