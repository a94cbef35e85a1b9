package acceptance

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportCommand runs `kbench import` against a real `kbench serve`:
// an output with a profile becomes one run whose URL is printed, flags may
// follow the file, a parse error exits 1 naming the line, usage errors
// exit 2, and nothing refused is stored.
func TestImportCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	srv := startE2EServer(t)
	bin := e2eKbench(t)
	kbench := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KBENCH_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("kbench %v: %v", args, err)
		}
		return code, stdout.String(), stderr.String()
	}
	const samples = "../internal/kafkafmt/testdata/import/"
	dir := t.TempDir()
	folded := filepath.Join(dir, "java.collapsed")
	os.WriteFile(folded, []byte("main;send;write 30\nmain;encode 10\n"), 0o644)

	type run struct {
		Workload, Source, Label string
		Metrics                 []struct {
			Name  string
			Value float64
		}
		Profiles []struct{ ID uint }
	}
	get := func(url string) run {
		t.Helper()
		var r run
		srv.api(t, http.MethodGet, "/api"+strings.TrimPrefix(url, srv.URL), nil, http.StatusOK, &r)
		return r
	}
	metric := func(r run, name string) float64 {
		for _, m := range r.Metrics {
			if m.Name == name {
				return m.Value
			}
		}
		return -1
	}

	code, stdout, stderr := kbench("import", "--server", srv.URL, "--label", "java-trunk", "--profile", folded, samples+"producer_summary.txt")
	if code != 0 || !strings.HasPrefix(stdout, srv.URL+"/runs/") || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("import: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	prod := get(strings.TrimSpace(stdout))
	if prod.Workload != "producer" || prod.Source != "imported" || prod.Label != "java-trunk" || len(prod.Profiles) != 1 || metric(prod, "record-latency-p99") != 14 {
		t.Errorf("imported run = %+v", prod)
	}

	// Flags after the file.
	code, stdout, stderr = kbench("import", samples+"consumer_summary.txt", "--label", "java-consumer", "--server", srv.URL+"/")
	if code != 0 {
		t.Fatalf("import consumer: exit %d, %s", code, stderr)
	}
	if cons := get(strings.TrimSpace(stdout)); cons.Workload != "consumer" || metric(cons, "records-consumed-rate") != 31579.6122 {
		t.Errorf("imported consumer run = %+v", cons)
	}

	// Kafka's EndToEndLatency output is told apart by itself: an e2e run.
	code, stdout, stderr = kbench("import", "--server", srv.URL, "--label", "java-e2e", samples+"e2e_latency.txt")
	if code != 0 {
		t.Fatalf("import e2e: exit %d, %s", code, stderr)
	}
	if e2e := get(strings.TrimSpace(stdout)); e2e.Workload != "e2e" || e2e.Source != "imported" ||
		metric(e2e, "e2e-latency-p99") != 24 || metric(e2e, "e2e-latency-avg") != 1.5614 {
		t.Errorf("imported e2e run = %+v", e2e)
	}

	// A parse error names the line; nothing is stored.
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("SLF4J: noise\n\nnot kafka output\n"), 0o644)
	code, stdout, stderr = kbench("import", "--server", srv.URL, "--label", "bad", "--profile", folded, bad)
	if code != 1 || stdout != "" || !strings.Contains(stderr, bad+":3: ") || !strings.Contains(stderr, "output: line 3: ") {
		t.Errorf("parse error: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	var list struct{ Total int }
	srv.api(t, http.MethodGet, "/api/runs", nil, http.StatusOK, &list)
	if list.Total != 3 {
		t.Errorf("%d runs stored, want 3", list.Total)
	}

	// Usage errors exit 2; an unreachable server exits 1.
	for _, args := range [][]string{
		{"import", "--server", srv.URL, samples + "producer_summary.txt"},                   // no label
		{"import", "--server", srv.URL, "--label", "x"},                                     // no file
		{"import", "--server", srv.URL, "--label", "x", "a.txt", "b.txt"},                   // two files
		{"import", "--server", "ftp://x", "--label", "x", samples + "producer_summary.txt"}, // bad URL
		{"import", "--label", "x", filepath.Join(dir, "missing.txt")},                       // no such file
		{"import", "--bogus"},
	} {
		if code, _, stderr := kbench(args...); code != 2 {
			t.Errorf("kbench %v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	if code, _, stderr := kbench("import", "--server", "http://127.0.0.1:1", "--label", "x", samples+"producer_summary.txt"); code != 1 || !strings.Contains(stderr, "cannot reach") {
		t.Errorf("unreachable server: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := kbench("import", "--help"); code != 0 {
		t.Errorf("import --help: exit %d", code)
	} else if _, _, stderr := kbench("import", "-h"); !strings.Contains(stdout+stderr, "running kbench server") {
		t.Errorf("help does not explain the server: %s", stderr)
	}
}
