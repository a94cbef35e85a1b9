package runner

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func findMetric(ms []Metric, name string) (Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// TestProcessMetricsCPUPerGiB: CPU per data moved uses Kafka's convention
// (MB = 2^20 bytes, so GiB = 2^30) under a name of its own; the 10^9-byte
// cpu-seconds-per-gb is gone.
func TestProcessMetricsCPUPerGiB(t *testing.T) {
	now := time.Now()
	w := &window{start: now.Add(-2 * time.Second), end: now, cpuStart: time.Second, cpuEnd: 4 * time.Second,
		ioErr: errors.New("no /proc here")}
	ms := w.processMetrics(3 << 29) // 1.5 GiB in 3 CPU seconds
	m, ok := findMetric(ms, "cpu-seconds-per-gib")
	if !ok {
		t.Fatalf("no cpu-seconds-per-gib among %v", ms)
	}
	if m.Value != 2 || m.Unit != "s/GiB" || m.Better != LowerIsBetter {
		t.Errorf("cpu-seconds-per-gib = %v %s (%s), want 2 s/GiB, lower is better", m.Value, m.Unit, m.Better)
	}
	if !strings.Contains(m.Help, "1,073,741,824") {
		t.Errorf("help %q does not say what a GiB is", m.Help)
	}
	if _, ok := findMetric(ms, "cpu-seconds-per-gb"); ok {
		t.Errorf("cpu-seconds-per-gb (10^9 bytes) still reported")
	}
	// Nothing moved: no ratio.
	if _, ok := findMetric(w.processMetrics(0), "cpu-seconds-per-gib"); ok {
		t.Errorf("cpu-seconds-per-gib reported for 0 bytes")
	}
}
