package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// getRun reads a run through the API.
func (ts *testServer) getRun(t *testing.T, id uint) apiRun {
	t.Helper()
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET run %d = %d %s", id, rec.Code, rec.Body)
	}
	var r apiRun
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAPIRunMeta: POST /api/runs takes meta; the run shows it with its
// time and series (its fingerprint on its branch), and when it has run,
// the version it recorded (the kafka-go of the kbench that ran it).
func TestAPIRunMeta(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	id := ts.createRun(t, `{"workload":"producer","label":"m","meta":{"commit":"abc123","branch":"trunk"},"params":{"num-records":200,"profile":"none"}}`)
	queued := ts.getRun(t, id)
	if !maps.Equal(queued.Meta, map[string]string{"commit": "abc123", "branch": "trunk"}) {
		t.Errorf("meta %v", queued.Meta)
	}
	if queued.SeriesKey != queued.Fingerprint+"@trunk" || queued.Fingerprint == "" {
		t.Errorf("series %q, want fingerprint %q @trunk", queued.SeriesKey, queued.Fingerprint)
	}
	if queued.Time.IsZero() {
		t.Error("a queued run has no time")
	}
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusSucceeded {
		t.Fatalf("run: %s %s", r.Status, r.Error)
	}
	r = ts.getRun(t, id)
	if r.StartedAt == nil || !r.Time.Equal(*r.StartedAt) {
		t.Errorf("time %v, want the start %v", r.Time, r.StartedAt)
	}
	var env rundoc.Environment
	if err := json.Unmarshal(r.Environment, &env); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"commit": "abc123", "branch": "trunk"}
	if env.KafkaGoVersion != "" {
		want["version"] = env.KafkaGoVersion
	}
	if !maps.Equal(r.Meta, want) || r.SeriesKey != queued.SeriesKey {
		t.Errorf("finished: meta %v series %q, want %v %q", r.Meta, r.SeriesKey, want, queued.SeriesKey)
	}
	// Without tags: {} and the bare fingerprint.
	plain := ts.createRun(t, `{"workload":"producer","params":{"num-records":200,"profile":"none"}}`)
	if p := ts.getRun(t, plain); p.Meta == nil || len(p.Meta) != 0 || p.SeriesKey != p.Fingerprint {
		t.Errorf("untagged run: meta %v series %q", p.Meta, p.SeriesKey)
	}
	ts.waitFinal(t, plain)
}

// TestAPIRunMetaBadInput: bad metadata is a 400 naming meta, for a single
// run and an A/B submission, and stores nothing.
func TestAPIRunMetaBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	var many []string
	for i := 0; i <= rundoc.MaxMetaTags; i++ {
		many = append(many, fmt.Sprintf(`"k%d":"v"`, i))
	}
	ab := `"configs":[{"label":"A","params":{}},{"label":"B","params":{"record-size":64}}]`
	for _, tc := range []struct {
		name, body, field, says string
	}{
		{"a number", `{"workload":"producer","meta":{"commit":123}}`, "meta", "must be a string"},
		{"not an object", `{"workload":"producer","meta":"commit=abc"}`, "meta", "must be an object"},
		{"bad key", `{"workload":"producer","meta":{"Commit":"abc"}}`, "meta", `key "Commit"`},
		{"empty value", `{"workload":"producer","meta":{"commit":""}}`, "meta", "empty value"},
		{"control character", `{"workload":"producer","meta":{"commit":"a\u0007b"}}`, "meta", "control character"},
		{"long value", `{"workload":"producer","meta":{"commit":"` + strings.Repeat("x", 257) + `"}}`, "meta", "at most 256"},
		{"too many", `{"workload":"producer","meta":{` + strings.Join(many, ",") + `}}`, "meta", "at most 32 tags"},
		{"A/B", `{"workload":"producer","meta":{"Bad":"x"},` + ab + `}`, "meta", `key "Bad"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tc.body)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != http.StatusBadRequest || resp.Field != tc.field || !strings.Contains(resp.Error, tc.says) {
				t.Errorf("got %d field %q %q, want 400 on %s saying %q", rec.Code, resp.Field, resp.Error, tc.field, tc.says)
			}
		})
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 0 {
		t.Errorf("bad requests stored %d runs", n)
	}
}

// TestABAndRepetitionsCarryMeta: every run of an A/B submission carries
// its meta, and repetitions added to a column copy the column's.
func TestABAndRepetitionsCarryMeta(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	ts.holdQueue(t)
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","meta":{"commit":"abc","branch":"b1"},"configs":[
		{"label":"A","params":{"num-records":100,"profile":"none"}},
		{"label":"B","params":{"num-records":100,"profile":"none","record-size":64}}]}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("A/B = %d %s", rec.Code, rec.Body)
	}
	ab := decodeAB(t, rec.Body.Bytes())
	defer func() { ts.cancelAll(t, ab.Runs) }()
	want := map[string]string{"commit": "abc", "branch": "b1"}
	for _, r := range ab.Runs {
		if !maps.Equal(r.Meta, want) || r.SeriesKey != r.Fingerprint+"@b1" {
			t.Errorf("A/B run %d: meta %v series %q", r.ID, r.Meta, r.SeriesKey)
		}
	}
	code, resp := ts.addReps(t, fmt.Sprintf(`{"runs":[%s],"by":"group","n":1}`, idsParam(idsOf(ab.Runs))))
	if code != http.StatusCreated {
		t.Fatalf("add repetitions = %d %+v", code, resp)
	}
	defer func() { ts.cancelAll(t, resp.Runs) }()
	for _, r := range resp.Runs {
		if got := ts.getRun(t, r.ID); !maps.Equal(got.Meta, want) {
			t.Errorf("added repetition %d: meta %v, want %v", r.ID, got.Meta, want)
		}
	}
}

// TestFormMeta: the form's Metadata field (key=value lines) tags the run;
// a bad line is shown on the field, with what was typed kept.
func TestFormMeta(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	rec := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "num-records": {"100"}, "profile": {"none"},
		"meta": {"commit=abc\nBad Key=<x>"}})
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("got %d, want 400", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{`id="f-meta" name="meta"`, `aria-invalid="true"`, `key &#34;Bad Key&#34;`, "commit=abc\nBad Key=&lt;x&gt;</textarea>"} {
		if !strings.Contains(body, want) {
			t.Errorf("re-rendered form lacks %q", want)
		}
	}
	if !strings.Contains(body[strings.Index(body, `id="f-meta"`)-200:], `field-error" id="f-meta-error"`) {
		t.Error("the error is not shown on the Metadata field")
	}
	ok := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "num-records": {"100"}, "profile": {"none"},
		"meta": {"commit=abc\r\n\r\nbranch=trunk\r\n"}})
	if ok.Code != http.StatusSeeOther {
		t.Fatalf("valid form: %d %s", ok.Code, ok.Body)
	}
	var id uint
	fmt.Sscanf(ok.Header().Get("Location"), "/runs/%d", &id)
	if r := ts.getRun(t, id); r.Meta["commit"] != "abc" || r.Meta["branch"] != "trunk" {
		t.Errorf("form run meta %v", r.Meta)
	}
	ts.waitFinal(t, id)
}

// TestImportMetaTimeSeries: POST /api/import takes time (RFC 3339),
// repeated meta key=value fields and series; without series, imports of
// one tool form a series by label and branch. Bad fields are a 400
// naming them, and nothing is stored.
func TestImportMetaTimeSeries(t *testing.T) {
	ts := newTestServer(t, nil)
	out := readImportFile(t, "producer_summary.txt")
	post := func(fields map[string][]string) *httptest.ResponseRecorder {
		t.Helper()
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for k, vs := range fields {
			for _, v := range vs {
				mw.WriteField(k, v)
			}
		}
		w, _ := mw.CreateFormFile("output", "perf.txt")
		w.Write(out)
		mw.Close()
		return ts.do(t, "POST", "/api/import", body.String(), "Content-Type", mw.FormDataContentType())
	}
	r := decodeRun(t, post(map[string][]string{"label": {"java"}, "time": {"2022-06-21T12:00:00+02:00"},
		"meta": {"commit=abc123", "branch=trunk"}}))
	if !r.Time.Equal(time.Date(2022, 6, 21, 10, 0, 0, 0, time.UTC)) || !maps.Equal(r.Meta, map[string]string{"commit": "abc123", "branch": "trunk"}) ||
		r.SeriesKey != "imported:producer:java@trunk" {
		t.Errorf("import: time %v meta %v series %q", r.Time, r.Meta, r.SeriesKey)
	}
	if got := ts.getRun(t, r.ID); !got.Time.Equal(r.Time) || got.SeriesKey != r.SeriesKey || !maps.Equal(got.Meta, r.Meta) {
		t.Errorf("read back: %v %v %q", got.Time, got.Meta, got.SeriesKey)
	}
	named := decodeRun(t, post(map[string][]string{"label": {"x"}, "series": {"kafka-14020"}, "meta": {"commit=def456\nbranch=trunk"}}))
	if named.SeriesKey != "kafka-14020" || named.Meta["commit"] != "def456" || named.Meta["branch"] != "trunk" {
		t.Errorf("named series: %q %v", named.SeriesKey, named.Meta)
	}
	if time.Since(named.Time) > time.Minute || named.Time.IsZero() {
		t.Errorf("an import without time has time %v, want now", named.Time)
	}
	before := ts.countRuns(t)
	for _, tc := range []struct {
		name   string
		fields map[string][]string
		field  string
	}{
		{"bad time", map[string][]string{"time": {"2022-06-21 10:00"}}, "time"},
		{"time without zone", map[string][]string{"time": {"2022-06-21T10:00:00"}}, "time"},
		{"two times", map[string][]string{"time": {"2022-06-21T10:00:00Z", "2022-06-22T10:00:00Z"}}, "time"},
		{"meta without =", map[string][]string{"meta": {"commit"}}, "meta"},
		{"bad meta key", map[string][]string{"meta": {"Commit=x"}}, "meta"},
		{"meta twice", map[string][]string{"meta": {"commit=a", "commit=b"}}, "meta"},
		{"bad series", map[string][]string{"series": {"a\u0001b"}}, "series"},
		{"long series", map[string][]string{"series": {strings.Repeat("s", rundoc.MaxSeriesName+1)}}, "series"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fields["label"] = []string{"bad"}
			rec := post(tc.fields)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != http.StatusBadRequest || resp.Field != tc.field {
				t.Errorf("got %d field %q (%s), want 400 on %s", rec.Code, resp.Field, resp.Error, tc.field)
			}
		})
	}
	if n := ts.countRuns(t); n != before {
		t.Errorf("refused imports stored %d runs", n-before)
	}
}

// TestSeriesKeepsNoSecret: a spec's secret properties never reach the
// series or the metadata: runs differing only in the password share
// their series, and neither shows it.
func TestSeriesKeepsNoSecret(t *testing.T) {
	ts := newRunningTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:1") })
	ts.holdQueue(t)
	var runs []apiRun
	for _, pw := range []string{"Pw-one-never-shown", "Pw-two-never-shown"} {
		body := fmt.Sprintf(`{"workload":"producer","meta":{"branch":"trunk"},"target":{"bootstrap_server":"127.0.0.1:1","security_protocol":"SASL_PLAINTEXT","sasl_mechanism":"PLAIN","sasl_username":"u","sasl_password":%q},"params":{"num-records":10,"profile":"none"}}`, pw)
		r := ts.getRun(t, ts.createRun(t, body))
		runs = append(runs, r)
		if text := fmt.Sprint(r.SeriesKey, r.Meta, r.Fingerprint); strings.Contains(text, "never-shown") {
			t.Errorf("the password reaches %s", text)
		}
	}
	defer func() { ts.cancelAll(t, runs) }()
	if runs[0].SeriesKey != runs[1].SeriesKey || !strings.HasSuffix(runs[0].SeriesKey, "@trunk") {
		t.Errorf("series %q and %q: the password changed the series", runs[0].SeriesKey, runs[1].SeriesKey)
	}
}
