// Package golden compares test output with files under testdata/ and
// rewrites them when the tests run with -update. It is the one helper every
// package's golden tests use, so a mismatch always reads the same way: the
// file, the first line that differs, and how to refresh it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files and fixtures under testdata/ from the current output")

// Updating reports whether the tests run with -update, for tests that
// rewrite other fixtures too.
func Updating() bool { return *update }

// Check compares got with testdata/name. With -update it writes got there
// instead (creating testdata/ if needed).
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if line, g, w, ok := firstDiff(got, string(b)); !ok {
		t.Errorf("%s differs at line %d (go test -update rewrites it if the change is intended):\ngot  %q\nwant %q", path, line, g, w)
	}
}

// firstDiff returns the first line (1-based) where got and want differ,
// with both versions of it; ok is true when they are equal.
func firstDiff(got, want string) (line int, g, w string, ok bool) {
	if got == want {
		return 0, "", "", true
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; ; i++ {
		if i < len(gl) {
			g = gl[i]
		} else {
			g = "(end of output)"
		}
		if i < len(wl) {
			w = wl[i]
		} else {
			w = "(end of file)"
		}
		if g != w {
			return i + 1, g, w, false
		}
	}
}
