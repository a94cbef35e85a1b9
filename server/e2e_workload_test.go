package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestE2EWorkloadSubmitted: the API and the new-run form take `kbench run
// e2e` like the other workloads (its flags from rundoc's option table),
// and name the field of a bad e2e parameter.
func TestE2EWorkloadSubmitted(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	held := ts.holdQueue(t)
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"e2e","params":{"throughput":2000,"num-records":500,"record-size":100,"producer-props":{"linger.ms":50}}}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/runs e2e = %d %s", rec.Code, rec.Body)
	}
	var resp struct {
		Runs []apiRun `json:"runs"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Runs) != 1 {
		t.Fatalf("answer %s: %v", rec.Body, err)
	}
	r := resp.Runs[0]
	var spec struct {
		Params map[string]any `json:"params"`
	}
	json.Unmarshal(r.Spec, &spec)
	if r.Workload != "e2e" || spec.Params["throughput"] != 2000.0 || spec.Params["num-records"] != 500.0 {
		t.Errorf("stored run %+v, spec %v", r, spec)
	}
	<-held.taken
	ts.cancelAll(t, resp.Runs)
	held.release()

	for _, tt := range []struct{ body, field string }{
		{`{"workload":"e2e","params":{"producer-props":{"acks":"0"}}}`, "producer-props"},
		{`{"workload":"e2e","params":{"throughput":100,"record-size":8}}`, "record-size"},
		{`{"workload":"e2e","params":{"strategy":"copy"}}`, "strategy"},
	} {
		rec := ts.do(t, "POST", "/api/runs", tt.body)
		var e apiError
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != 400 || e.fields() != tt.field {
			t.Errorf("POST %s = %d %s, want 400 naming %s", tt.body, rec.Code, rec.Body, tt.field)
		}
	}

	form := ts.do(t, "GET", "/runs/new", "")
	if !strings.Contains(form.Body.String(), `value="e2e"`) {
		t.Error("the new-run form offers no e2e workload")
	}
	rec = ts.formPost(t, "/runs", url.Values{"workload": {"e2e"}, "num-records": {"0"}})
	if body := rec.Body.String(); rec.Code != 400 || !strings.Contains(body, `id="f-num-records-error"`) {
		t.Errorf("form e2e num-records=0: %d, want the error beside num-records", rec.Code)
	}
}
