package layering

import (
	"strings"
	"testing"
)

// TestLaunchLinksNoClientOrHTTP: submission (package launch) checks
// specs with the Kafka client's check injected, not imported, so a
// server that links it links no Kafka client through it; and it answers
// no HTTP, so it links neither gin nor the server nor the engine.
func TestLaunchLinksNoClientOrHTTP(t *testing.T) {
	const pkg = "github.com/kbench/kbench/internal/launch"
	banned := []string{"github.com/segmentio/kafka-go", "github.com/twmb/franz-go", "github.com/gin-gonic/gin",
		"github.com/kbench/kbench/runner", "github.com/kbench/kbench/server"}
	for _, d := range deps(t, pkg) {
		for _, b := range banned {
			if d == b || strings.HasPrefix(d, b+"/") {
				t.Errorf("%s links %s", pkg, d)
			}
		}
	}
}
