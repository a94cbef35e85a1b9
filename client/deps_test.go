package client

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDependencies: client imports only the standard library and the run
// contract, so that a program talking to a kbench server links no Kafka
// client, no database and no web framework. A standard library path has
// no dot in its first element.
func TestDependencies(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") && path != "github.com/kbench/kbench/internal/rundoc" {
				t.Errorf("%s imports %s: client imports only the standard library and internal/rundoc", name, path)
			}
		}
	}
	if files == 0 {
		t.Fatal("no source files found")
	}
}
