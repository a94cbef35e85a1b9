// Package layering holds the test of kbench's one-way imports: what the
// pages, the comparisons and the run contract may link.
package layering

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the module paths of what a page or a comparison must not
// link: a Kafka client, a database (and its cgo driver), the web framework.
var forbidden = []string{
	"github.com/segmentio/kafka-go",
	"github.com/twmb/franz-go",
	"gorm.io/",
	"github.com/mattn/go-sqlite3",
	"github.com/glebarez/",
	"modernc.org/sqlite",
	"github.com/jackc/pgx",
	"github.com/gin-gonic/gin",
}

// deps lists the non-standard packages pkg links, itself included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	return strings.Fields(string(out))
}

// TestViewsLinkNoClientOrDatabase: ui and compare read runs through the
// contract (rundoc) only, so that a page or a comparison never links a
// Kafka client, GORM or SQLite, and the contract itself links nothing
// outside the standard library.
func TestViewsLinkNoClientOrDatabase(t *testing.T) {
	for _, pkg := range []string{"github.com/kbench/kbench/ui", "github.com/kbench/kbench/internal/compare", "github.com/kbench/kbench/internal/rundoc"} {
		for _, d := range deps(t, pkg) {
			for _, f := range forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
	for _, d := range deps(t, "github.com/kbench/kbench/internal/rundoc") {
		if d != "github.com/kbench/kbench/internal/rundoc" {
			t.Errorf("rundoc links %s: the contract imports only the standard library", d)
		}
	}
}

// TestLifecycleRunsNoClient: the lifecycle starts runs as `kbench run`
// processes and reads their documents; it links no Kafka client (the
// engine is the child's) and no web framework (it serves no HTTP).
func TestLifecycleRunsNoClient(t *testing.T) {
	for _, d := range deps(t, "github.com/kbench/kbench/internal/lifecycle") {
		for _, f := range []string{"github.com/segmentio/kafka-go", "github.com/twmb/franz-go", "github.com/gin-gonic/gin"} {
			if strings.HasPrefix(d, f) {
				t.Errorf("lifecycle links %s", d)
			}
		}
	}
}

// TestServerLinksNoClient: the server is HTTP only; the runner's checks
// it applies (runner.Validate, runner.ImportMetrics) reach it as data from
// the serve command, so it links no Kafka client.
func TestServerLinksNoClient(t *testing.T) {
	for _, d := range deps(t, "github.com/kbench/kbench/server") {
		for _, f := range []string{"github.com/segmentio/kafka-go", "github.com/twmb/franz-go"} {
			if strings.HasPrefix(d, f) {
				t.Errorf("server links %s", d)
			}
		}
	}
}

// TestLayersPointDown: the engine (runner) and the store never import
// the layers above them, and the contract imports no kbench package.
func TestLayersPointDown(t *testing.T) {
	cases := []struct {
		pkg    string
		banned []string
	}{
		{"github.com/kbench/kbench/runner", []string{"/store", "/server", "/ui", "/compare", "/lifecycle"}},
		{"github.com/kbench/kbench/internal/store", []string{"/runner", "/server", "/ui", "/compare", "/lifecycle", "/profiles"}},
		{"github.com/kbench/kbench/internal/compare", []string{"/runner", "/store", "/server", "/ui", "/lifecycle"}},
		{"github.com/kbench/kbench/ui", []string{"/runner", "/store", "/server", "/lifecycle"}},
		{"github.com/kbench/kbench/internal/lifecycle", []string{"/runner", "/server", "/ui", "/compare"}},
		{"github.com/kbench/kbench/internal/clusters", []string{"/runner", "/store", "/server", "/ui", "/compare", "/lifecycle"}},
		{"github.com/kbench/kbench/internal/targets", []string{"/runner", "/store", "/server", "/ui", "/compare", "/lifecycle"}},
		{"github.com/kbench/kbench/internal/toolexec", []string{"/store", "/server", "/ui", "/compare", "/lifecycle"}},
	}
	for _, c := range cases {
		for _, d := range deps(t, c.pkg) {
			for _, b := range c.banned {
				if d == "github.com/kbench/kbench"+b || strings.HasPrefix(d, "github.com/kbench/kbench"+b+"/") {
					t.Errorf("%s imports %s", c.pkg, d)
				}
			}
		}
	}
}

// TestToolexecLinksNoFrameworks: running a command for kbench exec and a
// tool run's child needs the Kafka output parser (internal/kafkafmt) and
// the /proc readers (internal/sysstat), not
// the engine, a Kafka client, GORM or gin.
func TestToolexecLinksNoFrameworks(t *testing.T) {
	for _, d := range deps(t, "github.com/kbench/kbench/internal/toolexec") {
		for _, f := range []string{"github.com/segmentio/kafka-go", "github.com/twmb/franz-go", "github.com/gin-gonic/gin", "gorm.io/", "github.com/kbench/kbench/runner/"} {
			if strings.HasPrefix(d, f) && d != "github.com/kbench/kbench/internal/kafkafmt" && d != "github.com/kbench/kbench/internal/sysstat" {
				t.Errorf("toolexec links %s", d)
			}
		}
		if d == "github.com/kbench/kbench/runner" {
			t.Errorf("toolexec links the engine (%s)", d)
		}
	}
}
