package compare

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// TestGoldenProfiles: the Markdown export carries the Profiles section's
// top-changes table (per record, with q values and verdicts, a function
// that was not tested, a name with a table bar) before the runs' output;
// an undecided diff says how many runs per side would decide.
func TestGoldenProfiles(t *testing.T) {
	q := func(v float64) *float64 { return &v }
	yes, no := true, false
	meta := reportMeta
	meta.Profiles = &ProfileChanges{Title: "client cpu: CONSUMER against CLASSIC", Unit: "nanoseconds", PerRecord: true,
		Decided: true, RunsNeeded: 3, BaseRuns: 6, TargetRuns: 6, URL: "/compare/profiles?base_runs=1,2,3&target_runs=4,5,6&kind=cpu&role=client",
		Changes: []FunctionChange{
			{Name: "kgo.(*Client).fetch", DeltaFlat: 210, DeltaCum: 1530, DeltaCumPct: 21.4, QValue: q(0.0004), FlatQValue: q(0.012), Significant: &yes},
			{Name: "runtime.mallocgc", DeltaFlat: -40, DeltaCum: -40, DeltaCumPct: -2.1, QValue: q(0.61), FlatQValue: q(0.61), Significant: &no},
			{Name: "a|b`c", DeltaFlat: 3, DeltaCum: 3, DeltaCumPct: 100},
		}}
	md := Markdown(groupsTable(t), meta)
	if i, j := strings.Index(md, "### Profiles"), strings.Index(md, "### Kafka output"); i < 0 || (j >= 0 && j < i) {
		t.Errorf("the Profiles section is missing or after the runs' output")
	}
	meta.Profiles = &ProfileChanges{Title: "client cpu: branch against trunk", Unit: "nanoseconds", RunsNeeded: 3, BaseRuns: 2, TargetRuns: 2,
		Changes: []FunctionChange{{Name: "main.encode", DeltaFlat: 0.012, DeltaCum: 0.02, DeltaCumPct: 12.5}}}
	md2 := Markdown(singlesTable(t, Options{}), meta)
	if !strings.Contains(md2, "3 runs per side would") || !strings.Contains(md2, "+2.0% of total") {
		t.Errorf("undecided export:\n%s", md2[strings.Index(md2, "### Profiles"):])
	}
	golden.Check(t, "profiles.md", md+"\n----\n"+md2)
}
