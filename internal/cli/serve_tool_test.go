package cli

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
				code := Main(args, &stdout, &stderr)
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

// TestServeAndWorkerInputFlags: --allow-client-files (serve) and
// --allow-tool-class-props (serve and worker), or their KBENCH_*
// variables, reach the server's and the worker's settings; both are off
// by default.
func TestServeAndWorkerInputFlags(t *testing.T) {
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
	ctx := context.Background()
	data := t.TempDir()
	if code := cmdServe(ctx, []string{"--data", data}, io.Discard, io.Discard); code != 0 || len(served) != 1 {
		t.Fatalf("serve: %d", code)
	}
	if c := served[0].Config; c.AllowClientFiles || c.AllowToolClassProps {
		t.Errorf("defaults: client files %v, class props %v; want both off", c.AllowClientFiles, c.AllowToolClassProps)
	}
	if code := cmdServe(ctx, []string{"--data", data, "--allow-client-files", "--allow-tool-class-props"}, io.Discard, io.Discard); code != 0 || len(served) != 2 {
		t.Fatalf("serve with the flags: %d", code)
	}
	if c := served[1].Config; !c.AllowClientFiles || !c.AllowToolClassProps {
		t.Errorf("flags: client files %v, class props %v", c.AllowClientFiles, c.AllowToolClassProps)
	}
	t.Setenv("KBENCH_ALLOW_CLIENT_FILES", "true")
	if code := cmdServe(ctx, []string{"--data", data}, io.Discard, io.Discard); code != 0 || len(served) != 3 || !served[2].Config.AllowClientFiles {
		t.Errorf("KBENCH_ALLOW_CLIENT_FILES=true: %d %+v", code, served)
	}
	db := "postgres://u@localhost/kbench"
	if code := cmdWorker(ctx, []string{"--database", db, "--data", data, "--allow-tool-class-props"}, io.Discard, io.Discard); code != 0 || len(worked) != 1 || !worked[0].AllowToolClassProps {
		t.Errorf("worker --allow-tool-class-props: %d %+v", code, worked)
	}
	if code := cmdWorker(ctx, []string{"--database", db, "--data", data}, io.Discard, io.Discard); code != 0 || len(worked) != 2 || worked[1].AllowToolClassProps {
		t.Errorf("worker default: %d %+v", code, worked)
	}
}
