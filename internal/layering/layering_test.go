// Package layering holds the tests of kbench's one-way imports: what the
// pages, the comparisons, the API client, the server and the run contract
// may link, and who may import the server.
package layering

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is kbench's module path; kb names one of its packages.
const module = "github.com/kbench/kbench"

func kb(p string) string { return module + "/" + p }

// kafkaClients are the module paths of a Kafka client (the engine's,
// kafka-go, and the embedded broker's, franz-go).
var kafkaClients = []string{
	"github.com/segmentio/kafka-go",
	"github.com/twmb/franz-go",
}

// databases are the module paths of a database: GORM, the SQLite drivers,
// pgx, and River (whose drivers link pgx).
var databases = []string{
	"gorm.io/",
	"github.com/mattn/go-sqlite3",
	"github.com/glebarez/",
	"modernc.org/sqlite",
	"github.com/jackc/pgx",
	"github.com/riverqueue/",
}

// gin is the web framework, which stays in server.
const gin = "github.com/gin-gonic/gin"

// forbidden is what a page, a comparison or the API client must not link.
var forbidden = slices.Concat(kafkaClients, databases, []string{gin})

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
	list := strings.Fields(string(out))
	if !slices.Contains(list, pkg) {
		// A renamed or moved package would make every check below pass
		// over nothing.
		t.Fatalf("go list -deps %s does not list the package itself: %q", pkg, list)
	}
	return list
}

// links reports the packages of list under one of the prefixes.
func links(list, prefixes []string) []string {
	var hit []string
	for _, d := range list {
		for _, p := range prefixes {
			if strings.HasPrefix(d, p) {
				hit = append(hit, d)
				break
			}
		}
	}
	return hit
}

// within reports whether d is package p or one below it.
func within(d, p string) bool { return d == p || strings.HasPrefix(d, p+"/") }

// TestViewsLinkNoClientOrDatabase: the pages (ui), the comparisons
// (compare, check, history) and the API client read runs through the
// contract only, so none of them links a Kafka client, a database or gin.
func TestViewsLinkNoClientOrDatabase(t *testing.T) {
	for _, pkg := range []string{kb("ui"), kb("internal/compare"), kb("internal/check"), kb("internal/history"), kb("client"), kb("client/wire"), kb("internal/rundoc")} {
		for _, d := range links(deps(t, pkg), forbidden) {
			t.Errorf("%s links %s", pkg, d)
		}
	}
	for _, d := range deps(t, kb("internal/rundoc")) {
		if d != kb("internal/rundoc") {
			t.Errorf("rundoc links %s: the contract imports only the standard library", d)
		}
	}
}

// TestClientImportsOnlyTheContract: client is what modules outside kbench
// use to call its API; it imports the standard library, its wire types
// (client/wire) and the contract whose types they alias, nothing else.
// The wire types themselves link no HTTP client, so the pages and the
// comparisons that encode them do not either.
func TestClientImportsOnlyTheContract(t *testing.T) {
	for _, d := range deps(t, kb("client")) {
		if d != kb("client") && d != kb("client/wire") && d != kb("internal/rundoc") {
			t.Errorf("client links %s: it may link only the standard library, client/wire and internal/rundoc", d)
		}
	}
	for _, d := range deps(t, kb("client/wire")) {
		if d != kb("client/wire") && d != kb("internal/rundoc") {
			t.Errorf("client/wire links %s: it may link only the standard library and internal/rundoc", d)
		}
	}
	for _, pkg := range []string{kb("client/wire"), kb("ui"), kb("internal/compare")} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		if slices.Contains(strings.Fields(string(out)), "net/http") {
			t.Errorf("%s links net/http: views and wire types make no requests", pkg)
		}
	}
}

// TestServerLinksNoClient: the server speaks HTTP; the engine's
// validator and metric catalog reach it as data from the serve command,
// so it links no Kafka client (a run's client is its child process's).
func TestServerLinksNoClient(t *testing.T) {
	for _, pkg := range []string{kb("server"), kb("internal/launch"), kb("internal/lifecycle"), kb("internal/regressions"), kb("internal/targets")} {
		for _, d := range links(deps(t, pkg), kafkaClients) {
			t.Errorf("%s links %s", pkg, d)
		}
	}
}

// goPackage is what TestOnlyServeImportsServer reads of go list -json.
type goPackage struct {
	ImportPath  string
	Imports     []string
	TestImports []string
}

// TestOnlyServeImportsServer: the server is a leaf of the command line:
// only internal/cli (the serve command builds it) imports it, and
// bench/serve/scale, which drives it in process to measure it. Its own
// external tests may too.
func TestOnlyServeImportsServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{kb("internal/cli"), kb("bench/serve/scale")}
	seen := 0
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		seen++
		if p.ImportPath == kb("server") || slices.Contains(allowed, p.ImportPath) {
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports) {
			if imp == kb("server") {
				t.Errorf("%s imports server: only %v may", p.ImportPath, allowed)
			}
		}
	}
	if seen < 20 {
		t.Fatalf("go list listed %d packages", seen)
	}
}

// TestLayersPointDown: no layer imports one above it. Each case names a
// package and the kbench packages it must not link.
func TestLayersPointDown(t *testing.T) {
	cases := []struct {
		pkg    string
		banned []string
	}{
		{"runner", []string{"internal/store", "server", "ui", "internal/compare", "internal/lifecycle", "internal/launch", "internal/cli", "client"}},
		{"internal/store", []string{"runner", "server", "ui", "internal/compare", "internal/lifecycle", "internal/launch", "profiles", "internal/cli"}},
		{"internal/compare", []string{"runner", "internal/store", "server", "ui", "internal/lifecycle", "internal/launch"}},
		{"ui", []string{"runner", "internal/store", "server", "internal/lifecycle", "internal/launch", "internal/cli"}},
		{"internal/lifecycle", []string{"runner", "server", "ui", "internal/compare", "internal/launch", "internal/cli"}},
		{"internal/launch", []string{"runner", "server", "internal/cli"}},
		{"internal/regressions", []string{"runner", "server", "internal/launch", "internal/cli"}},
		{"internal/clusters", []string{"runner", "internal/store", "server", "ui", "internal/compare", "internal/lifecycle"}},
		{"internal/targets", []string{"runner", "internal/store", "server", "ui", "internal/compare", "internal/lifecycle"}},
		{"internal/toolexec", []string{"runner", "internal/store", "server", "ui", "internal/compare", "internal/lifecycle"}},
		{"server", []string{"runner", "internal/cli"}},
	}
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	all := strings.Fields(string(out))
	for _, c := range cases {
		for _, b := range c.banned {
			// A banned package that no longer exists (moved, renamed)
			// would make its rule pass over nothing.
			if !slices.ContainsFunc(all, func(p string) bool { return within(p, kb(b)) }) {
				t.Errorf("%s: banned package %s does not exist", c.pkg, b)
			}
		}
		for _, d := range deps(t, kb(c.pkg)) {
			for _, b := range c.banned {
				if within(d, kb(b)) {
					t.Errorf("%s imports %s", c.pkg, d)
				}
			}
		}
	}
}

// TestLifecycleRunsNoClient: the lifecycle starts runs as `kbench run`
// processes and reads their documents; it links no Kafka client (the
// engine is the child's) and no web framework (it serves no HTTP).
func TestLifecycleRunsNoClient(t *testing.T) {
	for _, d := range links(deps(t, kb("internal/lifecycle")), append(slices.Clone(kafkaClients), gin)) {
		t.Errorf("lifecycle links %s", d)
	}
}

// TestToolexecLinksNoFrameworks: running a command for kbench exec and a
// tool run's child needs the Kafka output parser (internal/kafkafmt) and
// the /proc readers (internal/sysstat), not the engine, a Kafka client,
// a database or gin.
func TestToolexecLinksNoFrameworks(t *testing.T) {
	for _, d := range links(deps(t, kb("internal/toolexec")), slices.Concat(forbidden, []string{kb("runner")})) {
		t.Errorf("toolexec links %s", d)
	}
}
