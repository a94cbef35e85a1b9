package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestNonFiniteFlagsExit2: NaN and ±Inf in a float flag are bad usage
// (exit 2, the flag named) rather than a run with a throttle or duration
// nobody asked for.
func TestNonFiniteFlagsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"run", "producer", "--throughput", "NaN"},
		{"run", "producer", "--throughput=+Inf"},
		{"run", "writepath", "--duration", "Infinity"},
		{"run", "writepath", "--request-rate", "-Inf"},
		{"run", "writepath", "--throughput", "nan"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(args, &stdout, &stderr)
		flag := strings.SplitN(strings.TrimPrefix(args[2], "--"), "=", 2)[0]
		if flag == "throughput" && args[1] == "writepath" {
			flag = "request-rate"
		}
		if code != 2 || !strings.Contains(stderr.String(), "--"+flag) {
			t.Errorf("kbench %q: exit %d, stderr %q; want 2 naming --%s", args, code, stderr.String(), flag)
		}
	}
}

// TestAllBadFlagsReported: every bad flag of a command line is reported,
// each on its own line, not only the first.
func TestAllBadFlagsReported(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "producer", "--throughput", "NaN", "--num-records", "ten", "--threads", "0"}, &stdout, &stderr)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if code != 2 || len(lines) != 3 {
		t.Fatalf("exit %d, stderr %q; want 2 and three lines", code, stderr.String())
	}
	for i, flag := range []string{"--num-records", "--throughput", "--threads"} {
		if !strings.HasPrefix(lines[i], "kbench run producer: "+flag+": ") {
			t.Errorf("line %d = %q, want it about %s", i, lines[i], flag)
		}
	}
}
