package compare

import (
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestCPUPerGBAndGiBNeverCompared: runs stored before cpu-seconds-per-gib
// (2^30 bytes) replaced cpu-seconds-per-gb (10^9 bytes) keep the old name,
// so a comparison with a new run shows two rows, one value each, and no
// change between the units.
func TestCPUPerGBAndGiBNeverCompared(t *testing.T) {
	old := run(1, "before", metric("cpu-seconds-per-gb", 5.0, "s/GB", LowerIsBetter))
	cur := run(2, "after", metric("cpu-seconds-per-gib", 5.2, "s/GiB", LowerIsBetter))
	tab, err := Build([]Column{{Name: "before", Runs: []rundoc.Run{old}}, {Name: "after", Runs: []rundoc.Run{cur}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range tab.Rows {
		seen[r.Metric] = true
		for i, c := range r.Cells {
			if c.DeltaPct != nil || c.Verdict != VerdictNone {
				t.Errorf("%s, column %d: has a change (%v) or verdict %q: units compared with each other", r.Metric, i, c.DeltaPct != nil, c.Verdict)
			}
		}
		if r.Section != SectionCPU {
			t.Errorf("%s in section %q, want %q", r.Metric, r.Section, SectionCPU)
		}
	}
	if !seen["cpu-seconds-per-gb"] || !seen["cpu-seconds-per-gib"] {
		t.Errorf("rows %v, want one for each name", seen)
	}
}
