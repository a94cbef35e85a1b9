package launch

import "testing"

// TestToolWorkloads: the message for a run whose tool no live worker
// names lists every workload a tool runs.
func TestToolWorkloads(t *testing.T) {
	if got := toolWorkloads(); got != "producer, consumer or e2e" {
		t.Errorf("toolWorkloads() = %q", got)
	}
}
