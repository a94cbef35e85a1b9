package layering

import (
	"slices"
	"testing"
)

// TestOMBIsPure: reading and writing OpenMessaging Benchmark results is
// conversion between documents: internal/omb links only the contract,
// the histograms and the API's wire types, whose OMBResult it fills (no
// HTTP, no database, no Kafka client), so the API, `kbench import` and
// any test use it alike.
func TestOMBIsPure(t *testing.T) {
	pkg := kb("internal/omb")
	allowed := []string{pkg, kb("internal/rundoc"), kb("internal/hdr"), kb("client/wire")}
	for _, d := range deps(t, pkg) {
		if !slices.Contains(allowed, d) {
			t.Errorf("omb links %s: it may link only %v", d, allowed[1:])
		}
	}
}
