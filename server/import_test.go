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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// importDir holds real-looking outputs of Kafka's perf tools in every
// format the parser accepts.
const importDir = "../internal/kafkafmt/testdata/import"

// importOutput posts an "output" file (when output is not nil), profiles
// and fields to /api/import.
func (ts *testServer) importOutput(t *testing.T, name string, output []byte, profiles map[string][]byte, fields map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if output != nil {
		w, _ := mw.CreateFormFile("output", name)
		w.Write(output)
	}
	for n, data := range profiles {
		w, _ := mw.CreateFormFile("profile", n)
		w.Write(data)
	}
	mw.Close()
	return ts.do(t, "POST", "/api/import", body.String(), "Content-Type", mw.FormDataContentType())
}

func readImportFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(importDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeRun(t *testing.T, rec *httptest.ResponseRecorder) apiRun {
	t.Helper()
	if rec.Code != http.StatusCreated {
		t.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	var r apiRun
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func metricOf(r apiRun, name string) (apiMetric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return apiMetric{}, false
}

func (ts *testServer) countRuns(t *testing.T) int64 {
	t.Helper()
	n, err := ts.st.CountRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestImportKafkaOutputs imports every sample output: each becomes one
// succeeded, imported producer, consumer (the share consumer tool's too)
// or e2e run whose metrics carry
// kbench's names, and imported runs compare with each other.
func TestImportKafkaOutputs(t *testing.T) {
	ts := newTestServer(t, nil)
	files, err := filepath.Glob(filepath.Join(importDir, "*.txt"))
	if err != nil || len(files) < 10 {
		t.Fatalf("sample outputs: %v %v", files, err)
	}
	ids := map[string]uint{}
	for _, f := range files {
		name := filepath.Base(f)
		text := readImportFile(t, name)
		kafkaTool := kafkafmt.ToolProducer
		switch {
		case strings.HasPrefix(name, "share_consumer"):
			kafkaTool = kafkafmt.ToolShareConsumer // a consumer run
		case strings.HasPrefix(name, "consumer"):
			kafkaTool = kafkafmt.ToolConsumer
		case strings.HasPrefix(name, "e2e"):
			kafkaTool = kafkafmt.ToolE2E
		}
		tool := rundoc.Workload(kafkafmt.Workload(kafkaTool))
		command := kafkafmt.Command(kafkaTool)
		r := decodeRun(t, ts.importOutput(t, name, text, nil, map[string]string{"label": "java " + name}))
		ids[name] = r.ID
		if r.Workload != tool || r.Source != "imported" || r.Status != "succeeded" || !r.Complete || r.Label != "java "+name {
			t.Errorf("%s: run %+v", name, r)
		}
		// The run as stored, with everything.
		rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", r.ID), "")
		var full apiRun
		json.Unmarshal(rec.Body.Bytes(), &full)
		if full.Output != string(text) {
			t.Errorf("%s: output not kept as uploaded", name)
		}
		var spec struct {
			Workload, Tool string
			Files          []string
		}
		json.Unmarshal(full.Spec, &spec)
		if spec.Workload != "imported" || spec.Tool != kafkaTool || len(spec.Files) != 1 || spec.Files[0] != name {
			t.Errorf("%s: spec %s", name, full.Spec)
		}
		var meas struct {
			Source string
			Notes  []string
		}
		json.Unmarshal(full.Measurement, &meas)
		if meas.Source != "imported" || len(meas.Notes) == 0 || meas.Notes[0] != "imported from Kafka's "+command+" output" {
			t.Errorf("%s: measurement %s", name, full.Measurement)
		}
		// The stored measurement is a rundoc.Measurement, as a launched
		// run's: where it came from, which tool, how many lines were read.
		var doc rundoc.Measurement
		if err := json.Unmarshal(full.Measurement, &doc); err != nil || doc.Source != rundoc.SourceImported ||
			doc.Tool != command || doc.Lines <= 0 || doc.Lines > strings.Count(string(text), "\n")+1 {
			t.Errorf("%s: measurement as rundoc.Measurement = %+v (%v), from %s", name, doc, err, full.Measurement)
		}
		stored, err := ts.st.GetRun(t.Context(), r.ID)
		if err != nil || stored.DocumentErr != nil || stored.Measurement == nil || stored.Measurement.Source != rundoc.SourceImported ||
			stored.Measurement.Tool != doc.Tool || stored.Measurement.Lines != doc.Lines || stored.Documents.Measurement != string(full.Measurement) {
			t.Errorf("%s: stored run's measurement = %+v (%v, %v)", name, stored.Measurement, err, stored.DocumentErr)
		} else if stored.Environment == nil || stored.Environment.Source != rundoc.SourceImported || stored.Environment.Tool != doc.Tool {
			t.Errorf("%s: stored run's environment = %+v", name, stored.Environment)
		}
		if !strings.Contains(string(full.Environment), `"imported"`) {
			t.Errorf("%s: environment %s", name, full.Environment)
		}
		want := []string{"records-sent", "record-send-rate", "mb-per-sec", "record-latency-avg", "record-latency-max"}
		noRate := false
		switch {
		case name == "consumer_0.10_detailed.txt" || name == "consumer_old_threads.txt":
			// Per-thread rows of the old consumer without a summary: the
			// parser adds up the counts and leaves the rates out.
			want, noRate = []string{"records-consumed-total", "bytes-consumed-total"}, true
		case tool == rundoc.Consumer:
			want = []string{"records-consumed-total", "records-consumed-rate", "mb-per-sec", "bytes-consumed-total"}
		case tool == rundoc.E2E:
			// EndToEndLatency prints latencies only: no count, no rate.
			want, noRate = []string{"e2e-latency-avg", "e2e-latency-p50", "e2e-latency-p99", "e2e-latency-p999"}, true
		}
		for _, m := range want {
			if _, ok := metricOf(full, m); !ok {
				t.Errorf("%s: no metric %s in %+v", name, m, full.Metrics)
			}
		}
		if !noRate && (full.RecordsPerSec == nil || *full.RecordsPerSec <= 0) {
			t.Errorf("%s: no records/s key figure", name)
		}
	}

	// Figures as printed, under kbench's names, units and directions.
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", ids["producer_summary.txt"]), "")
	var prod apiRun
	json.Unmarshal(rec.Body.Bytes(), &prod)
	for name, want := range map[string]apiMetric{
		"record-send-rate":   {Value: 19534.302235, Unit: "records/s", Better: "higher"},
		"record-latency-p99": {Value: 14, Unit: "ms", Better: "lower"},
		"record-latency-avg": {Value: 2.06, Unit: "ms", Better: "lower"},
		"records-sent":       {Value: 500000, Unit: "records"},
	} {
		m, _ := metricOf(prod, name)
		if m.Value != want.Value || m.Unit != want.Unit || m.Better != want.Better {
			t.Errorf("producer %s = %+v, want %+v", name, m, want)
		}
	}
	if prod.P99Ms == nil || *prod.P99Ms != 14 {
		t.Errorf("producer p99 key figure = %v", prod.P99Ms)
	}
	rec = ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", ids["consumer_summary.txt"]), "")
	var cons apiRun
	json.Unmarshal(rec.Body.Bytes(), &cons)
	if m, _ := metricOf(cons, "records-consumed-rate"); m.Value != 31579.6122 || m.Better != "higher" {
		t.Errorf("consumer records-consumed-rate = %+v", m)
	}
	if m, _ := metricOf(cons, "records-consumed-total"); m.Value != 1000000 {
		t.Errorf("consumer records-consumed-total = %+v", m)
	}

	// EndToEndLatency's figures under the names, units and directions of
	// kbench's own e2e runs, with what the tool measured in the notes.
	rec = ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", ids["e2e_latency.txt"]), "")
	var e2e apiRun
	json.Unmarshal(rec.Body.Bytes(), &e2e)
	for name, want := range map[string]apiMetric{
		"e2e-latency-avg":  {Value: 1.5614, Unit: "ms", Better: "lower"},
		"e2e-latency-p50":  {Value: 1, Unit: "ms", Better: "lower"},
		"e2e-latency-p99":  {Value: 24, Unit: "ms", Better: "lower"},
		"e2e-latency-p999": {Value: 26, Unit: "ms", Better: "lower"},
	} {
		m, _ := metricOf(e2e, name)
		if m.Value != want.Value || m.Unit != want.Unit || m.Better != want.Better {
			t.Errorf("e2e %s = %+v, want %+v", name, m, want)
		}
	}
	if len(e2e.Metrics) != 4 || len(e2e.Series) != 0 {
		t.Errorf("e2e: metrics %+v, series %+v: want the four figures the output holds and no series", e2e.Metrics, e2e.Series)
	}
	if !strings.Contains(string(e2e.Measurement), "one record in flight") || !strings.Contains(string(e2e.Measurement), "acks given to the tool") {
		t.Errorf("e2e: measurement notes do not say what the tool measured: %s", e2e.Measurement)
	}

	// Periodic lines become the series.
	rec = ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", ids["producer_intervals.txt"]), "")
	var iv apiRun
	json.Unmarshal(rec.Body.Bytes(), &iv)
	if len(iv.Series) != 5 || iv.Series[1].Records != 99980 || iv.Series[1].LatencyMaxMs != 41 || math.Abs(iv.Series[0].T-48120/9616.3) > 1e-9 || iv.Series[4].T <= iv.Series[3].T {
		t.Errorf("producer series = %+v", iv.Series)
	}
	rec = ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", ids["consumer_detailed.txt"]), "")
	var det apiRun
	json.Unmarshal(rec.Body.Bytes(), &det)
	if len(det.Series) < 2 {
		t.Errorf("consumer detailed series = %+v", det.Series)
	}

	// Imported runs sit side by side in a comparison.
	for _, pair := range [][2]string{{"producer_summary.txt", "producer_intervals.txt"}, {"consumer_summary.txt", "consumer_detailed.txt"},
		{"e2e_latency.txt", "e2e_latency_summary.txt"}} {
		rec := ts.do(t, "GET", fmt.Sprintf("/api/compare?runs=%d,%d", ids[pair[0]], ids[pair[1]]), "")
		if rec.Code != http.StatusOK {
			t.Fatalf("compare %v: %d %s", pair, rec.Code, rec.Body)
		}
		var doc struct {
			Rows []struct {
				Metric string
				Cells  []struct{ Value *float64 }
			}
		}
		json.Unmarshal(rec.Body.Bytes(), &doc)
		metric := "record-send-rate"
		switch {
		case strings.HasPrefix(pair[0], "consumer"):
			metric = "records-consumed-rate"
		case strings.HasPrefix(pair[0], "e2e"):
			metric = "e2e-latency-p99"
		}
		found := false
		for _, row := range doc.Rows {
			if row.Metric == metric {
				found = len(row.Cells) == 2 && row.Cells[0].Value != nil && row.Cells[1].Value != nil
			}
		}
		if !found {
			t.Errorf("compare %v: no %s row with both values: %s", pair, metric, rec.Body)
		}
	}
}

// TestImportOutputErrors: a refused output or profile stores nothing, and
// a parse error names its line.
func TestImportOutputErrors(t *testing.T) {
	ts := newTestServer(t, nil)
	good := readImportFile(t, "producer_summary.txt")

	garbage := []byte("500000 records sent, 19534.302235 records/sec (9.54 MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th.\n\nthis is not kafka output\n")
	rec := ts.importOutput(t, "bad.txt", garbage, nil, map[string]string{"label": "x"})
	var body struct {
		Error, Field string
		Line         int
	}
	json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != http.StatusBadRequest || body.Field != "output" || body.Line != 3 || !strings.HasPrefix(body.Error, "output: line 3: ") {
		t.Errorf("garbage output: %d %s", rec.Code, rec.Body)
	}
	// Not Kafka output at all: a 400 on the field, with no line.
	rec = ts.importOutput(t, "empty.txt", []byte("\n\n"), nil, nil)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"output"`) {
		t.Errorf("empty output: %d %s", rec.Code, rec.Body)
	}
	// A good output with a bad profile.
	rec = ts.importOutput(t, "good.txt", good, map[string][]byte{"x.txt": []byte("hello\x00\x01")}, map[string]string{"label": "x"})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"profile"`) {
		t.Errorf("output with a bad profile: %d %s", rec.Code, rec.Body)
	}
	// Two outputs.
	var two bytes.Buffer
	mw := multipart.NewWriter(&two)
	for _, n := range []string{"a.txt", "b.txt"} {
		w, _ := mw.CreateFormFile("output", n)
		w.Write(good)
	}
	mw.Close()
	rec = ts.do(t, "POST", "/api/import", two.String(), "Content-Type", mw.FormDataContentType())
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"output"`) {
		t.Errorf("two outputs: %d %s", rec.Code, rec.Body)
	}
	if n := ts.countRuns(t); n != 0 {
		t.Errorf("%d runs stored after refused imports, want 0", n)
	}

	// A good output with a good folded profile: one run with both.
	r := decodeRun(t, ts.importOutput(t, "java.txt", good, map[string][]byte{"java.collapsed": []byte(foldedGather)}, map[string]string{"label": "java", "role": "client"}))
	if r.Workload != "producer" || len(r.Profiles) != 1 || r.Profiles[0].Kind != "cpu" || r.Profiles[0].Role != "client" {
		t.Errorf("output + profile: %+v", r)
	}
	if m, ok := metricOf(r, "record-latency-p99"); !ok || m.Value != 14 {
		t.Errorf("output + profile: metrics %+v", r.Metrics)
	}
	var spec struct{ Files []string }
	json.Unmarshal(r.Spec, &spec)
	if strings.Join(spec.Files, ",") != "java.txt,java.collapsed" {
		t.Errorf("spec files = %v", spec.Files)
	}
	if n := ts.countRuns(t); n != 1 {
		t.Errorf("%d runs stored, want 1", n)
	}
	// The flame graph of the attached profile works.
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/profiles/%d/flamegraph", r.Profiles[0].ID), ""); rec.Code != 200 {
		t.Errorf("flame graph of the attached profile: %d", rec.Code)
	}
}

// TestImportPageOutput: the import page takes pasted output, keeps it with
// the label after a parse error, and redirects to the new run.
func TestImportPageOutput(t *testing.T) {
	ts := newTestServer(t, nil)
	get := ts.do(t, "GET", "/import", "")
	if get.Code != 200 || !strings.Contains(get.Body.String(), `name="output"`) {
		t.Fatalf("import page: %d, want an output field", get.Code)
	}
	token := csrfToken(t, ts)
	post := func(fields map[string]string) *httptest.ResponseRecorder { return ts.postImportForm(t, token, fields) }
	bad := post(map[string]string{"label": "keep-me", "output": "nonsense here\n"})
	if b := bad.Body.String(); bad.Code != 400 || !strings.Contains(b, "keep-me") || !strings.Contains(b, "line 1") || !strings.Contains(b, "nonsense here") {
		t.Errorf("bad pasted output: %d %s", bad.Code, b)
	}
	ok := post(map[string]string{"label": "java", "output": string(readImportFile(t, "consumer_summary.txt"))})
	if ok.Code != http.StatusSeeOther {
		t.Fatalf("import: %d %s", ok.Code, ok.Body)
	}
	page := ts.do(t, "GET", ok.Header().Get("Location"), "")
	if b := page.Body.String(); page.Code != 200 || !strings.Contains(b, "imported from Kafka") || !strings.Contains(b, "records-consumed-rate") {
		t.Errorf("imported run page: %d", page.Code)
	}

	// When it ran, its tags and its series: a bad time is refused on its
	// field with everything typed kept; good ones reach the run.
	output := string(readImportFile(t, "consumer_summary.txt"))
	badTime := post(map[string]string{"label": "java", "output": output, "time": "yesterday", "meta": "commit=abc123\nbranch=trunk", "series": "java-consumer"})
	if b := badTime.Body.String(); badTime.Code != 400 || !strings.Contains(b, `id="f-import-time" name="time" value="yesterday"`) ||
		!strings.Contains(b, `name="time" value="yesterday" placeholder="2022-06-21T10:00:00Z (RFC 3339; empty: now)" aria-invalid="true"`) ||
		!strings.Contains(b, "commit=abc123\nbranch=trunk</textarea>") || !strings.Contains(b, `value="java-consumer"`) {
		t.Errorf("bad time: %d, want the form again with the time marked and every field kept:\n%s", badTime.Code, b)
	}
	withMeta := post(map[string]string{"label": "java", "output": output, "time": "2022-06-21T10:00:00Z", "meta": "commit=abc123\nbranch=trunk", "series": "java-consumer"})
	if withMeta.Code != http.StatusSeeOther {
		t.Fatalf("import with time, meta and series: %d %s", withMeta.Code, withMeta.Body)
	}
	var run struct {
		Time      time.Time         `json:"time"`
		Meta      map[string]string `json:"meta"`
		SeriesKey string            `json:"series_key"`
	}
	if rec := ts.do(t, "GET", "/api"+withMeta.Header().Get("Location"), ""); rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &run) != nil {
		t.Fatalf("the imported run: %d %s", rec.Code, rec.Body)
	}
	if !run.Time.Equal(time.Date(2022, 6, 21, 10, 0, 0, 0, time.UTC)) || run.Meta["commit"] != "abc123" || run.Meta["branch"] != "trunk" || run.SeriesKey != "java-consumer" {
		t.Errorf("stored run: %+v", run)
	}
}

// FuzzImportOutput sends arbitrary text as a Kafka tool output: every
// answer is 201 with one new run or a 400 on the output field that stores
// nothing, never a 500 (NaN metrics, odd bytes and all).
func FuzzImportOutput(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(importDir, "*.txt"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("\nMetric Name   Value\nproducer-metrics:record-send-rate:{client-id=p} : NaN\n"))
	ts := newTestServer(f, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		before := ts.countRuns(t)
		rec := ts.importOutput(t, "fuzz.txt", data, nil, map[string]string{"label": "fuzz"})
		after := ts.countRuns(t)
		switch rec.Code {
		case http.StatusCreated:
			if after != before+1 {
				t.Fatalf("201 but %d → %d runs", before, after)
			}
		case http.StatusBadRequest:
			if after != before || !strings.Contains(rec.Body.String(), `"field":"output"`) {
				t.Fatalf("400 stored a run or named another field: %s", rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}
