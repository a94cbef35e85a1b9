package server

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/store"
)

// postCSVForm submits the import page's CSV form as a browser does: the
// CSRF cookie and field, the fields, and the CSV as a file (file != "")
// or pasted in the "csv" field.
func (ts *testServer) postCSVForm(t *testing.T, fields map[string]string, file string) *httptest.ResponseRecorder {
	t.Helper()
	csrf := ts.csrfFor(t, "127.0.0.1:5000")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField(csrfField, csrf.Value)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	// A browser sends the file input even when empty.
	w, _ := mw.CreateFormFile("file", map[bool]string{true: "history.csv", false: ""}[file != ""])
	w.Write([]byte(file))
	mw.Close()
	req := httptest.NewRequest("POST", "/import/csv", &body)
	req.RemoteAddr = "127.0.0.1:5000"
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(csrf)
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	return rec
}

// TestImportPageCSV: the import page back-fills a series from a CSV, as
// a file or pasted, and redirects to its history; a bad cell shows the
// page again with the message naming its line and column (as the API's
// 400 does), the pasted text and the bad line, and stores nothing.
func TestImportPageCSV(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Token = "" })
	page := ts.do(t, "GET", "/import", "").Body.String()
	for _, want := range []string{`action="/import/csv"`, `name="series"`, `<option value="producer"`, `name="file"`, `name="csv"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the import page lacks %s", want)
		}
	}

	good := "time,commit,record-send-rate\n2024-01-01T10:00:00Z,a,115000\n2024-01-02T10:00:00Z,b,105000\n"
	rec := ts.postCSVForm(t, map[string]string{"series": "java-producer", "workload": "producer"}, good)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/history?series=java-producer" {
		t.Fatalf("CSV file: %d Location %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	rec = ts.postCSVForm(t, map[string]string{"series": "pasted", "workload": "producer", "label": "from a sheet", "csv": good}, "")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/history?series=pasted" {
		t.Fatalf("pasted CSV: %d Location %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	runs, n, err := ts.st.ListRuns(t.Context(), store.RunFilter{Label: "from a sheet"})
	if err != nil || n != 2 || runs[0].SeriesKey != "pasted" {
		t.Fatalf("stored %d runs of the pasted CSV (%v)", n, err)
	}
	if rec := ts.do(t, "GET", "/history?series=pasted", ""); rec.Code != http.StatusOK {
		t.Errorf("the history the form leads to: %d", rec.Code)
	}
	before := ts.countRuns(t)

	for _, tt := range []struct {
		name   string
		fields map[string]string
		file   string
		code   int
		want   []string
	}{
		{"bad number, pasted", map[string]string{"series": "s", "workload": "producer", "csv": "time,commit,record-send-rate\n2024-01-01,a,1\n2024-01-02,b,fast\n"}, "", 400,
			[]string{"file: line 3, column 14: record-send-rate: &#34;fast&#34; is not a finite number", `<pre class="csv-bad-line" id="csv-bad-line">3: 2024-01-02,b,fast</pre>`,
				`aria-invalid="true" aria-describedby="csv-error">time,commit,record-send-rate`}},
		{"zone name, file", map[string]string{"series": "s", "workload": "producer", "label": "kept"}, "time,record-send-rate\n2024-01-01 10:00:00 EST,1\n", 400,
			[]string{"file: line 2, column 1: time", `zone &#34;EST&#34;`, `id="f-csv-file" name="file" accept=".csv,text/csv,text/plain" aria-invalid="true"`, `name="label" value="kept"`}},
		{"unknown metric", map[string]string{"series": "s", "workload": "consumer"}, "time,record-send-rate\n2024-01-01,1\n", 400,
			[]string{"file: line 1, column 6", `<option value="consumer" selected>`}},
		{"no series", map[string]string{"workload": "producer", "csv": good}, "", 400, []string{"series: is empty", `id="f-csv-series" name="series" value="" maxlength="300" required placeholder="e.g. java-producer" aria-invalid="true"`}},
		{"bad workload", map[string]string{"series": "s", "workload": "imported", "csv": good}, "", 400, []string{"workload: must be one of producer, consumer"}},
		{"file and paste", map[string]string{"series": "s", "workload": "producer", "csv": good}, good, 400, []string{"file: give a CSV file or paste one, not both"}},
		{"neither", map[string]string{"series": "s", "workload": "producer"}, "", 400, []string{"file: choose a CSV file or paste one"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.postCSVForm(t, tt.fields, tt.file)
			b := rec.Body.String()
			if rec.Code != tt.code || !strings.Contains(b, `id="csv-error" role="alert"`) {
				t.Fatalf("%d, want %d and the page with the error:\n%s", rec.Code, tt.code, b)
			}
			for _, w := range tt.want {
				if !strings.Contains(b, w) {
					t.Errorf("the page lacks %s", w)
				}
			}
		})
	}
	if n := ts.countRuns(t); n != before {
		t.Errorf("refused CSVs stored %d runs", n-before)
	}
}
