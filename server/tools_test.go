package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// standInTool writes an executable stand-in for Kafka's tool script
// (named as Kafka names it, so its kind is told from the name) that
// prints the producer's summary line, and returns the set --tool
// name=PATH makes of it.
func standInTool(t *testing.T, name, script string) *toolcatalog.Set {
	t.Helper()
	path := filepath.Join(t.TempDir(), script)
	text := "#!/bin/sh\necho \"500000 records sent, 19534.302235 records/sec (9.54 MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th.\"\n"
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	set, err := toolcatalog.Parse([]string{name + "=" + path})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestToolRunForm: the new-run form offers the server's tools beside
// kbench's own client; a run submitted with one keeps only the fields
// its template fills (the form sends every field of the workload), is
// stored naming the tool, never its path, and runs it; the embedded
// broker is no target for a tool, said beside the target field.
func TestToolRunForm(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	tools := standInTool(t, "jp", "kafka-producer-perf-test.sh")
	tool, _ := tools.Get("jp")
	ts := newRunningTestServer(t, func(c *Config) { c.Tools, c.Targets = tools, allowTargets(t, "127.0.0.1:9092") })
	page := ts.do(t, "GET", "/runs/new", "").Body.String()
	for _, want := range []string{`name="tool"`, `<option value="" selected>kbench&#39;s client (kafka-go)</option>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	// On PostgreSQL the server's own tools are offered on its queue,
	// local, and the option says so (data-queues, ", queue local").
	jp := regexp.MustCompile(`<option value="jp"( data-queues="local")?>jp: Kafka&#39;s kafka-producer-perf-test.sh \(producer\)(, queue local)?</option>`)
	if !jp.MatchString(page) {
		t.Errorf("the form lacks the jp option:\n%s", regexp.MustCompile(`<option value="jp".*`).FindString(page))
	}
	if strings.Contains(page, tool.Path) {
		t.Errorf("the form shows the tool's path")
	}

	form := url.Values{"workload": {"producer"}, "tool": {"jp"}, "target": {"bootstrap"}, "bootstrap-server": {"127.0.0.1:9092"},
		"topic": {"form-topic"}, "num-records": {"300"}, "mode": {"writer"}, "key-size": {"16"}, "profile": {"cpu"}}
	rec := ts.formPost(t, "/runs", form)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form with a tool: %d %s", rec.Code, rec.Body)
	}
	var id uint
	fmt.Sscanf(rec.Header().Get("Location"), "/runs/%d", &id)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusSucceeded {
		t.Fatalf("the tool's run: %s %s", r.Status, r.Error)
	}
	var spec rundoc.SpecFile
	if err := json.Unmarshal(r.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	if string(spec.Params["tool"]) != `"jp"` || string(spec.Params["num-records"]) != "300" || spec.Params["key-size"] != nil ||
		string(spec.Params["mode"]) == `"writer"` || string(spec.Params["profile"]) != "[]" || strings.Contains(string(r.Spec), tool.Path) {
		t.Errorf("stored spec %s: want tool jp, the template's fields only, no profiles, no path", r.Spec)
	}
	if r.RecordsPerSec == nil || *r.RecordsPerSec != 19534.302235 {
		t.Errorf("records/s %v, want Kafka's figure", r.RecordsPerSec)
	}

	form.Set("target", "embedded")
	rec = ts.formPost(t, "/runs", form)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `id="f-target-error"`) {
		t.Errorf("a tool on the embedded broker: %d, want 400 beside the target", rec.Code)
	}
	form.Set("target", "bootstrap")
	form.Set("tool", "nope")
	rec = ts.formPost(t, "/runs", form)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `id="f-tool-error"`) ||
		!strings.Contains(rec.Body.String(), `<option value="nope" selected>nope (not one of the choices)</option>`) {
		t.Errorf("an unknown tool: %d, want 400 beside the tool, the choice kept", rec.Code)
	}
}

// TestToolOnWorkerQueues: on a shared PostgreSQL store a run for another
// queue names a tool its live workers registered (names and kinds; the
// paths stay on them), whose kind settles the workload; a tool they do
// not offer is a 400 listing theirs; a queue with no live worker takes
// the name with the workload given. The form offers each tool with its
// queues, never a stopped worker's.
func TestToolOnWorkerQueues(t *testing.T) {
	tools := standInTool(t, "jp", "kafka-producer-perf-test.sh")
	ts := newTestServerOn(t, pgtest.URL(t), func(c *Config) { c.Tools, c.Targets = tools, allowTargets(t, "127.0.0.1:9092") })
	ctx := context.Background()
	if err := ts.st.RegisterWorker(ctx, &store.Worker{Host: "bench-a", Queue: "lab-a", Tools: "jc:consumer-perf-test,jp:producer-perf-test"}); err != nil {
		t.Fatal(err)
	}
	stopped := &store.Worker{Host: "bench-b", Queue: "lab-b", Tools: "old:producer-perf-test"}
	if err := ts.st.RegisterWorker(ctx, stopped); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.StopWorker(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		queue, tool, workload string
		code                  int
		field, says           string
	}{
		{"lab-a", "jc", "", http.StatusCreated, "", ""},
		{"lab-a", "jc", "producer", http.StatusBadRequest, "workload", "kafka-consumer-perf-test.sh"},
		{"lab-a", "nope", "", http.StatusBadRequest, "tool", "the workers of queue lab-a: no tool \"nope\": the tools offered here are jc, jp"},
		{"lab-b", "anything", "producer", http.StatusCreated, "", ""},
		{"lab-b", "anything", "", http.StatusBadRequest, "workload", "no worker of queue lab-b is live"},
		{"local", "jc", "", http.StatusBadRequest, "tool", "the tools offered here are jp"},
		{"local", "jp", "", http.StatusCreated, "", ""},
	} {
		body := fmt.Sprintf(`{"tool":%q,"workload":%q,"queue":%q,"target":{"bootstrap_server":"127.0.0.1:9092"},"params":{"topic":"q"}}`, tc.tool, tc.workload, tc.queue)
		rec := ts.do(t, "POST", "/api/runs", body)
		var got struct{ Field, Error string }
		json.Unmarshal(rec.Body.Bytes(), &got)
		if rec.Code != tc.code || got.Field != tc.field || !strings.Contains(got.Error, tc.says) {
			t.Errorf("queue %s, tool %s, workload %q: %d %s; want %d on %q saying %q", tc.queue, tc.tool, tc.workload, rec.Code, rec.Body, tc.code, tc.field, tc.says)
		}
		if tc.queue == "lab-a" && rec.Code == http.StatusCreated {
			var created struct{ ID uint }
			json.Unmarshal(rec.Body.Bytes(), &created)
			if r, err := ts.st.GetRun(ctx, created.ID); err != nil || r.Workload != rundoc.Consumer || !strings.Contains(r.Spec, `"tool":"jc"`) {
				t.Errorf("run on lab-a: workload %s spec %s (%v), want a consumer run of tool jc", r.Workload, r.Spec, err)
			}
		}
	}
	page := ts.do(t, "GET", "/runs/new", "").Body.String()
	for _, want := range []string{
		`<option value="jc" data-queues="lab-a">jc: Kafka&#39;s kafka-consumer-perf-test.sh (consumer), queue lab-a</option>`,
		`<option value="jp" data-queues="lab-a local">jp: Kafka&#39;s kafka-producer-perf-test.sh (producer), queues lab-a, local</option>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	if strings.Contains(page, `value="old"`) {
		t.Error("the form offers a stopped worker's tool")
	}
}

// TestToolRunJavaProperties: a tool run hands its properties to Java's
// client, which knows many kbench's client does not: they reach the
// tool as given, where kbench's own client refuses them naming the field.
// (partitioner.class, a class name, needs --allow-tool-class-props:
// TestToolRunRefusesInjectedOptions has it refused without.)
func TestToolRunJavaProperties(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	path := filepath.Join(dir, "kafka-producer-perf-test.sh")
	text := "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + argsFile + "'\n" +
		"echo \"500000 records sent, 19534.302235 records/sec (9.54 MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th.\"\n"
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	tools, err := toolcatalog.Parse([]string{"jp=" + path})
	if err != nil {
		t.Fatal(err)
	}
	ts := newRunningTestServer(t, func(c *Config) {
		c.Tools, c.Targets, c.AllowToolClassProps = tools, allowTargets(t, "127.0.0.1:9092"), true
	})
	const props = `["client.rack=rack-a","partitioner.class=org.example.Sticky","linger.ms=7"]`
	rec := ts.do(t, "POST", "/api/runs", `{"tool":"jp","target":{"bootstrap_server":"127.0.0.1:9092"},"params":{"topic":"t","producer-props":`+props+`}}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("a tool run with Java's properties: %d %s", rec.Code, rec.Body)
	}
	var created struct{ ID uint }
	json.Unmarshal(rec.Body.Bytes(), &created)
	if r := ts.waitFinal(t, created.ID); r.Status != rundoc.StatusSucceeded {
		t.Fatalf("the tool's run: %s %s", r.Status, r.Error)
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client.rack=rack-a", "partitioner.class=org.example.Sticky", "linger.ms=7"} {
		if !strings.Contains(string(args), want+"\n") {
			t.Errorf("the tool was not given %s: %q", want, args)
		}
	}
	// kbench's own client: refused, naming the property and the field.
	rec = ts.do(t, "POST", "/api/runs", `{"workload":"producer","target":{"bootstrap_server":"127.0.0.1:9092"},"params":{"topic":"t","producer-props":`+props+`}}`)
	var got struct{ Field, Error string }
	json.Unmarshal(rec.Body.Bytes(), &got)
	if rec.Code != http.StatusBadRequest || got.Field != "producer-props" || !strings.Contains(got.Error, `unsupported property "client.rack"`) {
		t.Errorf("kbench's client with Java's properties: %d %s", rec.Code, rec.Body)
	}
	// A bad value of a property both clients know is still a 400.
	rec = ts.do(t, "POST", "/api/runs", `{"tool":"jp","target":{"bootstrap_server":"127.0.0.1:9092"},"params":{"topic":"t","producer-props":["linger.ms=soon"]}}`)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "linger.ms") {
		t.Errorf("a tool run with linger.ms=soon: %d %s", rec.Code, rec.Body)
	}
}
