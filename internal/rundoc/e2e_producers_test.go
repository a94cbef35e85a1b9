package rundoc

import (
	"errors"
	"strings"
	"testing"
)

// TestE2EProducersAndWarmup: e2e's --threads (producers per topic) and
// --warmup apply to rate mode only, within their bounds; each refusal
// names its flag.
func TestE2EProducersAndWarmup(t *testing.T) {
	s, err := ParseArgs(E2E, []string{"--throughput", "1000", "--topics", "4", "--threads", "4", "--warmup", "2.5", "--duration", "10"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Threads != 4 || s.Warmup != 2.5 {
		t.Errorf("threads %d, warmup %v", s.Threads, s.Warmup)
	}
	for _, tt := range []struct {
		args  []string
		field string
	}{
		{[]string{"--threads", "2"}, "threads"},                                       // Kafka's mode
		{[]string{"--warmup", "1"}, "warmup"},                                         // Kafka's mode
		{[]string{"--mode", "rate", "--warmup", "-1"}, "warmup"},                      // negative
		{[]string{"--mode", "rate", "--warmup", "1e9"}, "warmup"},                     // over 7 days
		{[]string{"--mode", "rate", "--threads", "0"}, "threads"},                     // none
		{[]string{"--mode", "rate", "--threads", "300"}, "threads"},                   // over 256
		{[]string{"--mode", "rate", "--topics", "100", "--threads", "11"}, "threads"}, // 1100 producers
	} {
		_, err := ParseArgs(E2E, tt.args)
		var fes FieldErrors
		if !errors.As(err, &fes) || !fes.Has(tt.field) {
			t.Errorf("ParseArgs(e2e, %q) = %v, want an error on %s", tt.args, err, tt.field)
		}
	}
}

// TestE2EOMBShapeFlags: --groups-per-topic, --duration-after-drain and
// --notes are refused, naming themselves, where they do not apply; notes
// keep their commas and do not define the run's series.
func TestE2EOMBShapeFlags(t *testing.T) {
	s, err := ParseArgs(E2E, []string{"--throughput", "100", "--topics", "2", "--subscriptions", "1", "--groups-per-topic",
		"--duration", "5", "--backlog-bytes", "1048576", "--duration-after-drain", "--notes", "a, b", "--notes", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.GroupsPerTopic || !s.DurationAfterDrain || len(s.Notes) != 2 || s.Notes[0] != "a, b" {
		t.Errorf("spec %+v", s)
	}
	plain := s
	plain.Notes = nil
	f1, _ := s.Fingerprint()
	f2, _ := plain.Fingerprint()
	if f1 != f2 {
		t.Errorf("notes change the fingerprint")
	}
	for _, tt := range []struct {
		args  []string
		field string
	}{
		{[]string{"--throughput", "100", "--groups-per-topic"}, "groups-per-topic"},
		{[]string{"--throughput", "100", "--topics", "100", "--subscriptions", "5", "--consumers-per-subscription", "5", "--groups-per-topic"}, "groups-per-topic"},
		{[]string{"--throughput", "100", "--duration", "5", "--duration-after-drain"}, "duration-after-drain"},
		{[]string{"--throughput", "100", "--num-records", "100000", "--backlog-bytes", "1048576", "--duration-after-drain"}, "duration-after-drain"},
		{[]string{"--notes", " "}, "notes"},
		{[]string{"--notes", "two\nlines"}, "notes"},
		{[]string{"--notes", strings.Repeat("x", MaxNoteLen+1)}, "notes"},
	} {
		_, err := ParseArgs(E2E, tt.args)
		var fes FieldErrors
		if !errors.As(err, &fes) || !fes.Has(tt.field) {
			t.Errorf("ParseArgs(e2e, %.80q) = %v, want an error on %s", tt.args, err, tt.field)
		}
	}
}
