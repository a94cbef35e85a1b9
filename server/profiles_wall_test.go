package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/profiles/jfr"
)

// javaProfile converts events of a real flight recording of a JVM writing
// to a socket (the JFR converter's test data: gather.json, one
// SocketChannel.write(ByteBuffer[]) per request, or per-buffer.json, one
// write(ByteBuffer) per buffer) into the gzipped pprof kbench stores.
func javaProfile(t *testing.T, name string) (data []byte, samples int64) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "profiles", "jfr", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, sum, err := jfr.Convert(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sum.Samples()
}

// importWall imports a converted Java profile as a run of its own, with
// the kind field given (or not), and returns the stored profile's id and
// its run's.
func (ts *testServer) importWall(t *testing.T, name string, fields map[string]string) (profileID, runID uint) {
	t.Helper()
	data, _ := javaProfile(t, name)
	f := map[string]string{"label": "java-" + name}
	for k, v := range fields {
		f[k] = v
	}
	rec := ts.upload(t, "/api/import", map[string][]byte{name + ".pb.gz": data}, f)
	if rec.Code != http.StatusCreated {
		t.Fatalf("import %s: %d %s", name, rec.Code, rec.Body)
	}
	var r apiRun
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || len(r.Profiles) != 1 {
		t.Fatalf("imported run %s: %v", rec.Body, err)
	}
	if r.Profiles[0].Kind != "wall" {
		t.Errorf("%s imported (fields %v) as kind %q, want wall", name, fields, r.Profiles[0].Kind)
	}
	return r.Profiles[0].ID, r.ID
}

// TestWallProfileViews: a JVM's converted flight recording stored as a
// wall profile shows on every view a profile has — its page (with the
// note on what wall samples are), the flame graph JSON, the write-path
// panel, the pprof UI, the run page — whether the kind was given or told
// from the profile, on import or attached to a run.
func TestWallProfileViews(t *testing.T) {
	ts := newTestServer(t, nil)
	gather, gatherRun := ts.importWall(t, "gather", map[string]string{"kind": "wall"})
	single, _ := ts.importWall(t, "per-buffer", nil) // kind told from the profile
	_, gatherSamples := javaProfile(t, "gather")

	page := ts.do(t, "GET", fmt.Sprintf("/profiles/%d", gather), "")
	if page.Code != 200 {
		t.Fatalf("profile page: %d %s", page.Code, page.Body)
	}
	for _, want := range []string{`<dt>Kind</dt><dd>wall</dd>`, `id="kind-note"`, "not CPU time", "blocked in native calls",
		`class="flamegraph"`, "sun.nio.ch.FileDispatcherImpl.writev0", fmt.Sprintf(`download="run%d-client-wall.pb.gz"`, gatherRun)} {
		if !strings.Contains(page.Body.String(), want) {
			t.Errorf("wall profile page lacks %s", want)
		}
	}

	fg := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/flamegraph", gather), "")
	var tree struct {
		Total int64
		Unit  string
	}
	if err := json.Unmarshal(fg.Body.Bytes(), &tree); fg.Code != 200 || err != nil || tree.Total != gatherSamples || tree.Unit != "count" {
		t.Errorf("flame graph: %d total %d %q, want every one of the %d samples counted", fg.Code, tree.Total, tree.Unit, gatherSamples)
	}

	for _, c := range []struct {
		id         uint
		path, fr   string
		notAllowed string
	}{
		{gather, "gather", "sun.nio.ch.FileDispatcherImpl.writev0", "sun.nio.ch.FileDispatcherImpl.write0"},
		{single, "single", "sun.nio.ch.FileDispatcherImpl.write0", "sun.nio.ch.FileDispatcherImpl.writev0"},
	} {
		rec := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/writepaths", c.id), "")
		var rep struct {
			Rows []struct {
				Direction, Path string
				Value           int64
				Frames          []string
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &rep); rec.Code != 200 || err != nil {
			t.Fatalf("writepaths %d: %d %s", c.id, rec.Code, rec.Body)
		}
		var top struct {
			path   string
			value  int64
			frames []string
		}
		for _, r := range rep.Rows {
			if r.Direction == "write" && r.Value > top.value {
				top.path, top.value, top.frames = r.Path, r.Value, r.Frames
			}
		}
		if top.path != c.path || !strings.Contains(strings.Join(top.frames, " "), c.fr) || strings.Contains(rec.Body.String(), c.notAllowed+`"`) {
			t.Errorf("writepaths of the %s profile: largest write row %+v; want %s with %s, no %s", c.path, top, c.path, c.fr, c.notAllowed)
		}
		pp := ts.do(t, "GET", fmt.Sprintf("/profiles/%d/pprof/top", c.id), "")
		if pp.Code != 200 || !strings.Contains(pp.Body.String(), c.fr) {
			t.Errorf("pprof UI of the %s profile: %d, lacks %s", c.path, pp.Code, c.fr)
		}
	}

	run := ts.do(t, "GET", fmt.Sprintf("/runs/%d", gatherRun), "")
	if !strings.Contains(run.Body.String(), fmt.Sprintf(`data-src="/api/profiles/%d/flamegraph?format=rows"`, gather)) ||
		!strings.Contains(run.Body.String(), `id="run-flamegraph-note"`) {
		t.Errorf("run page: %d, lacks the wall flame graph or its note", run.Code)
	}

	// Attached to an existing run with kind wall, through the API.
	data, _ := javaProfile(t, "gather")
	rec := ts.upload(t, fmt.Sprintf("/api/runs/%d/profiles", gatherRun), map[string][]byte{"jvm.pb.gz": data}, map[string]string{"kind": "wall", "role": "broker"})
	if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"kind":"wall"`) || !strings.Contains(rec.Body.String(), `"role":"broker"`) {
		t.Errorf("attach a wall profile: %d %s", rec.Code, rec.Body)
	}
}

// TestWallProfileDiff: two wall profiles compare (diff JSON, the page with
// its note, pprof's diff UI); a wall profile against a CPU profile is
// refused with a 400 naming the kinds, on each of those routes; Java's
// folded stacks (async-profiler's collapsed output) import as wall when
// told and then compare with a converted recording.
func TestWallProfileDiff(t *testing.T) {
	ts := newTestServer(t, nil)
	gather, _ := ts.importWall(t, "gather", map[string]string{"kind": "wall"})
	single, _ := ts.importWall(t, "per-buffer", map[string]string{"kind": "wall"})
	cpu := ts.importRun(t, "go-gather", foldedGather)

	rec := ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d", gather, single), "")
	if rec.Code != 200 {
		t.Fatalf("diff of two wall profiles: %d %s", rec.Code, rec.Body)
	}
	for _, want := range []string{`"sample":"samples"`, `"unit":"count"`, "sun.nio.ch.FileDispatcherImpl.writev0", "sun.nio.ch.FileDispatcherImpl.write0"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("diff lacks %s", want)
		}
	}
	page := ts.do(t, "GET", fmt.Sprintf("/compare/profiles?base=%d&target=%d", gather, single), "")
	if page.Code != 200 || !strings.Contains(page.Body.String(), `id="kind-note"`) || !strings.Contains(page.Body.String(), `data-mode="diff"`) {
		t.Errorf("compare page of wall profiles: %d, lacks the diff graph or the wall note", page.Code)
	}
	if pp := ts.do(t, "GET", fmt.Sprintf("/diff/%d/%d/pprof/top", gather, single), ""); pp.Code != 200 {
		t.Errorf("pprof diff UI of two wall profiles: %d", pp.Code)
	}

	for _, path := range []string{"/api/diff?base=%d&target=%d&sample=samples", "/compare/profiles?base=%d&target=%d&sample=samples", "/diff/%d/%d/pprof/top"} {
		for _, pair := range [][2]uint{{gather, cpu}, {cpu, single}} {
			url := fmt.Sprintf(path, pair[0], pair[1])
			rec := ts.do(t, "GET", url, "")
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), "wall profiles are thread samples by state") ||
				!strings.Contains(rec.Body.String(), "cpu profile #") {
				t.Errorf("GET %s: %d %.300s; want a 400 saying wall and cpu do not compare", url, rec.Code, rec.Body)
			}
		}
	}

	// async-profiler's collapsed stacks of a JVM, wall mode, told wall.
	collapsed := "java.lang.Thread.run;WriteLoop.main;sun.nio.ch.SocketChannelImpl.write;sun.nio.ch.IOUtil.write;sun.nio.ch.SocketDispatcher.writev;sun.nio.ch.FileDispatcherImpl.writev0 90\n" +
		"java.lang.Thread.run;WriteLoop.main;WriteLoop.encode 10\n"
	up := ts.upload(t, "/api/import", map[string][]byte{"jvm.collapsed": []byte(collapsed)}, map[string]string{"label": "async-profiler", "kind": "wall"})
	var r apiRun
	if err := json.Unmarshal(up.Body.Bytes(), &r); up.Code != 201 || err != nil || len(r.Profiles) != 1 || r.Profiles[0].Kind != "wall" {
		t.Fatalf("collapsed stacks with kind wall: %d %s", up.Code, up.Body)
	}
	folded := r.Profiles[0].ID
	wp := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/writepaths?sample=samples", folded), "")
	if !strings.Contains(wp.Body.String(), `"path":"gather"`) || !strings.Contains(wp.Body.String(), "writev0") {
		t.Errorf("write paths of Java collapsed stacks: %s", wp.Body)
	}
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d&sample=samples", folded, single), ""); rec.Code != 200 {
		t.Errorf("collapsed wall against a converted recording: %d %s", rec.Code, rec.Body)
	}
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d&sample=samples", folded, cpu), ""); rec.Code != 400 {
		t.Errorf("collapsed wall against folded cpu: %d %s", rec.Code, rec.Body)
	}
}
