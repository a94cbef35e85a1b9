package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// ombWorkload is an OMB workload whose payload comes from a file, as
// the API and the form take it (the file's contents, never its path).
const ombWorkload = `name: api test
topics: 2
partitionsPerTopic: 4
messageSize: 64
payloadFile: payload/payload-64b.data
subscriptionsPerTopic: 1
consumerPerSubscription: 2
producersPerTopic: 2
producerRate: 1000
consumerBacklogSizeGB: 0
testDurationMinutes: 5
`

// ombDriver logs in with SASL: its password is a secret like any other.
const ombDriver = `name: Kafka
driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver
replicationFactor: 3
topicConfig: |
  min.insync.replicas=2
commonConfig: |
  bootstrap.servers=broker.test:9092
  security.protocol=SASL_PLAINTEXT
  sasl.mechanism=PLAIN
  sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="omb" password="omb-secret-pw";
producerConfig: |
  acks=all
  enable.idempotence=true
consumerConfig: |
  auto.offset.reset=earliest
`

// ombBody is a POST /api/runs body with the files and params beside
// them.
func ombBody(t *testing.T, workload, driver string, params map[string]any) string {
	t.Helper()
	p := map[string]any{"omb-workload": workload, "omb-driver": driver}
	for k, v := range params {
		p[k] = v
	}
	body, err := json.Marshal(map[string]any{"label": "omb", "params": p})
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestOMBWorkloadAPI: POST /api/runs takes an OMB workload and driver
// (omb-workload, omb-driver) as the e2e run that runs them; the stored
// spec holds the translation and its notes, never the driver's password,
// which reaches the run as its other secrets do; the driver's bootstrap
// server is the target, under the target policy.
func TestOMBWorkloadAPI(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "broker.test:9092") })
	payload := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("p", 64)))
	rec := ts.do(t, "POST", "/api/runs", ombBody(t, ombWorkload, ombDriver, map[string]any{"duration": 30, "warmup": "2.5", "payload": payload, "topic": "omb-api"}))
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/runs = %d %s", rec.Code, rec.Body)
	}
	var created struct {
		ID uint `json:"id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.ID == 0 {
		t.Fatalf("answer %s: %v", rec.Body, err)
	}
	got := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", created.ID), "")
	var r struct {
		Workload string          `json:"workload"`
		Spec     json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(got.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(r.Spec, &spec); err != nil {
		t.Fatalf("spec %s: %v", r.Spec, err)
	}
	if r.Workload != "e2e" {
		t.Errorf("workload %q, want e2e", r.Workload)
	}
	for k, want := range map[string]string{"topics": "2", "partitions": "4", "threads": "2", "subscriptions": "1", "consumers-per-subscription": "2",
		"throughput": "1000", "duration": "30", "warmup": "2.5", "replication-factor": "3", "bootstrap-server": `"broker.test:9092"`, "topic": `"omb-api"`,
		"payload": `"` + payload + `"`} {
		if string(spec.Params[k]) != want {
			t.Errorf("stored %s = %s, want %s", k, spec.Params[k], want)
		}
	}
	stored := string(r.Spec)
	if strings.Contains(stored, "omb-secret-pw") || strings.Contains(got.Body.String(), "omb-secret-pw") {
		t.Errorf("the stored run holds the driver's password: %s", got.Body)
	}
	if !strings.Contains(stored, "enable.idempotence=true (the producers): kafka-go has no idempotent producer") || !strings.Contains(stored, "OpenMessaging Benchmark") {
		t.Errorf("the stored notes do not say how the files were read: %s", spec.Params["notes"])
	}
	ts.fake.mu.Lock()
	secret := ts.fake.secrets[created.ID]["sasl.jaas.config"]
	ts.fake.mu.Unlock()
	if !strings.Contains(secret, "omb-secret-pw") {
		t.Errorf("the run was not given the driver's login: secrets %q", secret)
	}

	for _, tt := range []struct {
		name, body, field string
	}{
		{"a workload field", ombBody(t, strings.Replace(ombWorkload, "topics: 2", "topics: 0", 1), ombDriver, map[string]any{"payload": payload}), "omb-workload.topics"},
		{"an unknown field", ombBody(t, ombWorkload+"extra: 1\n", ombDriver, map[string]any{"payload": payload}), "omb-workload.extra"},
		{"a driver field", ombBody(t, ombWorkload, strings.Replace(ombDriver, "replicationFactor: 3", "replicationFactor: 0", 1), map[string]any{"payload": payload}), "omb-driver.replicationFactor"},
		{"no payload", ombBody(t, ombWorkload, ombDriver, nil), "omb-workload.payloadFile"},
		{"a payload of another size", ombBody(t, ombWorkload, ombDriver, map[string]any{"payload": base64.StdEncoding.EncodeToString([]byte("short"))}), "omb-workload.payloadFile"},
		{"a target the policy refuses", ombBody(t, ombWorkload, strings.Replace(ombDriver, "broker.test:9092", "elsewhere.test:9092", 1), map[string]any{"payload": payload}), "omb-driver.commonConfig"},
		{"a param the files define", ombBody(t, ombWorkload, ombDriver, map[string]any{"payload": payload, "partitions": 8}), "partitions"},
		{"a duration over 7 days", ombBody(t, ombWorkload, ombDriver, map[string]any{"payload": payload, "duration": 1e9}), "duration"},
		{"the driver alone", `{"params":{"omb-driver":"x"}}`, "omb-workload"},
		{"another workload", `{"workload":"producer","params":{"omb-workload":"a","omb-driver":"b"}}`, "workload"},
		{"not YAML", ombBody(t, "topics: [1\n", ombDriver, nil), "omb-workload"},
	} {
		rec := ts.do(t, "POST", "/api/runs", tt.body)
		var e apiError
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != http.StatusBadRequest || !strings.Contains(" "+e.fields()+" ", " "+tt.field+" ") {
			t.Errorf("%s: POST = %d %s, want 400 naming %s", tt.name, rec.Code, rec.Body, tt.field)
		}
	}
}

// TestOMBWorkloadForm: the new-run form takes the files pasted in its
// OpenMessaging Benchmark section for an e2e run, and shows a file's
// bad fields beside its box, each named.
func TestOMBWorkloadForm(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "broker.test:9092") })
	form := ts.do(t, "GET", "/runs/new", "")
	if !strings.Contains(form.Body.String(), `name="omb-workload"`) || !strings.Contains(form.Body.String(), `name="omb-driver"`) {
		t.Fatal("the new-run form has no OMB fields")
	}
	payload := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("f", 64)))
	rec := ts.formPost(t, "/runs", url.Values{"workload": {"e2e"}, "omb-workload": {ombWorkload}, "omb-driver": {ombDriver},
		"payload": {payload}, "duration": {"20"}, "profile": {"none"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form POST = %d\n%s", rec.Code, rec.Body)
	}
	rec = ts.formPost(t, "/runs", url.Values{"workload": {"e2e"}, "omb-workload": {strings.Replace(ombWorkload, "topics: 2", "topics: none", 1)},
		"omb-driver": {ombDriver}, "payload": {payload}})
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, `id="f-omb-workload-error"`) || !strings.Contains(body, "topics: line 2: must be a whole number") {
		t.Errorf("form POST with a bad workload = %d, want the error beside the workload's box:\n%s", rec.Code, body)
	}
	if strings.Contains(body, "omb-secret-pw") || !strings.Contains(body, "password=&#34;[redacted]&#34;") {
		t.Errorf("the form shows the driver's password again:\n%s", body)
	}
}
