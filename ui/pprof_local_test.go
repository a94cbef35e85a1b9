package ui

import (
	"testing"

	"github.com/kbench/kbench/internal/testutil/golden"
	"github.com/kbench/kbench/templates"
)

// TestGoldenPprofLocal: the page in place of pprof's source and
// disassembly views, for a profile and for a diff, with the function
// pprof asked for quoted for the shell.
func TestGoldenPprofLocal(t *testing.T) {
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	target := PprofProfile{URL: "http://kbench.example:8080/api/profiles/12/download", File: "run7-client-cpu.pb.gz"}
	base := PprofProfile{URL: "http://kbench.example:8080/api/profiles/9/download", File: "run5-client-cpu.pb.gz"}
	src := NewPprofLocalView("source", target, nil, "main.(*writer).flush", "/profiles/12/pprof/")
	golden.Check(t, "pprof_local_source.html", render(t, u, "pprof_local", src))
	dis := NewPprofLocalView("disasm", target, &base, "it's", "/diff/9/12/pprof/")
	golden.Check(t, "pprof_local_disasm_diff.html", render(t, u, "pprof_local", dis))
}
