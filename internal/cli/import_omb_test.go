package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ombSample is a result written by hand in OMB's format (internal/omb's
// test data).
const ombSample = "../omb/testdata/kafka-1-topic-16-partitions-1kb.json"

// TestImportOMBCommand: `kbench import FILE...` of OMB results, told
// from their contents or said with --omb, sends every file as the API's
// "omb" field with the label, meta and time, and prints the runs' URLs
// and their comparison's; a refusal exits 1 with the server's message
// (its field); flags that do not fit OMB results are usage errors (exit
// 2) and nothing is sent.
func TestImportOMBCommand(t *testing.T) {
	var got map[string][]string
	var files []string
	requests := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if r.URL.Path != "/api/import" || r.ParseMultipartForm(32<<20) != nil {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		got, files = r.MultipartForm.Value, nil
		for _, fh := range r.MultipartForm.File["omb"] {
			f, _ := fh.Open()
			data, _ := io.ReadAll(f)
			f.Close()
			files = append(files, fh.Filename+":"+string(data[:min(len(data), 14)]))
		}
		w.Header().Set("Content-Type", "application/json")
		if len(files) == 3 {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"omb[2].publishRate: holds no 10 s window (c.json)","field":"omb[2].publishRate"}`))
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"runs":[{"id":3,"url":"/runs/3","label":"Kafka"},{"id":4,"url":"/runs/4","label":"Kafka"}],"compare_url":"/compare?runs=3,4"}`))
	}))
	defer ts.Close()
	sample, err := os.ReadFile(ombSample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, b, odd := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")
	os.WriteFile(a, sample, 0o644)
	os.WriteFile(b, sample, 0o644)
	os.WriteFile(odd, []byte(`{"workload":"w","driver":"d"}`), 0o644)

	var stdout, stderr bytes.Buffer
	code := Main([]string{"import", "--server", ts.URL, a, b, "--meta", "branch=trunk", "--time", "2025-08-07T10:00:00Z", "--label", "k"}, &stdout, &stderr)
	if code != 0 || stdout.String() != ts.URL+"/runs/3\n"+ts.URL+"/runs/4\n"+ts.URL+"/compare?runs=3,4\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout.String(), stderr.String())
	}
	want := map[string][]string{"label": {"k"}, "meta": {"branch=trunk"}, "time": {"2025-08-07T10:00:00Z"}}
	if !reflect.DeepEqual(got, want) || strings.Join(files, " ") != "a.json:{\n  \"workload\" b.json:{\n  \"workload\"" {
		t.Errorf("the server got %v and files %q", got, files)
	}
	// c.json is no OMB result by its contents (no list): --omb says it
	// is, and the server's refusal is the exit status and message.
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"import", "--server", ts.URL, "--omb", a, b, odd}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "omb[2].publishRate: holds no 10 s window (c.json)") {
		t.Errorf("a refused file: exit %d, stderr %s", code, stderr.String())
	}
	requests = 0
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--omb", "--profile", "p.pb.gz", a}, "--profile: not with OMB results"},
		{[]string{"--omb", "--command", "x", a}, "--command: not with OMB results"},
		{[]string{"--omb"}, "name the OMB result files"},
		{[]string{"--omb", "-", "-"}, "stdin"},
		{[]string{"--omb", filepath.Join(dir, "missing.json")}, "missing.json"},
		// Without --omb, files that are not all OMB results are what
		// they were: one output file per run.
		{[]string{"--label", "x", a, odd}, "one output file or directory per run"},
	} {
		stderr.Reset()
		if code := Main(append([]string{"import", "--server", ts.URL}, tc.args...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%v: exit %d, stderr %s; want 2 saying %q", tc.args, code, stderr.String(), tc.says)
		}
	}
	if requests != 0 {
		t.Errorf("%d requests sent for bad usage", requests)
	}
}
