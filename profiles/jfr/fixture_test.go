package jfr_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/profiles/jfr"
)

// TestConvertFixtures: testdata/gather.json and per-buffer.json are
// events of two recordings of testdata/WriteLoop.java as jfr print --json
// printed them (fields kbench ignores dropped, a few dozen events kept),
// so that packages without a JDK convert real JVM stacks too. Each event
// is one sample; the write-path panel sees gather (writev0) in one and
// single (write0) in the other.
func TestConvertFixtures(t *testing.T) {
	for _, c := range []struct{ file, path, native string }{
		{"gather.json", "gather", "sun.nio.ch.FileDispatcherImpl.writev0"},
		{"per-buffer.json", "single", "sun.nio.ch.FileDispatcherImpl.write0"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p, sum, err := jfr.Convert(strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			exec := int64(strings.Count(string(data), `"type":"jdk.ExecutionSample"`))
			native := int64(strings.Count(string(data), `"type":"jdk.NativeMethodSample"`))
			if sum.Execution != exec || sum.Native != native || sum.Skipped != 0 {
				t.Errorf("summary %+v; the file has %d execution and %d native events", sum, exec, native)
			}
			if !frames(p, jfr.StateNative)[c.native] {
				t.Errorf("no %s in the native samples", c.native)
			}
			rep := profiles.WritePaths(p, 0)
			var top profiles.WritePathRow
			for _, r := range rep.Rows {
				if r.Direction == "write" && r.Value > top.Value {
					top = r
				}
			}
			if top.Path != c.path || !containsStr(top.Frames, c.native) {
				t.Errorf("largest write row %+v; want path %s with %s", top, c.path, c.native)
			}
			if got := profiles.Kind(p); got != "wall" {
				t.Errorf("profiles.Kind = %q, want wall", got)
			}
		})
	}
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
