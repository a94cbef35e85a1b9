package compare

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/omb"
	"github.com/kbench/kbench/internal/rundoc"
)

// ombRun is internal/omb's hand-written OMB result imported, as the
// store gives it back.
func ombRun(t *testing.T, id uint) rundoc.Run {
	t.Helper()
	data, err := os.ReadFile("../omb/testdata/kafka-1-topic-16-partitions-1kb.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := omb.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	in := p.Run("r.json")
	spec, _ := json.Marshal(in.Spec)
	env, _ := json.Marshal(in.Environment)
	m, _ := json.Marshal(in.Measurement)
	r := rundoc.Run{ID: id, Label: in.Label, Workload: in.Workload, Status: rundoc.StatusSucceeded, Source: rundoc.SourceImported,
		Complete: true, Spec: string(spec), Metrics: in.Metrics, Series: in.Series, CreatedAt: t0}
	r.SetDocuments(string(env), string(m))
	return r
}

// TestCompareOMB: a comparison of OMB results with a kbench e2e run
// says which runs are OMB's (another client, e2e in whole ms), lists
// the client as a difference, compares OMB's figures under kbench's
// names, and merges nothing of OMB's quantile curves, even with two OMB
// runs in one column; OMB results of two workloads list them apart.
func TestCompareOMB(t *testing.T) {
	kb := run(1, "kafka-go", rundoc.Metric{Name: "e2e-latency-p99", Value: 6.2, Unit: "ms", Better: rundoc.LowerIsBetter},
		rundoc.Metric{Name: "record-send-rate", Value: 50_000, Unit: "records/s", Better: rundoc.HigherIsBetter})
	kb.Workload = rundoc.E2E
	kb.Spec = `{"workload":"e2e","params":{"record-size":1024,"partitions":16,"throughput":50000}}`
	kb.SetDocuments(envJSON(0.2, "cluster"), measurementJSON(60, 3_000_000, 600))
	tbl, err := Build([]Column{{Name: "kafka-go", Runs: []rundoc.Run{kb}}, {Name: "OMB", Runs: []rundoc.Run{ombRun(t, 2), ombRun(t, 3)}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(tbl.Notes, "\n")
	if !strings.Contains(notes, "Runs #2, #3 are OpenMessaging Benchmark results") || !strings.Contains(notes, "whole milliseconds") {
		t.Errorf("notes say nothing of OMB:\n%s", notes)
	}
	i := slices.IndexFunc(tbl.Comparability, func(d Difference) bool { return d.Setting == "client" })
	if i < 0 || tbl.Comparability[i].Values[0] != "kbench" || tbl.Comparability[i].Values[1] != "Java (OpenMessaging Benchmark)" {
		t.Errorf("comparability: %+v", tbl.Comparability)
	}
	row := slices.IndexFunc(tbl.Rows, func(r Row) bool { return r.Metric == "e2e-latency-p99" })
	if row < 0 || tbl.Rows[row].Cells[1].Value != 8 || tbl.Rows[row].Cells[1].N != 2 {
		t.Fatalf("e2e-latency-p99 row: %+v", tbl.Rows)
	}
	if len(tbl.Merged) != 0 || slices.ContainsFunc(tbl.Rows, func(r Row) bool { return strings.HasSuffix(r.Metric, MergedSuffix) }) {
		t.Errorf("OMB's curves entered a merge: %d merged histograms", len(tbl.Merged))
	}
	// Two OMB workloads: their names differ among the settings.
	other := ombRun(t, 4)
	other.Spec = strings.Replace(other.Spec, "1-topic-16-partitions-1kb", "1-topic-100-partitions-1kb", 1)
	tbl, err = Build([]Column{{Name: "a", Runs: []rundoc.Run{ombRun(t, 2)}}, {Name: "b", Runs: []rundoc.Run{other}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tbl.Comparability, func(d Difference) bool { return d.Setting == omb.ParamWorkload }) {
		t.Errorf("the OMB workloads are not listed: %+v", tbl.Comparability)
	}
}
