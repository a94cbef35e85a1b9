package acceptance

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// withPassword puts a password into a PostgreSQL URL's user part (a
// trust-authenticated test server ignores it).
func withPassword(url, password string) string {
	scheme, rest, _ := strings.Cut(url, "://")
	if user, host, ok := strings.Cut(rest, "@"); ok {
		return scheme + "://" + user + ":" + password + "@" + host
	}
	return scheme + "://kbench:" + password + "@" + rest
}

// serveCommand is `kbench serve` on loopback with a fresh data directory
// and no KBENCH_* variable but those given.
func serveCommand(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	data := t.TempDir()
	cmd := exec.Command(e2eKbench(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd, data
}

// TestServeDatabaseUnreachable: `kbench serve --database URL` on a
// PostgreSQL server that is not there exits 1 naming it, with its
// password redacted.
func TestServeDatabaseUnreachable(t *testing.T) {
	tier.Integration(t, "builds and starts kbench")
	const secret = "Pw-n0t-shown"
	cmd, _ := serveCommand(t, nil, "--database", "postgres://kbench:"+secret+"@127.0.0.1:1/kbench?sslmode=disable&connect_timeout=2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Errorf("kbench serve: %v, want exit status 1", err)
	}
	if got := out.String(); strings.Contains(got, secret) || !strings.Contains(got, "postgres://kbench:xxxxx@127.0.0.1:1/kbench") {
		t.Errorf("output %q: want the URL with its password redacted", got)
	}
}

// TestServeDatabasePostgres: KBENCH_DATABASE puts the store in
// PostgreSQL: the server serves from it, writes no SQLite file, and
// shows the URL only redacted.
func TestServeDatabasePostgres(t *testing.T) {
	const secret = "Pw-n0t-shown"
	url := withPassword(pgtest.URL(t), secret)
	cmd, data := serveCommand(t, []string{"KBENCH_DATABASE=" + url})
	var stdout, stderr e2eBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		for name, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
			if strings.Contains(out, secret) {
				t.Errorf("%s shows the database password: %q", name, out)
			}
		}
		if _, err := os.Stat(filepath.Join(data, "kbench.db")); err == nil {
			t.Error("kbench serve wrote an SQLite database besides PostgreSQL")
		}
	}()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := e2eServingLine.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("kbench serve exited: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address within 30 s\n%s", stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "database postgres://kbench:xxxxx@") {
		t.Errorf("stdout %q does not name the database redacted", stdout.String())
	}
	for _, path := range []string{"/", "/api/runs", "/regressions", "/api/regressions"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", path, resp.StatusCode)
		}
	}
}
