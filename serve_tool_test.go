package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAndWorkerTools: --tool NAME=PATH (repeatable, and KBENCH_TOOL's
// comma list) names Kafka tools whose programs are checked before
// anything is opened: kbench serve and kbench worker pass the set on,
// and a bad value exits 2 naming the flag or variable and the problem.
func TestServeAndWorkerTools(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prod := write("kafka-producer-perf-test.sh", 0o755)
	wrapper := write("java-wrapper", 0o755)
	plain := write("kafka-consumer-perf-test.sh", 0o644)

	var served []serveSettings
	var worked []workerSettings
	serveWith = func(_ context.Context, s serveSettings, _, _ io.Writer) int { served = append(served, s); return 0 }
	workWith = func(_ context.Context, s workerSettings, _, _ io.Writer) int { worked = append(worked, s); return 0 }
	t.Cleanup(func() { serveWith, workWith = serve, work })
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "KBENCH_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for _, tc := range []struct {
		name    string
		env     string
		args    []string
		tools   string // Offered, when it runs
		wantErr []string
	}{
		{name: "by name", args: []string{"--tool", "jp=" + prod}, tools: "jp:producer-perf-test"},
		{name: "with a kind", env: "jc=consumer-perf-test:" + wrapper, args: []string{"--tool", "jp=" + prod},
			tools: "jc:consumer-perf-test,jp:producer-perf-test"},
		{name: "kind unknown", args: []string{"--tool", "w=" + wrapper}, wantErr: []string{"--tool w=" + wrapper, "KIND"}},
		{name: "not executable", args: []string{"--tool", "c=" + plain}, wantErr: []string{"--tool", "not executable"}},
		{name: "missing", args: []string{"--tool", "p=" + filepath.Join(dir, "kafka-producer-perf-test")}, wantErr: []string{"no such file"}},
		{name: "the variable", env: "c=" + plain, wantErr: []string{"KBENCH_TOOL", "not executable"}},
	} {
		for _, cmd := range []string{"serve", "worker"} {
			t.Run(tc.name+"/"+cmd, func(t *testing.T) {
				t.Setenv("KBENCH_TOOL", tc.env)
				served, worked = nil, nil
				args := append([]string{cmd}, tc.args...)
				if cmd == "worker" {
					args = append(args, "--database", "postgres://kbench@127.0.0.1:1/kbench")
				}
				var stdout, stderr bytes.Buffer
				code := realMain(args, &stdout, &stderr)
				if tc.wantErr != nil {
					if code != 2 || len(served)+len(worked) != 0 {
						t.Fatalf("exit %d; want 2 before starting (stderr %q)", code, stderr.String())
					}
					for _, w := range tc.wantErr {
						if !strings.Contains(stderr.String(), w) {
							t.Errorf("stderr %q does not say %q", stderr.String(), w)
						}
					}
					return
				}
				if code != 0 || len(served)+len(worked) != 1 {
					t.Fatalf("exit %d; stderr %q", code, stderr.String())
				}
				got := ""
				if cmd == "serve" {
					got = served[0].Config.Tools.Offered()
				} else {
					got = worked[0].Tools.Offered()
				}
				if got != tc.tools {
					t.Errorf("tools %q, want %q", got, tc.tools)
				}
			})
		}
	}
}
