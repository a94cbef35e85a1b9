package server

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
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

// TestStrictJSON: every JSON endpoint refuses data after the object,
// invalid UTF-8 (naming the field) and a body that is not an object, and
// its messages never name a Go type.
func TestStrictJSON(t *testing.T) {
	ts := newTestServer(t, nil)
	endpoints := map[string]string{ // a valid body of each
		"/api/runs":              `{"workload":"producer","label":"x"}`,
		"/api/reports":           `{"title":"x","runs":[1]}`,
		"/api/presets/writepath": `{"repetitions":1}`,
	}
	goNames := regexp.MustCompile(`server\.|runner\.|json\.|Go (value|struct)|\bu?int(8|16|32|64)?\b|float64|map\[|\[\]|RawMessage`)
	for path, valid := range endpoints {
		tests := []struct {
			name, body, field string
		}{
			{"trailing garbage", valid + ` GARBAGE`, "body"},
			{"two objects", valid + valid, "body"},
			{"trailing comma object", valid + `,{}`, "body"},
			{"array", `[` + valid + `]`, "body"},
			{"string", `"hello"`, "body"},
			{"number", `42`, "body"},
			{"null", `null`, "body"},
			{"empty", ``, "body"},
			{"bad utf-8 in a value", "{\"title\":\"a\xffb\",\"label\":\"a\xffb\",\"unused\":1}", ""},
			{"bad utf-8 in a key", "{\"ti\xfftle\":\"x\"}", ""},
			{"lone surrogate", `{"title":"\ud800x","label":"\ud800x"}`, ""},
			{"empty key", `{"":1}`, `""`},
			{"duplicate key", `{"title":"a","title":"b","label":"a","label":"b","repetitions":1,"repetitions":2}`, ""},
		}
		for _, tt := range tests {
			rec := ts.do(t, "POST", path, tt.body, "Content-Type", "application/json")
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != 400 || resp.Error == "" {
				t.Errorf("%s %s: %d %s, want 400", path, tt.name, rec.Code, rec.Body)
				continue
			}
			if tt.field != "" && resp.Field != tt.field {
				t.Errorf("%s %s: field %q (%s), want %q", path, tt.name, resp.Field, resp.Error, tt.field)
			}
			if goNames.MatchString(resp.Error) {
				t.Errorf("%s %s: message names Go types: %q", path, tt.name, resp.Error)
			}
		}
	}
	// Invalid UTF-8 is refused where it is, by its path.
	for _, tt := range []struct {
		path, body, field string
	}{
		{"/api/runs", "{\"workload\":\"producer\",\"label\":\"trunk\xc3\"}", "label"},
		{"/api/runs", "{\"workload\":\"producer\",\"params\":{\"topic\":\"t\xe2\x82\"}}", "params.topic"},
		{"/api/runs", "{\"workload\":\"producer\",\"params\":{\"producer-props\":[\"client.id=a\xff\"]}}", "params.producer-props[0]"},
		{"/api/runs", `{"workload":"producer","label":"\udc00"}`, "label"},
		{"/api/runs", "{\"workload\":\"producer\",\"target\":{\"bootstrap_server\":\"\xfe:9092\"}}", "target.bootstrap_server"},
		{"/api/reports", "{\"title\":\"ok\",\"notes\":\"n\xff\",\"runs\":[1]}", "notes"},
	} {
		rec := ts.do(t, "POST", tt.path, tt.body, "Content-Type", "application/json")
		var resp struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &resp)
		if rec.Code != 400 || resp.Field != tt.field || !strings.Contains(resp.Error, "UTF-8") {
			t.Errorf("%s %q: %d %s, want 400 naming %s as not UTF-8", tt.path, tt.body, rec.Code, rec.Body, tt.field)
		}
	}
	// Wrong types are named in JSON's words.
	for _, tt := range []struct {
		path, body, field, want string
	}{
		{"/api/runs", `{"workload":"producer","repetitions":"three"}`, "repetitions", "repetitions: must be a whole number"},
		{"/api/runs", `{"workload":"producer","repetitions":1e30}`, "repetitions", "repetitions: must be a whole number"},
		{"/api/runs", `{"workload":"producer","label":5}`, "label", "label: must be a string"},
		{"/api/runs", `{"workload":"producer","params":[1]}`, "params", "params: must be an object"},
		{"/api/runs", `{"workload":"producer","target":"kafka:9092"}`, "target", "target: must be an object"},
		{"/api/reports", `{"title":"x","runs":"1,2"}`, "runs", "runs: must be a list"},
		{"/api/reports", `{"title":"x","runs":[-1]}`, "runs", "runs: must be a whole number ≥ 0"},
		{"/api/presets/writepath", `{"sink":"yes"}`, "sink", "sink: must be true or false"},
	} {
		rec := ts.do(t, "POST", tt.path, tt.body, "Content-Type", "application/json")
		var resp struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &resp)
		if rec.Code != 400 || resp.Field != tt.field || !strings.HasPrefix(resp.Error, tt.want) {
			t.Errorf("%s %s: %d %s, want 400 %q", tt.path, tt.body, rec.Code, rec.Body, tt.want)
		}
	}
	// Valid UTF-8 stays accepted, replacement characters the user wrote included.
	id := ts.createRun(t, `{"workload":"producer","label":"caf\u00e9 \ufffd \u00e9\u00e9 ok","params":{"num-records":1000,"profile":"none"}}`)
	rec := ts.do(t, "GET", "/api/runs/"+strconv.Itoa(int(id)), "")
	if !strings.Contains(rec.Body.String(), `"label":"café � éé ok"`) {
		t.Errorf("label not kept as sent: %s", rec.Body)
	}
	if n, _ := ts.st.CountRuns(context.Background()); n != 1 {
		t.Errorf("%d runs, want only the valid one", n)
	}
}

// apiError is a 400's body: the first bad field in error and field, as
// before, and every one in errors.
type apiError struct {
	Error  string
	Field  string
	Errors []struct{ Field, Error string }
}

func (e apiError) fields() string {
	var out []string
	for _, fe := range e.Errors {
		out = append(out, fe.Field)
	}
	return strings.Join(out, " ")
}

// TestAllBadFieldsReported: one submit with several bad fields reports
// them all: the API in "errors" beside "error" and "field" (which name the
// first), the forms beside each field.
func TestAllBadFieldsReported(t *testing.T) {
	ts := newTestServer(t, nil)
	tests := []struct {
		path, body, fields string
	}{
		{"/api/runs", `{"workload":"producer","label":"` + strings.Repeat("x", 201) + `","repetitions":500,` +
			`"params":{"num-records":"ten","throughput":"NaN","mode":"turbo","payload-file":"/etc/passwd"}}`,
			"label repetitions num-records payload-file throughput mode"},
		{"/api/runs", `{"workload":"writepath","warmup_runs":-1,"params":{"strategy":"sideways","in-flight":0}}`,
			"warmup_runs strategy in-flight"},
		{"/api/runs", `{"workload":"producer","target":{"bootstrap_server":"","security_protocol":"SASL_SSL"},"params":{"record-size":0}}`,
			"bootstrap-server sasl-mechanism record-size"},
		{"/api/runs", `{"workload":"nope","label":"` + strings.Repeat("x", 201) + `"}`, "workload label"},
		{"/api/presets/writepath", `{"repetitions":50,"requests":0,"in-flight":0,"record-size":0}`,
			"record-size requests in-flight repetitions"},
		{"/api/reports", `{"title":"","notes":"` + strings.Repeat("n", 20001) + `","runs":[1],"by":"colour"}`,
			"title notes runs by"},
	}
	for _, tt := range tests {
		rec := ts.do(t, "POST", tt.path, tt.body)
		var resp apiError
		json.Unmarshal(rec.Body.Bytes(), &resp)
		if rec.Code != 400 || resp.fields() != tt.fields {
			t.Errorf("POST %s: %d, errors for %q, want %q\n%s", tt.path, rec.Code, resp.fields(), tt.fields, rec.Body)
			continue
		}
		if resp.Field != resp.Errors[0].Field || resp.Error != resp.Errors[0].Error {
			t.Errorf("POST %s: error/field %q/%q, want the first of errors %+v", tt.path, resp.Error, resp.Field, resp.Errors[0])
		}
		for _, fe := range resp.Errors {
			if !strings.HasPrefix(fe.Error, fe.Field+": ") || len(fe.Error) <= len(fe.Field)+2 {
				t.Errorf("POST %s: entry %+v does not name its field and say what is wrong", tt.path, fe)
			}
		}
	}
	// A single bad field still has errors, a list of one.
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","params":{"num-records":0}}`)
	var one apiError
	json.Unmarshal(rec.Body.Bytes(), &one)
	if one.fields() != "num-records" || one.Field != "num-records" {
		t.Errorf("one bad field: %s", rec.Body)
	}

	// The new-run form shows each message beside its field, and all in
	// the summary.
	form := url.Values{"workload": {"producer"}, "num-records": {"ten"}, "throughput": {"NaN"}, "repetitions": {"99"}}
	rec = ts.formPost(t, "/runs", form)
	body := rec.Body.String()
	if rec.Code != 400 {
		t.Fatalf("form: %d", rec.Code)
	}
	for _, id := range []string{"f-repetitions-error", "f-num-records-error", "f-throughput-error"} {
		if !strings.Contains(body, `id="`+id+`"`) {
			t.Errorf("form lacks %s", id)
		}
	}
	for _, anchor := range []string{`href="#f-repetitions"`, `href="#f-num-records"`, `href="#f-throughput"`} {
		if !strings.Contains(body, anchor) {
			t.Errorf("summary lacks %s", anchor)
		}
	}
	// The write-path lab's form too.
	rec = ts.formPost(t, "/writepath", url.Values{"repetitions": {"50"}, "requests": {"0"}, "in-flight": {"x"}})
	body = rec.Body.String()
	if rec.Code != 400 || strings.Count(body, `class="field-error"`) != 3 {
		t.Errorf("write-path form: %d, %d field errors, want 3:\n%s", rec.Code, strings.Count(body, `class="field-error"`), body)
	}
	if n, _ := ts.st.CountRuns(context.Background()); n != 0 {
		t.Errorf("bad submits created %d runs", n)
	}
}

// TestConsumerCountField: the consumer's count is --messages on the form
// and in errors; the API takes messages and num-records alike.
func TestConsumerCountField(t *testing.T) {
	ts := newTestServer(t, nil)
	rec := ts.formPost(t, "/runs", url.Values{"workload": {"consumer"}, "messages": {"0"}, "num-records": {"5"}})
	if body := rec.Body.String(); rec.Code != 400 || !strings.Contains(body, `id="f-messages-error"`) || strings.Contains(body, `id="f-num-records-error"`) {
		t.Errorf("consumer form messages=0: %d, want the error beside messages", rec.Code)
	}
	for _, key := range []string{"messages", "num-records"} {
		rec := ts.do(t, "POST", "/api/runs", `{"workload":"consumer","params":{"`+key+`":0}}`)
		var resp apiError
		json.Unmarshal(rec.Body.Bytes(), &resp)
		if rec.Code != 400 || resp.Field != "messages" {
			t.Errorf("consumer %s=0: %d %s, want 400 naming messages", key, rec.Code, rec.Body)
		}
	}
	rec = ts.do(t, "POST", "/api/runs", `{"workload":"consumer","params":{"messages":10,"profile":"none"}}`)
	if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"num-records":10`) {
		t.Errorf("consumer messages=10: %d %s, want 201 and the spec's num-records 10", rec.Code, rec.Body)
	}
}
