package layering

import (
	"strings"
	"testing"
)

// TestRegressionsAndImportsLinkNoClientOrDatabase: the regressions cache
// and notifier (which ui imports for Regression), the per-series cache
// under it and the CSV and table parsers read the store through
// interfaces or not at all; they link no Kafka client, no database and
// no gin, so the server links none through them.
func TestRegressionsAndImportsLinkNoClientOrDatabase(t *testing.T) {
	for _, pkg := range []string{"github.com/kbench/kbench/internal/regressions", "github.com/kbench/kbench/internal/seriescache", "github.com/kbench/kbench/internal/runimport"} {
		for _, d := range deps(t, pkg) {
			for _, f := range forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
}
