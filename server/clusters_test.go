package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/ui"
)

// clusterPassword is the named cluster's password: it exists in the
// properties file only.
const clusterPassword = "Cl-5e4d3c-only-in-the-file"

// saslBroker starts an embedded broker that takes user bench with
// clusterPassword over SASL PLAIN.
func saslBroker(t *testing.T) *embeddedbroker.Broker {
	t.Helper()
	b, err := embeddedbroker.Start(embeddedbroker.Options{Users: []embeddedbroker.User{{Mechanism: "PLAIN", Name: "bench", Password: clusterPassword}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// writeClusterFile writes a client.properties for addr with password,
// outside any server's data directory, and returns its path.
func writeClusterFile(t *testing.T, path, addr, password string) string {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "lab.properties")
	}
	text := fmt.Sprintf("# the lab cluster\nbootstrap.servers=%s\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"bench\" password=\"%s\";\n", addr, password)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func namedClusters(t *testing.T, values ...string) *clusters.Set {
	t.Helper()
	set, err := clusters.Parse(values, runner.Validate)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestNamedClusterRun: a run targets a named cluster whose file holds a
// SASL PLAIN password the broker needs, without --allow-target; it
// succeeds, records the cluster's name in its spec and environment and
// belongs to the cluster's series, and the password is nowhere: not in
// the database file, the data directory, the logs, the pages, the API's
// answers or the comparison's exports. An edited file applies to the
// next run; one that became invalid fails its run, saying why.
func TestNamedClusterRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	b := saslBroker(t)
	file := writeClusterFile(t, "", b.Addr(), clusterPassword)
	ts := newRunningTestServer(t, func(c *Config) { c.Clusters = namedClusters(t, "lab="+file) })

	id := ts.createRun(t, `{"workload":"producer","label":"lab","target":{"cluster":"lab"},"params":{"num-records":2000,"profile":["cpu"]}}`)
	r := ts.waitFinal(t, id)
	if r.Status != rundoc.StatusSucceeded {
		t.Fatalf("run on the named cluster: %s %s", r.Status, r.Error)
	}
	var spec rundoc.SpecFile
	if err := json.Unmarshal(r.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	if string(spec.Params["cluster"]) != `"lab"` {
		t.Errorf("stored spec %s does not name the cluster", r.Spec)
	}
	full := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), "")
	var env struct {
		Environment struct {
			Broker string
			Target struct{ Kind, Cluster string }
		}
	}
	json.Unmarshal(full.Body.Bytes(), &env)
	if env.Environment.Target.Cluster != "lab" || env.Environment.Target.Kind != rundoc.TargetCluster || env.Environment.Broker != b.Addr() {
		t.Errorf("environment %+v, want the cluster lab at %s", env.Environment, b.Addr())
	}

	// The cluster moves: the same name, other brokers; the history stays.
	b2 := saslBroker(t)
	writeClusterFile(t, file, b2.Addr(), clusterPassword)
	id2 := ts.createRun(t, `{"workload":"producer","label":"lab","target":{"cluster":"lab"},"params":{"num-records":2000,"profile":["cpu"]}}`)
	r2 := ts.waitFinal(t, id2)
	if r2.Status != rundoc.StatusSucceeded {
		t.Fatalf("run after the cluster moved: %s %s", r2.Status, r2.Error)
	}
	json.Unmarshal(ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id2), "").Body.Bytes(), &env)
	if env.Environment.Broker != b2.Addr() {
		t.Errorf("the edited file was not read: broker %q, want %s", env.Environment.Broker, b2.Addr())
	}
	if r2.SeriesKey != r.SeriesKey || r2.Fingerprint != r.Fingerprint {
		t.Errorf("series %q then %q: a cluster's runs keep one series when it moves", r.SeriesKey, r2.SeriesKey)
	}
	// The same workload on the embedded broker, or on the same brokers
	// given as a bootstrap target, is another series.
	prepared, err := ts.launcher.Prepare(&launch.Request{Workload: "producer", Params: map[string]json.RawMessage{"num-records": json.RawMessage("2000"), "profile": json.RawMessage(`["cpu"]`)}})
	if err != nil {
		t.Fatal(err)
	}
	embeddedFP, _ := prepared.Fingerprint()
	prepared.BootstrapServer = b2.Addr()
	bootstrapFP, _ := prepared.Fingerprint()
	if embeddedFP == r.Fingerprint || bootstrapFP == r.Fingerprint {
		t.Errorf("the named cluster's series is shared with a run that does not name it")
	}

	// A wrong password in the file: the run really logs in with it.
	writeClusterFile(t, file, b2.Addr(), clusterPassword+"-wrong")
	id3 := ts.createRun(t, `{"workload":"producer","target":{"cluster":"lab"},"params":{"num-records":100,"profile":"none"}}`)
	if r3 := ts.waitFinal(t, id3); r3.Status != rundoc.StatusFailed || !strings.Contains(strings.ToLower(r3.Error), "authentication") {
		t.Errorf("wrong password in the file: %s %q, want failed saying authentication failed", r3.Status, r3.Error)
	}
	// A file that became invalid fails its run with the reason.
	if err := os.WriteFile(file, []byte("security.protocol=SASL_PLAINTEXT\nsasl.password="+clusterPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id4 := ts.createRun(t, `{"workload":"producer","target":{"cluster":"lab"},"params":{"num-records":100,"profile":"none"}}`)
	r4 := ts.waitFinal(t, id4)
	if r4.Status != rundoc.StatusFailed || !strings.Contains(r4.Error, "cluster lab") || !strings.Contains(r4.Error, "bootstrap.servers is missing") {
		t.Errorf("invalid file: %s %q, want failed naming the cluster and what is wrong", r4.Status, r4.Error)
	}

	var answers bytes.Buffer
	ids := fmt.Sprintf("%d,%d,%d,%d", id, id2, id3, id4)
	paths := []string{"/", "/api/runs", "/runs/new", "/compare?runs=" + ids, "/api/compare?runs=" + ids,
		"/history?series=" + r.SeriesKey, "/api/history?series=" + r.SeriesKey}
	for _, n := range []uint{id, id2, id3, id4} {
		paths = append(paths, fmt.Sprintf("/runs/%d", n), fmt.Sprintf("/api/runs/%d", n), fmt.Sprintf("/api/runs/%d/profiles", n))
	}
	for _, p := range paths {
		rec := ts.do(t, "GET", p, "")
		answers.Write(rec.Body.Bytes())
	}
	// A report's page and exports.
	rep, err := ts.createReport(context.Background(), reportRequest{Title: "lab", Runs: []uint{id, id2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"", ".md", ".csv", ".json"} {
		rec := ts.do(t, "GET", ui.ReportURL(rep.Slug, ext), "")
		if rec.Code != http.StatusOK {
			t.Errorf("report%s: %d", ext, rec.Code)
		}
		answers.Write(rec.Body.Bytes())
	}
	ts.st.Close() // flush the WAL into the file
	var files bytes.Buffer
	filepath.Walk(ts.dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			files.Write(data)
		}
		return nil
	})
	if !strings.Contains(files.String(), "SASL_PLAINTEXT") || !strings.Contains(answers.String(), b.Addr()) {
		t.Fatalf("the search would find nothing: the runs' records are missing")
	}
	for name, text := range map[string]string{"pages and API": answers.String(), "logs": ts.logs.String(), "data directory and database": files.String()} {
		if strings.Contains(text, clusterPassword) {
			t.Errorf("the password appears in the %s", name)
		}
	}
}

// TestNamedClusterRefusals: an unknown cluster, a cluster with the
// target's other fields, a bootstrap server or a connection property in
// the params, or a "cluster" param are 400s naming the field.
func TestNamedClusterRefusals(t *testing.T) {
	file := writeClusterFile(t, "", "127.0.0.1:9", clusterPassword)
	ts := newTestServer(t, func(c *Config) { c.Clusters = namedClusters(t, "lab="+file, "prod="+file) })
	for _, tc := range []struct{ name, body, field, says string }{
		{"unknown", `{"workload":"producer","target":{"cluster":"nope"}}`, "target.cluster", "lab, prod"},
		{"with sasl fields", `{"workload":"producer","target":{"cluster":"lab","sasl_username":"x","sasl_password":"y"}}`, "target.cluster", "sasl_username, sasl_password"},
		{"with a bootstrap server", `{"workload":"producer","target":{"cluster":"lab","bootstrap_server":"127.0.0.1:9"}}`, "target.cluster", "bootstrap_server"},
		{"servers in params", `{"workload":"consumer","target":{"cluster":"lab"},"params":{"bootstrap-server":"evil:9092"}}`, "bootstrap-server", "named cluster"},
		{"connection props in params", `{"workload":"producer","target":{"cluster":"lab"},"params":{"producer-props":{"bootstrap.servers":"evil:9092","acks":"1"}}}`, "producer-props", "bootstrap.servers"},
		{"cluster param", `{"workload":"producer","params":{"cluster":"lab"}}`, "cluster", "target"},
		{"write path", `{"workload":"writepath","target":{"cluster":"lab"}}`, "target.cluster", "write path"},
		{"A/B unknown", `{"workload":"producer","configs":[{"label":"A","target":{"cluster":"lab"}},{"label":"B","target":{"cluster":"gone"}}]}`, "configs[1].target.cluster", "lab, prod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tc.body)
			var resp struct {
				Field  string
				Errors []struct{ Field, Error string }
			}
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("got %d %s, want 400", rec.Code, rec.Body)
			}
			found := false
			for _, e := range resp.Errors {
				found = found || (e.Field == tc.field && strings.Contains(e.Error, tc.says))
			}
			if !found {
				t.Errorf("got %s, want an error on %s saying %q", rec.Body, tc.field, tc.says)
			}
		})
	}
	// Accepted: the cluster and workload properties of the run's own.
	if rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","target":{"cluster":"prod"},"params":{"producer-props":{"acks":"1"},"num-records":10,"profile":"none"}}`); rec.Code != http.StatusCreated {
		t.Errorf("a run on a named cluster with its own acks: %d %s", rec.Code, rec.Body)
	}
}

// TestNamedClusterRestart: a run queued on a named cluster survives a
// restart of a server that still names the cluster, and runs on it; one
// queued on a cluster the restarted server no longer names is canceled
// saying so.
func TestNamedClusterRestart(t *testing.T) {
	bin := kbenchBin(t)
	b := saslBroker(t)
	file := writeClusterFile(t, "", b.Addr(), clusterPassword)
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	named := namedClusters(t, "lab="+file)
	// Queue two runs through the server's own validation and storing, on
	// a server whose queue never started: both stay queued, as when a
	// server stops before taking them.
	cfg := Config{DataDir: dir, KbenchCommand: []string{bin}, Clusters: named, Logger: quiet}
	before, err := New(cfg, testDeps(st, newLifecycle(t, cfg, st)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint
	for i := 0; i < 2; i++ {
		req := launch.Request{Workload: "producer", Target: &launch.Target{Cluster: "lab"},
			Params: map[string]json.RawMessage{"num-records": json.RawMessage("500"), "profile": json.RawMessage(`"none"`)}}
		spec, err := before.launcher.Prepare(&req)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := before.launcher.CreateRuns(ctx, req, spec)
		if err == nil || len(runs) != 0 {
			t.Fatalf("submit to a queue never started: %v", err)
		}
	}
	queued, err := st.QueuedRuns(ctx)
	if err != nil || len(queued) != 2 {
		t.Fatalf("queued runs: %d %v", len(queued), err)
	}
	for _, r := range queued {
		ids = append(ids, r.ID)
		if strings.Contains(r.Spec, clusterPassword) || strings.Contains(r.Spec, b.Addr()) {
			t.Errorf("stored spec %s holds the cluster's properties", r.Spec)
		}
	}

	// Restarted still naming lab: the first run executes.
	lc := newLifecycle(t, cfg, st)
	s, err := New(cfg, testDeps(st, lc))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, local: lc, dir: dir, st: st}
	if err := lc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if r := ts.waitFinal(t, id); r.Status != rundoc.StatusSucceeded {
			t.Errorf("run %d queued before a restart keeping the cluster: %s %q, want succeeded", id, r.Status, r.Error)
		}
	}
	s.Close()
	lc.Close()

	// A run queued again, and a restart without the cluster.
	req := launch.Request{Workload: "producer", Target: &launch.Target{Cluster: "lab"},
		Params: map[string]json.RawMessage{"num-records": json.RawMessage("500"), "profile": json.RawMessage(`"none"`)}}
	spec, err := before.launcher.Prepare(&req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.launcher.CreateRuns(ctx, req, spec); err == nil {
		t.Fatal("submit to a queue never started succeeded")
	}
	queued, _ = st.QueuedRuns(ctx)
	if len(queued) != 1 {
		t.Fatalf("%d runs queued, want 1", len(queued))
	}
	other := namedClusters(t, "prod="+file)
	cfg2 := Config{DataDir: dir, KbenchCommand: []string{bin}, Clusters: other, Logger: quiet}
	lc2 := newLifecycle(t, cfg2, st)
	s2, err := New(cfg2, testDeps(st, lc2))
	if err != nil {
		t.Fatal(err)
	}
	if err := lc2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer lc2.Close()
	if err := s2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, _ := st.GetRun(ctx, queued[0].ID)
	want := `canceled when the server restarted: no cluster "lab": the clusters named here are prod`
	if got.Status != rundoc.StatusCanceled || got.Error != want {
		t.Errorf("queued run on a cluster no longer named: %s %q, want canceled %q", got.Status, got.Error, want)
	}
}

// TestNamedClusterForm: the new-run form offers the server's named
// clusters (and only when it names some); choosing one queues a run on
// it, and a name the server does not know is shown beside the select.
func TestNamedClusterForm(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	if body := newTestServer(t, nil).do(t, "GET", "/runs/new", "").Body.String(); strings.Contains(body, `name="target.cluster"`) {
		t.Errorf("a server naming no cluster offers named clusters")
	}
	file := writeClusterFile(t, "", "127.0.0.1:9", clusterPassword)
	ts := newTestServer(t, func(c *Config) { c.Clusters = namedClusters(t, "lab="+file, "prod="+file) })
	page := ts.do(t, "GET", "/runs/new", "").Body.String()
	for _, want := range []string{`value="cluster"`, `name="target.cluster"`, `<option value="lab"`, `<option value="prod"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	rec := ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "target": {"cluster"}, "target.cluster": {"prod"},
		"num-records": {"10"}, "profile": {"none"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form on a named cluster: %d %s", rec.Code, rec.Body)
	}
	var id uint
	fmt.Sscanf(rec.Header().Get("Location"), "/runs/%d", &id)
	r, err := ts.st.GetRun(context.Background(), id)
	if err != nil || !strings.Contains(r.Spec, `"cluster":"prod"`) {
		t.Errorf("run %d from the form: spec %q (%v), want it on cluster prod", id, r.Spec, err)
	}
	rec = ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "target": {"cluster"}, "target.cluster": {"gone"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `id="f-target-cluster-error"`) ||
		!strings.Contains(rec.Body.String(), "the clusters named here are lab, prod") {
		t.Errorf("unknown cluster from the form: %d, want 400 with the error beside the select", rec.Code)
	}
}

// TestNamedClusterOnWorkerQueues: on a shared PostgreSQL store, a run for
// another queue names a cluster its live workers name (their registered
// names; the files stay on them); an unknown one is a 400 listing the
// queue's clusters, not the server's; a queue with no live worker takes
// the name, for its worker to check when it takes the run.
func TestNamedClusterOnWorkerQueues(t *testing.T) {
	file := writeClusterFile(t, "", "127.0.0.1:9", clusterPassword)
	ts := newTestServerOn(t, pgtest.URL(t), func(c *Config) { c.Clusters = namedClusters(t, "local-only="+file) })
	ctx := context.Background()
	if err := ts.st.RegisterWorker(ctx, &store.Worker{Host: "bench-a", Queue: "lab-a", Clusters: "lab,prod"}); err != nil {
		t.Fatal(err)
	}
	stopped := &store.Worker{Host: "bench-b", Queue: "lab-b", Clusters: "old"}
	if err := ts.st.RegisterWorker(ctx, stopped); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.StopWorker(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	run := func(queue, cluster string) *httptest.ResponseRecorder {
		return ts.do(t, "POST", "/api/runs", fmt.Sprintf(`{"workload":"producer","queue":%q,"target":{"cluster":%q},"params":{"num-records":10,"profile":"none"}}`, queue, cluster))
	}
	for _, tc := range []struct {
		queue, cluster string
		code           int
		says           string
	}{
		{"lab-a", "lab", http.StatusCreated, ""},
		{"lab-a", "local-only", http.StatusBadRequest, "queue lab-a"},
		{"lab-a", "nope", http.StatusBadRequest, "lab, prod"},
		{"lab-b", "anything", http.StatusCreated, ""}, // its one worker stopped: nothing to check against
		{"local", "local-only", http.StatusCreated, ""},
		{"local", "lab", http.StatusBadRequest, "local-only"},
	} {
		rec := run(tc.queue, tc.cluster)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
			t.Errorf("queue %s, cluster %s: %d %s; want %d saying %q", tc.queue, tc.cluster, rec.Code, rec.Body, tc.code, tc.says)
		}
		if rec.Code == http.StatusBadRequest && !strings.Contains(rec.Body.String(), `"target.cluster"`) {
			t.Errorf("queue %s, cluster %s: %s, want the error on target.cluster", tc.queue, tc.cluster, rec.Body)
		}
	}
}

// TestNamedClusterFormOnWorkerQueues: on a shared PostgreSQL store the
// new-run form offers the clusters of every queue, each labelled with the
// queues whose live workers name it (the server's own as queue local),
// never a stopped worker's; choosing a worker's cluster with its queue
// queues the run there, and a cluster the chosen queue's workers do not
// name is a 400 with the API's own message beside the select.
func TestNamedClusterFormOnWorkerQueues(t *testing.T) {
	file := writeClusterFile(t, "", "127.0.0.1:9", clusterPassword)
	ts := newTestServerOn(t, pgtest.URL(t), func(c *Config) { c.Clusters = namedClusters(t, "local-only="+file, "prod="+file) })
	ctx := context.Background()
	for _, w := range []*store.Worker{{Host: "bench-a", Queue: "lab-a", Clusters: "lab,prod"}, {Host: "bench-b", Queue: "lab-b", Clusters: "prod"}} {
		if err := ts.st.RegisterWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	stopped := &store.Worker{Host: "bench-c", Queue: "lab-c", Clusters: "old"}
	if err := ts.st.RegisterWorker(ctx, stopped); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.StopWorker(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	page := ts.do(t, "GET", "/runs/new", "").Body.String()
	for _, want := range []string{
		`<option value="lab" data-queues="lab-a" selected>lab (queue lab-a)</option>`,
		`<option value="local-only" data-queues="local">local-only (queue local)</option>`,
		`<option value="prod" data-queues="local lab-a lab-b">prod (queues local, lab-a, lab-b)</option>`,
		`<option value="lab-a">`, `<option value="lab-b">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	if strings.Contains(page, `value="old"`) || strings.Contains(page, "lab-c") {
		t.Error("the form offers a stopped worker's cluster or queue")
	}

	post := func(queue, cluster string) *httptest.ResponseRecorder {
		return ts.formPost(t, "/runs", url.Values{"workload": {"producer"}, "queue": {queue}, "target": {"cluster"},
			"target.cluster": {cluster}, "num-records": {"10"}, "profile": {"none"}})
	}
	rec := post("lab-a", "lab")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form on worker cluster lab, queue lab-a: %d %s", rec.Code, rec.Body)
	}
	var id uint
	fmt.Sscanf(rec.Header().Get("Location"), "/runs/%d", &id)
	r, err := ts.st.GetRun(ctx, id)
	if err != nil || r.Queue != "lab-a" || !strings.Contains(r.Spec, `"cluster":"lab"`) {
		t.Errorf("run %d from the form: queue %q, spec %q (%v); want queue lab-a on cluster lab", id, r.Queue, r.Spec, err)
	}
	for _, tc := range []struct{ queue, cluster string }{{"local", "lab"}, {"lab-b", "lab"}, {"lab-a", "local-only"}} {
		api := ts.do(t, "POST", "/api/runs", fmt.Sprintf(`{"workload":"producer","queue":%q,"target":{"cluster":%q},"params":{"num-records":10,"profile":"none"}}`, tc.queue, tc.cluster))
		var body struct{ Field, Error string }
		if err := json.Unmarshal(api.Body.Bytes(), &body); err != nil || api.Code != http.StatusBadRequest || body.Field != "target.cluster" {
			t.Fatalf("API, queue %s, cluster %s: %d %s, want 400 on target.cluster", tc.queue, tc.cluster, api.Code, api.Body)
		}
		msg := strings.TrimPrefix(body.Error, "target.cluster: ")
		rec := post(tc.queue, tc.cluster)
		got := rec.Body.String()
		if rec.Code != http.StatusBadRequest || !strings.Contains(got, `id="f-target-cluster-error">`+template.HTMLEscapeString(msg)+`<`) {
			t.Errorf("form, queue %s, cluster %s: %d, want 400 with the API's message %q beside the select", tc.queue, tc.cluster, rec.Code, msg)
		}
		kept := regexp.MustCompile(`<option value="` + tc.cluster + `" data-queues="[^"]*" selected>`)
		if !kept.MatchString(got) || !strings.Contains(got, `id="f-queue" name="queue" value="`+tc.queue+`"`) {
			t.Errorf("form, queue %s, cluster %s: the choices were not kept", tc.queue, tc.cluster)
		}
	}
}
