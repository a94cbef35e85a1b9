package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// TestE2ELatencyToolRun: a server with --tool NAME=PATH of Kafka's
// kafka-e2e-latency.sh (a stand-in that records its arguments and
// properties file) offers it in the new-run form as an e2e tool; a run
// submitted from the form keeps the fields its template fills, gives the
// tool the positional arguments broker_list topic num_messages
// producer_acks message_size_bytes properties_file with the target as the
// broker list, its properties (the SASL password among them) in a 0600
// file only, and stores an e2e run with the tool's figures and its CPU;
// fields the tool does not take and acks it refuses are 400s naming the
// field.
func TestE2ELatencyToolRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	script, err := filepath.Abs(filepath.Join("..", "internal", "toolexec", "testdata", "kafka-e2e-latency.sh"))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := toolcatalog.Parse([]string{"je=" + script})
	if err != nil {
		t.Fatal(err)
	}
	if tool, _ := tools.Get("je"); tool.Kind != toolcatalog.E2ELatency {
		t.Fatalf("kind %s told from the script's name, want %s", tool.Kind, toolcatalog.E2ELatency)
	}
	record := t.TempDir()
	t.Setenv("TOOL_RECORD_DIR", record)
	t.Setenv("BURN_MS", "300")
	ts := newRunningTestServer(t, func(c *Config) { c.Tools, c.Targets = tools, allowTargets(t, "127.0.0.1:9092") })

	page := ts.do(t, "GET", "/runs/new", "").Body.String()
	je := regexp.MustCompile(`<option value="je"( data-queues="local")?>je: Kafka&#39;s kafka-e2e-latency.sh \(e2e\)(, queue local)?</option>`)
	if !je.MatchString(page) {
		t.Errorf("the form lacks the je option:\n%s", regexp.MustCompile(`<option value="je".*`).FindString(page))
	}
	if strings.Contains(page, script) {
		t.Errorf("the form shows the tool's path")
	}

	const password = "e2e-Pw-93c1"
	form := url.Values{"workload": {"e2e"}, "tool": {"je"}, "target": {"bootstrap"}, "bootstrap-server": {"127.0.0.1:9092"},
		"security-protocol": {"SASL_PLAINTEXT"}, "sasl-mechanism": {"PLAIN"}, "sasl-username": {"bench"}, "sasl-password": {password},
		"topic": {"lat-form"}, "num-records": {"2500"}, "record-size": {"64"}, "throughput": {"-1"}, "profile": {"cpu"},
		"producer-props": {"acks=1\nclient.id=lat-bench"}}
	rec := ts.formPost(t, "/runs", form)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form with the e2e tool: %d %s", rec.Code, rec.Body)
	}
	var id uint
	fmt.Sscanf(rec.Header().Get("Location"), "/runs/%d", &id)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusSucceeded || r.Workload != rundoc.E2E {
		t.Fatalf("the tool's run: %s %s %s", r.Workload, r.Status, r.Error)
	}
	argv, err := os.ReadFile(filepath.Join(record, "lat-form.argv"))
	if err != nil {
		t.Fatalf("the tool left no record: %v", err)
	}
	got := strings.Split(strings.TrimSpace(string(argv)), "\n")
	want := []string{"127.0.0.1:9092", "lat-form", "2500", "1", "64"}
	if len(got) != 6 || !slices.Equal(got[:5], want) || filepath.Base(got[5]) != toolcatalog.ConfigFileName {
		t.Errorf("the tool's arguments\n got %q\nwant %q and its properties file", got, want)
	}
	conf, err := os.ReadFile(filepath.Join(record, "lat-form.config"))
	if err != nil {
		t.Fatal(err)
	}
	c := string(conf)
	if !strings.HasPrefix(c, "600\n") || !strings.Contains(c, password) || !strings.Contains(c, "client.id=lat-bench") ||
		!strings.Contains(c, "security.protocol=SASL_PLAINTEXT") || strings.Contains(c, "acks=") {
		t.Errorf("properties file (mode, contents) %q: want 600, the JAAS line and the public properties, not acks", c)
	}
	if _, err := os.Stat(got[5]); !os.IsNotExist(err) {
		t.Errorf("the properties file is still there (%v)", err)
	}
	for name, want := range map[string]float64{"e2e-latency-avg": 1.5614, "e2e-latency-p50": 1, "e2e-latency-p99": 24, "e2e-latency-p999": 26} {
		m, ok := metricOf(r, name)
		if !ok || m.Value != want || m.Unit != "ms" || m.Better != "lower" {
			t.Errorf("%s = %+v (present %v), want %v ms, lower", name, m, ok, want)
		}
	}
	if m, ok := metricOf(r, "process-cpu-seconds"); !ok || m.Value <= 0 {
		t.Errorf("process-cpu-seconds %+v %v: the tool's child burns CPU", m, ok)
	}
	var meas rundoc.Measurement
	if err := json.Unmarshal(r.Measurement, &meas); err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(meas.Notes, "\n")
	for _, want := range []string{"acks=1", "one record in flight", "tool je"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if meas.MeasuredRecords != 2500 || meas.LatencySamples != 2500 {
		t.Errorf("measured records %d, latency samples %d, want the 2500 the tool was given and finished", meas.MeasuredRecords, meas.LatencySamples)
	}
	var spec rundoc.SpecFile
	if err := json.Unmarshal(r.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	if string(spec.Params["tool"]) != `"je"` || string(spec.Params["profile"]) != "[]" || strings.Contains(string(r.Spec), script) ||
		strings.Contains(string(r.Spec), password) {
		t.Errorf("stored spec %s: want tool je, no profiles, no path, no password", r.Spec)
	}
	all := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "").Body.String() + ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), "").Body.String()
	if strings.Contains(all, password) {
		t.Errorf("a page shows the password")
	}

	// Through the API: what the tool does not take, and acks it refuses.
	for _, tc := range []struct {
		params map[string]any
		field  string
	}{
		{map[string]any{"topic": "x", "throughput": 100}, "throughput"},
		{map[string]any{"topic": "x", "mode": "rate"}, "mode"},
		{map[string]any{"topic": "x", "producer-props": map[string]string{"acks": "0"}}, "producer-props"},
	} {
		body, _ := json.Marshal(map[string]any{"tool": "je", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"}, "params": tc.params})
		rec := ts.do(t, "POST", "/api/runs", string(body), "Content-Type", "application/json")
		var out struct{ Field, Error string }
		json.Unmarshal(rec.Body.Bytes(), &out)
		if rec.Code != http.StatusBadRequest || out.Field != tc.field {
			t.Errorf("%v: %d field %q (%s), want 400 on %s", tc.params, rec.Code, out.Field, out.Error, tc.field)
		}
	}
}
