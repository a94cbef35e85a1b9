package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/omb"
	"github.com/kbench/kbench/internal/rundoc"
)

// ombSample is a result written by hand in OMB's format (internal/omb's
// test data): six 10 s windows of a Kafka test at 50,000 messages/s.
const ombSample = "../internal/omb/testdata/kafka-1-topic-16-partitions-1kb.json"

func readOMBSample(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(ombSample)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ombResultBody is a multipart body of "omb" files ({name, content}), pasted
// results and fields, and its content type.
func ombResultBody(files [][2]string, pasted []string, fields map[string]string) (string, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for _, f := range files {
		w, _ := mw.CreateFormFile("omb", f[0])
		w.Write([]byte(f[1]))
	}
	for _, p := range pasted {
		mw.WriteField("omb", p)
	}
	mw.Close()
	return body.String(), mw.FormDataContentType()
}

// importOMB posts "omb" files, pasted results and fields to /api/import.
func (ts *testServer) importOMB(t *testing.T, files [][2]string, pasted []string, fields map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	body, ct := ombResultBody(files, pasted, fields)
	return ts.do(t, "POST", "/api/import", body, "Content-Type", ct)
}

// getOMB answers GET /api/runs/:id/omb.json, decoded.
func (ts *testServer) getOMB(t *testing.T, id uint, query string) (client.OMBResult, map[string]any) {
	t.Helper()
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/omb.json%s", id, query), "")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("omb.json: %d %s\n%.300s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var r client.OMBResult
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range omb.Fields() {
		if v, ok := doc[k]; !ok || v == nil {
			t.Errorf("omb.json of run %d: %s missing or null", id, k)
		}
	}
	return r, doc
}

// TestImportOMB: an OMB result posted as "omb" becomes an imported e2e
// run of source OMB, labelled by its driver, with kbench's metric names
// and OMB's quantile maps and windows in its measurement; its omb.json
// gives the result back.
func TestImportOMB(t *testing.T) {
	ts := newTestServer(t, nil)
	rec := ts.importOMB(t, [][2]string{{"r.json", string(readOMBSample(t))}}, nil, map[string]string{"meta": "branch=trunk"})
	if rec.Code != http.StatusCreated {
		t.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	var created client.Created
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	if len(created.Runs) != 1 || created.ID == 0 || created.URL != fmt.Sprintf("/runs/%d", created.ID) {
		t.Fatalf("created: %+v", created)
	}
	got := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", created.ID), "")
	var run apiRun
	if err := json.Unmarshal(got.Body.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	if run.Label != "Kafka" || run.Workload != rundoc.E2E || run.Source != rundoc.SourceImported || run.Status != rundoc.StatusSucceeded ||
		run.SeriesKey != "imported:omb:1-topic-16-partitions-1kb / Kafka@trunk" || len(run.Series) != 6 {
		t.Errorf("run: %s %s %s %s %q, %d points", run.Label, run.Workload, run.Source, run.Status, run.SeriesKey, len(run.Series))
	}
	for name, want := range map[string]float64{"publish-latency-p99": 5.297, "publish-delay-p99": 0.009, "e2e-latency-p9999": 24} {
		if m, ok := metricOf(run, name); !ok || m.Value != want || m.Unit != "ms" {
			t.Errorf("%s = %+v, want %v ms", name, m, want)
		}
	}
	var m rundoc.Measurement
	if err := json.Unmarshal(run.Measurement, &m); err != nil {
		t.Fatal(err)
	}
	if m.Tool != rundoc.ToolOMB || len(m.Curves) != 3 || len(m.Windows) != 28 {
		t.Errorf("measurement: tool %q, %d curves, %d windows", m.Tool, len(m.Curves), len(m.Windows))
	}
	back, _ := ts.getOMB(t, created.ID, "")
	if back.Workload != "1-topic-16-partitions-1kb" || back.Driver != "Kafka" || back.Partitions != 16 || back.MessageSize != 1024 ||
		fmt.Sprint(back.Backlog) != "[25 12 17 10 19 10]" || back.PublishLatency99pct[3] != 5.26 || back.PublishDelayLatencyMax[0] != 1873 ||
		back.AggregatedPublishDelayLatency9999pct != 236 || quantileAt(back.AggregatedEndToEndLatencyQuantiles, 99.90234375) != 13 {
		t.Errorf("omb.json: %+v", back)
	}
	if renamed, _ := ts.getOMB(t, created.ID, "?workload=mine"); renamed.Workload != "mine" {
		t.Errorf("?workload=mine: %q", renamed.Workload)
	}
}

// TestImportOMBSeveral: several results, as files and pasted, are one
// run each, in order, answered with their comparison; "label" labels
// them all.
func TestImportOMBSeveral(t *testing.T) {
	ts := newTestServer(t, nil)
	sample := string(readOMBSample(t))
	other := strings.Replace(sample, `"driver" : "Kafka"`, `"driver" : "Kafka-tuned"`, 1)
	rec := ts.importOMB(t, [][2]string{{"a.json", sample}, {"b.json", other}}, []string{sample}, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	var created client.Created
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	if len(created.Runs) != 3 || created.Runs[0].Label != "Kafka" || created.Runs[1].Label != "Kafka-tuned" ||
		created.CompareURL != fmt.Sprintf("/compare?runs=%d,%d,%d", created.Runs[0].ID, created.Runs[1].ID, created.Runs[2].ID) {
		t.Fatalf("created: %+v", created)
	}
	rec = ts.importOMB(t, [][2]string{{"a.json", sample}, {"b.json", other}}, nil, map[string]string{"label": "trial"})
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if created.Runs[0].Label != "trial" || created.Runs[1].Label != "trial" {
		t.Errorf("labels %q %q, want trial", created.Runs[0].Label, created.Runs[1].Label)
	}
}

// TestImportOMBRefused: a malformed result is a 400 naming its field
// (with the file's index) and nothing of the import is stored; one over
// the size cap is a 413; other import fields are refused beside "omb".
func TestImportOMBRefused(t *testing.T) {
	ts := newTestServer(t, nil)
	sample := string(readOMBSample(t))
	bad := strings.Replace(sample, `"publishLatency99pct" : [ 5.873, 5.224, 5.181, 5.26,`, `"publishLatency99pct" : [ 5.873, 5.224, 5.181, "5.26",`, 1)
	if bad == sample {
		t.Fatal("the sample changed: the test no longer breaks it")
	}
	before := ts.countRuns(t)
	cases := []struct {
		name   string
		files  [][2]string
		fields map[string]string
		status int
		field  string
		msg    string
	}{
		{"a string in a list", [][2]string{{"good.json", sample}, {"bad.json", bad}}, nil, http.StatusBadRequest,
			"omb[1].publishLatency99pct[3]", "omb[1].publishLatency99pct[3]: is a string, want a number (bad.json)"},
		{"not JSON", [][2]string{{"x.json", "workload: w"}}, nil, http.StatusBadRequest, "omb[0]", "invalid JSON"},
		{"no windows", [][2]string{{"x.json", `{"workload":"w","driver":"d"}`}}, nil, http.StatusBadRequest, "omb[0].publishRate", "no 10 s window"},
		{"too large", [][2]string{{"big.json", sample + strings.Repeat(" ", omb.MaxBytes)}}, nil, http.StatusRequestEntityTooLarge, "omb", "at most"},
		{"with output", [][2]string{{"a.json", sample}}, map[string]string{"output": "1 records sent"}, http.StatusBadRequest, "output", "not with an OMB result"},
		{"series with several", [][2]string{{"a.json", sample}, {"b.json", sample}}, map[string]string{"series": "s"}, http.StatusBadRequest, "series", "only with one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := ts.importOMB(t, c.files, nil, c.fields)
			var body struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != c.status || body.Field != c.field || !strings.Contains(body.Error, c.msg) {
				t.Errorf("%d %s; want %d, field %q, %q", rec.Code, rec.Body, c.status, c.field, c.msg)
			}
		})
	}
	if after := ts.countRuns(t); after != before {
		t.Errorf("refused imports stored %d runs", after-before)
	}
}

// TestImportOMBForm: the import page's OMB form (POST /import with
// "omb") stores one result as a run and opens its page, several as runs
// opened side by side; a refused result, or none, shows the page again
// with the message in the form's own section, the pasted text and the
// fields kept and the refused input marked, and stores nothing.
func TestImportOMBForm(t *testing.T) {
	ts := newTestServer(t, nil)
	page := ts.do(t, "GET", "/import", "").Body.String()
	for _, want := range []string{`id="omb-form"`, `name="omb" accept=".json,application/json" multiple`, `id="f-omb-text" name="omb"`, `name="form" value="omb"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the import page lacks %s", want)
		}
	}
	token := csrfToken(t, ts)
	post := func(files [][2]string, pasted []string, fields map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		all := map[string]string{csrfField: token, "form": "omb"}
		for k, v := range fields {
			all[k] = v
		}
		body, ct := ombResultBody(files, pasted, all)
		return ts.do(t, "POST", "/import", body, "Content-Type", ct, "Cookie", csrfCookie+"="+token)
	}
	sample := string(readOMBSample(t))

	rec := post([][2]string{{"r.json", sample}}, []string{""}, map[string]string{"meta": "branch=trunk\ncommit=abc123"})
	loc := rec.Header().Get("Location")
	var id uint
	if _, err := fmt.Sscanf(loc, "/runs/%d", &id); rec.Code != http.StatusSeeOther || err != nil {
		t.Fatalf("one result: %d, Location %q\n%.300s", rec.Code, loc, rec.Body)
	}
	var run apiRun
	if err := json.Unmarshal(ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), "").Body.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	if run.Label != "Kafka" || run.Workload != rundoc.E2E || run.Meta["commit"] != "abc123" || run.SeriesKey != "imported:omb:1-topic-16-partitions-1kb / Kafka@trunk" {
		t.Errorf("run %d: label %q, workload %s, meta %v, series %q", id, run.Label, run.Workload, run.Meta, run.SeriesKey)
	}

	rec = post([][2]string{{"a.json", sample}, {"b.json", sample}}, nil, map[string]string{"label": "trial"})
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/compare?runs=") || strings.Count(loc, ",") != 1 {
		t.Fatalf("two results: %d, Location %q", rec.Code, loc)
	}

	before := ts.countRuns(t)
	bad := strings.Replace(sample, `"backlog" : [ 25,`, `"backlog" : [ "25",`, 1)
	if bad == sample {
		t.Fatal("the sample changed: the test no longer breaks it")
	}
	cases := []struct {
		name    string
		files   [][2]string
		pasted  []string
		fields  map[string]string
		msg     string
		invalid string // the id of the input marked invalid
		kept    string // what the page shows again
	}{
		{"pasted, malformed", nil, []string{bad}, map[string]string{"label": "mine"}, "omb[0].backlog[0]: is a string", "f-omb-text", `value="mine"`},
		{"a file, malformed", [][2]string{{"bad.json", bad}}, []string{""}, nil, "(bad.json)", "f-omb-file", ""},
		{"nothing", nil, []string{""}, map[string]string{"series": "s"}, "choose an OMB result file or paste one", "f-omb-file", `value="s"`},
		{"series with several", [][2]string{{"a.json", sample}, {"b.json", sample}}, nil, map[string]string{"series": "s"}, "only with one OMB result", "f-omb-series", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := post(c.files, c.pasted, c.fields)
			body := rec.Body.String()
			if rec.Code != http.StatusBadRequest || !strings.Contains(body, `id="omb-error"`) || !strings.Contains(html.UnescapeString(body), c.msg) {
				t.Fatalf("%d, want 400 with %q in #omb-error\n%.2000s", rec.Code, c.msg, body)
			}
			marked := regexp.MustCompile(`id="([^"]+)"[^>]*aria-invalid="true"`).FindAllStringSubmatch(body, -1)
			if len(marked) != 1 || marked[0][1] != c.invalid {
				t.Errorf("inputs marked invalid: %v, want %s alone", marked, c.invalid)
			}
			if strings.Contains(body, `id="import-error"`) {
				t.Error("the message is shown above the first form too")
			}
			if c.kept != "" && !strings.Contains(body, c.kept) {
				t.Errorf("the page lost %s", c.kept)
			}
			if len(c.pasted) > 0 && c.pasted[0] != "" && !strings.Contains(html.UnescapeString(body), `"backlog" : [ "25",`) {
				t.Error("the pasted result is not shown again")
			}
		})
	}
	if after := ts.countRuns(t); after != before {
		t.Errorf("refused imports stored %d runs", after-before)
	}
}

// TestRunOMBExport: a kbench run with histograms answers omb.json with
// every key OMB writes: its windows' latencies from its interval
// histograms, its aggregates from its window histograms; an unknown run
// is a 404, a workload name too long a 400.
func TestRunOMBExport(t *testing.T) {
	ts := newTestServer(t, nil)
	id, _, _ := seedHistogramRun(t, ts, "hist")
	r, _ := ts.getOMB(t, id, "")
	// The log's two seconds (900, 1000 µs; 1100, 5000 µs) make one window.
	if r.Driver != "hist" || fmt.Sprint(r.PublishLatencyMax) != "[5.003]" || fmt.Sprint(r.PublishLatency50pct) != "[1]" ||
		r.AggregatedPublishLatencyMax != 5.003 || r.AggregatedPublishDelayLatencyMax != 4 || len(r.AggregatedPublishLatencyQuantiles) == 0 {
		t.Errorf("omb.json: driver %q, max %v, p50 %v, aggregated max %v, delay max %v", r.Driver, r.PublishLatencyMax, r.PublishLatency50pct,
			r.AggregatedPublishLatencyMax, r.AggregatedPublishDelayLatencyMax)
	}
	if rec := ts.do(t, "GET", "/api/runs/999999/omb.json", ""); rec.Code != http.StatusNotFound {
		t.Errorf("unknown run: %d", rec.Code)
	}
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d/omb.json?workload=%s", id, strings.Repeat("w", omb.MaxName+1)), ""); rec.Code != http.StatusBadRequest {
		t.Errorf("long workload: %d", rec.Code)
	}
}

// quantileAt is the value qs holds at percentile p, -1 for none.
func quantileAt(qs client.OMBQuantiles, p float64) float64 {
	for _, q := range qs {
		if q.Percentile == p {
			return q.Value
		}
	}
	return -1
}
