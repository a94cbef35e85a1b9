package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/runner"
)

// postTable posts a table file to /api/import with the given fields.
func (ts *testServer) postTable(t *testing.T, name, table string, fields map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile("table", name)
	w.Write([]byte(table))
	mw.Close()
	return ts.do(t, "POST", "/api/import", body.String(), "Content-Type", mw.FormDataContentType())
}

type tableAnswer struct {
	Runs       []apiRun `json:"runs"`
	CompareURL string   `json:"compare_url"`
	Error      string   `json:"error"`
	Field      string   `json:"field"`
	Line       int      `json:"line"`
	Column     int      `json:"column"`
}

func decodeTable(t *testing.T, rec *httptest.ResponseRecorder) tableAnswer {
	t.Helper()
	var a tableAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	return a
}

// TestImportTableKAFKA19296: KAFKA-19296's consumer table (45 lines of
// Java consumer metrics and a CPU line, CLASSIC and CONSUMER columns, in
// Markdown between two lines of text) becomes two consumer runs labelled
// CLASSIC and CONSUMER, each with all 45 metrics in the catalog's units.
func TestImportTableKAFKA19296(t *testing.T) {
	ts := newTestServer(t, nil)
	table, err := os.ReadFile("testdata/kafka19296_consumer.md")
	if err != nil {
		t.Fatal(err)
	}
	rec := ts.postTable(t, "kafka19296_consumer.md", string(table), map[string]string{"workload": "consumer", "meta": "branch=trunk"})
	if rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	a := decodeTable(t, rec)
	if len(a.Runs) != 2 || a.Runs[0].Label != "CLASSIC" || a.Runs[1].Label != "CONSUMER" {
		t.Fatalf("runs %+v, want CLASSIC and CONSUMER", a.Runs)
	}
	if a.CompareURL != fmt.Sprintf("/compare?runs=%d,%d", a.Runs[0].ID, a.Runs[1].ID) {
		t.Errorf("compare_url %q", a.CompareURL)
	}
	known := map[string]rundoc.Metric{}
	for _, m := range runner.ImportMetrics(rundoc.Consumer) {
		known[m.Name] = m
	}
	for i, r := range a.Runs {
		full := ts.getRun(t, r.ID)
		if full.Workload != rundoc.Consumer || full.Source != "imported" || full.Status != "succeeded" || full.Meta["branch"] != "trunk" {
			t.Errorf("run %d: %+v", i, full)
		}
		if len(full.Metrics) != 45 {
			t.Errorf("%s: %d metrics, want all 45", r.Label, len(full.Metrics))
		}
		for _, m := range full.Metrics {
			want, ok := known[m.Name]
			if m.Name == "process-cpu-avg" {
				want, ok = rundoc.Metric{Unit: "%", Better: rundoc.LowerIsBetter}, true
			}
			if !ok {
				t.Errorf("%s: %s is no known metric", r.Label, m.Name)
				continue
			}
			if m.Unit != want.Unit || m.Better != want.Better {
				t.Errorf("%s: %s unit %q better %q, want %q %q", r.Label, m.Name, m.Unit, m.Better, want.Unit, want.Better)
			}
		}
		if i != 0 {
			continue
		}
		for name, want := range map[string][2]any{
			"io-wait-ratio":         {0.902, "ratio"},
			"io-wait-time-ns-avg":   {457884.009, "ns"},
			"time-between-poll-avg": {6.21, "ms"},
			"select-rate":           {1972.553, "/s"},
			"bytes-consumed-rate":   {158204310.114, "bytes/s"},
			"poll-idle-ratio-avg":   {0.947, "ratio"},
			"process-cpu-avg":       {77.34, "%"},
		} {
			m, ok := metricOf(full, name)
			if !ok || math.Abs(m.Value-want[0].(float64)) > 1e-9 || m.Unit != want[1] {
				t.Errorf("CLASSIC %s = %+v, want %v %s", name, m, want[0], want[1])
			}
		}
		var meas struct{ Notes []string }
		json.Unmarshal(full.Measurement, &meas)
		notes := strings.Join(meas.Notes, "\n")
		for _, w := range []string{`column 2 ("CLASSIC") of a Markdown table of 45 metrics × 2 runs`, `"Average CPU load" is stored as process-cpu-avg`,
			"2 lines of text around the table were skipped"} {
			if !strings.Contains(notes, w) {
				t.Errorf("notes lack %q:\n%s", w, notes)
			}
		}
	}
}

// TestImportTableErrors: refusals are 400s on the field at fault, a bad
// cell naming its line and column, and nothing is stored.
func TestImportTableErrors(t *testing.T) {
	ts := newTestServer(t, nil)
	good := "| Metric | a | b |\n|---|---|---|\n| io-wait-ratio | 0.5 | 0.4 |\n"
	tests := []struct {
		name, table string
		fields      map[string]string
		field       string
		line, col   int
		msg         string
	}{
		{"no workload", good, map[string]string{}, "workload", 0, 0, "must be producer, consumer"},
		{"label", good, map[string]string{"workload": "consumer", "label": "x"}, "label", 0, 0, "each column's header labels its run"},
		{"series", good, map[string]string{"workload": "consumer", "series": "s"}, "series", 0, 0, "not with a table"},
		{"bad cell", "| Metric | a | b |\n|---|---|---|\n| io-wait-ratio | 0.5 | fast |\n", nil, "table", 3, 25, `io-wait-ratio, b: "fast" is not a number`},
		{"unit that does not fit", "metric,a,b\nfetch-latency-avg,12 ms,3 MiB\n", nil, "table", 2, 25, "the unit MiB does not fit this metric, which is in ms"},
		{"repeated header", "metric\ta\ta\nselect-rate\t1\t2\n", nil, "table", 1, 10, `column 3's header "a" repeats column 2's`},
		{"short line", "| Metric | a | b |\n| select-rate | 1 |\n", nil, "table", 2, 0, "2 cells, the header has 3"},
		{"decimal comma", "metric\ta\nio-ratio\t0,5\n", nil, "table", 2, 10, "a decimal comma? write 0.5"},
		{"two tables", good + "\ntext\n\n" + good, nil, "table", 7, 0, "a second table"},
		{"line break in a header", "metric,\"a\nb\",c\nselect-rate,1,2\n", nil, "table", 1, 8, "holds a control character"},
		{"empty column", "| Metric | a | b |\n| select-rate | 1 | NaN |\n", nil, "table", 1, 16, `column "b" has no value`},
	}
	before := ts.countRuns(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := tt.fields
			if fields == nil {
				fields = map[string]string{"workload": "consumer"}
			}
			rec := ts.postTable(t, "t.md", tt.table, fields)
			a := decodeTable(t, rec)
			if rec.Code != 400 || a.Field != tt.field || a.Line != tt.line || a.Column != tt.col || !strings.Contains(a.Error, tt.msg) {
				t.Errorf("%d %+v, want 400 on %s at %d:%d saying %q", rec.Code, a, tt.field, tt.line, tt.col, tt.msg)
			}
		})
	}
	if n := ts.countRuns(t); n != before {
		t.Errorf("%d runs stored by refused tables", n-before)
	}
}

// TestImportTablePage: the import page's table form stores the columns
// and opens their comparison; a bad table is shown again with the error.
func TestImportTablePage(t *testing.T) {
	ts := newTestServer(t, nil)
	get := ts.do(t, "GET", "/import", "")
	if get.Code != 200 || !strings.Contains(get.Body.String(), `name="table"`) {
		t.Fatalf("import page: %d, want a table field", get.Code)
	}
	token := csrfToken(t, ts)
	post := func(fields map[string]string) *httptest.ResponseRecorder { return ts.postImportForm(t, token, fields) }
	bad := post(map[string]string{"workload": "consumer", "table": "| Metric | x | y |\n| io-ratio | 0.1 | slow |\n"})
	if b := bad.Body.String(); bad.Code != 400 || !strings.Contains(b, "line 2, column 20") || !strings.Contains(b, "| io-ratio | 0.1 | slow |\n</textarea>") ||
		!strings.Contains(b, `<option value="consumer" selected>`) {
		t.Errorf("bad table: %d %s", bad.Code, b)
	}
	ok := post(map[string]string{"workload": "consumer", "table": "| Metric | x | y |\n| io-ratio | 0.1 | 0.2 |\n"})
	if ok.Code != http.StatusSeeOther || !strings.HasPrefix(ok.Header().Get("Location"), "/compare?runs=") {
		t.Fatalf("import: %d %s %s", ok.Code, ok.Header().Get("Location"), ok.Body)
	}
	page := ts.do(t, "GET", ok.Header().Get("Location"), "")
	if b := page.Body.String(); page.Code != 200 || !strings.Contains(b, "io-ratio") {
		t.Errorf("comparison of the table's runs: %d", page.Code)
	}
}

// TestImportCSVJavaMetrics: a CSV whose columns are the Java consumer's
// metrics keeps every one, under its own name with the catalog's unit
// (on main, io-wait-ratio and the others were refused as misspelt).
func TestImportCSVJavaMetrics(t *testing.T) {
	ts := newTestServer(t, nil)
	var names []string
	for _, m := range kafkafmt.JavaMetricsOf(rundoc.Consumer) {
		names = append(names, m.Name)
	}
	var b strings.Builder
	b.WriteString("time,commit," + strings.Join(names, ",") + "\n")
	for i := 0; i < 2; i++ {
		fmt.Fprintf(&b, "2025-08-0%dT10:00:00Z,c%d", i+1, i)
		for j := range names {
			fmt.Fprintf(&b, ",%d.5", j+i)
		}
		b.WriteString("\n")
	}
	rec := ts.postCSV(t, b.String(), map[string]string{"series": "java-consumer", "workload": "consumer"})
	a := decodeCSV(t, rec)
	if rec.Code != http.StatusCreated || len(a.Runs) != 2 {
		t.Fatalf("%d %+v", rec.Code, a)
	}
	full := ts.getRun(t, a.Runs[0].ID)
	if len(full.Metrics) != len(names) {
		t.Errorf("%d metrics kept of %d", len(full.Metrics), len(names))
	}
	for _, name := range []string{"io-wait-ratio", "select-rate", "poll-idle-ratio-avg", "time-between-poll-max"} {
		j, _ := kafkafmt.LookupJavaMetric(name)
		if m, ok := metricOf(full, name); !ok || m.Unit != j.Unit {
			t.Errorf("%s: %+v, want unit %q", name, m, j.Unit)
		}
	}
}
