package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// TestToolRunReadsTLSFilesFirst: a Kafka tool's run reads the TLS files
// its properties name as kbench's client would, before the tool starts:
// a file over the 1 MiB limit fails the run saying so, and the tool
// never runs.
func TestToolRunReadsTLSFilesFirst(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "kafka-producer-perf-test.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch '"+ran+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools, err := toolcatalog.Parse([]string{"prod=" + script})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(toolcatalog.EnvVar, tools.Env())
	big := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<20+1); err != nil {
		t.Fatal(err)
	}
	spec, err := rundoc.ParseArgs(rundoc.Producer, []string{"--bootstrap-server", "127.0.0.1:9092", "--num-records", "10",
		"--producer-props", "security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location=" + big})
	if err != nil {
		t.Fatal(err)
	}
	spec.Tool = "prod"
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := RunTool(context.Background(), rundoc.RunCommand{Spec: spec, Out: out}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, &stderr)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the tool ran with a TLS file kbench refuses")
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "ssl.truststore.location") || !strings.Contains(string(data), "1 MiB") {
		t.Errorf("result.json does not say why: %s", data)
	}
}
