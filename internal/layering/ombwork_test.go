package layering

import (
	"slices"
	"strings"
	"testing"
)

// TestOMBWorkReadsFilesOnly: the reading of OMB's workload and driver
// files (package ombwork) is a translation into the run contract; it
// links the contract and the YAML parser, nothing else of kbench's (the
// runner's word on Kafka properties is handed in), so the CLI and the
// server's submission both use it without linking a Kafka client.
func TestOMBWorkReadsFilesOnly(t *testing.T) {
	const pkg = "github.com/kbench/kbench/internal/ombwork"
	allowed := []string{pkg, kb("internal/rundoc")}
	for _, d := range deps(t, pkg) {
		if !slices.Contains(allowed, d) && !strings.HasPrefix(d, "github.com/goccy/go-yaml") {
			t.Errorf("ombwork links %s: it may link only the standard library, %v and github.com/goccy/go-yaml", d, allowed[1:])
		}
	}
}
