package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/testutil/gzbomb"
	"github.com/kbench/kbench/static"
)

// upload posts files as the multipart field "profile" plus form fields.
func (ts *testServer) upload(t *testing.T, target string, files map[string][]byte, fields map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for name, data := range files {
		w, _ := mw.CreateFormFile("profile", name)
		w.Write(data)
	}
	mw.Close()
	return ts.do(t, "POST", target, body.String(), "Content-Type", mw.FormDataContentType())
}

const foldedGather = `main.main;net.(*conn).Write;internal/poll.(*FD).Writev;syscall.Syscall6 30
main.main;main.encode 10
`

const foldedSingle = `main.main;net.(*conn).Write;internal/poll.(*FD).Write;syscall.Syscall 90
main.main;main.encode 10
`

// importRun creates an imported run from folded stacks and returns the
// stored profile's id.
func (ts *testServer) importRun(t *testing.T, label, folded string) uint {
	t.Helper()
	rec := ts.upload(t, "/api/import", map[string][]byte{label + ".folded": []byte(folded)}, map[string]string{"label": label})
	if rec.Code != http.StatusCreated {
		t.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	var r apiRun
	json.Unmarshal(rec.Body.Bytes(), &r)
	if r.Source != "imported" || r.Label != label || len(r.Profiles) != 1 {
		t.Fatalf("imported run = %+v", r)
	}
	if r.Profiles[0].Kind != "cpu" {
		t.Errorf("folded stacks imported as kind %q, want cpu", r.Profiles[0].Kind)
	}
	return r.Profiles[0].ID
}

func TestImportAndFlameGraph(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "gather", foldedGather)

	rec := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/flamegraph?sample=samples", id), "")
	if rec.Code != 200 {
		t.Fatalf("flamegraph: %d %s", rec.Code, rec.Body)
	}
	var fg struct {
		Total int64
		Tree  struct {
			Name     string
			Value    int64
			Children []struct {
				Name  string
				Value int64
			}
		}
	}
	json.Unmarshal(rec.Body.Bytes(), &fg)
	if fg.Total != 40 || fg.Tree.Value != 40 || len(fg.Tree.Children) != 1 || fg.Tree.Children[0].Name != "main.main" {
		t.Errorf("tree = %+v, want root 40 → main.main", fg)
	}
	compact := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/flamegraph?format=compact", id), "")
	if compact.Code != 200 || !strings.Contains(compact.Body.String(), `"names"`) {
		t.Errorf("compact: %d %.200s", compact.Code, compact.Body)
	}
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/flamegraph?sample=bogus", id), ""); rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"sample"`) {
		t.Errorf("unknown sample type: %d %s", rec.Code, rec.Body)
	}
	// The stored profile is real pprof: go tool pprof and the API agree.
	dl := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/download", id), "")
	p, err := profile.Parse(dl.Body)
	if err != nil {
		t.Fatalf("stored folded stacks are not pprof: %v", err)
	}
	if len(p.Sample) != 2 {
		t.Errorf("%d samples, want 2 stacks", len(p.Sample))
	}
	wp := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/writepaths?sample=samples", id), "")
	if !strings.Contains(wp.Body.String(), "Writev") {
		t.Errorf("write paths miss the gathering write: %s", wp.Body)
	}
}

func TestDiffEndpoint(t *testing.T) {
	ts := newTestServer(t, nil)
	base := ts.importRun(t, "gather", foldedGather)
	target := ts.importRun(t, "single", foldedSingle)
	rec := ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d&normalize=none&sample=samples", base, target), "")
	if rec.Code != 200 {
		t.Fatalf("diff: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{`"base":40`, `"value":100`, "internal/poll.(*FD).Writev", "internal/poll.(*FD).Write", `"mode":"none"`} {
		if !strings.Contains(body, want) {
			t.Errorf("diff lacks %s", want)
		}
	}
	// Imported runs have no record counts: per-work normalisation is refused
	// with the reason.
	rec = ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d&normalize=work", base, target), "")
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"normalize"`) {
		t.Errorf("work normalisation without record counts: %d %s", rec.Code, rec.Body)
	}
	page := ts.do(t, "GET", fmt.Sprintf("/compare/profiles?base=%d&target=%d&normalize=none&sample=samples", base, target), "")
	if page.Code != 200 || !strings.Contains(page.Body.String(), `data-mode="diff"`) || !strings.Contains(page.Body.String(), "internal/poll.(*FD).Write") {
		t.Errorf("compare page: %d, lacks the diff graph or the changes table", page.Code)
	}
	single := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?search=Writev", base), "")
	if single.Code != 200 || !strings.Contains(single.Body.String(), `class="flamegraph"`) || !strings.Contains(single.Body.String(), "Writev") {
		t.Errorf("profile page: %d, lacks the flame graph or the search", single.Code)
	}
	for _, q := range []string{"base=x&target=1", fmt.Sprintf("base=%d&target=99999", base), fmt.Sprintf("base=%d&target=%d&normalize=sideways", base, target)} {
		if rec := ts.do(t, "GET", "/api/diff?"+q, ""); rec.Code != 400 && rec.Code != 404 {
			t.Errorf("diff?%s = %d, want 400 or 404", q, rec.Code)
		}
	}
}

func TestUploadErrors(t *testing.T) {
	ts := newRunningTestServer(t, func(c *Config) { c.MaxUploadBytes = 64 << 10 })
	runID := ts.createRun(t, `{"workload":"producer","params":{"num-records":100,"profile":"none"}}`)
	ts.waitFinal(t, runID)
	tests := []struct {
		name   string
		target string
		files  map[string][]byte
		fields map[string]string
		code   int
		want   string
	}{
		{"not a profile", "/api/import", map[string][]byte{"x.txt": []byte("hello world\x00\x01")}, nil, 400, "expected"},
		{"no file", "/api/import", nil, map[string]string{"label": "x"}, 400, "profile"},
		{"bad role", fmt.Sprintf("/api/runs/%d/profiles", runID), map[string][]byte{"a.folded": []byte("a;b 1\n")}, map[string]string{"role": "server"}, 400, "role"},
		{"unknown run", "/api/runs/99999/profiles", map[string][]byte{"a.folded": []byte("a;b 1\n")}, nil, 404, ""},
		{"too large", "/api/import", map[string][]byte{"big.folded": bytes.Repeat([]byte("a;b 1\n"), 20000)}, nil, 413, ""},
	}
	for _, tt := range tests {
		rec := ts.upload(t, tt.target, tt.files, tt.fields)
		if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %s, want %d mentioning %q", tt.name, rec.Code, rec.Body, tt.code, tt.want)
		}
	}
	// Nothing was half stored: the run still has no profiles and no
	// imported run exists.
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/profiles", runID), ""); !strings.Contains(rec.Body.String(), `"profiles":[]`) {
		t.Errorf("profiles after failed uploads: %s", rec.Body)
	}
	if rec := ts.do(t, "GET", "/api/runs?workload=imported", ""); !strings.Contains(rec.Body.String(), `"total":0`) {
		t.Errorf("imported runs after failed uploads: %s", rec.Body)
	}
	ok := ts.upload(t, fmt.Sprintf("/api/runs/%d/profiles", runID), map[string][]byte{"a.folded": []byte(foldedGather)}, map[string]string{"role": "broker"})
	if ok.Code != 201 || !strings.Contains(ok.Body.String(), `"role":"broker"`) {
		t.Errorf("attach: %d %s", ok.Code, ok.Body)
	}
}

func TestPprofUIMounted(t *testing.T) {
	ts := newTestServer(t, nil)
	base := ts.importRun(t, "gather", foldedGather)
	target := ts.importRun(t, "single", foldedSingle)
	paths := []struct {
		path string
		code int
	}{
		{fmt.Sprintf("/profiles/%d/pprof", base), http.StatusMovedPermanently},
		{fmt.Sprintf("/profiles/%d/pprof/top", base), 200},
		{fmt.Sprintf("/profiles/%d/pprof/flamegraph", base), 200},
		{fmt.Sprintf("/profiles/%d/pprof/download", base), 200},
		{fmt.Sprintf("/profiles/%d/pprof/source?f=main", base), 200}, // kbench's page saying why: no file reads
		{fmt.Sprintf("/diff/%d/%d/pprof/top", base, target), 200},
		{fmt.Sprintf("/diff/%d/%d/pprof/flamegraph", base, target), 200},
		{"/profiles/99999/pprof/top", 404},
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		for _, p := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := httptest.NewRequest("GET", p.path, nil)
				rec := httptest.NewRecorder()
				ts.ServeHTTP(rec, req)
				if rec.Code != p.code {
					t.Errorf("GET %s = %d, want %d", p.path, rec.Code, p.code)
				}
			}()
		}
	}
	wg.Wait()
	top := ts.do(t, "GET", fmt.Sprintf("/profiles/%d/pprof/top", base), "")
	if !strings.Contains(top.Body.String(), "Writev") {
		t.Errorf("pprof top lacks the profile's functions")
	}
	if csp := top.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "'unsafe-inline'") {
		t.Errorf("pprof pages need inline scripts; CSP = %q", csp)
	}
	if csp := ts.do(t, "GET", "/", "").Header().Get("Content-Security-Policy"); strings.Contains(csp, "unsafe-inline") {
		t.Errorf("kbench's own pages must keep the strict CSP; got %q", csp)
	}
}

// TestProfilePageCSPAllowsItsStyle: the profile page carries its first
// frame's style sheet inline (static/profile-first.css, as embedded), and
// the CSP allows exactly that text by its SHA-256, with no
// 'unsafe-inline'; the other pages' CSP allows no other inline style.
func TestProfilePageCSPAllowsItsStyle(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "gather", foldedGather)
	rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d", id), "")
	if rec.Code != 200 {
		t.Fatalf("profile page: %d", rec.Code)
	}
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(rec.Body.String(), -1)
	if len(styles) != 1 {
		t.Fatalf("the profile page has %d inline style sheets, want 1", len(styles))
	}
	first, err := fs.ReadFile(static.FS, "profile-first.css")
	if err != nil {
		t.Fatal(err)
	}
	if styles[0][1] != string(first) {
		t.Error("the profile page's inline style sheet is not profile-first.css as embedded")
	}
	sum := sha256.Sum256([]byte(styles[0][1]))
	hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "style-src 'self' "+hash+";") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("profile page CSP %q, want style-src 'self' %s and nothing looser", csp, hash)
	}
	if other := ts.do(t, "GET", "/", "").Header().Get("Content-Security-Policy"); !strings.Contains(other, "style-src 'self' "+hash+";") {
		t.Errorf("CSP of another page %q: want the same style-src (one policy for kbench's pages)", other)
	}
}

func TestImportPageAndAttachForm(t *testing.T) {
	ts := newTestServer(t, nil)
	get := ts.do(t, "GET", "/import", "")
	if get.Code != 200 || !strings.Contains(get.Body.String(), `enctype="multipart/form-data"`) {
		t.Fatalf("import page: %d", get.Code)
	}
	var token string
	for _, c := range get.Result().Cookies() {
		if c.Name == csrfCookie {
			token = c.Value
		}
	}
	post := func(target string, file []byte, fields map[string]string) *httptest.ResponseRecorder {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField(csrfField, token)
		for k, v := range fields {
			mw.WriteField(k, v)
		}
		w, _ := mw.CreateFormFile("profile", "stacks.txt")
		w.Write(file)
		mw.Close()
		return ts.do(t, "POST", target, body.String(), "Content-Type", mw.FormDataContentType(), "Cookie", csrfCookie+"="+token)
	}
	bad := post("/import", []byte("\x00\x01 not stacks"), map[string]string{"label": "keep-me"})
	if bad.Code != 400 || !strings.Contains(bad.Body.String(), "keep-me") || !strings.Contains(bad.Body.String(), "expected") {
		t.Errorf("bad import: %d, want the form again with the label and the reason", bad.Code)
	}
	ok := post("/import", []byte(foldedGather), map[string]string{"label": "java"})
	if ok.Code != http.StatusSeeOther {
		t.Fatalf("import: %d %s", ok.Code, ok.Body)
	}
	loc := ok.Header().Get("Location")
	page := ts.do(t, "GET", loc, "")
	if !strings.Contains(page.Body.String(), "Attach a profile") || !strings.Contains(page.Body.String(), `class="flamegraph"`) {
		t.Errorf("imported run page lacks the flame graph or the attach form")
	}
	attach := post(loc+"/profiles", []byte(foldedSingle), map[string]string{"role": "broker"})
	if attach.Code != http.StatusSeeOther || attach.Header().Get("Location") != loc {
		t.Errorf("attach form: %d → %s", attach.Code, attach.Header().Get("Location"))
	}
	var id uint
	fmt.Sscanf(loc, "/runs/%d", &id)
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/profiles", id), ""); strings.Count(rec.Body.String(), `"id":`) != 2 {
		t.Errorf("profiles after attach: %s", rec.Body)
	}
}

// uploadSeeds are the seeds of the upload fuzz targets: plain and
// gzipped profiles and stacks, and compressed input shaped like the
// attacks (a bomb after a valid start, gzip in gzip, truncated gzip).
func uploadSeeds(f *testing.F) [][]byte {
	valid := validProfile(f)
	gz := gzipOf(f, valid)
	return [][]byte{
		[]byte(foldedGather),
		[]byte("a;b;c 1\n\n# comment\nd 2\n"),
		{0x1f, 0x8b, 0x08, 0x00},
		[]byte("--- contention:\ncycles/second=1\n"),
		valid,
		gz,
		gzipOf(f, []byte(foldedGather)),
		gzbomb.Zeros(valid, 4<<20),
		gzbomb.Repeat(valid, []byte{0x12, 0x04, 0x10, 0x01, 0x10, 0x01}, 1<<20),
		gzipOf(f, gz),
		gz[:len(gz)-5],
		truncated(gz),
	}
}

// FuzzImportUpload sends arbitrary bytes through the upload path: every
// answer is 201 or a 400 (or 413) that says what was wrong, never a 500,
// and a refused upload stores nothing.
func FuzzImportUpload(f *testing.F) {
	for _, seed := range uploadSeeds(f) {
		f.Add(seed)
	}
	ts := newTestServer(f, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		before, _ := ts.st.CountRuns(context.Background())
		rec := ts.upload(t, "/api/import", map[string][]byte{"fuzz": data}, map[string]string{"label": "fuzz"})
		after, _ := ts.st.CountRuns(context.Background())
		switch rec.Code {
		case http.StatusCreated:
			if after != before+1 {
				t.Fatalf("201 but %d → %d runs", before, after)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if after != before || !strings.Contains(rec.Body.String(), `"field":"profile"`) {
				t.Fatalf("%d stored a run or named no field: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}

// FuzzAttachUpload is FuzzImportUpload for POST /api/runs/{id}/profiles:
// 201 adds exactly one profile to the run, anything refused adds none.
func FuzzAttachUpload(f *testing.F) {
	for _, seed := range uploadSeeds(f) {
		f.Add(seed)
	}
	ts := newTestServer(f, nil)
	body, ct := multipartBody(map[string]string{"label": "target"}, []byte(foldedGather))
	req := httptest.NewRequest("POST", "/api/import", strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	var run apiRun
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &run) != nil {
		f.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	target := fmt.Sprintf("/api/runs/%d/profiles", run.ID)
	count := func() int {
		ps, err := ts.st.ListProfiles(context.Background(), run.ID)
		if err != nil {
			f.Fatal(err)
		}
		return len(ps)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := count()
		rec := ts.upload(t, target, map[string][]byte{"fuzz.pb.gz": data}, map[string]string{"role": "client"})
		after := count()
		switch rec.Code {
		case http.StatusCreated:
			if after != before+1 {
				t.Fatalf("201 but %d → %d profiles", before, after)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if after != before || !strings.Contains(rec.Body.String(), `"field":"profile"`) {
				t.Fatalf("%d stored a profile or named no field: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}

// FuzzUploadForms sends arbitrary bytes through the two forms that take
// profiles, the import page's and the run page's attach form: a redirect
// that stored exactly one run or profile, or the page again with a 400 (or
// a 413 error page) that stored nothing; never a 500.
func FuzzUploadForms(f *testing.F) {
	for _, seed := range uploadSeeds(f) {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	ts := newTestServer(f, nil)
	get := httptest.NewRecorder()
	ts.ServeHTTP(get, httptest.NewRequest("GET", "/import", nil))
	var token string
	for _, c := range get.Result().Cookies() {
		if c.Name == csrfCookie {
			token = c.Value
		}
	}
	body, ct := multipartBody(map[string]string{"label": "target"}, []byte(foldedGather))
	req := httptest.NewRequest("POST", "/api/import", strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	var run apiRun
	if token == "" || rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &run) != nil {
		f.Fatalf("setup: token %q, import %d %s", token, rec.Code, rec.Body)
	}
	stored := func() int64 {
		runs, err := ts.st.CountRuns(context.Background())
		if err != nil {
			f.Fatal(err)
		}
		ps, err := ts.st.ListProfiles(context.Background(), run.ID)
		if err != nil {
			f.Fatal(err)
		}
		return runs + int64(len(ps))
	}
	f.Fuzz(func(t *testing.T, data []byte, attach bool) {
		target := "/import"
		if attach {
			target = fmt.Sprintf("/runs/%d/profiles", run.ID)
		}
		before := stored()
		body, ct := multipartBody(map[string]string{"label": "fuzz", csrfField: token}, data)
		rec := ts.do(t, "POST", target, body, "Content-Type", ct, "Cookie", csrfCookie+"="+token)
		after := stored()
		switch rec.Code {
		case http.StatusSeeOther:
			if after != before+1 {
				t.Fatalf("303 but %d → %d runs and profiles", before, after)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if after != before || !strings.Contains(rec.Body.String(), "<html") {
				t.Fatalf("%d stored something or is no page: %.300s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
		}
	})
}
