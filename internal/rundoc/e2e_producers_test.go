package rundoc

import (
	"errors"
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
