package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
)

// clientFilePaths are paths a request may name in a TLS property: a
// device that never ends, a FIFO nobody writes to (an open blocks), a
// directory, a file that exists and one that does not. The server must
// answer them all alike, opening none.
func clientFilePaths(t *testing.T) []string {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	secret := filepath.Join(dir, "shadow")
	if err := os.WriteFile(secret, []byte("root:$6$x:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"/dev/zero", fifo, dir, secret, filepath.Join(dir, "missing.pem")}
}

// within runs f and fails the test if it has not returned after a
// minute: a handler that opens a FIFO blocks for ever, and must fail
// the test rather than hang it. No timing is asserted.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s is blocked: the server opened the file", what)
	}
}

// TestClientFilesNeverOpenedByTheServer: a TLS file named in a request
// is a file on the machine that runs the client. On a server without
// --token every route that validates a spec refuses it unless
// --allow-client-files, with the same 400 whatever the path (nothing
// tells whether it exists, is a directory or is PEM) and at once, even
// for /dev/zero or a FIFO; allowed (or with a token), the path's text
// alone is checked and the request is accepted, the file unopened.
func TestClientFilesNeverOpenedByTheServer(t *testing.T) {
	paths := clientFilePaths(t)
	ts := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	props := func(path string) string {
		return fmt.Sprintf(`{"ssl.truststore.location":%q,"ssl.truststore.type":"PEM"}`, path)
	}
	const target = `{"bootstrap_server":"127.0.0.1:9093","security_protocol":"SSL"}`
	routes := []struct {
		name, url string
		body      func(path string) string
		field     string
	}{
		{"run", "/api/runs", func(p string) string {
			return `{"workload":"producer","target":` + target + `,"params":{"producer-props":` + props(p) + `}}`
		}, "producer-props"},
		{"run, the protocol in the properties", "/api/runs", func(p string) string {
			return `{"workload":"producer","target":{"bootstrap_server":"127.0.0.1:9093"},"params":{"producer-props":` +
				strings.Replace(props(p), "{", `{"security.protocol":"SSL",`, 1) + `}}`
		}, "producer-props"},
		{"repetitions of a consumer", "/api/runs", func(p string) string {
			return `{"workload":"consumer","repetitions":3,"target":` + target + `,"params":{"consumer-props":` + props(p) + `}}`
		}, "consumer-props"},
		{"A/B", "/api/runs", func(p string) string {
			return `{"workload":"producer","configs":[{"label":"a","target":` + target + `,"params":{"producer-props":` + props(p) + `}},` +
				`{"label":"b","target":` + target + `,"params":{"producer-props":{"acks":"1"}}}]}`
		}, "configs[0].params.producer-props"},
		{"sweep", "/api/presets/sweep", func(p string) string {
			return `{"configs":[{"label":"a","target":` + target + `,"params":{"producer-props":` + props(p) + `}}]}`
		}, "configs[0].params.producer-props"},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			var first string
			for _, p := range paths {
				var rec *httptest.ResponseRecorder
				within(t, rt.name+" naming "+p, func() { rec = ts.do(t, "POST", rt.url, rt.body(p)) })
				var resp struct{ Error, Field string }
				json.Unmarshal(rec.Body.Bytes(), &resp)
				if rec.Code != http.StatusBadRequest || resp.Field != rt.field || !strings.Contains(resp.Error, "--allow-client-files") {
					t.Fatalf("%s: %d %s, want a 400 naming %s and --allow-client-files", p, rec.Code, rec.Body, rt.field)
				}
				if strings.Contains(rec.Body.String(), p) {
					t.Errorf("the answer repeats the path %s: %s", p, rec.Body)
				}
				if first == "" {
					first = rec.Body.String()
				} else if rec.Body.String() != first {
					t.Errorf("the answer differs by path:\n%s\n%s", first, rec.Body)
				}
			}
		})
	}
	// The form: the same refusal beside the field.
	for _, p := range paths {
		form := url.Values{"workload": {"producer"}, "target": {"bootstrap"}, "bootstrap-server": {"127.0.0.1:9093"},
			"security-protocol": {"SSL"}, "producer-props": {"ssl.truststore.type=PEM\nssl.truststore.location=" + p}}
		var rec *httptest.ResponseRecorder
		within(t, "the form naming "+p, func() { rec = ts.formPost(t, "/runs", form) })
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "--allow-client-files") {
			t.Errorf("form naming %s: %d", p, rec.Code)
		}
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 0 {
		t.Errorf("refused requests created %d runs", n)
	}

	// Allowed: syntax only, every path accepted unopened.
	for _, mod := range []func(*Config){
		func(c *Config) { c.AllowClientFiles = true },
		func(c *Config) { c.Token = "s3cret-token" },
	} {
		allowed := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*"); mod(c) })
		for _, p := range paths {
			req := launch.Request{Workload: "producer", Target: &launch.Target{BootstrapServer: "127.0.0.1:9093", SecurityProtocol: "SSL"},
				Params: map[string]json.RawMessage{"producer-props": json.RawMessage(props(p))}}
			var err error
			within(t, "prepare naming "+p, func() { _, err = allowed.launcher.Prepare(&req) })
			if err != nil {
				t.Errorf("token %v, --allow-client-files %v: %s refused: %v", allowed.cfg.Token != "", allowed.cfg.AllowClientFiles, p, err)
			}
		}
		req := launch.Request{Workload: "producer", Target: &launch.Target{BootstrapServer: "127.0.0.1:9093", SecurityProtocol: "SSL"},
			Params: map[string]json.RawMessage{"producer-props": json.RawMessage(props("certs/ca.pem"))}}
		if _, err := allowed.launcher.Prepare(&req); err == nil || !strings.Contains(err.Error(), "absolute path") {
			t.Errorf("a relative path: %v, want it refused as not absolute", err)
		}
	}
}

// TestToolRunRefusesInjectedOptions: the attack of issue 23 (a tool run
// whose property names are the tool's options, bringing the attacker's
// brokers and a config file of the server's) is a 400 naming
// producer-props, as are bootstrap.servers and configuration files as
// properties, and a topic that is not Kafka's, on every run; class-name
// and config-provider properties are refused on a tool's run unless
// --allow-tool-class-props.
func TestToolRunRefusesInjectedOptions(t *testing.T) {
	tools := standInTool(t, "prod", "kafka-producer-perf-test.sh")
	ts := newTestServer(t, func(c *Config) { c.Tools, c.Targets = tools, allowTargets(t, "127.0.0.1:9092") })
	const target = `"target":{"bootstrap_server":"127.0.0.1:9092"}`
	tests := []struct {
		name, body, field, says string
	}{
		{"the attack", `{"tool":"prod",` + target + `,"params":{"producer-props":{"--producer-props":"bootstrap.servers=attacker.example:9092","--producer.config":"/etc/kbench/prod.properties"}}}`,
			"producer-props", "never a command-line option"},
		{"the attack, as a list", `{"tool":"prod",` + target + `,"params":{"producer-props":["--producer.config=/etc/kbench/prod.properties"]}}`,
			"producer-props", "never a command-line option"},
		{"bootstrap.servers", `{"tool":"prod",` + target + `,"params":{"producer-props":{"bootstrap.servers":"127.0.0.1:9092"}}}`,
			"producer-props", "never taken from a request"},
		{"bootstrap.servers, kbench's client", `{"workload":"producer",` + target + `,"params":{"producer-props":{"bootstrap.servers":"127.0.0.1:9092"}}}`,
			"producer-props", "never taken from a request"},
		{"a config file", `{"tool":"prod",` + target + `,"params":{"producer-props":{"producer.config":"/etc/kbench/prod.properties"}}}`,
			"producer-props", "configuration file"},
		{"a key with a space", `{"tool":"prod",` + target + `,"params":{"producer-props":{"acks --print-metrics":"1"}}}`,
			"producer-props", "white space"},
		{"a value with a line break", `{"tool":"prod",` + target + `,"params":{"producer-props":{"client.id":"a\nbootstrap.servers=attacker.example:9092"}}}`,
			"producer-props", "line break"},
		{"a class", `{"tool":"prod",` + target + `,"params":{"producer-props":{"partitioner.class":"org.example.Evil"}}}`,
			"producer-props", "--allow-tool-class-props"},
		{"config providers", `{"tool":"prod",` + target + `,"params":{"producer-props":{"config.providers":"file"}}}`,
			"producer-props", "--allow-tool-class-props"},
		{"interceptors", `{"tool":"prod",` + target + `,"params":{"producer-props":{"interceptor.classes":"org.example.Evil"}}}`,
			"producer-props", "--allow-tool-class-props"},
		{"a topic as an option", `{"tool":"prod",` + target + `,"params":{"topic":"--producer.config"}}`, "topic", "'-'"},
		{"a topic with a line break", `{"workload":"producer",` + target + `,"params":{"topic":"a\nb"}}`, "topic", "character"},
		{"a topic with a tab", `{"workload":"producer","params":{"topic":"a\tb"}}`, "topic", "character"},
		{"a topic with markup", `{"workload":"consumer","params":{"topic":"<img src=x>"}}`, "topic", "character"},
		{"a topic too long", `{"workload":"e2e","params":{"topic":"` + strings.Repeat("t", 250) + `"}}`, "topic", "249"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tt.body)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != http.StatusBadRequest || resp.Field != tt.field || !strings.Contains(resp.Error, tt.says) {
				t.Errorf("%d %s, want a 400 naming %s saying %q", rec.Code, rec.Body, tt.field, tt.says)
			}
		})
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 0 {
		t.Errorf("refused requests created %d runs", n)
	}
	// The operator's flag lets a tool's run take a class; kbench's own
	// client never takes one it cannot honour (its own check refuses it).
	allowed := newTestServer(t, func(c *Config) {
		c.Tools, c.Targets, c.AllowToolClassProps = tools, allowTargets(t, "127.0.0.1:9092"), true
	})
	req := launch.Request{Tool: "prod", Target: &launch.Target{BootstrapServer: "127.0.0.1:9092"},
		Params: map[string]json.RawMessage{"producer-props": json.RawMessage(`{"partitioner.class":"org.example.Sticky"}`)}}
	if spec, err := allowed.launcher.Prepare(&req); err != nil || spec.Props["partitioner.class"] == "" {
		t.Errorf("--allow-tool-class-props: %v", err)
	}
	if rundoc.FirstClassProp(map[string]string{"partitioner.class": "x"}) == "" {
		t.Error("partitioner.class is not a class property")
	}
}
