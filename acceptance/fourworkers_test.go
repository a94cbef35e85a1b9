package acceptance

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// e2eClusterPassword is the SASL password of the cluster the lab-a
// workers name: it must appear nowhere but in their cluster file.
const e2eClusterPassword = "worker-only-Secret-4f1c"

// TestE2EFourWorkers: kbench serve on PostgreSQL with no local worker,
// and four kbench worker processes: two on lab-a naming the cluster
// "lab" (a SASL broker whose password is only in their properties file),
// two on lab-b running on the embedded broker.
//
//   - Routing: every run executes once, on a worker of its own queue (its
//     directory in exactly one worker's --data), and succeeds; the lab-a
//     runs reach the SASL broker through the named cluster.
//   - The password is nowhere but the cluster file: not in any row of any
//     table of the database (River's included), not in any API answer,
//     run page or event stream, not in any process's output.
//   - A server restart loses no queued run: runs queued for lab-c, which
//     has no worker yet, survive SIGTERM of the server and a new server,
//     and run once a lab-c worker starts.
func TestE2EFourWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench and starts processes")
	}
	t.Parallel() // waits on its processes most of the time: see test.sh
	database := pgtest.URL(t)
	broker, err := embeddedbroker.Start(embeddedbroker.Options{Users: []embeddedbroker.User{{Mechanism: "PLAIN", Name: "bench", Password: e2eClusterPassword}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	clusterFile := filepath.Join(t.TempDir(), "lab.properties")
	props := fmt.Sprintf("bootstrap.servers=%s\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"bench\" password=\"%s\";\n",
		broker.Addr(), e2eClusterPassword)
	if err := os.WriteFile(clusterFile, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}

	serve := func() (*e2eProcess, *e2eServer) {
		p, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(),
			"--database", database, "--local-worker=false")
		return p, &e2eServer{URL: m[1], http: e2eHTTPClient()}
	}
	server, srv := serve()
	var procs []*e2eProcess
	dirs := map[string][]string{}
	worker := func(queue string, args ...string) {
		data := t.TempDir()
		p, m := startE2EProcess(t, "kbench worker "+queue, e2eWorkerLine,
			append([]string{"worker", "--database", database, "--queue", queue, "--data", data}, args...)...)
		if m[2] != queue {
			t.Fatalf("worker says it takes runs from %s, want %s", m[2], queue)
		}
		procs = append(procs, p)
		dirs[queue] = append(dirs[queue], data)
	}
	for range 2 {
		worker("lab-a", "--cluster", "lab="+clusterFile)
		worker("lab-b")
	}

	tiny := map[string]any{"num-records": 2000, "record-size": 100, "throughput": -1, "profile": "none"}
	queueOf := map[uint]string{}
	for i := range 4 {
		for _, q := range []string{"lab-a", "lab-b"} {
			body := map[string]any{"workload": "producer", "label": fmt.Sprintf("%s-%d", q, i), "queue": q, "params": tiny}
			if q == "lab-a" {
				body["target"] = map[string]any{"cluster": "lab"}
			}
			queueOf[srv.createRun(t, body)] = q
		}
	}
	final := func(r e2eWorkerRun) bool { return r.Status != "queued" && r.Status != "running" }
	for id, q := range queueOf {
		if r := waitRun(t, srv, id, "final", final); r.Status != "succeeded" || r.Queue != q {
			t.Errorf("run %d of %s: %s %q in queue %s; want succeeded", id, q, r.Status, r.Error, r.Queue)
		}
		var holders []string
		for queue, ds := range dirs {
			for _, d := range ds {
				if _, err := os.Stat(filepath.Join(d, "runs", fmt.Sprint(id))); err == nil {
					holders = append(holders, queue)
				}
			}
		}
		if len(holders) != 1 || holders[0] != q {
			t.Errorf("run %d of %s was executed by workers of %v; want exactly one of %s", id, q, holders, q)
		}
	}

	// Runs for lab-c, which has no worker: they wait through a restart of
	// the server.
	waiting := []uint{
		srv.createRun(t, map[string]any{"workload": "producer", "queue": "lab-c", "params": tiny}),
		srv.createRun(t, map[string]any{"workload": "producer", "queue": "lab-c", "params": tiny}),
	}
	server.signal(t, syscall.SIGTERM)
	_, srv = serve()
	for _, id := range waiting {
		if r := waitRun(t, srv, id, "read", func(e2eWorkerRun) bool { return true }); r.Status != "queued" {
			t.Fatalf("run %d for lab-c after the server restarted: %s %q, want queued", id, r.Status, r.Error)
		}
	}
	worker("lab-c")
	for _, id := range waiting {
		if r := waitRun(t, srv, id, "final", final); r.Status != "succeeded" {
			t.Errorf("run %d for lab-c with its worker: %s %q, want succeeded", id, r.Status, r.Error)
		}
		queueOf[id] = "lab-c"
	}

	// The password: nowhere in the database, the answers or the output.
	seen := func(where, text string) {
		if strings.Contains(text, e2eClusterPassword) {
			t.Errorf("the cluster's password is in %s", where)
		}
	}
	for table, text := range e2eDatabaseText(t, database) {
		seen("table "+table, text)
	}
	var ids []string
	for id := range queueOf {
		ids = append(ids, fmt.Sprint(id))
	}
	runs := strings.Join(ids, ",")
	for _, path := range []string{"/api/runs", "/", "/runs/new", "/compare?runs=" + runs, "/api/compare?runs=" + runs} {
		seen(path, e2eBody(t, srv, path))
	}
	for id := range queueOf {
		for _, path := range []string{"/api/runs/%d", "/runs/%d", "/api/runs/%d/events", "/api/runs/%d/profiles"} {
			seen(fmt.Sprintf(path, id), e2eBody(t, srv, fmt.Sprintf(path, id)))
		}
	}
	for _, p := range append(procs, server) {
		seen(p.name+"'s output", p.stdout.String()+p.stderr.String())
	}
}

// e2eDatabaseText is every row of every table of the database's current
// schema as PostgreSQL's text form, by table.
func e2eDatabaseText(t *testing.T, url string) map[string]string {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 5 {
		t.Fatalf("the database has tables %v: not kbench's", tables)
	}
	out := map[string]string{}
	for _, table := range tables {
		rows, err := db.Query(fmt.Sprintf(`SELECT t::text FROM %q t`, table))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatal(err)
			}
			b.WriteString(row)
			b.WriteByte('\n')
		}
		rows.Close()
		out[table] = b.String()
	}
	return out
}

// e2eBody fetches path and returns its body whatever its status (an
// error page must not show a secret either).
func e2eBody(t *testing.T, s *e2eServer, path string) string {
	t.Helper()
	resp, err := s.http.Get(s.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return string(b)
}
