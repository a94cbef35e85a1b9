package layering

import (
	"strings"
	"testing"
)

// TestCheckDecidesWithoutClientOrDatabase: `kbench check`'s decision
// (package check) is computation over values, reused by any caller; it
// links no Kafka client, database or web framework.
func TestCheckDecidesWithoutClientOrDatabase(t *testing.T) {
	const pkg = "github.com/kbench/kbench/internal/check"
	for _, d := range deps(t, pkg) {
		for _, f := range forbidden {
			if strings.HasPrefix(d, f) {
				t.Errorf("%s links %s", pkg, d)
			}
		}
	}
}
