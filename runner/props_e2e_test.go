package runner

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestE2ERateApplies: the runner's word on a driver's properties for e2e
// rate mode. Every property it says a producer or a consumer applies is
// one the e2e spec takes (Validate), and a value a property never takes
// is an error rather than a property not applied.
func TestE2ERateApplies(t *testing.T) {
	for _, tt := range []struct {
		consumer   bool
		key, value string
		why        string // "" applied; else part of why not
		bad        bool
	}{
		{false, "linger.ms", "5", "", false},
		{false, "acks", "all", "", false},
		{false, "acks", "7", "", true},
		{false, "enable.idempotence", "true", "no idempotent producer", false},
		{false, "enable.idempotence", "false", "", false},
		{false, "fetch.max.wait.ms", "100", "other kind of client", false},
		{false, "default.api.timeout.ms", "1000", "does not take it", false},
		{false, "security.protocol", "SASL_SSL", "", false},
		{true, "fetch.max.wait.ms", "100", "", false},
		{true, "fetch.min.bytes", "1", "", false},
		{true, "fetch.min.bytes", "1024", "fetch.min.bytes 1", false},
		{true, "max.partition.fetch.bytes", "10485760", "", false},
		{true, "max.partition.fetch.bytes", "65536", "at least 1 MiB", false},
		{true, "enable.auto.commit", "false", "commit no offsets", false},
		{true, "isolation.level", "read_committed", "read uncommitted", false},
		{true, "request.timeout.ms", "30000", "e2e consumers do not apply it", false},
		{true, "session.timeout.ms", "soon", "", true},
		{true, "linger.ms", "5", "other kind of client", false},
	} {
		why, err := E2ERateApplies(tt.consumer, tt.key, tt.value)
		switch {
		case tt.bad && err == nil:
			t.Errorf("consumer %v %s=%s: no error, want the value refused", tt.consumer, tt.key, tt.value)
		case !tt.bad && err != nil:
			t.Errorf("consumer %v %s=%s: %v", tt.consumer, tt.key, tt.value, err)
		case tt.why == "" && why != "", tt.why != "" && !strings.Contains(why, tt.why):
			t.Errorf("consumer %v %s=%s: %q, want %q", tt.consumer, tt.key, tt.value, why, tt.why)
		}
	}
	examples := map[string]string{"acks": "1", "compression.type": "zstd", "client.id": "x", "partition.assignment.strategy": "range",
		"isolation.level": "read_uncommitted", "auto.offset.reset": "earliest", "fetch.min.bytes": "1", "enable.idempotence": "false"}
	for _, rules := range []map[string]e2eRule{e2eRateProducer, e2eRateConsumer} {
		for k := range rules {
			v, ok := examples[k]
			if !ok {
				v = "2000000"
			}
			if strings.Contains(k, "commit") {
				continue // applied by no value
			}
			if _, err := rundoc.ParseArgs(rundoc.E2E, []string{"--mode", "rate", "--producer-props", k + "=" + v}, Validate); err != nil {
				t.Errorf("%s=%s is applied by e2e rate mode, but its spec refuses it: %v", k, v, err)
			}
		}
	}
}
