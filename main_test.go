package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
		code := realMain(tt.args, &stdout, &stderr)
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
	if code := realMain([]string{"run", "producer", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"--num-records", "--producer-props", "--warmup-records", "--threads", "acks"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("help does not mention %s", flag)
		}
	}
}

// buildKbench builds the real binary once per test run.
func buildKbench(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kbench")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinary runs the built binary the way users do: one producer run on
// the embedded broker, then an interrupted run, checking that SIGINT
// writes partial results and takes the broker child process down too.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := e2eKbench(t)

	t.Run("producer", func(t *testing.T) {
		out := t.TempDir()
		cmd := exec.Command(bin, "run", "producer", "--num-records", "20000", "--record-size", "128", "--out", out)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kbench run producer: %v\n%s", err, stderr.String())
		}
		if !regexp.MustCompile(`^20000 records sent, `).MatchString(stdout.String()) {
			t.Errorf("stdout is not Kafka's output alone:\n%s", stdout.String())
		}
		var res struct {
			Complete bool `json:"complete"`
			Profiles []struct{ Role, Kind, File string }
		}
		data, err := os.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(data, &res)
		if !res.Complete || len(res.Profiles) != 3 { // client cpu, heap and broker cpu
			t.Errorf("complete=%v profiles=%+v, want complete with client cpu+heap and broker cpu", res.Complete, res.Profiles)
		}
	})

	t.Run("sigint", func(t *testing.T) {
		out := t.TempDir()
		cmd := exec.Command(bin, "run", "producer", "--num-records", "1000000", "--throughput", "2000", "--out", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
			t.Fatalf("interrupted run: %v, want exit code 1\n%s", err, stderr.String())
		}
		var res struct {
			Complete bool   `json:"complete"`
			Error    string `json:"error"`
		}
		data, err := os.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatalf("no partial result: %v\n%s", err, stderr.String())
		}
		json.Unmarshal(data, &res)
		if res.Complete || res.Error == "" {
			t.Errorf("result complete=%v error=%q, want incomplete with a reason", res.Complete, res.Error)
		}
		m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no broker pid in stderr:\n%s", stderr.String())
		}
		pid, _ := strconv.Atoi(m[1])
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("broker child %d still running after the run exited", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// TestServeRefusesUnprotectedNonLoopback: without a token, kbench serve
// only listens on loopback; a name that merely starts like a loopback
// address is not one.
func TestServeRefusesUnprotectedNonLoopback(t *testing.T) {
	t.Setenv("KBENCH_TOKEN", "")
	for _, listen := range []string{"127.evil.invalid:0", "localhost.evil.invalid:0", "0.0.0.0:0", ":0", "[::ffff:10.0.0.1]:0"} {
		var stdout, stderr bytes.Buffer
		data := filepath.Join(t.TempDir(), "data")
		code := realMain([]string{"serve", "--listen", listen, "--data", data}, &stdout, &stderr)
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
	if code := realMain([]string{"serve", "--listen", "127.0.0.1", "--data", t.TempDir()}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "host:port") {
		t.Errorf("serve --listen without a port: exit %d, stderr %q; want 2 and a message asking for host:port", code, stderr.String())
	}
}

// TestServeHostCheck starts the real `kbench serve` on loopback without a
// token: it answers loopback names and the --allow-host (flag and
// KBENCH_ALLOW_HOST) names, and refuses any other Host (DNS rebinding).
func TestServeHostCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := e2eKbench(t)
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--allow-host", "kbench.test")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "KBENCH_ALLOW_HOST=other.test, third.test")
	var stdout, stderr e2eBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := e2eServingLine.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("kbench serve printed no address\nstderr: %s", stderr.String())
		}
	}
	client := &http.Client{Timeout: 15 * time.Second}
	for _, tt := range []struct {
		host string
		want int
	}{
		{"", 200}, // the address itself: 127.0.0.1:PORT
		{"localhost", 200},
		{"kbench.test", 200},
		{"other.test", 200},
		{"third.test", 200},
		{"rebind.attacker.example", 403},
		{"127.evil.invalid", 403},
	} {
		req, err := http.NewRequest("GET", base+"/api/runs", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.host != "" {
			req.Host = tt.host + ":8080"
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Host %q: %d %s, want %d", tt.host, resp.StatusCode, body, tt.want)
		}
	}
}
