package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/profiles"
)

// postResult posts a `kbench run --out DIR` directory to /api/import as
// kbench import DIR does: result.json as the "result" file, each profile
// it names as a "profile" file of that name, its histogram log (files'
// rundoc.HistogramLogFile) as the "histogram_log" file, and fields.
func (ts *testServer) postResult(t *testing.T, result []byte, profiles map[string][]byte, fields map[string][]string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	if result != nil {
		w, _ := mw.CreateFormFile("result", "result.json")
		w.Write(result)
	}
	for name, data := range profiles {
		field := "profile"
		if name == rundoc.HistogramLogFile {
			field = "histogram_log"
		}
		w, _ := mw.CreateFormFile(field, name)
		w.Write(data)
	}
	mw.Close()
	return ts.do(t, "POST", "/api/import", body.String(), "Content-Type", mw.FormDataContentType())
}

// resultDir reads a result directory: result.json, the document, and the
// profiles and histogram log it names.
func resultDir(t *testing.T, dir string) ([]byte, *rundoc.Result, map[string][]byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := rundoc.DecodeResult(data, "result.json")
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string][]byte{}
	for _, p := range res.Profiles {
		b, err := os.ReadFile(filepath.Join(dir, p.File))
		if err != nil {
			t.Fatal(err)
		}
		profiles[p.File] = b
	}
	if res.HistogramLog != "" {
		b, err := os.ReadFile(filepath.Join(dir, res.HistogramLog))
		if err != nil {
			t.Fatal(err)
		}
		profiles[res.HistogramLog] = b
	}
	return data, res, profiles
}

// TestImportResultDir: a `kbench run --out DIR` run made elsewhere (here
// the real binary, as a CI runner would) posted to /api/import is stored
// as one run holding everything result.json held: spec, metrics, series,
// documents, output, profiles, its meta merged with the request's, its
// start as its time; and it sits in the series of a server-launched run
// of the same workload, target and branch.
func TestImportResultDir(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	launched := ts.waitFinal(t, ts.createRun(t, `{"workload":"producer","label":"server","meta":{"branch":"trunk"},"params":{"num-records":3000,"record-size":100,"profile":["cpu"]}}`))
	if launched.Status != rundoc.StatusSucceeded {
		t.Fatalf("server run: %s %s", launched.Status, launched.Error)
	}

	dir := t.TempDir()
	cmd := exec.Command(kbenchBin(t), "run", "producer", "--num-records", "3000", "--record-size", "100", "--profile", "cpu,heap",
		"--out", dir, "--meta", "branch=trunk", "--meta", "commit=abc123")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kbench run: %v\n%s", err, out)
	}
	data, res, files := resultDir(t, dir)
	if len(res.Profiles) < 2 {
		t.Fatalf("the run wrote %d profiles, want cpu and heap", len(res.Profiles))
	}
	r := decodeRun(t, ts.postResult(t, data, files, map[string][]string{"label": {"ci"}, "meta": {"commit=def456", "runner=ci-7"}}))
	got := ts.getRun(t, r.ID)

	if got.Source != rundoc.SourceImported || got.Workload != rundoc.Producer || got.Status != rundoc.StatusSucceeded || !got.Complete || got.Label != "ci" {
		t.Errorf("run: source %s workload %s status %s complete %v label %q", got.Source, got.Workload, got.Status, got.Complete, got.Label)
	}
	if got.SeriesKey != launched.SeriesKey || got.Fingerprint != launched.Fingerprint || !strings.HasSuffix(got.SeriesKey, "@trunk") {
		t.Errorf("series %q fingerprint %q, want the server run's %q %q", got.SeriesKey, got.Fingerprint, launched.SeriesKey, launched.Fingerprint)
	}
	wantMeta := maps.Clone(res.Meta)
	wantMeta["commit"], wantMeta["runner"] = "def456", "ci-7" // the request's tags win
	if !maps.Equal(got.Meta, wantMeta) || got.Meta["version"] == "" {
		t.Errorf("meta %v, want %v (with the recorded version)", got.Meta, wantMeta)
	}
	// The times are the result's as the backend keeps them: PostgreSQL
	// to the microsecond.
	started, finished := ts.storedTime(res.StartedAt), ts.storedTime(res.FinishedAt)
	if !got.Time.Equal(started) || got.StartedAt == nil || !got.StartedAt.Equal(started) ||
		got.FinishedAt == nil || !got.FinishedAt.Equal(finished) {
		t.Errorf("time %v started %v finished %v, want %v and %v", got.Time, got.StartedAt, got.FinishedAt, started, finished)
	}
	var metrics []rundoc.Metric
	for _, m := range got.Metrics {
		metrics = append(metrics, rundoc.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help})
	}
	if !reflect.DeepEqual(metrics, res.Metrics) {
		t.Errorf("metrics differ from result.json:\n got %v\nwant %v", metrics, res.Metrics)
	}
	if !reflect.DeepEqual(got.Series, res.Series) || got.Output != res.Output {
		t.Errorf("series or output differ from result.json")
	}
	var env rundoc.Environment
	var meas rundoc.Measurement
	if err := json.Unmarshal(got.Environment, &env); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.Measurement, &meas); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(env, res.Environment) || !reflect.DeepEqual(meas, res.Measurement) {
		t.Errorf("documents differ from result.json")
	}
	var file rundoc.SpecFile
	if err := json.Unmarshal(got.Spec, &file); err != nil || file.Workload != rundoc.Producer {
		t.Fatalf("stored spec %s: %v", got.Spec, err)
	}
	if string(file.Params["num-records"]) != "3000" {
		t.Errorf("stored spec %s lacks the run's num-records", got.Spec)
	}
	if len(got.Profiles) != len(res.Profiles) {
		t.Fatalf("%d profiles stored, result.json names %d", len(got.Profiles), len(res.Profiles))
	}
	for i, p := range got.Profiles {
		sum, err := profiles.Summarize(files[res.Profiles[i].File])
		if err != nil {
			t.Fatal(err)
		}
		if p.Role != res.Profiles[i].Role || p.Kind != res.Profiles[i].Kind || p.Samples != sum.Samples {
			t.Errorf("profile %d: %s %s %d samples, want %s %s %d", i, p.Role, p.Kind, p.Samples, res.Profiles[i].Role, res.Profiles[i].Kind, sum.Samples)
		}
		rec := ts.do(t, "GET", p.Download, "")
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Errorf("profile %d download: %d", i, rec.Code)
		}
	}
	// Its histograms, whole and per second, are result.json's and the
	// log's: the same counts once decoded.
	checkHistogramsAPI(t, ts, r.ID, res.Histograms, files[rundoc.HistogramLogFile])

	// The run page shows kbench's measurement of it, as for its own runs.
	page := ts.do(t, "GET", r.URL, "")
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "Measured records") {
		t.Errorf("run page %d lacks the measurement", page.Code)
	}

	// --time overrides the start; a series field names the series.
	at := time.Date(2022, 6, 21, 10, 0, 0, 0, time.UTC)
	named := decodeRun(t, ts.postResult(t, data, files, map[string][]string{"time": {at.Format(time.RFC3339)}, "series": {"kafka-14020"}}))
	if !named.Time.Equal(at) || named.SeriesKey != "kafka-14020" {
		t.Errorf("time %v series %q", named.Time, named.SeriesKey)
	}
}

// TestImportResultErrors: a result import that cannot be stored whole is
// refused with the field named (400, or 413 past the size limit), and
// stores nothing; a secret in a hand-made result.json is never stored.
func TestImportResultErrors(t *testing.T) {
	ts := newTestServer(t, nil)
	dir := t.TempDir()
	if out, err := exec.Command(kbenchBin(t), "run", "producer", "--num-records", "500", "--profile", "cpu", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("kbench run: %v\n%s", err, out)
	}
	data, res, files := resultDir(t, dir)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	cpu := res.Profiles[0].File
	with := func(name string, b []byte) map[string][]byte {
		m := maps.Clone(files)
		m[name] = b
		return m
	}
	before := ts.countRuns(t)
	for _, tc := range []struct {
		name    string
		result  []byte
		files   map[string][]byte
		fields  map[string][]string
		code    int
		field   string
		message string
	}{
		{"newer schema", edit(func(m map[string]any) { m["schema"] = rundoc.ResultSchema + 1 }), files, nil, 400, "result", "newer kbench"},
		{"not JSON", []byte("{\"schema\": 1,"), files, nil, 400, "result", "result.json"},
		{"empty", []byte(" "), nil, nil, 400, "result", "empty"},
		{"bad spec", edit(func(m map[string]any) { m["spec"].(map[string]any)["num-records"] = -5 }), files, nil, 400, "result", "spec"},
		{"not a workload", edit(func(m map[string]any) { m["workload"] = "imported" }), files, nil, 400, "result", "workload"},
		{"bad meta", edit(func(m map[string]any) { m["meta"] = map[string]string{"Bad Key": "x"} }), files, nil, 400, "result", "meta"},
		{"profile missing", data, nil, nil, 400, "profile", cpu},
		{"extra profile", data, with("other.pb.gz", files[cpu]), nil, 400, "profile", "other.pb.gz"},
		{"profile not a profile", data, with(cpu, []byte("\x00\x01 not a profile")), nil, 400, "profile", cpu},
		{"result and output", data, files, map[string][]string{"output": {"1 records sent"}}, 400, "result", "not both"},
		{"role with result", data, files, map[string][]string{"role": {"broker"}}, 400, "role", "result.json"},
		{"bad time", data, files, map[string][]string{"time": {"yesterday"}}, 400, "time", "RFC 3339"},
		{"time past 2100", data, files, map[string][]string{"time": {"9999-12-31T23:59:59-14:00"}}, 400, "time", "from 1970 to 2100"},
		{"oversized", append(append([]byte(nil), data...), bytes.Repeat([]byte(" "), maxResultBytes)...), files, nil, 413, "result", "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.postResult(t, tc.result, tc.files, tc.fields)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != tc.code || resp.Field != tc.field || !strings.Contains(resp.Error, tc.message) {
				t.Errorf("got %d field %q: %s; want %d on %s mentioning %q", rec.Code, resp.Field, resp.Error, tc.code, tc.field, tc.message)
			}
		})
	}
	if n := ts.countRuns(t); n != before {
		t.Errorf("refused imports stored %d runs", n-before)
	}

	// A hand-made result.json with a password in its spec: the stored
	// spec and configuration hold "[redacted]", never the secret.
	const secret = "hunter2-secret-value"
	withSecret := edit(func(m map[string]any) {
		spec := m["spec"].(map[string]any)
		spec["props"] = map[string]string{"sasl.password": secret}
		env := m["environment"].(map[string]any)
		cfg := env["config"].(map[string]any)
		cfg["settings"] = append(cfg["settings"].([]any), map[string]string{"name": "sasl.password", "value": secret})
	})
	r := decodeRun(t, ts.postResult(t, withSecret, files, nil))
	got := ts.getRun(t, r.ID)
	raw, _ := json.Marshal(got)
	if strings.Contains(string(raw), secret) || !strings.Contains(string(got.Spec), rundoc.Redacted) {
		t.Errorf("the stored run shows the secret or lacks %s: %s", rundoc.Redacted, got.Spec)
	}
}
