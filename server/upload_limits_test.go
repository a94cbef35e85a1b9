package server

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/profiles"
)

// deepPprof is a gzipped CPU profile of one stack depth frames deep.
func deepPprof(t *testing.T, depth int) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1,
	}
	var locs []*profile.Location
	for i := range depth {
		f := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("main.f%d", i)}
		l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		locs = append(locs, l)
	}
	slices.Reverse(locs)
	p.Sample = []*profile.Sample{{Location: locs, Value: []int64{1}}}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestUploadDepthLimit: one depth limit (profiles.MaxStackDepth frames)
// for every upload format and route: a pprof stack one frame deeper is a
// 400 naming profile, as folded stacks are; at the limit both are
// stored and drawn.
func TestUploadDepthLimit(t *testing.T) {
	ts := newTestServer(t, nil)
	runID := ts.importedRunID(t)
	folded := func(depth int) []byte {
		return []byte(strings.Repeat("main.f;", depth-1) + "main.leaf 1\n")
	}
	files := map[string]func(int) []byte{"cpu.pb.gz": func(d int) []byte { return deepPprof(t, d) }, "stacks.collapsed": folded}
	for name, data := range files {
		for _, target := range []string{"/api/import", fmt.Sprintf("/api/runs/%d/profiles", runID)} {
			rec := ts.upload(t, target, map[string][]byte{name: data(profiles.MaxStackDepth + 1)}, map[string]string{"label": "deep"})
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"profile"`) ||
				!strings.Contains(rec.Body.String(), fmt.Sprintf("limit of %d", profiles.MaxStackDepth)) {
				t.Errorf("%s to %s, %d frames: %d %s, want 400 naming profile and the limit", name, target, profiles.MaxStackDepth+1, rec.Code, rec.Body)
			}
		}
		rec := ts.upload(t, "/api/import", map[string][]byte{name: data(profiles.MaxStackDepth)}, map[string]string{"label": "at-limit"})
		if rec.Code != http.StatusCreated {
			t.Fatalf("%s, %d frames: %d %s", name, profiles.MaxStackDepth, rec.Code, rec.Body)
		}
	}
}
