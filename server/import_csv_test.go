package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runimport"
	"github.com/kbench/kbench/internal/store"
)

// postCSV posts a CSV to /api/import/csv with the given fields.
func (ts *testServer) postCSV(t *testing.T, csv string, fields map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile("file", "history.csv")
	w.Write([]byte(csv))
	mw.Close()
	return ts.do(t, "POST", "/api/import/csv", body.String(), "Content-Type", mw.FormDataContentType())
}

type csvAnswer struct {
	Series string   `json:"series"`
	Runs   []apiRun `json:"runs"`
	Error  string   `json:"error"`
	Field  string   `json:"field"`
	Line   int      `json:"line"`
	Column int      `json:"column"`
}

func decodeCSV(t *testing.T, rec *httptest.ResponseRecorder) csvAnswer {
	t.Helper()
	var a csvAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	return a
}

// kafka14020CSV is the KAFKA-14020 story as a CSV (testdata of package
// runimport, whose parser reads it): 20 runs at about 115k records/s, then
// 40 at about 105k, a day apart, each with its commit.
func kafka14020CSV(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "runimport", "testdata", "kafka14020.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestImportCSV: a CSV as Otava and spreadsheets hold it becomes one run
// per row in the named series, with kbench's units and directions, tags
// from the other columns and the row's time; the KAFKA-14020 back-fill is
// 60 runs of one series in time order.
func TestImportCSV(t *testing.T) {
	ts := newTestServer(t, nil)
	// Otava's own sample format: "2024.01.01 3:00:00 +0100", a branch
	// column, a numeric build kept as a tag with tag:.
	csv := "\ufefftime,commit,branch,Record-Send-Rate,record-latency-p99,tag:build,note\n" +
		"2024.01.01 3:00:00 +0100,aaa0,main,154023,10.43,17,first\n" +
		"2024.01.02 3:00:00 +0100,aaa1,main,138455,,18,\n" +
		"1704250800,aaa2,main,143112,10.29,19,unix time\n"
	a := decodeCSV(t, ts.postCSV(t, csv, map[string]string{"series": "java-producer", "workload": "producer"}))
	if a.Series != "java-producer" || len(a.Runs) != 3 {
		t.Fatalf("answer %+v", a)
	}
	want := []time.Time{time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC), time.Date(2024, 1, 2, 2, 0, 0, 0, time.UTC), time.Unix(1704250800, 0).UTC()}
	for i, r := range a.Runs {
		got := ts.getRun(t, r.ID)
		if got.Source != rundoc.SourceImported || got.Workload != rundoc.Producer || got.Status != rundoc.StatusSucceeded ||
			got.SeriesKey != "java-producer" || !got.Time.Equal(want[i]) || got.Label != "java-producer" {
			t.Errorf("run %d: %s %s %s series %q time %v label %q", i, got.Source, got.Workload, got.Status, got.SeriesKey, got.Time, got.Label)
		}
		if got.Meta["commit"] != fmt.Sprintf("aaa%d", i) || got.Meta["branch"] != "main" || got.Meta["build"] != fmt.Sprint(17+i) {
			t.Errorf("run %d meta %v", i, got.Meta)
		}
		m, ok := metricOf(got, "record-send-rate")
		if !ok || m.Unit != "records/s" || m.Better != rundoc.HigherIsBetter {
			t.Errorf("run %d: record-send-rate %+v", i, m)
		}
		p99, ok := metricOf(got, "record-latency-p99")
		if ok != (i != 1) || ok && (p99.Unit != "ms" || p99.Better != rundoc.LowerIsBetter) {
			t.Errorf("run %d: record-latency-p99 %+v (present %v)", i, p99, ok)
		}
		if got.RecordsPerSec == nil || *got.RecordsPerSec != m.Value {
			t.Errorf("run %d: key figure %v", i, got.RecordsPerSec)
		}
	}
	if note := ts.getRun(t, a.Runs[0].ID).Meta["note"]; note != "first" {
		t.Errorf("tag note = %q", note)
	}

	k := decodeCSV(t, ts.postCSV(t, kafka14020CSV(t), map[string]string{"series": "kafka-14020", "workload": "producer", "label": "java trunk"}))
	if len(k.Runs) != 60 {
		t.Fatalf("KAFKA-14020: %d runs", len(k.Runs))
	}
	if _, n, err := ts.st.ListRuns(t.Context(), store.RunFilter{Label: "java trunk"}); err != nil || n != 60 {
		t.Fatalf("stored %d runs (%v)", n, err)
	}
	for i := 1; i < len(k.Runs); i++ {
		if !k.Runs[i-1].Time.Before(k.Runs[i].Time) || k.Runs[i].SeriesKey != "kafka-14020" {
			t.Fatalf("run %d: time %v after %v, series %q", i, k.Runs[i].Time, k.Runs[i-1].Time, k.Runs[i].SeriesKey)
		}
	}
	for i, r := range k.Runs {
		got := ts.getRun(t, r.ID)
		rate, _ := metricOf(got, "record-send-rate")
		if got.Meta["commit"] != fmt.Sprintf("c%03d", i) || got.Label != "java trunk" || (i < 20) != (rate.Value > 110000) {
			t.Errorf("row %d: commit %q label %q rate %v", i, got.Meta["commit"], got.Label, rate.Value)
		}
	}
}

// TestImportCSVErrors: a CSV that cannot be stored whole is refused with
// its line and column (or 413 past the limit), and nothing is stored.
func TestImportCSVErrors(t *testing.T) {
	ts := newTestServer(t, nil)
	ok := map[string]string{"series": "s", "workload": "producer"}
	huge := "time,record-send-rate\n" + strings.Repeat("2024-01-01T00:00:00Z,1\n", runimport.MaxCSVBytes/22+1)
	for _, tc := range []struct {
		name         string
		csv          string
		fields       map[string]string
		code         int
		field        string
		line, column int
		message      string
	}{
		{"bad number", "time,commit,record-send-rate\n2024-01-01,a,1\n2024-01-02,b,fast\n", ok, 400, "file", 3, 14, "not a finite number"},
		{"bad time", "time,commit,record-send-rate\n2024-01-01,a,1\nyesterday,b,2\n", ok, 400, "file", 3, 1, "time \"yesterday\""},
		{"missing time", "time,commit,record-send-rate\n,a,1\n", ok, 400, "file", 2, 1, "empty"},
		{"field count", "time,commit,record-send-rate\n2024-01-01,a,1\n2024-01-02,b\n", ok, 400, "file", 3, 0, "number of fields"},
		{"unknown metric", "time,commit,record-send-rat\n2024-01-01,a,1\n", ok, 400, "file", 1, 13, "record-send-rat"},
		{"metric of another workload", "time,records-consumed-rate,record-send-rate\n2024-01-01,5,1\n", ok, 400, "file", 1, 6, "record-send-rate, mb-per-sec"},
		{"no time column", "when,record-send-rate\n2024-01-01,1\n", ok, 400, "file", 1, 0, "no \"time\" column"},
		{"no metric column", "time,commit\n2024-01-01,a\n", ok, 400, "file", 1, 0, "no metric column"},
		{"row without metrics", "time,commit,record-send-rate\n2024-01-01,a,\n", ok, 400, "file", 2, 0, "no metric value"},
		{"two branches", "time,branch,record-send-rate\n2024-01-01,trunk,1\n2024-01-02,3.5,2\n", ok, 400, "file", 3, 12, "one branch"},
		{"bad tag column", "time,Build Id,record-send-rate\n2024-01-01,x,1\n", ok, 400, "file", 1, 6, "tag name"},
		{"duplicate column", "time,record-send-rate,record-send-rate\n2024-01-01,1,2\n", ok, 400, "file", 1, 23, "repeats"},
		{"bare quote", "time,record-send-rate\n2024-01-01,\"1\n", ok, 400, "file", 2, 0, ""},
		{"NaN", "time,record-send-rate\n2024-01-01,NaN\n", ok, 400, "file", 2, 12, "finite"},
		{"zone abbreviation", "time,commit,record-send-rate\n2024-01-01,a,1\n2024-01-01 10:00:00 EST,b,2\n", ok, 400, "file", 3, 1, `zone "EST"`},
		{"bogus zone", "commit,time,record-send-rate\na,2024-01-01 10:00:00 XYZ,1\n", ok, 400, "file", 2, 3, `zone "XYZ"`},
		{"unix seconds far ahead", "time,record-send-rate\n999999999999,1\n", ok, 400, "file", 2, 1, "from 1970 to 2100"},
		{"year 9999 west of UTC", "time,record-send-rate\n9999-12-31T23:59:59-14:00,1\n", ok, 400, "file", 2, 1, "from 1970 to 2100"},
		{"after 2100", "time,record-send-rate\n2101-01-01T00:00:00Z,1\n", ok, 400, "file", 2, 1, "from 1970 to 2100"},
		{"before 1970", "time,record-send-rate\n1970-01-01T00:30:00+01:00,1\n", ok, 400, "file", 2, 1, "from 1970 to 2100"},
		{"commit and tag:commit", "time,commit,tag:commit,record-send-rate\n2024-01-01,a,b,1\n", ok, 400, "file", 1, 13, `as column 2 ("commit")`},
		{"tag:commit and commit", "time,Tag:Commit,record-send-rate,commit\n2024-01-01,a,1,b\n", ok, 400, "file", 1, 34, `tag "commit"`},
		{"empty", "", ok, 400, "file", 0, 0, "empty"},
		{"header only", "time,record-send-rate\n", ok, 400, "file", 1, 0, "no rows"},
		{"huge", huge, ok, 413, "file", 0, 0, "at most"},
		{"no series", "time,record-send-rate\n2024-01-01,1\n", map[string]string{"workload": "producer"}, 400, "series", 0, 0, "empty"},
		{"bad workload", "time,record-send-rate\n2024-01-01,1\n", map[string]string{"series": "s", "workload": "imported"}, 400, "workload", 0, 0, "producer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.postCSV(t, tc.csv, tc.fields)
			a := decodeCSV(t, rec)
			if rec.Code != tc.code || a.Field != tc.field || a.Line != tc.line || (tc.column > 0 && a.Column != tc.column) || !strings.Contains(a.Error, tc.message) {
				t.Errorf("got %d field %q line %d column %d: %s\nwant %d on %s, line %d column %d, mentioning %q",
					rec.Code, a.Field, a.Line, a.Column, a.Error, tc.code, tc.field, tc.line, tc.column, tc.message)
			}
		})
	}
	if n := ts.countRuns(t); n != 0 {
		t.Errorf("refused imports stored %d runs", n)
	}
}
