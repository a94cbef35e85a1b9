package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// kbenchResult is the part of a run's result.json the checks read. Other
// fields, present or added later, are ignored.
type kbenchResult struct {
	Workload    string          `json:"workload"`
	Complete    bool            `json:"complete"`
	Error       string          `json:"error"`
	Spec        json.RawMessage `json:"spec"`
	Measurement struct {
		WarmupRecords   int64    `json:"warmup_records"`
		PrefillRecords  int64    `json:"prefill_records"`
		MeasuredRecords int64    `json:"measured_records"`
		WindowSeconds   float64  `json:"window_seconds"`
		CPUSamples      int      `json:"cpu_samples"`
		CPUSampleMs     int64    `json:"cpu_sample_interval_ms"`
		Notes           []string `json:"notes"`
	} `json:"measurement"`
	Metrics []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Unit  string  `json:"unit"`
	} `json:"metrics"`
}

func readResult(dir string) (*kbenchResult, error) {
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, err
	}
	var r kbenchResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s/result.json: %w", dir, err)
	}
	return &r, nil
}

// metric returns the first of names the result has, with the name found:
// where a metric is being renamed, callers list the new name and the old.
func (r *kbenchResult) metric(names ...string) (value float64, unit, name string, ok bool) {
	for _, n := range names {
		for _, m := range r.Metrics {
			if m.Name == n {
				return m.Value, m.Unit, n, true
			}
		}
	}
	return 0, "", "", false
}

// event is one line of `kbench run --progress json`; only what the checks
// use.
type event struct {
	Type    string    `json:"type"`
	Time    time.Time `json:"time"`
	Phase   string    `json:"phase"`
	Elapsed float64   `json:"elapsed"`
	Text    string    `json:"text"`
	Error   string    `json:"error"`
}

// windowStart estimates when the run's measured window opened, from its
// events: every interval event carries the seconds since the window
// opened (elapsed) and the time it was written, and is written a little
// after its tick, so time − elapsed is never early; the smallest is the
// best estimate. The "measure" phase event is written after the window
// opens and bounds it too, and so does the "finishing" event less the
// window's length. ok is false when no event says.
func windowStart(events []event, windowSeconds float64) (t time.Time, ok bool) {
	consider := func(c time.Time) {
		if !ok || c.Before(t) {
			t, ok = c, true
		}
	}
	for _, e := range events {
		switch {
		case e.Type == "interval" && e.Elapsed > 0:
			consider(e.Time.Add(-time.Duration(e.Elapsed * float64(time.Second))))
		case e.Type == "phase" && e.Phase == "measure":
			consider(e.Time)
		case e.Type == "phase" && e.Phase == "finishing" && windowSeconds > 0:
			consider(e.Time.Add(-time.Duration(windowSeconds * float64(time.Second))))
		}
	}
	return t, ok
}
