package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestImportCommandServerAndToken: KBENCH_SERVER and KBENCH_TOKEN reach
// the request (the token as a Bearer header), and a refusal without a JSON
// body still exits 1 with what the server said.
func TestImportCommandServerAndToken(t *testing.T) {
	var gotAuth, gotLabel, gotOutput string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		if r.URL.Path != "/api/import" || r.ParseMultipartForm(1<<20) != nil {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		gotLabel = r.FormValue("label")
		if f, _, err := r.FormFile("output"); err == nil {
			var b bytes.Buffer
			b.ReadFrom(f)
			gotOutput = b.String()
		}
		if gotAuth != "Bearer s3cret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":9,"url":"/runs/9","workload":"producer"}`))
	}))
	defer ts.Close()
	file := filepath.Join(t.TempDir(), "out.txt")
	os.WriteFile(file, []byte("1 records sent\n"), 0o644)

	t.Setenv("KBENCH_SERVER", ts.URL)
	t.Setenv("KBENCH_TOKEN", "s3cret")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"import", "--label", "java", file}, &stdout, &stderr); code != 0 || stdout.String() != ts.URL+"/runs/9\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout.String(), stderr.String())
	}
	if gotLabel != "java" || gotOutput != "1 records sent\n" {
		t.Errorf("server got label %q, output %q", gotLabel, gotOutput)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"import", "--label", "java", "--token", "wrong", file}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no token") || gotAuth != "Bearer wrong" {
		t.Errorf("wrong token: exit %d, stderr %s, auth %q", code, stderr.String(), gotAuth)
	}
}

// TestImportCommandMetaTime: --meta (repeatable), --time and --series
// reach the server as the API's meta, time and series fields; bad ones
// are usage errors (exit 2) that name the flag, and nothing is sent.
func TestImportCommandMetaTime(t *testing.T) {
	var got map[string][]string
	requests := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if r.ParseMultipartForm(1<<20) != nil {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		got = r.MultipartForm.Value
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":9,"url":"/runs/9","workload":"producer"}`))
	}))
	defer ts.Close()
	file := filepath.Join(t.TempDir(), "out.txt")
	os.WriteFile(file, []byte("1 records sent\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"import", "--server", ts.URL, "--label", "java", "--meta", "commit=abc123", file,
		"--meta=branch=trunk", "--time", "2022-06-21T10:00:00Z", "--series", "java-perf"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := map[string][]string{"label": {"java"}, "role": {"client"}, "meta": {"commit=abc123", "branch=trunk"},
		"time": {"2022-06-21T10:00:00Z"}, "series": {"java-perf"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the server got %v, want %v", got, want)
	}
	requests = 0
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--meta", "commit"}, "--meta"},
		{[]string{"--meta", "Commit=x"}, `key "Commit"`},
		{[]string{"--meta", "commit=a", "--meta", "commit=b"}, "given twice"},
		{[]string{"--time", "2022-06-21 10:00"}, "--time: want RFC 3339"},
		{[]string{"--series", "a\nb"}, "--series"},
	} {
		stderr.Reset()
		args := append([]string{"import", "--server", ts.URL, "--label", "java", file}, tc.args...)
		if code := Main(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%v: exit %d, stderr %s; want 2 saying %q", tc.args, code, stderr.String(), tc.says)
		}
	}
	if requests != 0 {
		t.Errorf("%d requests sent for bad flags", requests)
	}
}

// TestImportTableCommand: `kbench import --table FILE --workload W` sends
// the file as the API's "table" field with the workload, meta and time,
// and prints every run's URL and their comparison's; a refused cell is
// reported FILE:LINE:COLUMN (exit 1); flags that do not fit a table are
// usage errors (exit 2) and nothing is sent.
func TestImportTableCommand(t *testing.T) {
	var got map[string][]string
	var gotTable string
	requests := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if r.URL.Path != "/api/import" || r.ParseMultipartForm(1<<20) != nil {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		got = r.MultipartForm.Value
		if f, _, err := r.FormFile("table"); err == nil {
			var b bytes.Buffer
			b.ReadFrom(f)
			gotTable = b.String()
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(gotTable, "slow") {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"table: line 2, column 20: io-ratio, y: \"slow\" is not a number","field":"table","line":2,"column":20}`))
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"runs":[{"id":3,"url":"/runs/3","label":"CLASSIC"},{"id":4,"url":"/runs/4","label":"CONSUMER"}],"compare_url":"/compare?runs=3,4"}`))
	}))
	defer ts.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "kafka-19296.md")
	table := "| Metric | CLASSIC | CONSUMER |\n|---|--:|--:|\n| io-wait-ratio | 0.902 | 0.957 |\n"
	os.WriteFile(file, []byte(table), 0o644)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"import", "--server", ts.URL, "--table", file, "--workload", "consumer", "--meta", "branch=trunk", "--time", "2025-08-07T10:00:00Z"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := map[string][]string{"workload": {"consumer"}, "meta": {"branch=trunk"}, "time": {"2025-08-07T10:00:00Z"}}
	if !reflect.DeepEqual(got, want) || gotTable != table {
		t.Errorf("the server got %v and table %q, want %v and the file", got, gotTable, want)
	}
	if out := stdout.String(); out != ts.URL+"/runs/3\n"+ts.URL+"/runs/4\n"+ts.URL+"/compare?runs=3,4\n" {
		t.Errorf("stdout %q", out)
	}

	bad := filepath.Join(dir, "bad.md")
	os.WriteFile(bad, []byte("| Metric | x | y |\n| io-ratio | 0.1 | slow |\n"), 0o644)
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"import", "--server", ts.URL, "--table", bad, "--workload", "consumer"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), bad+":2:20: ") {
		t.Errorf("refused table: exit %d, stderr %s", code, stderr.String())
	}

	requests = 0
	for _, args := range [][]string{
		{"--table", file},
		{"--table", file, "--workload", "consumer", "--label", "x"},
		{"--table", file, "--workload", "consumer", "--series", "s"},
		{"--table", file, "--workload", "consumer", "other.md"},
	} {
		stderr.Reset()
		if code := Main(append([]string{"import", "--server", ts.URL}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("import %v: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
	if requests != 0 {
		t.Errorf("%d requests sent by refused commands", requests)
	}
}

// TestImportCommandLineFlag: --command reaches the API's command field
// as typed; with a result directory it is a usage error.
func TestImportCommandLineFlag(t *testing.T) {
	var got map[string][]string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ParseMultipartForm(1<<20) != nil {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		got = r.MultipartForm.Value
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":9,"url":"/runs/9","workload":"producer"}`))
	}))
	defer ts.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "out.txt")
	os.WriteFile(file, []byte("1 records sent\n"), 0o644)
	command := `bin/kafka-producer-perf-test.sh --topic t --num-records 1 --record-size 100 --throughput -1 --producer-props acks=all`
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"import", "--server", ts.URL, "--label", "java", "--command", command, file}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if c := got["command"]; len(c) != 1 || c[0] != command {
		t.Errorf("the server got command %q, want %q", c, command)
	}
	os.WriteFile(filepath.Join(dir, "result.json"), []byte(`{"workload":"producer"}`), 0o644)
	if code := Main([]string{"import", "--server", ts.URL, "--command", command, dir}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--command") {
		t.Errorf("--command with a result directory: exit %d, %s", code, stderr.String())
	}
}
