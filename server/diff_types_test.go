package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// memProfile is a gzipped Go memory profile (heap and allocs profiles
// share its four sample types; dflt is the one pprof shows first).
func memProfile(t *testing.T, dflt string) []byte {
	t.Helper()
	f := &profile.Function{ID: 1, Name: "main.alloc"}
	l := &profile.Location{ID: 1, Line: []profile.Line{{Function: f}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		DefaultSampleType: dflt,
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            512 * 1024,
		Function:          []*profile.Function{f},
		Location:          []*profile.Location{l},
		Sample:            []*profile.Sample{{Location: []*profile.Location{l}, Value: []int64{10, 8 << 20, 2, 1 << 20}}},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDiffRefusesDifferentSampleTypes: every diff route refuses two
// profiles of different sample types (a CPU profile against a heap
// profile, whose "difference" read 7.7 MiB / 390 ms) with a 400 naming
// target; so does a heap profile against an allocs profile when each
// would be shown by its own default (inuse_space against alloc_space),
// unless the request picks one sample type both have.
func TestDiffRefusesDifferentSampleTypes(t *testing.T) {
	ts := newTestServer(t, nil)
	cpu := ts.importRun(t, "cpu", foldedGather)
	cpu2 := ts.importRun(t, "cpu2", foldedSingle)
	imp := func(label, kind string, data []byte) uint {
		rec := ts.upload(t, "/api/import", map[string][]byte{label + ".pb.gz": data}, map[string]string{"label": label, "kind": kind})
		var r apiRun
		if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &r) != nil || len(r.Profiles) != 1 {
			t.Fatalf("import %s: %d %s", label, rec.Code, rec.Body)
		}
		return r.Profiles[0].ID
	}
	heap := imp("heap", "heap", memProfile(t, "inuse_space"))
	allocs := imp("allocs", "allocs", memProfile(t, "alloc_space"))

	type route struct {
		name string
		path func(b, t uint) string
		api  bool // answers JSON with the field
	}
	routes := []route{
		{"/api/diff", func(b, t uint) string { return fmt.Sprintf("/api/diff?base=%d&target=%d", b, t) }, true},
		{"/api/diff compact, total (report, A/B, write-path lab)", func(b, t uint) string {
			return fmt.Sprintf("/api/diff?base=%d&target=%d&normalize=total&format=compact", b, t)
		}, true},
		{"/api/diff rows", func(b, t uint) string {
			return fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&search=main", b, t)
		}, true},
		{"/compare/profiles", func(b, t uint) string { return fmt.Sprintf("/compare/profiles?base=%d&target=%d", b, t) }, false},
		{"pprof diff UI", func(b, t uint) string { return fmt.Sprintf("/diff/%d/%d/pprof/top", b, t) }, false},
		{"pprof diff UI flame graph", func(b, t uint) string { return fmt.Sprintf("/diff/%d/%d/pprof/flamegraph", b, t) }, false},
	}
	pprofUI := []string{"pprof diff UI", "pprof diff UI flame graph"}
	for _, c := range []struct {
		name         string
		base, target uint
		query        string
		allOK        bool     // every route answers 200
		ok           []string // these routes answer 200, the others refuse
	}{
		{name: "cpu against heap", base: cpu, target: heap},
		{name: "heap against cpu", base: heap, target: cpu},
		{name: "cpu against heap, one sample name", base: cpu, target: heap, query: "&sample=samples"},
		// pprof's diff UI shows every sample type: the lists match.
		{name: "heap against allocs, each its default", base: heap, target: allocs, ok: pprofUI},
		{name: "heap against allocs, alloc_space", base: heap, target: allocs, query: "&sample=alloc_space", allOK: true},
		{name: "cpu against cpu", base: cpu, target: cpu2, allOK: true},
	} {
		for _, r := range routes {
			want := !c.allOK && !slices.Contains(c.ok, r.name)
			u := r.path(c.base, c.target)
			if !strings.Contains(u, "/pprof/") {
				u += c.query
			}
			rec := ts.do(t, "GET", u, "")
			body := rec.Body.String()
			if !want {
				if rec.Code != http.StatusOK {
					t.Errorf("%s, %s: %d %.300s, want 200", c.name, r.name, rec.Code, body)
				}
				continue
			}
			// A sample type the target lacks is the sample's fault.
			field, says := "target", "different sample types"
			if strings.Contains(u, "sample=samples") {
				field, says = "sample", "not in the profile"
			}
			if rec.Code != http.StatusBadRequest || !strings.Contains(body, says) {
				t.Errorf("%s, %s: %d %.300s, want 400 saying %s", c.name, r.name, rec.Code, body, says)
			}
			if r.api && !strings.Contains(body, `"field":"`+field+`"`) {
				t.Errorf("%s, %s: %s, want the field %s", c.name, r.name, body, field)
			}
		}
	}
}
