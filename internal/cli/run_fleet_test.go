package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kbench/kbench/client"
)

// TestRunWorkersSubmits: kbench run --workers N --server URL submits the
// run as a fleet run (workers, queue, barrier_timeout_s and the
// workload's params) and prints the parent's URL; it runs nothing here.
// Without --server, or with --out, it is a usage error.
func TestRunWorkersSubmits(t *testing.T) {
	var got client.CreateRuns
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/runs" || json.NewDecoder(r.Body).Decode(&got) != nil {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":40,"url":"/runs/40","status":"queued"}`))
	}))
	defer ts.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"run", "producer", "--bootstrap-server", "kafka-1:9092", "--topic", "t", "--partitions", "8", "--threads", "4",
		"--num-records", "60000", "--throughput", "2000", "--workers", "4", "--queue", "lab", "--barrier-timeout", "30",
		"--meta", "commit=abc", "--server", ts.URL}
	if code := Main(args, &stdout, &stderr); code != 0 || stdout.String() != ts.URL+"/runs/40\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout.String(), stderr.String())
	}
	if got.Workers != 4 || got.Queue != "lab" || got.BarrierTimeoutS != 30 || got.Workload != "producer" || got.Meta["commit"] != "abc" {
		t.Errorf("request %+v", got)
	}
	if string(got.Params["bootstrap-server"]) != `"kafka-1:9092"` || string(got.Params["throughput"]) != "2000" {
		t.Errorf("params %s", got.Params)
	}
	for _, bad := range [][]string{
		{"run", "producer", "--workers", "2"},
		{"run", "producer", "--workers", "2", "--server", ts.URL, "--out", t.TempDir()},
		{"run", "producer", "--queue", "lab"},
		{"run", "producer", "--workers", "11", "--server", ts.URL},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := Main(bad, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--") {
			t.Errorf("%q: exit %d, stderr %s; want a usage error", bad, code, stderr.String())
		}
	}
}
