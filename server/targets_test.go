package server

import (
	"testing"

	"github.com/kbench/kbench/internal/targets"
)

// allowTargets is the --allow-target policy of patterns, as the serve
// command builds Config.Targets.
func allowTargets(t testing.TB, patterns ...string) *targets.Policy {
	t.Helper()
	p, err := targets.Parse(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
