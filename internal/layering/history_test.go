package layering

import (
	"slices"
	"testing"
)

// TestHistoryIsPure: the history of a metric is computation over runs the
// caller loaded; it links only the contract, the detector and the shared
// median (no HTTP, no database, no Kafka client), so the API, the page and
// any CLI build it alike.
func TestHistoryIsPure(t *testing.T) {
	const pkg = "github.com/kbench/kbench/internal/history"
	allowed := []string{pkg, "github.com/kbench/kbench/internal/rundoc", "github.com/kbench/kbench/internal/changepoint", "github.com/kbench/kbench/internal/median"}
	for _, d := range deps(t, pkg) {
		if !slices.Contains(allowed, d) {
			t.Errorf("history links %s: it may link only %v", d, allowed[1:])
		}
	}
}
