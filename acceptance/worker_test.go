package acceptance

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestE2EWorkersTakeTheirQueues: kbench serve on PostgreSQL with no local
// worker, and two kbench worker processes on queues lab-a and lab-b. Each
// run submitted through the API runs on its queue's worker (its files in
// that worker's --data, the worker's host on the run), and its result
// and profiles are served by the server from the database. A per-run
// password for a worker's queue and an invalid queue are refused with
// 400. SIGTERM of a worker interrupts its running run, leaves the run
// queued behind it queued, and the queue's next worker executes it.
func TestE2EWorkersTakeTheirQueues(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench and starts processes")
	}
	database := pgtest.URL(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	serveData := t.TempDir()
	_, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", serveData,
		"--database", database, "--local-worker=false")
	srv := &e2eServer{URL: m[1], http: e2eHTTPClient()}
	_, dirA := startE2EWorker(t, database, "lab-a")
	workerB, dirB := startE2EWorker(t, database, "lab-b")

	tiny := map[string]any{"num-records": 2000, "record-size": 100, "throughput": -1}
	ids := map[string]uint{}
	for _, q := range []string{"lab-a", "lab-b"} {
		ids[q] = srv.createRun(t, map[string]any{"workload": "producer", "label": "on-" + q, "queue": q, "params": tiny})
	}
	for q, id := range ids {
		r := waitRun(t, srv, id, "final", func(r e2eWorkerRun) bool { return r.Status != "queued" && r.Status != "running" })
		if r.Status != "succeeded" || r.Queue != q || r.Worker != host {
			t.Errorf("run %d of %s: %s %q, queue %q, worker %q; want succeeded on %s", id, q, r.Status, r.Error, r.Queue, r.Worker, host)
		}
		mine, other := dirA, dirB
		if q == "lab-b" {
			mine, other = dirB, dirA
		}
		runDir := filepath.Join("runs", fmt.Sprint(id))
		if _, err := os.Stat(filepath.Join(mine, runDir, "result.json")); err != nil {
			t.Errorf("run %d of %s: no result.json in its worker's --data: %v", id, q, err)
		}
		for _, dir := range []string{other, serveData} {
			if _, err := os.Stat(filepath.Join(dir, runDir)); err == nil {
				t.Errorf("run %d of %s: files in %s too", id, q, dir)
			}
		}
		if len(r.Metrics) == 0 || len(r.Profiles) == 0 {
			t.Fatalf("run %d of %s: %d metrics, %d profiles served; want both", id, q, len(r.Metrics), len(r.Profiles))
		}
		resp, err := srv.http.Get(srv.URL + r.Profiles[0].Download)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body.Bytes(), []byte{0x1f, 0x8b}) {
			t.Errorf("run %d of %s: profile download %d, %d bytes; want 200 and a gzipped profile", id, q, resp.StatusCode, body.Len())
		}
	}
	var list client.RunList
	srv.api(t, http.MethodGet, "/api/runs", nil, http.StatusOK, &list)
	for _, r := range list.Runs {
		if r.Worker != host || (r.ID != ids["lab-a"] && r.ID != ids["lab-b"]) {
			t.Errorf("GET /api/runs: run %d on worker %q in %s", r.ID, r.Worker, r.Queue)
		}
	}
	page := srv.get(t, "/runs/new")
	for _, q := range []string{"local", "lab-a", "lab-b"} {
		if !strings.Contains(page, `<option value="`+q+`">`) {
			t.Errorf("the new-run form does not offer queue %s", q)
		}
	}

	var refused client.ErrorBody
	srv.api(t, http.MethodPost, "/api/runs", map[string]any{"workload": "producer", "queue": "Lab A", "params": tiny}, http.StatusBadRequest, &refused)
	if len(refused.Errors) != 1 || refused.Errors[0].Field != "queue" {
		t.Errorf("an invalid queue: errors %+v, want one naming queue", refused.Errors)
	}
	refused.Errors = nil
	srv.api(t, http.MethodPost, "/api/runs", map[string]any{"workload": "producer", "queue": "lab-a", "params": tiny,
		"target": map[string]any{"bootstrap_server": "127.0.0.1:9092", "security_protocol": "SASL_PLAINTEXT",
			"sasl_mechanism": "PLAIN", "sasl_username": "u", "sasl_password": "not-for-workers"}}, http.StatusBadRequest, &refused)
	named := false
	for _, e := range refused.Errors {
		named = named || e.Field == "queue" && strings.Contains(e.Error, "name a cluster")
	}
	if !named {
		t.Errorf("a per-run password for lab-a: errors %+v, want one on queue saying to name a cluster", refused.Errors)
	}

	// A long run on lab-b, and one queued behind it; SIGTERM to lab-b's worker.
	long := srv.createRun(t, map[string]any{"workload": "producer", "queue": "lab-b", "params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}})
	behind := srv.createRun(t, map[string]any{"workload": "producer", "queue": "lab-b", "params": tiny})
	waitRun(t, srv, long, "running", func(r e2eWorkerRun) bool { return r.Status == "running" })
	workerB.signal(t, syscall.SIGTERM)
	if r := waitRun(t, srv, long, "final", func(r e2eWorkerRun) bool { return r.Status != "running" }); r.Status != "interrupted" {
		t.Errorf("the running run after SIGTERM of its worker: %s %q, want interrupted", r.Status, r.Error)
	}
	if r := waitRun(t, srv, behind, "read", func(e2eWorkerRun) bool { return true }); r.Status != "queued" {
		t.Fatalf("the run queued behind it after SIGTERM of its worker: %s %q, want queued", r.Status, r.Error)
	}
	_, dirB2 := startE2EWorker(t, database, "lab-b")
	if r := waitRun(t, srv, behind, "final", func(r e2eWorkerRun) bool { return r.Status != "queued" && r.Status != "running" }); r.Status != "succeeded" {
		t.Errorf("the queued run with lab-b's next worker: %s %q, want succeeded", r.Status, r.Error)
	}
	if _, err := os.Stat(filepath.Join(dirB2, "runs", fmt.Sprint(behind), "result.json")); err != nil {
		t.Errorf("the queued run did not run on lab-b's next worker: %v", err)
	}
}

// TestWorkerRefusesSQLite: kbench worker needs the shared PostgreSQL
// store (exit 2 without it or with an SQLite path), and an unreachable
// database exits 1 naming it with its password redacted.
func TestWorkerRefusesSQLite(t *testing.T) {
	tier.Integration(t, "builds and starts kbench")
	const secret = "Pw-n0t-shown"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "a worker needs the shared PostgreSQL store"},
		{[]string{"--database", filepath.Join(t.TempDir(), "kbench.db")}, 2, "is an SQLite file"},
		{[]string{"--database", "postgres://kbench:" + secret + "@127.0.0.1:1/kbench?sslmode=disable&connect_timeout=2"}, 1, "postgres://kbench:xxxxx@127.0.0.1:1/kbench"},
		// A named cluster's file is checked before anything is opened.
		{[]string{"--database", "postgres://kbench@127.0.0.1:1/kbench", "--cluster", "lab=" + filepath.Join(t.TempDir(), "missing.properties")}, 2, "--cluster lab="},
	} {
		cmd := exec.Command(e2eKbench(t), append([]string{"worker", "--data", t.TempDir()}, tc.args...)...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KBENCH_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != tc.code {
			t.Errorf("kbench worker %v: %v, want exit status %d\n%s", tc.args, err, tc.code, out)
		}
		if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), secret) {
			t.Errorf("kbench worker %v: %q, want %q and no password", tc.args, out, tc.want)
		}
	}
}

// TestE2ERemoteRunLive: a run executed by a kbench worker in another
// process is live on the server's run page: its status turns running,
// Kafka's interval lines arrive in the live output while it runs, and
// the page shows the result when the worker stores it. The server's
// cached runs list, rendered while the run was queued, shows it
// succeeded afterwards: the worker's write reached the server's cache
// through the database.
func TestE2ERemoteRunLive(t *testing.T) {
	e2eSkip(t)
	t.Parallel() // waits on its processes most of the time: see test.sh
	database := pgtest.URL(t)
	_, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(),
		"--database", database, "--local-worker=false")
	srv := &e2eServer{URL: m[1], http: e2eHTTPClient()}
	b := startE2EBrowser(t)

	id := srv.createRun(t, map[string]any{"workload": "producer", "label": "remote-live", "queue": "lab-a",
		"params": map[string]any{"num-records": 30000, "throughput": 5000, "reporting-interval": 500, "profile": "none"}})
	row := func(status string) string { return fmt.Sprintf(`data-run-id="%d" data-status="%s"`, id, status) }
	if list := srv.get(t, "/"); !strings.Contains(list, row("queued")) {
		t.Fatalf("the runs list does not show run %d queued", id)
	}
	b.do(t, "open the queued run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, id)))
	b.poll(t, "the live connection of the queued run", `document.getElementById('run').getAttribute('data-live') === 'true' &&
		/^Live/.test(document.getElementById('connection-state').textContent)`)

	startE2EWorker(t, database, "lab-a")
	b.poll(t, "the remote run running, with two interval lines in its live output", `(() => {
		const out = document.getElementById('live-output');
		return document.getElementById('run-status').textContent.trim() === 'running' &&
			!!out && (out.textContent.match(/records sent/g) || []).length >= 2;
	})()`)
	if live := e2eEval[string](t, b, "read data-live", `document.getElementById('run').getAttribute('data-live') || ''`); live != "true" {
		t.Fatalf("the page stopped being live before the run ended (data-live=%q)", live)
	}
	b.waitFor(t, "the remote run's final page", e2eFinalView)
	if status := e2eEval[string](t, b, "read the status", `document.getElementById('run-status').textContent.trim()`); status != "succeeded" {
		t.Errorf("the remote run's page: %s, want succeeded", status)
	}
	b.checkConsole(t)
	if list := srv.get(t, "/"); !strings.Contains(list, row("succeeded")) {
		t.Errorf("the server's runs list does not show run %d succeeded", id)
	}
}
