package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestImportEndingFields: status, error and exit_code are checked (a 400
// naming the field), stored (status and error; the exit code in the
// measurement, in GET /api/runs/:id and on the run page), and a failed
// run's partial output is kept even when it does not parse.
func TestImportEndingFields(t *testing.T) {
	ts := newTestServer(t, nil)
	good := readImportFile(t, "producer_intervals.txt")
	bad := []map[string]string{
		{"status": "crashed"},
		{"exit_code": "three"},
		{"exit_code": "-1"},
		{"exit_code": "256"},
		{"status": "succeeded", "exit_code": "3"},
		{"status": "succeeded", "error": "boom"},
		{"error": strings.Repeat("x", maxImportError+1)},
	}
	fieldOf := []string{"status", "exit_code", "exit_code", "exit_code", "exit_code", "error", "error"}
	for i, f := range bad {
		f["label"] = "java"
		rec := ts.importOutput(t, "out.txt", good, nil, f)
		var body struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusBadRequest || body.Field != fieldOf[i] || !strings.HasPrefix(body.Error, fieldOf[i]+": ") {
			t.Errorf("%v: %d %s, want a 400 on %s", f, rec.Code, rec.Body, fieldOf[i])
		}
	}
	if n := ts.countRuns(t); n != 0 {
		t.Fatalf("%d runs stored after refusals", n)
	}

	// Half the output, then the tool died: kept, parsed figures or not.
	half := []byte(strings.Join(strings.SplitAfter(string(good), "\n")[:9], ""))
	r := decodeRun(t, ts.importOutput(t, "out.txt", half, nil, map[string]string{"label": "java", "status": "failed", "exit_code": "3",
		"error": "org.apache.kafka.common.errors.TimeoutException: Expiring 12 record(s)"}))
	if r.Status != rundoc.StatusFailed || r.Complete || r.ExitCode == nil || *r.ExitCode != 3 ||
		!strings.Contains(r.Error, "TimeoutException") || r.Output != string(half) {
		t.Fatalf("failed import: status %s complete %v exit %v error %q output %q", r.Status, r.Complete, r.ExitCode, r.Error, r.Output)
	}
	got := getRun(t, ts, r.ID)
	if got.ExitCode == nil || *got.ExitCode != 3 || !strings.Contains(string(got.Measurement), `"exit_code":3`) || got.Output != string(half) {
		t.Errorf("GET /api/runs/%d: exit %v measurement %s", r.ID, got.ExitCode, got.Measurement)
	}
	page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", r.ID), "")
	if page.Code != 200 || !strings.Contains(page.Body.String(), "exit status 3") || !strings.Contains(page.Body.String(), "TimeoutException") {
		t.Errorf("run page: %d, exit status or error missing", page.Code)
	}
	// The same partial output without status failed is refused, as before.
	rec := ts.importOutput(t, "out.txt", half, nil, map[string]string{"label": "java"})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"output"`) {
		t.Errorf("partial output of a succeeded run: %d %s", rec.Code, rec.Body)
	}

	// An exit code alone means failed; an error is made up when none given.
	r = decodeRun(t, ts.importOutput(t, "out.txt", good, nil, map[string]string{"label": "java", "exit_code": "137"}))
	if r.Status != rundoc.StatusFailed || r.Error != "the tool exited with status 137" || r.Workload != rundoc.Producer {
		t.Errorf("exit_code 137: status %s error %q workload %s", r.Status, r.Error, r.Workload)
	}
	if m, ok := metricOf(r, "records-sent"); !ok || m.Value != 500000 {
		t.Errorf("a failed run's parsed figures: %+v", r.Metrics)
	}
	// And a succeeded one says exit 0.
	r = decodeRun(t, ts.importOutput(t, "out.txt", good, nil, map[string]string{"label": "java", "status": "succeeded", "exit_code": "0"}))
	if r.Status != rundoc.StatusSucceeded || !r.Complete || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Errorf("succeeded: %s %v %v", r.Status, r.Complete, r.ExitCode)
	}
}

func getRun(t *testing.T, ts *testServer, id uint) apiRun {
	t.Helper()
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), "")
	if rec.Code != 200 {
		t.Fatalf("GET run %d: %d %s", id, rec.Code, rec.Body)
	}
	var r apiRun
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// postToolResult posts a result document (as kbench exec does), its
// profiles and fields.
func postToolResult(t *testing.T, ts *testServer, res *rundoc.Result, profiles map[string][]byte, fields map[string]string) (*bytes.Buffer, int) {
	t.Helper()
	doc, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile("result", "result.json")
	w.Write(doc)
	for n, data := range profiles {
		w, _ := mw.CreateFormFile("profile", n)
		w.Write(data)
	}
	mw.Close()
	rec := ts.do(t, "POST", "/api/import", body.String(), "Content-Type", mw.FormDataContentType())
	return rec.Body, rec.Code
}

// TestImportToolResult: a result of kbench exec (environment "imported")
// is stored as an import of the tool: its workload, figures, CPU, ending,
// output and profiles, in the series of the tool's imports, with no
// secret of its command line.
func TestImportToolResult(t *testing.T) {
	ts := newTestServer(t, nil)
	exit := 3
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	res := &rundoc.Result{Schema: rundoc.ResultSchema, Workload: rundoc.Producer, Complete: false,
		Error: "exited with status 3\nstderr:\nTimeoutException", StartedAt: start, FinishedAt: start.Add(2 * time.Second),
		Output:      "48120 records sent, 9616.3 records/sec (4.70 MB/sec), 3.7 ms avg latency, 598.0 ms max latency.\n",
		Metrics:     []rundoc.Metric{{Name: "process-cpu-avg", Value: 97.5, Unit: "%", Better: rundoc.LowerIsBetter}},
		Environment: rundoc.Environment{Source: rundoc.SourceImported, Tool: "kafka-producer-perf-test"},
		Measurement: rundoc.Measurement{Source: rundoc.SourceImported, Tool: "kafka-producer-perf-test", ExitCode: &exit,
			Command: []string{"kafka-producer-perf-test.sh", "--producer-props", "sasl.password=hunter2-secret"}},
		Profiles: []rundoc.ProfileFile{{Role: rundoc.RoleClient, Kind: rundoc.KindCPU, File: "client-cpu.pb.gz"}},
		Meta:     map[string]string{"branch": "trunk"}}
	profs := map[string][]byte{"client-cpu.pb.gz": []byte(foldedGather)}
	for _, f := range endingFields {
		body, code := postToolResult(t, ts, res, profs, map[string]string{"label": "java", f: "1"})
		if code != http.StatusBadRequest || !strings.Contains(body.String(), `"field":"`+f+`"`) {
			t.Errorf("%s with a result: %d %s", f, code, body)
		}
	}
	body, code := postToolResult(t, ts, res, profs, map[string]string{"label": "java"})
	if code != http.StatusCreated {
		t.Fatalf("%d %s", code, body)
	}
	var r apiRun
	json.Unmarshal(body.Bytes(), &r)
	if r.Workload != rundoc.Producer || r.Source != rundoc.SourceImported || r.Status != rundoc.StatusFailed || r.Complete ||
		r.ExitCode == nil || *r.ExitCode != 3 || r.Output != res.Output || !strings.Contains(r.Error, "TimeoutException") {
		t.Fatalf("stored %+v", r)
	}
	if len(r.Profiles) != 1 || r.Profiles[0].Kind != rundoc.KindCPU || r.Profiles[0].Role != rundoc.RoleClient {
		t.Errorf("profiles %+v", r.Profiles)
	}
	if m, ok := metricOf(r, "process-cpu-avg"); !ok || m.Value != 97.5 {
		t.Errorf("metrics %+v", r.Metrics)
	}
	if want := rundoc.ImportSeriesKey(rundoc.Producer, "java", "trunk"); r.SeriesKey != want || !r.Time.Equal(start) {
		t.Errorf("series %q time %v, want %q %v", r.SeriesKey, r.Time, want, start)
	}
	if strings.Contains(string(r.Measurement), "hunter2") || !strings.Contains(string(r.Measurement), "sasl.password="+rundoc.Redacted) {
		t.Errorf("measurement %s", r.Measurement)
	}
	// A tool result of a workload no tool prints is refused.
	res.Workload = rundoc.Writepath
	if body, code := postToolResult(t, ts, res, profs, map[string]string{"label": "java"}); code != http.StatusBadRequest || !strings.Contains(body.String(), `"field":"result"`) {
		t.Errorf("writepath tool result: %d %s", code, body)
	}
}
