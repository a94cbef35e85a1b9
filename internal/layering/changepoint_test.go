package layering

import "testing"

// TestChangepointStandardLibraryOnly: the change-point detector is pure
// computation, used by the history page, the API and `kbench check` alike;
// it links nothing outside the standard library (no HTTP framework, no
// database, no other kbench package).
func TestChangepointStandardLibraryOnly(t *testing.T) {
	const pkg = "github.com/kbench/kbench/internal/changepoint"
	for _, d := range deps(t, pkg) {
		if d != pkg {
			t.Errorf("changepoint links %s: it imports only the standard library", d)
		}
	}
}
