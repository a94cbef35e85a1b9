package median

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{-1, 5}, 2},
		{[]float64{1e308, 1e308}, 1e308}, // no overflow in the mean of the middle two
		{[]float64{7, 7, 7, 1}, 7},
	} {
		in := append([]float64(nil), c.in...)
		if got := Of(in); got != c.want {
			t.Errorf("Of(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("Of reordered its input: %v, was %v", in, c.in)
			}
		}
	}
	if got := Of(nil); !math.IsNaN(got) {
		t.Errorf("Of(nil) = %v, want NaN", got)
	}
	if got := Sorted([]float64{1, 2, 10}); got != 2 {
		t.Errorf("Sorted = %v, want 2", got)
	}
}

// TestNoHandRolledMedians: the module's code takes plain medians from
// this package (medians with a confidence interval come from benchmath
// in compare); no file computes one by hand again.
func TestNoHandRolledMedians(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	// The even case of a median: the mean of elements n/2-1 and n/2.
	middle := regexp.MustCompile(`\[[^\[\]]*/\s*2\s*-\s*1\s*\]`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Base(filepath.Dir(path)) == "median" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if middle.MatchString(line) {
				t.Errorf("%s:%d computes a median by hand: use internal/median\n\t%s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
