package toolexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/tier"
)

func TestGuessWorkload(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want rundoc.Workload
	}{
		{[]string{"/opt/kafka/bin/kafka-producer-perf-test.sh", "--topic", "t"}, rundoc.Producer},
		{[]string{"kafka-consumer-perf-test", "--topic", "t"}, rundoc.Consumer},
		{[]string{"/opt/kafka/bin/kafka-e2e-latency.sh", "b:9092", "t", "10000", "all", "100"}, rundoc.E2E},
		{[]string{"kafka-run-class.sh", "kafka.tools.EndToEndLatency", "b:9092", "t", "10000", "1", "100"}, rundoc.E2E},
		{[]string{"java", "-cp", "libs/*", "org.apache.kafka.tools.EndToEndLatency", "b:9092", "t", "1", "1", "1"}, rundoc.E2E},
		{[]string{"sh", "-c", "echo hi"}, ""},
	} {
		if got := GuessWorkload(tc.argv); got != tc.want {
			t.Errorf("GuessWorkload(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestRunStandInE2E runs a stand-in for kafka-e2e-latency.sh: its output
// becomes an e2e run with the tool's figures under kbench's e2e names
// and the CPU of its tree; failing after one progress line, the run is
// failed, an e2e run still, keeping what it printed.
func TestRunStandInE2E(t *testing.T) {
	tier.Integration(t, "starts tool processes")
	script, err := filepath.Abs(filepath.Join("testdata", "kafka-e2e-latency.sh"))
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{script, "127.0.0.1:9092", "lat", "3500", "all", "100"}
	e, err := Run(context.Background(), Command{Argv: argv, Env: append(os.Environ(), "BURN_MS=300")})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Succeeded() {
		t.Fatalf("exit %d: %s", e.ExitCode, e.Failure())
	}
	r := ToResult(e, ResultOptions{})
	if r.Workload != rundoc.E2E || !r.Complete || r.Error != "" || r.Measurement.Tool != "kafka-e2e-latency" {
		t.Fatalf("workload %s complete %v error %q tool %q", r.Workload, r.Complete, r.Error, r.Measurement.Tool)
	}
	for name, want := range map[string]float64{"e2e-latency-avg": 1.5614, "e2e-latency-p50": 1, "e2e-latency-p99": 24, "e2e-latency-p999": 26} {
		m, ok := r.Metric(name)
		if !ok || m.Value != want || m.Unit != "ms" || m.Better != rundoc.LowerIsBetter {
			t.Errorf("%s = %+v (present %v), want %v ms, lower is better", name, m, ok, want)
		}
	}
	if m, ok := r.Metric("process-cpu-seconds"); !ok || m.Value <= 0 {
		t.Errorf("process-cpu-seconds %+v %v: the stand-in's child burns CPU", m, ok)
	}
	notes := strings.Join(r.Measurement.Notes, "\n")
	for _, want := range []string{"figures from Kafka's kafka-e2e-latency output", "one record in flight", "4 progress lines"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if len(r.Series) != 0 || r.Measurement.MeasuredRecords != 0 {
		t.Errorf("series %v, measured records %d: the output holds neither", r.Series, r.Measurement.MeasuredRecords)
	}

	e, err = Run(context.Background(), Command{Argv: argv, Env: append(os.Environ(), "FAIL_HALF=1")})
	if err != nil {
		t.Fatal(err)
	}
	r = ToResult(e, ResultOptions{})
	if r.Complete || r.Workload != rundoc.E2E || r.Measurement.ExitCode == nil || *r.Measurement.ExitCode != 1 {
		t.Fatalf("failed run: complete %v workload %s exit %v", r.Complete, r.Workload, r.Measurement.ExitCode)
	}
	for _, want := range []string{"exited with status 1", "poll() timed out", "no Kafka figures", `no "Avg latency: … ms"`} {
		if !strings.Contains(r.Error, want) {
			t.Errorf("error %q lacks %q", r.Error, want)
		}
	}
	if r.Output != "0\t23.456789\n" || r.Measurement.Tool != "kafka-e2e-latency" {
		t.Errorf("partial output %q, tool %q", r.Output, r.Measurement.Tool)
	}
	if !strings.Contains(strings.Join(r.Measurement.Notes, "\n"), "did not parse as kafka-e2e-latency output") {
		t.Errorf("notes %q", r.Measurement.Notes)
	}
}
