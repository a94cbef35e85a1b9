package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

func TestUsageErrorsExit2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run"}, "name a workload"},
		{[]string{"run", "producer", "--num-records", "many"}, "--num-records"},
		{[]string{"run", "producer", "--unknown-flag"}, "--unknown-flag"},
		{[]string{"run", "consumer", "--mode", "fast"}, "--mode"},
		{[]string{"run", "producer", "--producer-props", "acks=7"}, "acks"},
		{[]string{"run", "producer", "--progress", "xml"}, "--progress"},
		{[]string{"run", "producer", "--out"}, "--out"},
		{[]string{"broker", "--nope"}, "nope"},
		{[]string{"broker", "--brokers", "0"}, "--brokers"},
		{[]string{"broker", "--brokers", "17"}, "--brokers"},
		// The embedded broker speaks PLAINTEXT only: a conflicting option.
		{[]string{"run", "producer", "--producer-props", "security.protocol=SSL"}, "security.protocol"},
		// --allow-target patterns are checked before anything is opened.
		{[]string{"serve", "--data", t.TempDir(), "--allow-target", "kafka-?:9092"}, "--allow-target"},
		{[]string{"serve", "--data", t.TempDir(), "--allow-target", "kafka-1"}, "host:port"},
		{[]string{"serve", "--data", t.TempDir(), "--allow-target", "kafka:80:9092"}, "--allow-target"},
		{[]string{"serve", "--data", t.TempDir(), "--allow-host", "kbench.test:8080"}, "--allow-host"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := Main(tt.args, &stdout, &stderr)
		if code != 2 {
			t.Errorf("kbench %q: exit %d, want 2 (stderr %q)", tt.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("kbench %q: stderr %q does not mention %q", tt.args, stderr.String(), tt.want)
		}
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "producer", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"--num-records", "--producer-props", "--warmup-records", "--threads", "acks"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("help does not mention %s", flag)
		}
	}
}

// TestRunSilentBroker: `kbench run` against a bootstrap server that accepts
// TCP and never answers exits 1 saying so, after the configured
// socket.connection.setup.timeout.ms.
func TestRunSilentBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never written to
		}
	}()
	defer func() {
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	}()
	addr := ln.Addr().String()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "producer", "--bootstrap-server", addr, "--num-records", "10", "--profile", "none",
		"--producer-props", "socket.connection.setup.timeout.ms=500"}, &stdout, &stderr)
	want := "no answer from " + addr + " within 0.5 s"
	if code != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("kbench run: exit %d, stderr %q; want exit 1 saying %q", code, stderr.String(), want)
	}
}

// TestServeRetainInvalid: --retain and KBENCH_RETAIN take a whole number of
// days; anything else exits 2 naming the flag, before the data directory
// is touched.
func TestServeRetainInvalid(t *testing.T) {
	for _, v := range []string{"x", "-1", "1.5", "30d", "99999999"} {
		data := filepath.Join(t.TempDir(), "data")
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"serve", "--data", data, "--retain", v}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--retain") {
			t.Errorf("serve --retain %q: exit %d, stderr %q; want 2 naming --retain", v, code, stderr.String())
		}
		t.Setenv("KBENCH_RETAIN", v)
		stderr.Reset()
		if code := Main([]string{"serve", "--data", data}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "KBENCH_RETAIN") {
			t.Errorf("KBENCH_RETAIN=%q: exit %d, stderr %q; want 2 naming it", v, code, stderr.String())
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("the data directory was created although --retain %q was refused", v)
		}
	}
}

// TestServeRefusesUnprotectedNonLoopback: without a token, kbench serve
// only listens on loopback; a name that merely starts like a loopback
// address is not one.
func TestServeRefusesUnprotectedNonLoopback(t *testing.T) {
	t.Setenv("KBENCH_TOKEN", "")
	for _, listen := range []string{"127.evil.invalid:0", "localhost.evil.invalid:0", "0.0.0.0:0", ":0", "[::ffff:10.0.0.1]:0"} {
		var stdout, stderr bytes.Buffer
		data := filepath.Join(t.TempDir(), "data")
		code := Main([]string{"serve", "--listen", listen, "--data", data}, &stdout, &stderr)
		if code != 2 {
			t.Errorf("serve --listen %s without a token: exit %d, want 2 (stderr %q)", listen, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "--token") {
			t.Errorf("serve --listen %s: stderr %q does not say to set --token", listen, stderr.String())
		}
		if _, err := os.Stat(data); err == nil {
			t.Errorf("serve --listen %s: the refused server created its data directory", listen)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"serve", "--listen", "127.0.0.1", "--data", t.TempDir()}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "host:port") {
		t.Errorf("serve --listen without a port: exit %d, stderr %q; want 2 and a message asking for host:port", code, stderr.String())
	}
}
