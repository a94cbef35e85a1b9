package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestCompareComparability runs two producers that differ in
// compression through the queue, as real child processes, and checks
// that the comparison API answers "comparability" with exactly the
// documented shape, that the stored environment holds the resolved
// configuration, and that the page, the report and its exports show the
// difference and the runs' short-window warnings.
func TestCompareComparability(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	a := ts.createRun(t, `{"workload":"producer","label":"none","params":{"num-records":2000,"record-size":128,"profile":"none"}}`)
	b := ts.createRun(t, `{"workload":"producer","label":"snappy","params":{"num-records":2000,"record-size":128,"profile":"none","producer-props":{"compression.type":"snappy"}}}`)
	for _, id := range []uint{a, b} {
		if r := ts.waitFinal(t, id); r.Status != rundoc.StatusSucceeded {
			t.Fatalf("run %d: %s %s", id, r.Status, r.Error)
		}
	}
	run, err := ts.st.GetRun(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.Documents.Environment, `{"name":"compression.type","value":"snappy"}`) || !strings.Contains(run.Documents.Environment, `"target":{"kind":"embedded"`) {
		t.Errorf("stored environment lacks the resolved configuration or the target: %s", run.Documents.Environment)
	}

	rec := ts.do(t, "GET", fmt.Sprintf("/api/compare?runs=%d,%d", a, b), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/compare = %d %s", rec.Code, rec.Body)
	}
	var doc struct {
		Comparability []map[string]json.RawMessage `json:"comparability"`
		Warnings      []struct {
			Run  uint   `json:"run"`
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, d := range doc.Comparability {
		if len(d) != 2 || d["setting"] == nil || d["values"] == nil {
			t.Errorf("comparability entry %v: want exactly setting and values", d)
			continue
		}
		var setting string
		var values []*string
		json.Unmarshal(d["setting"], &setting)
		json.Unmarshal(d["values"], &values)
		if len(values) != 2 {
			t.Errorf("%s: %d values, want one per column", setting, len(values))
		}
		if setting == "compression.type" {
			found = values[0] != nil && *values[0] == "none" && values[1] != nil && *values[1] == "snappy"
		}
		if setting == "kbench build" || setting == "target" || strings.HasPrefix(setting, "broker API") {
			t.Errorf("%s listed as a difference between two runs of one binary against the embedded broker", setting)
		}
	}
	if !found {
		t.Errorf("comparability = %+v, want compression.type none vs snappy", doc.Comparability)
	}
	// 2,000 records take well under 5 s here: both runs are warned about.
	short := map[uint]bool{}
	for _, w := range doc.Warnings {
		if w.Kind == "short window" {
			short[w.Run] = true
		}
	}
	if !short[a] || !short[b] {
		t.Errorf("warnings = %+v, want a short-window warning for runs %d and %d", doc.Warnings, a, b)
	}

	page := ts.do(t, "GET", fmt.Sprintf("/compare?runs=%d,%d", a, b), "").Body.String()
	for _, want := range []string{`id="comparability"`, "<th scope=\"row\">compression.type</th><td>none</td><td>snappy</td>", `id="comparison-warnings"`} {
		if !strings.Contains(page, want) {
			t.Errorf("compare page lacks %q", want)
		}
	}
	if rp := ts.do(t, "GET", fmt.Sprintf("/runs/%d", b), "").Body.String(); !strings.Contains(rp, `id="run-warnings"`) || !strings.Contains(rp, "<dt>compression.type</dt><dd>snappy</dd>") {
		t.Error("run page lacks its warning or its configuration")
	}

	rec = ts.do(t, "POST", "/api/reports", fmt.Sprintf(`{"title":"none vs snappy","runs":[%d,%d]}`, a, b))
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/reports = %d %s", rec.Code, rec.Body)
	}
	var rep struct{ URL string }
	json.Unmarshal(rec.Body.Bytes(), &rep)
	for ext, want := range map[string]string{
		"":      `id="comparability"`,
		".md":   "| compression.type | none | snappy |",
		".csv":  "comparability,compression.type,,,",
		".json": `"setting": "compression.type"`,
	} {
		body := ts.do(t, "GET", rep.URL+ext, "").Body.String()
		if !strings.Contains(body, want) {
			t.Errorf("report%s lacks %q", ext, want)
		}
		if !strings.Contains(body, "measured window") {
			t.Errorf("report%s lacks the short-window warning", ext)
		}
	}
}
