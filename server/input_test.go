package server

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestNonFiniteParamsRefused: NaN and ±Inf in a float parameter are a 400
// naming the field, through the API and the form; before, they answered
// 201, stored "params": null and ran the default workload.
func TestNonFiniteParamsRefused(t *testing.T) {
	ts := newTestServer(t, nil)
	tests := []struct {
		body, field string
	}{
		{`{"workload":"producer","params":{"throughput":"NaN"}}`, "throughput"},
		{`{"workload":"producer","params":{"throughput":"+Inf"}}`, "throughput"},
		{`{"workload":"producer","params":{"throughput":"Infinity","num-records":1000}}`, "throughput"},
		{`{"workload":"producer","params":{"throughput":"-inf"}}`, "throughput"},
		{`{"workload":"producer","params":{"throughput":1e999}}`, "throughput"},
		{`{"workload":"writepath","params":{"duration":"NaN"}}`, "duration"},
		{`{"workload":"writepath","params":{"duration":"Inf"}}`, "duration"},
		{`{"workload":"writepath","params":{"request-rate":"Infinity"}}`, "request-rate"},
		{`{"workload":"writepath","params":{"throughput":"+Inf"}}`, "request-rate"},
	}
	for _, tt := range tests {
		rec := ts.do(t, "POST", "/api/runs", tt.body)
		var resp struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &resp)
		if rec.Code != 400 || resp.Field != tt.field {
			t.Errorf("POST %s = %d %s, want 400 naming %s", tt.body, rec.Code, rec.Body, tt.field)
		}
	}
	rec := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "throughput": {"NaN"}, "num-records": {"1000"}})
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `id="f-throughput-error"`) {
		t.Errorf("form throughput=NaN = %d, want 400 with the error beside throughput:\n%s", rec.Code, rec.Body)
	}
	if n, _ := ts.st.CountRuns(context.Background()); n != 0 {
		t.Errorf("non-finite params created %d runs", n)
	}
}
