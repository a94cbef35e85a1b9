package toolexec

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

func TestE2EArgs(t *testing.T) {
	tests := []struct {
		argv []string
		want E2ECommand
		ok   bool
	}{
		{[]string{"/opt/kafka/bin/kafka-e2e-latency.sh", "k:9092", "t", "10000", "all", "100"}, E2ECommand{10000, 100, "all"}, true},
		{[]string{"kafka-e2e-latency.sh", "k:9092", "t", "500", "1", "64", "client.properties"}, E2ECommand{500, 64, "1"}, true},
		{[]string{"kafka-run-class.sh", "kafka.tools.EndToEndLatency", "k:9092", "t", "7", "1", "0"}, E2ECommand{7, 0, "1"}, true},
		{[]string{"java", "-cp", "libs/*", "org.apache.kafka.tools.EndToEndLatency", "k:9092", "t", "9", "all", "10"}, E2ECommand{9, 10, "all"}, true},
		{[]string{"kafka-e2e-latency.sh", "--bootstrap-server", "k:9092", "--topic", "t", "--num-records", "5"}, E2ECommand{}, false},
		{[]string{"kafka-e2e-latency.sh", "k:9092", "t", "10000", "all"}, E2ECommand{}, false},
		{[]string{"kafka-e2e-latency.sh", "k:9092", "t", "many", "all", "100"}, E2ECommand{}, false},
		{[]string{"kafka-e2e-latency.sh", "k:9092", "t", "0", "all", "100"}, E2ECommand{}, false},
		{[]string{"kafka-e2e-latency.sh", "k:9092", "t", "10", "0", "100"}, E2ECommand{}, false},
		{[]string{"kafka-producer-perf-test.sh", "k:9092", "t", "10", "1", "100"}, E2ECommand{}, false},
	}
	for _, tt := range tests {
		got, ok := E2EArgs(tt.argv)
		if ok != tt.ok || got != tt.want {
			t.Errorf("E2EArgs(%q) = %+v, %v; want %+v, %v", tt.argv, got, ok, tt.want, tt.ok)
		}
	}
}

// TestE2ECommandApply: the count is a finished run's alone; the note is
// every run's.
func TestE2ECommandApply(t *testing.T) {
	c := E2ECommand{Records: 300, RecordSize: 10, Acks: "all"}
	done := &rundoc.Result{Workload: rundoc.E2E, Complete: true}
	c.Apply(done)
	failed := &rundoc.Result{Workload: rundoc.E2E}
	c.Apply(failed)
	if done.Measurement.MeasuredRecords != 300 || done.Measurement.LatencySamples != 300 {
		t.Errorf("finished run: %+v", done.Measurement)
	}
	if failed.Measurement.MeasuredRecords != 0 || failed.Measurement.LatencySamples != 0 {
		t.Errorf("failed run counted: %+v", failed.Measurement)
	}
	for _, r := range []*rundoc.Result{done, failed} {
		if !strings.Contains(strings.Join(r.Measurement.Notes, " "), "acks=all, 300 records of 10 bytes") {
			t.Errorf("notes %q", r.Measurement.Notes)
		}
	}
}
