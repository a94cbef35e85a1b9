package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestNavOneTable: the site navigation is one table in ui.go: the layout
// draws every link from it, in order, marking the one current on the
// page, and no file adds to it from an init function.
func TestNavOneTable(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s: func init: set things up where they are declared (the navigation is one table, nav)", fset.Position(fn.Pos()))
			}
		}
	}

	u := newTestUI(t)
	link := regexp.MustCompile(`<li><a href="([^"]*)"( aria-current="page")?>([^<]*)</a></li>`)
	navOf := func(page string, data any) [][]string {
		html := render(t, u, page, data)
		start, end := strings.Index(html, `<nav class="site-nav"`), strings.Index(html, `</nav>`)
		if start < 0 || end < start {
			t.Fatalf("%s: no site navigation", page)
		}
		return link.FindAllStringSubmatch(html[start:end], -1)
	}
	for _, c := range []struct {
		page    string
		data    any
		current string
	}{
		{"runs", RunsView{}, "Runs"},
		{"run", RunView{}, "Runs"},
		{"new_run", NewRunFormView{}, "New run"},
		{"import", ImportView{}, "Import"},
		{"writepath", WritepathView{}, "Write-path lab"},
		{"sweeps", SweepView{}, "Latency sweeps"},
		{"slos", SLOView{}, "Latency targets"},
		{"regressions", RegressionsView{}, "Regressions"},
		{"compare", CompareView{}, ""},
	} {
		got := navOf(c.page, c.data)
		if len(got) != len(nav) {
			t.Errorf("%s: %d navigation links, the table has %d", c.page, len(got), len(nav))
			continue
		}
		for i, item := range nav {
			url, current, label := got[i][1], got[i][2] != "", got[i][3]
			if url != item.URL || label != item.Label {
				t.Errorf("%s: link %d is %q %q, the table says %q %q", c.page, i, label, url, item.Label, item.URL)
			}
			if want := item.Label == c.current; current != want {
				t.Errorf("%s: link %q current %v, want %v", c.page, label, current, want)
			}
		}
	}
}
