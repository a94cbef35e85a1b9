package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/gzbomb"
)

// validProfile is a small real pprof protobuf, uncompressed: the prefix
// of the bombs that start like a profile.
func validProfile(t testing.TB) []byte {
	t.Helper()
	fn := &profile.Function{ID: 1, Name: "main.main"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Function:   []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1, 10_000_000}}},
	}
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uploadPaths posts one file as "profile" through each way the server
// takes profiles: the two API routes and the two forms.
type uploadPath struct {
	name string
	post func(t *testing.T, ts *testServer, runID uint, file []byte) *httptest.ResponseRecorder
}

func multipartBody(fields map[string]string, file []byte) (string, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile("profile", "upload.pb.gz")
	w.Write(file)
	mw.Close()
	return body.String(), mw.FormDataContentType()
}

func csrfToken(t *testing.T, ts *testServer) string {
	t.Helper()
	for _, c := range ts.do(t, "GET", "/import", "").Result().Cookies() {
		if c.Name == csrfCookie {
			return c.Value
		}
	}
	t.Fatal("no CSRF cookie")
	return ""
}

// postImportForm posts fields to the import page's form, as a browser
// holding the CSRF token does.
func (ts *testServer) postImportForm(t *testing.T, token string, fields map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField(csrfField, token)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	return ts.do(t, "POST", "/import", body.String(), "Content-Type", mw.FormDataContentType(), "Cookie", csrfCookie+"="+token)
}

var uploadPaths = []uploadPath{
	{"POST /api/runs/{id}/profiles", func(t *testing.T, ts *testServer, runID uint, file []byte) *httptest.ResponseRecorder {
		body, ct := multipartBody(map[string]string{"role": "client"}, file)
		return ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/profiles", runID), body, "Content-Type", ct)
	}},
	{"POST /api/import", func(t *testing.T, ts *testServer, runID uint, file []byte) *httptest.ResponseRecorder {
		body, ct := multipartBody(map[string]string{"label": "bomb"}, file)
		return ts.do(t, "POST", "/api/import", body, "Content-Type", ct)
	}},
	{"the import page's form", func(t *testing.T, ts *testServer, runID uint, file []byte) *httptest.ResponseRecorder {
		token := csrfToken(t, ts)
		body, ct := multipartBody(map[string]string{"label": "bomb", csrfField: token}, file)
		return ts.do(t, "POST", "/import", body, "Content-Type", ct, "Cookie", csrfCookie+"="+token)
	}},
	{"the run page's attach form", func(t *testing.T, ts *testServer, runID uint, file []byte) *httptest.ResponseRecorder {
		token := csrfToken(t, ts)
		body, ct := multipartBody(map[string]string{"role": "broker", csrfField: token}, file)
		return ts.do(t, "POST", fmt.Sprintf("/runs/%d/profiles", runID), body, "Content-Type", ct, "Cookie", csrfCookie+"="+token)
	}},
}

// importedRunID imports folded stacks and returns the new run's id.
func (ts *testServer) importedRunID(t *testing.T) uint {
	t.Helper()
	rec := ts.upload(t, "/api/import", map[string][]byte{"a.folded": []byte(foldedGather)}, map[string]string{"label": "target"})
	var r apiRun
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &r) != nil {
		t.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	return r.ID
}

// TestUploadBombs sends decompression bombs through every upload path:
// each is refused, 400 when its content shows early that it is no
// profile, 413 when it is past a limit (the message says which), and
// nothing is stored. The server's memory while refusing them is measured
// with the real binary in acceptance's TestE2EUploadBombMemory.
func TestUploadBombs(t *testing.T) {
	valid := validProfile(t)
	sample := []byte{0x12, 0x04, 0x10, 0x01, 0x10, 0x01} // a sample of two values
	bombs := []struct {
		name string
		data []byte
		code int
		msg  string
	}{
		{"1 GiB of zeros", gzbomb.Zeros(nil, 1<<30), 400, "not a profile"},
		{"200 MiB of zeros, under the cap", gzbomb.Zeros(nil, 200<<20), 400, "not a profile"},
		{"a valid profile, then 1 GiB of zeros", gzbomb.Zeros(valid, 1<<30), 400, "not a profile"},
		{"ten million samples, 60 MB", gzbomb.Repeat(valid, sample, 60_000_000), 413, "512 MiB of memory"},
		{"gzip in gzip", gzipOf(t, gzbomb.Zeros(valid, 64<<20)), 400, "twice"},
		{"truncated", truncated(gzbomb.Repeat(valid, sample, 6<<20)), 400, "ends early"},
	}
	ts := newTestServer(t, nil)
	runID := ts.importedRunID(t)
	profilesBefore := ts.profileCount(t, runID)
	runsBefore := ts.countRuns(t)
	for _, path := range uploadPaths {
		for _, b := range bombs {
			rec := path.post(t, ts, runID, b.data)
			if rec.Code != b.code || !strings.Contains(rec.Body.String(), b.msg) {
				t.Errorf("%s, %s: %d %.300s, want %d mentioning %q", path.name, b.name, rec.Code, rec.Body, b.code, b.msg)
			}
			if b.code == 400 && strings.HasPrefix(path.name, "POST /api") && !strings.Contains(rec.Body.String(), `"field":"profile"`) {
				t.Errorf("%s, %s: the error names no field: %s", path.name, b.name, rec.Body)
			}
		}
	}
	if n := ts.profileCount(t, runID); n != profilesBefore {
		t.Errorf("the run has %d profiles after the bombs, had %d", n, profilesBefore)
	}
	if n := ts.countRuns(t); n != runsBefore {
		t.Errorf("%d runs after the bombs, %d before", n, runsBefore)
	}
	// A real gzipped profile still goes through every path.
	for _, path := range uploadPaths {
		if rec := path.post(t, ts, runID, gzipOf(t, valid)); rec.Code != http.StatusCreated && rec.Code != http.StatusSeeOther {
			t.Errorf("%s, a valid gzipped profile: %d %.300s", path.name, rec.Code, rec.Body)
		}
	}
}

func gzipOf(t testing.TB, b []byte) []byte {
	t.Helper()
	// A one-member gzip file of exactly b (gzbomb with no repetition).
	return gzbomb.Repeat(b[:len(b)-1], b[len(b)-1:], 1)
}

func (ts *testServer) profileCount(t *testing.T, runID uint) int {
	t.Helper()
	ps, err := ts.st.ListProfiles(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

func truncated(b []byte) []byte { return b[:len(b)/2] }

// TestUploadKindAndRole: the kind and role form fields take only the
// values kbench knows, on every upload path (400 naming the field);
// a profile Kind cannot name is stored as "other"; and the download's file
// name is built from known values only, even for a row stored before the
// fields were checked.
func TestUploadKindAndRole(t *testing.T) {
	ts := newTestServer(t, nil)
	runID := ts.importedRunID(t)
	attach := fmt.Sprintf("/api/runs/%d/profiles", runID)
	folded := map[string][]byte{"a.folded": []byte(foldedGather)}
	for _, tc := range []struct {
		target string
		fields map[string]string
		field  string
	}{
		{attach, map[string]string{"kind": `x"; filename="evil.html`}, "kind"},
		{attach, map[string]string{"kind": strings.Repeat("k", 5_000_000)}, "kind"},
		{attach, map[string]string{"kind": "CPU"}, "kind"},
		{"/api/import", map[string]string{"kind": "evil"}, "kind"},
		{attach, map[string]string{"role": "server"}, "role"},
		{"/api/import", map[string]string{"role": "client\n"}, "role"},
	} {
		rec := ts.upload(t, tc.target, folded, tc.fields)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"`+tc.field+`"`) || rec.Body.Len() > 2000 {
			t.Errorf("%s %.60v: %d %.200s, want a short 400 naming %s", tc.target, tc.fields, rec.Code, rec.Body, tc.field)
		}
	}
	// Every kind kbench captures itself can be given to an upload.
	for _, k := range rundoc.ProfileKinds() {
		if !slices.Contains(uploadKinds, string(k)) {
			t.Errorf("kind %s, which runs capture, is refused for uploads", k)
		}
	}
	for _, kind := range []string{"cpu", "heap", "allocs", "mutex", "block", "goroutine", "wall", "other"} {
		rec := ts.upload(t, attach, folded, map[string]string{"kind": kind})
		if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"kind":"`+kind+`"`) {
			t.Errorf("kind %s: %d %s", kind, rec.Code, rec.Body)
		}
	}
	// A valid profile of no kind kbench knows (events of some other
	// tool): stored as "other", not a 500; a wall-clock profile of another
	// tool is told apart as "wall".
	other := &profile.Profile{SampleType: []*profile.ValueType{{Type: "events", Unit: "count"}}}
	var wb bytes.Buffer
	other.Write(&wb)
	rec := ts.upload(t, attach, map[string][]byte{"events.pb.gz": wb.Bytes()}, nil)
	if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"kind":"other"`) {
		t.Errorf("a profile of unknown events: %d %s", rec.Code, rec.Body)
	}
	wall := &profile.Profile{SampleType: []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}}}
	var wallb bytes.Buffer
	wall.Write(&wallb)
	rec = ts.upload(t, attach, map[string][]byte{"wall.pb.gz": wallb.Bytes()}, nil)
	if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"kind":"wall"`) {
		t.Errorf("a wall-clock profile: %d %s", rec.Code, rec.Body)
	}
	// A row from before the check, written straight to the store.
	added, err := ts.st.AddProfiles(context.Background(), runID, []store.Profile{{Role: "client", Kind: `x"; filename="evil.html`, Data: wb.Bytes(), Samples: 0, Uploaded: true}})
	if err != nil {
		t.Fatal(err)
	}
	dl := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/download", added[0].ID), "")
	if cd := dl.Header().Get("Content-Disposition"); cd != fmt.Sprintf(`attachment; filename="run%d-client-other.pb.gz"`, runID) {
		t.Errorf("Content-Disposition = %q", cd)
	}
}

// TestUploadOverflow: a profile whose values add up past int64 is refused
// on every upload path (it used to be stored and shown with a total of
// -2); negative values, as -diff_base profiles have, are fine.
func TestUploadOverflow(t *testing.T) {
	mk := func(values ...int64) []byte {
		fn := &profile.Function{ID: 1, Name: "main.main"}
		loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
			Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		for _, v := range values {
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{v}})
		}
		var b bytes.Buffer
		p.Write(&b)
		return b.Bytes()
	}
	ts := newTestServer(t, nil)
	runID := ts.importedRunID(t)
	overflow := mk(math.MaxInt64, math.MaxInt64)
	for _, path := range uploadPaths {
		rec := path.post(t, ts, runID, overflow)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "overflow") {
			t.Errorf("%s: %d %.300s, want 400 saying the values overflow", path.name, rec.Code, rec.Body)
		}
	}
	rec := ts.upload(t, fmt.Sprintf("/api/runs/%d/profiles", runID), map[string][]byte{"diff.pb.gz": mk(-5, 3, math.MinInt64+10)}, nil)
	if rec.Code != 201 {
		t.Fatalf("negative values: %d %s", rec.Code, rec.Body)
	}
	var resp struct{ Profiles []struct{ ID uint } }
	json.Unmarshal(rec.Body.Bytes(), &resp)
	fg := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/flamegraph", resp.Profiles[0].ID), "")
	if want := fmt.Sprintf(`"total":%d`, int64(math.MinInt64+8)); !strings.Contains(fg.Body.String(), want) {
		t.Errorf("flame graph of negative values lacks %s: %.300s", want, fg.Body)
	}
}

// TestImportPageMarksFailedField: when the import page's form is refused,
// the input of the field that failed is marked invalid (and described by
// the error), and no other input is.
func TestImportPageMarksFailedField(t *testing.T) {
	ts := newTestServer(t, nil)
	token := csrfToken(t, ts)
	post := func(fields map[string]string, files map[string][]byte) string {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField(csrfField, token)
		for k, v := range fields {
			mw.WriteField(k, v)
		}
		for name, data := range files {
			field, file, _ := strings.Cut(name, ":")
			w, _ := mw.CreateFormFile(field, file)
			w.Write(data)
		}
		mw.Close()
		rec := ts.do(t, "POST", "/import", body.String(), "Content-Type", mw.FormDataContentType(), "Cookie", csrfCookie+"="+token)
		if rec.Code != 400 {
			t.Fatalf("%v: %d, want 400", fields, rec.Code)
		}
		return rec.Body.String()
	}
	invalid := regexp.MustCompile(`<(?:input|textarea|select)[^>]*id="([^"]+)"[^>]*aria-invalid="true"`)
	for _, tc := range []struct {
		name   string
		fields map[string]string
		files  map[string][]byte
		want   string
	}{
		{"pasted output", map[string]string{"output": "nonsense here\n"}, nil, "f-import-output-text"},
		{"output file", nil, map[string][]byte{"output:out.txt": []byte("nonsense here\n")}, "f-import-output"},
		{"profile", nil, map[string][]byte{"profile:x.txt": []byte("\x00\x01 not stacks")}, "f-import-profile"},
		{"label", map[string]string{"label": strings.Repeat("l", 500)}, map[string][]byte{"profile:a.folded": []byte(foldedGather)}, "f-import-label"},
		{"role", map[string]string{"role": "server"}, map[string][]byte{"profile:a.folded": []byte(foldedGather)}, "f-import-role"},
	} {
		page := post(tc.fields, tc.files)
		var marked []string
		for _, m := range invalid.FindAllStringSubmatch(page, -1) {
			marked = append(marked, m[1])
		}
		if len(marked) != 1 || marked[0] != tc.want {
			t.Errorf("%s refused: inputs marked invalid %v, want [%s]", tc.name, marked, tc.want)
		}
	}
}
