package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/server"
)

// TestServeEnvironment runs `kbench serve` through Main with KBENCH_*
// variables and flags, and checks what it would serve with: every flag's
// variable is read, an empty variable counts as unset, the command line
// wins (repeatable flags add to their variable's list), and a value the
// flag would refuse exits 2 naming the variable, before anything is opened.
func TestServeEnvironment(t *testing.T) {
	// What `kbench serve` runs with when nothing is set.
	defaults := serveSettings{Listen: "127.0.0.1:8080", Config: server.Config{
		DataDir: "./kbench-data", Concurrency: 1, Loopback: true, RunTimeout: 2 * time.Hour,
		MaxRunsPerRequest: launch.DefaultMaxRunsPerRequest, MaxQueuedRuns: launch.DefaultMaxQueuedRuns, SessionMaxAge: server.DefaultSessionMaxAge}}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		// want changes the defaults into the expected settings; nil when
		// wantErr is set.
		want func(*serveSettings)
		// wantErr are texts stderr must hold, with exit 2 and nothing
		// served.
		wantErr []string
	}{
		// Each variable is read.
		{name: "KBENCH_LISTEN", env: map[string]string{"KBENCH_LISTEN": "127.0.0.2:9"},
			want: func(s *serveSettings) { s.Listen = "127.0.0.2:9" }},
		{name: "KBENCH_LISTEN off loopback with KBENCH_TOKEN", env: map[string]string{"KBENCH_LISTEN": "0.0.0.0:8080", "KBENCH_TOKEN": "t"},
			want: func(s *serveSettings) { s.Listen, s.Config.Loopback, s.Config.Token = "0.0.0.0:8080", false, "t" }},
		{name: "KBENCH_DATA", env: map[string]string{"KBENCH_DATA": "env-data"},
			want: func(s *serveSettings) { s.Config.DataDir = "env-data" }},
		{name: "KBENCH_DATABASE", env: map[string]string{"KBENCH_DATABASE": "postgres://kbench:pw@db.example/kbench"},
			want: func(s *serveSettings) { s.Database = "postgres://kbench:pw@db.example/kbench" }},
		{name: "KBENCH_DATABASE a path", env: map[string]string{"KBENCH_DATABASE": "elsewhere/k.db"},
			want: func(s *serveSettings) { s.Database = "elsewhere/k.db" }},
		{name: "KBENCH_CONCURRENCY", env: map[string]string{"KBENCH_CONCURRENCY": "3"},
			want: func(s *serveSettings) { s.Config.Concurrency = 3 }},
		{name: "KBENCH_TOKEN", env: map[string]string{"KBENCH_TOKEN": "s3cret"},
			want: func(s *serveSettings) { s.Config.Token = "s3cret" }},
		{name: "KBENCH_PRIVATE", env: map[string]string{"KBENCH_PRIVATE": "true", "KBENCH_TOKEN": "t"},
			want: func(s *serveSettings) { s.Config.Private, s.Config.Token = true, "t" }},
		{name: "KBENCH_PRIVATE takes what --private takes", env: map[string]string{"KBENCH_PRIVATE": "1", "KBENCH_TOKEN": "t"},
			want: func(s *serveSettings) { s.Config.Private, s.Config.Token = true, "t" }},
		{name: "KBENCH_RUN_TIMEOUT", env: map[string]string{"KBENCH_RUN_TIMEOUT": "90m"},
			want: func(s *serveSettings) { s.Config.RunTimeout = 90 * time.Minute }},
		{name: "KBENCH_RETAIN", env: map[string]string{"KBENCH_RETAIN": "30"},
			want: func(s *serveSettings) { s.Config.Retain = 30 * 24 * time.Hour }},
		{name: "KBENCH_ALLOW_TARGET", env: map[string]string{"KBENCH_ALLOW_TARGET": "kafka-*:9092, 10.0.0.1:9093"},
			want: func(s *serveSettings) { s.Config.Targets = parseTargets(t, "kafka-*:9092", "10.0.0.1:9093") }},
		{name: "KBENCH_ALLOW_HOST", env: map[string]string{"KBENCH_ALLOW_HOST": "a.test,b.test"},
			want: func(s *serveSettings) { s.Config.AllowHosts = []string{"a.test", "b.test"} }},
		{name: "KBENCH_TRUSTED_PROXY", env: map[string]string{"KBENCH_TRUSTED_PROXY": "10.0.0.0/8,192.0.2.7"},
			want: func(s *serveSettings) { s.Config.TrustedProxies = []string{"10.0.0.0/8", "192.0.2.7"} }},
		{name: "KBENCH_SESSION_MAX_AGE", env: map[string]string{"KBENCH_SESSION_MAX_AGE": "12h"},
			want: func(s *serveSettings) { s.Config.SessionMaxAge = 12 * time.Hour }},
		{name: "KBENCH_NOTIFY_URL", env: map[string]string{"KBENCH_NOTIFY_URL": "https://hooks.example/T0/B0/x"},
			want: func(s *serveSettings) {
				s.Config.NotifyURL, s.Config.PublicURL = "https://hooks.example/T0/B0/x", "http://127.0.0.1:8080"
			}},
		{name: "KBENCH_MAX_RUNS_PER_REQUEST", env: map[string]string{"KBENCH_MAX_RUNS_PER_REQUEST": "50"},
			want: func(s *serveSettings) { s.Config.MaxRunsPerRequest = 50 }},
		{name: "--max-queued-runs", env: map[string]string{"KBENCH_MAX_QUEUED_RUNS": "10"}, args: []string{"--max-queued-runs", "20"},
			want: func(s *serveSettings) { s.Config.MaxQueuedRuns = 20 }},
		{name: "empty variables count as unset", env: map[string]string{"KBENCH_LISTEN": "", "KBENCH_DATA": "", "KBENCH_CONCURRENCY": "",
			"KBENCH_PRIVATE": "", "KBENCH_RUN_TIMEOUT": "", "KBENCH_RETAIN": "", "KBENCH_ALLOW_TARGET": "", "KBENCH_ALLOW_HOST": "", "KBENCH_NOTIFY_URL": "", "KBENCH_DATABASE": ""},
			want: func(*serveSettings) {}},

		// The command line wins.
		{name: "--listen", env: map[string]string{"KBENCH_LISTEN": "nonsense"}, args: []string{"--listen", "127.0.0.1:0"},
			want: func(s *serveSettings) { s.Listen = "127.0.0.1:0" }},
		{name: "--data", env: map[string]string{"KBENCH_DATA": "env-data"}, args: []string{"--data", "flag-data"},
			want: func(s *serveSettings) { s.Config.DataDir = "flag-data" }},
		{name: "--database", env: map[string]string{"KBENCH_DATABASE": "postgres://a/x"}, args: []string{"--database", "postgresql://b/y"},
			want: func(s *serveSettings) { s.Database = "postgresql://b/y" }},
		{name: "--concurrency", env: map[string]string{"KBENCH_CONCURRENCY": "3"}, args: []string{"--concurrency", "2"},
			want: func(s *serveSettings) { s.Config.Concurrency = 2 }},
		{name: "--concurrency over a bad variable", env: map[string]string{"KBENCH_CONCURRENCY": "x"}, args: []string{"--concurrency", "2"},
			want: func(s *serveSettings) { s.Config.Concurrency = 2 }},
		{name: "--token", env: map[string]string{"KBENCH_TOKEN": "a"}, args: []string{"--token", "b"},
			want: func(s *serveSettings) { s.Config.Token = "b" }},
		{name: "--private=false", env: map[string]string{"KBENCH_PRIVATE": "true", "KBENCH_TOKEN": "t"}, args: []string{"--private=false"},
			want: func(s *serveSettings) { s.Config.Token = "t" }},
		{name: "--run-timeout", env: map[string]string{"KBENCH_RUN_TIMEOUT": "1h"}, args: []string{"--run-timeout", "3h"},
			want: func(s *serveSettings) { s.Config.RunTimeout = 3 * time.Hour }},
		{name: "--retain", env: map[string]string{"KBENCH_RETAIN": "x"}, args: []string{"--retain", "5"},
			want: func(s *serveSettings) { s.Config.Retain = 5 * 24 * time.Hour }},
		{name: "--allow-host adds to KBENCH_ALLOW_HOST", env: map[string]string{"KBENCH_ALLOW_HOST": "a.test"}, args: []string{"--allow-host", "b.test"},
			want: func(s *serveSettings) { s.Config.AllowHosts = []string{"a.test", "b.test"} }},
		{name: "--allow-target adds to KBENCH_ALLOW_TARGET", env: map[string]string{"KBENCH_ALLOW_TARGET": "k:1"}, args: []string{"--allow-target", "k:2"},
			want: func(s *serveSettings) { s.Config.Targets = parseTargets(t, "k:1", "k:2") }},

		{name: "--notify-url", env: map[string]string{"KBENCH_NOTIFY_URL": "http://a.example/x"}, args: []string{"--notify-url", "http://b.example/y", "--listen", "127.0.0.1:9090"},
			want: func(s *serveSettings) {
				s.Listen, s.Config.NotifyURL, s.Config.PublicURL = "127.0.0.1:9090", "http://b.example/y", "http://127.0.0.1:9090"
			}},

		// A bad value exits 2 naming the variable.
		{name: "KBENCH_CONCURRENCY not a number", env: map[string]string{"KBENCH_CONCURRENCY": "x"}, wantErr: []string{`KBENCH_CONCURRENCY: "x"`, "--concurrency"}},
		{name: "KBENCH_CONCURRENCY 0", env: map[string]string{"KBENCH_CONCURRENCY": "0"}, wantErr: []string{"KBENCH_CONCURRENCY", "at least 1"}},
		{name: "KBENCH_PRIVATE yes", env: map[string]string{"KBENCH_PRIVATE": "yes", "KBENCH_TOKEN": "t"}, wantErr: []string{`KBENCH_PRIVATE: "yes"`}},
		{name: "KBENCH_RUN_TIMEOUT without a unit", env: map[string]string{"KBENCH_RUN_TIMEOUT": "2"}, wantErr: []string{`KBENCH_RUN_TIMEOUT: "2"`}},
		{name: "KBENCH_RUN_TIMEOUT 0", env: map[string]string{"KBENCH_RUN_TIMEOUT": "0s"}, wantErr: []string{"KBENCH_RUN_TIMEOUT", "positive"}},
		{name: "--run-timeout negative", args: []string{"--run-timeout", "-5m"}, wantErr: []string{"--run-timeout", "positive"}},
		{name: "KBENCH_MAX_QUEUED_RUNS 0", env: map[string]string{"KBENCH_MAX_QUEUED_RUNS": "0"}, wantErr: []string{"KBENCH_MAX_QUEUED_RUNS", "at least 1"}},
		{name: "--max-runs-per-request negative", args: []string{"--max-runs-per-request", "-1"}, wantErr: []string{"--max-runs-per-request", "at least 1"}},
		{name: "KBENCH_RETAIN", env: map[string]string{"KBENCH_RETAIN": "30d"}, wantErr: []string{"KBENCH_RETAIN", "30d"}},
		{name: "KBENCH_LISTEN without a port", env: map[string]string{"KBENCH_LISTEN": "nonsense"}, wantErr: []string{"KBENCH_LISTEN", "host:port"}},
		{name: "KBENCH_LISTEN off loopback without a token", env: map[string]string{"KBENCH_LISTEN": "0.0.0.0:8080"}, wantErr: []string{"KBENCH_LISTEN", "--token"}},
		{name: "KBENCH_ALLOW_TARGET", env: map[string]string{"KBENCH_ALLOW_TARGET": "kafka-1:http"}, wantErr: []string{"KBENCH_ALLOW_TARGET", "kafka-1:http"}},
		{name: "KBENCH_ALLOW_HOST", env: map[string]string{"KBENCH_ALLOW_HOST": "kbench.test:8080"}, wantErr: []string{"KBENCH_ALLOW_HOST", "kbench.test:8080"}},
		{name: "KBENCH_TRUSTED_PROXY", env: map[string]string{"KBENCH_TRUSTED_PROXY": "10.0.0.0/33"}, wantErr: []string{"KBENCH_TRUSTED_PROXY", "10.0.0.0/33"}},
		{name: "--trusted-proxy", args: []string{"--trusted-proxy", "proxy.example"}, wantErr: []string{"--trusted-proxy", "proxy.example"}},
		{name: "--session-max-age 0", args: []string{"--session-max-age", "0s"}, wantErr: []string{"--session-max-age", "positive"}},
		{name: "KBENCH_NOTIFY_URL not http", env: map[string]string{"KBENCH_NOTIFY_URL": "hooks.example/x"}, wantErr: []string{"KBENCH_NOTIFY_URL", "http"}},
		{name: "every bad variable", env: map[string]string{"KBENCH_CONCURRENCY": "many", "KBENCH_RUN_TIMEOUT": "long"},
			wantErr: []string{`KBENCH_CONCURRENCY: "many"`, `KBENCH_RUN_TIMEOUT: "long"`}},
	}

	var served []serveSettings
	serveWith = func(_ context.Context, s serveSettings, _, _ io.Writer) int {
		served = append(served, s)
		return 0
	}
	t.Cleanup(func() { serveWith = serve })
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "KBENCH_") {
			t.Setenv(k, "") // restored after the test
			os.Unsetenv(k)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			served = nil
			var stdout, stderr bytes.Buffer
			code := Main(append([]string{"serve"}, tt.args...), &stdout, &stderr)
			if tt.wantErr != nil {
				if code != 2 || len(served) != 0 {
					t.Fatalf("exit %d, served %v; want exit 2 before serving (stderr %q)", code, served, stderr.String())
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(stderr.String(), w) {
						t.Errorf("stderr %q does not say %q", stderr.String(), w)
					}
				}
				return
			}
			if code != 0 || len(served) != 1 {
				t.Fatalf("exit %d, served %d times; stderr %q", code, len(served), stderr.String())
			}
			want := defaults
			tt.want(&want)
			if got := served[0]; !reflect.DeepEqual(got, want) {
				t.Errorf("serves with\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
