package acceptance

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// e2eToolRun is what the tool tests read of a run.
type e2eToolRun struct {
	client.Run
	// Measurement is the parts of the run's measurement document the
	// tests read.
	Measurement struct {
		ExitCode *int     `json:"exit_code"`
		Command  []string `json:"command"`
	} `json:"measurement"`
}

func (r e2eToolRun) metric(name string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// TestToolRunsThroughServe: kbench serve --tool NAME=PATH runs Kafka's
// producer perf test (a stand-in script that records its arguments and
// properties file) for runs queued through the API: the template is
// filled from the run's fields with the target as the bootstrap server,
// the run succeeds with Kafka's figures and the tool's CPU, a failing
// tool ends the run failed with its exit status, stderr and partial
// output, a cancel stops it, bad requests are 400s naming the field, and
// SASL passwords (a named cluster's and a run's own) reach the tool only
// through its 0600 properties file, which is gone afterwards, and never
// argv, the database or a page.
func TestToolRunsThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench and serves")
	}
	const clusterPassword, runPassword = "Clu-71c2e9-pass", "Run-5d04ab-pass"
	script, err := filepath.Abs(filepath.Join("testdata", "tool", "kafka-producer-perf-test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	record := t.TempDir()
	t.Setenv("TOOL_RECORD_DIR", record)
	dir := t.TempDir()
	clusterFile := filepath.Join(dir, "lab.properties")
	if err := os.WriteFile(clusterFile, []byte("bootstrap.servers=kafka-lab.internal:9093\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" password="`+clusterPassword+`";`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", data,
		"--tool", "javaprod="+script, "--allow-target", "127.0.0.1:9092", "--cluster", "lab="+clusterFile)
	s := &e2eServer{URL: m[1], http: e2eHTTPClient()}

	post := func(body map[string]any, want int) map[string]any {
		t.Helper()
		var out map[string]any
		s.api(t, http.MethodPost, "/api/runs", body, want, &out)
		return out
	}
	wait := func(id uint, final string) e2eToolRun {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var r e2eToolRun
			s.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &r)
			if string(r.Status) == final {
				return r
			}
			if r.Status != "queued" && r.Status != "running" || time.Now().After(deadline) {
				t.Fatalf("run %d: %s (%s), want %s", id, r.Status, r.Error, final)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	readRecord := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(record, name))
		if err != nil {
			t.Fatalf("the tool left no record: %v", err)
		}
		return string(b)
	}

	// A run on a bootstrap target: the template, the figures, the CPU.
	id := s.createRun(t, map[string]any{"tool": "javaprod", "label": "java trunk", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"},
		"params": map[string]any{"topic": "bench-a", "num-records": 1000, "record-size": 100, "throughput": 500, "producer-props": map[string]string{"acks": "all"}}})
	r := wait(id, "succeeded")
	argv := strings.Split(strings.TrimSpace(readRecord("bench-a.argv")), "\n")
	want := []string{"--topic", "bench-a", "--num-records", "1000", "--record-size", "100", "--throughput", "500",
		"--producer-props", "bootstrap.servers=127.0.0.1:9092", "acks=all"}
	if strings.Join(argv, " ") != strings.Join(want, " ") {
		t.Errorf("the tool's arguments\n got %q\nwant %q", argv, want)
	}
	if v, ok := r.metric("record-send-rate"); !ok || v != 19534.302235 {
		t.Errorf("record-send-rate %v %v, want Kafka's 19534.302235", v, ok)
	}
	if v, ok := r.metric("record-latency-p99"); !ok || v != 14 {
		t.Errorf("record-latency-p99 %v %v, want Kafka's 14", v, ok)
	}
	for _, name := range []string{"process-cpu-avg", "process-cpu-p99", "process-cpu-max", "process-cpu-seconds"} {
		if v, ok := r.metric(name); !ok || v <= 0 {
			t.Errorf("%s %v %v, want the tool's CPU (its child burns some)", name, v, ok)
		}
	}
	if r.Measurement.ExitCode == nil || *r.Measurement.ExitCode != 0 || !strings.Contains(r.Output, "99.9th") {
		t.Errorf("exit code %v, output %q", r.Measurement.ExitCode, r.Output)
	}
	if strings.Contains(string(r.Spec), script) || !strings.Contains(string(r.Spec), `"tool":"javaprod"`) {
		t.Errorf("stored spec %s: want the tool's name and never its path", r.Spec)
	}

	// A failing tool: failed, with its exit status, stderr and output so far.
	id = s.createRun(t, map[string]any{"tool": "javaprod", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"},
		"params": map[string]any{"topic": "fail-b"}})
	r = wait(id, "failed")
	if !strings.Contains(r.Error, "exited with status 3") || !strings.Contains(r.Error, "TimeoutException") {
		t.Errorf("error %q: want the exit status and the stderr tail", r.Error)
	}
	if r.Measurement.ExitCode == nil || *r.Measurement.ExitCode != 3 || !strings.Contains(r.Output, "19996.0 records/sec") {
		t.Errorf("exit code %v, partial output %q", r.Measurement.ExitCode, r.Output)
	}

	// Cancel reaches the tool.
	id = s.createRun(t, map[string]any{"tool": "javaprod", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"},
		"params": map[string]any{"topic": "slow-c"}})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(record, "slow-c.argv")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow tool never started")
		}
	}
	s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/cancel", id), nil, http.StatusAccepted, nil)
	wait(id, "canceled")

	// Secrets: a named cluster's, and a run's own through the target fields.
	id = s.createRun(t, map[string]any{"tool": "javaprod", "target": map[string]any{"cluster": "lab"}, "params": map[string]any{"topic": "sasl-d"}})
	wait(id, "succeeded")
	id2 := s.createRun(t, map[string]any{"tool": "javaprod", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092",
		"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "alice", "sasl_password": runPassword},
		"params": map[string]any{"topic": "sasl-e"}})
	wait(id2, "succeeded")
	for topic, secret := range map[string]string{"sasl-d": clusterPassword, "sasl-e": runPassword} {
		if a := readRecord(topic + ".argv"); strings.Contains(a, secret) || !strings.Contains(a, "--producer.config") {
			t.Errorf("%s: argv %q: want the properties file, never the password", topic, a)
		}
		conf := readRecord(topic + ".config")
		if !strings.HasPrefix(conf, "600\n") || !strings.Contains(conf, secret) || !strings.Contains(conf, "sasl.jaas.config=") {
			t.Errorf("%s: properties file (mode, contents) %q: want 600 and the JAAS line", topic, conf)
		}
	}
	if a := readRecord("sasl-d.argv"); !strings.Contains(a, "bootstrap.servers=kafka-lab.internal:9093") {
		t.Errorf("argv on the named cluster %q: want its bootstrap servers", a)
	}
	if c := readRecord("sasl-e.config"); !strings.Contains(c, "ScramLoginModule") || !strings.Contains(c, `username\="alice"`) && !strings.Contains(c, `username="alice"`) {
		t.Errorf("the run's own SCRAM login became %q", c)
	}
	for _, run := range []uint{id, id2} {
		if _, err := os.Stat(filepath.Join(data, "runs", fmt.Sprint(run), "tool-client.properties")); !os.IsNotExist(err) {
			t.Errorf("run %d: the properties file is still there (%v)", run, err)
		}
	}
	var pages bytes.Buffer
	for _, path := range []string{fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d", id2), fmt.Sprintf("/api/runs/%d", id2), "/runs", "/runs/new"} {
		resp, err := s.http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(&pages, resp.Body)
		resp.Body.Close()
	}
	if !strings.Contains(pages.String(), "javaprod") {
		t.Errorf("no page names the tool")
	}
	files := [][]byte{pages.Bytes()}
	filepath.Walk(data, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			b, _ := os.ReadFile(path)
			files = append(files, b)
		}
		return nil
	})
	for _, secret := range []string{clusterPassword, runPassword} {
		for _, b := range files {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("a password is in the data directory (database, run files) or a page")
			}
		}
	}
	if strings.Contains(p.stderr.String(), runPassword) || strings.Contains(p.stderr.String(), clusterPassword) {
		t.Errorf("the server's log shows a password")
	}

	// Bad requests: 400s naming the field.
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"tool": "nosuch", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"}}, "tool"},
		{map[string]any{"tool": "../bin/sh", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"}}, "tool"},
		{map[string]any{"tool": "javaprod", "target": map[string]any{"bootstrap_server": "10.1.2.3:9092"}}, "bootstrap-server"},
		{map[string]any{"tool": "javaprod"}, "target"},
		{map[string]any{"tool": "javaprod", "workload": "consumer", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"}}, "workload"},
		{map[string]any{"tool": "javaprod", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"}, "params": map[string]any{"mode": "writer"}}, "mode"},
		{map[string]any{"tool": "javaprod", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"}, "params": map[string]any{"payload-file": "/etc/passwd"}}, "payload-file"},
		{map[string]any{"workload": "producer", "params": map[string]any{"tool": "javaprod"}}, "tool"},
	} {
		out := post(tc.body, http.StatusBadRequest)
		if out["field"] != tc.field {
			t.Errorf("%v: field %v (%v), want %s", tc.body, out["field"], out["error"], tc.field)
		}
	}
}

// TestToolRunOnWorker: a kbench worker with --tool registers the tool's
// name and kind (never its path) in the shared PostgreSQL store; a server
// that executes nothing (--local-worker=false) queues a run of that tool
// for the worker's queue, naming the tool only, and refuses a tool the
// queue's workers do not offer; the worker runs its own program for it,
// with the target as the bootstrap server, and stores Kafka's figures
// and the tool's CPU.
func TestToolRunOnWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench, serves and starts a worker")
	}
	database := pgtest.URL(t)
	script, err := filepath.Abs(filepath.Join("testdata", "tool", "kafka-producer-perf-test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	record := t.TempDir()
	t.Setenv("TOOL_RECORD_DIR", record)
	_, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(),
		"--database", database, "--local-worker=false", "--allow-target", "127.0.0.1:9092")
	srv := &e2eServer{URL: m[1], http: e2eHTTPClient()}
	startE2EProcess(t, "kbench worker lab-a", e2eWorkerLine, "worker", "--database", database, "--queue", "lab-a", "--data", t.TempDir(),
		"--tool", "javaprod="+script, "--allow-target", "127.0.0.1:9092")

	var bad map[string]any
	srv.api(t, http.MethodPost, "/api/runs", map[string]any{"tool": "other", "queue": "lab-a", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"}},
		http.StatusBadRequest, &bad)
	if bad["field"] != "tool" || !strings.Contains(fmt.Sprint(bad["error"]), "javaprod") {
		t.Errorf("a tool lab-a's worker does not offer: %v, want a 400 on tool listing javaprod", bad)
	}
	id := srv.createRun(t, map[string]any{"tool": "javaprod", "queue": "lab-a", "target": map[string]any{"bootstrap_server": "127.0.0.1:9092"},
		"params": map[string]any{"topic": "worker-f", "num-records": 2000}})
	deadline := time.Now().Add(2 * time.Minute)
	var r e2eToolRun
	for {
		srv.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &r)
		if r.Status != "queued" && r.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s after 2 minutes", id, r.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r.Status != "succeeded" {
		t.Fatalf("the worker's tool run: %s %s", r.Status, r.Error)
	}
	if v, ok := r.metric("record-send-rate"); !ok || v != 19534.302235 {
		t.Errorf("record-send-rate %v %v", v, ok)
	}
	if _, ok := r.metric("process-cpu-avg"); !ok {
		t.Errorf("no CPU figures")
	}
	b, err := os.ReadFile(filepath.Join(record, "worker-f.argv"))
	if err != nil || !strings.Contains(string(b), "bootstrap.servers=127.0.0.1:9092\n") || !strings.Contains(string(b), "--num-records\n2000\n") {
		t.Errorf("the worker's tool got %q (%v)", b, err)
	}
}
