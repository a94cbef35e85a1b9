package acceptance

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestE2ENewRunWorkerTools: on PostgreSQL the new-run form offers the
// Kafka tools of the server and of a live kbench worker, each labelled
// with its queue, beside kbench's own client; only the chosen queue's can
// be picked, and the form queues a run of the worker's tool on its queue,
// which the worker runs with the form's fields and target.
func TestE2ENewRunWorkerTools(t *testing.T) {
	e2eSkip(t)
	database := pgtest.URL(t)
	script, err := filepath.Abs(filepath.Join("testdata", "tool", "kafka-producer-perf-test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOL_RECORD_DIR", t.TempDir())
	_, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(),
		"--database", database, "--tool", "javaprod="+script, "--allow-target", "127.0.0.1:9092")
	srv := &e2eServer{URL: m[1], http: e2eHTTPClient()}
	startE2EProcess(t, "kbench worker lab-a", e2eWorkerLine, "worker", "--database", database, "--queue", "lab-a",
		"--data", t.TempDir(), "--tool", "labprod=producer-perf-test:"+script, "--allow-target", "127.0.0.1:9092")

	b := startE2EBrowser(t)
	b.do(t, "open the new-run form",
		chromedp.Navigate(srv.URL+"/runs/new"),
		chromedp.WaitVisible(chromedp.ID("run-form")),
	)
	type option struct {
		Value    string `json:"value"`
		Label    string `json:"label"`
		Disabled bool   `json:"disabled"`
		Selected bool   `json:"selected"`
	}
	read := func(what string) map[string]option {
		opts := e2eEval[[]option](t, b, what, `Array.from(document.getElementById('f-tool').options).map(o =>
			({value: o.value, label: o.textContent.trim(), disabled: o.disabled, selected: o.selected}))`)
		out := map[string]option{}
		for _, o := range opts {
			out[o.Value] = o
		}
		return out
	}
	got := read("read the fresh form's tools")
	if len(got) != 3 || got["labprod"].Label != "labprod: Kafka's kafka-producer-perf-test.sh (producer), queue lab-a" ||
		got["javaprod"].Label != "javaprod: Kafka's kafka-producer-perf-test.sh (producer), queue local" || !got[""].Selected {
		t.Fatalf("tools offered: %+v, want kbench's client chosen, javaprod (queue local) and labprod (queue lab-a)", got)
	}
	if !got["labprod"].Disabled || got["javaprod"].Disabled || got[""].Disabled {
		t.Errorf("tools for queue local: %+v, want labprod not offered", got)
	}
	b.do(t, "type queue lab-a",
		chromedp.Clear(chromedp.ID("f-queue")),
		chromedp.SendKeys(chromedp.ID("f-queue"), "lab-a"),
	)
	got = read("read the tools for queue lab-a")
	if got["labprod"].Disabled || !got["javaprod"].Disabled || got[""].Disabled {
		t.Errorf("tools for queue lab-a: %+v, want labprod offered and javaprod not", got)
	}
	b.do(t, "choose the worker's tool on a Kafka cluster and submit",
		chromedp.SetValue(chromedp.ID("f-tool"), "labprod"),
		chromedp.Click(chromedp.CSS(`input[name="target"][value="bootstrap"]`)),
		chromedp.SendKeys(chromedp.ID("f-bootstrap-server"), "127.0.0.1:9092"),
		chromedp.SendKeys(chromedp.ID("f-topic"), "form-g"),
		chromedp.SendKeys(chromedp.ID("f-num-records"), "700"),
		chromedp.Click(chromedp.CSS(`#run-form button[type="submit"]`)),
	)
	b.waitFor(t, "the run's page", `document.readyState === 'complete' && /^\/runs\/\d+$/.test(location.pathname)`)
	path := e2eEval[string](t, b, "read the run's path", `location.pathname`)
	var id uint
	fmt.Sscanf(path, "/runs/%d", &id)
	deadline := time.Now().Add(2 * time.Minute)
	var run struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Queue  string `json:"queue"`
		Spec   struct {
			Params struct {
				Tool       string `json:"tool"`
				NumRecords int    `json:"num-records"`
			} `json:"params"`
		} `json:"spec"`
	}
	for {
		srv.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &run)
		if run.Status != "queued" && run.Status != "running" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if run.Status != "succeeded" || run.Queue != "lab-a" || run.Spec.Params.Tool != "labprod" || run.Spec.Params.NumRecords != 700 {
		t.Errorf("run %d from the form: %+v; want a succeeded run of labprod on queue lab-a with 700 records", id, run)
	}
	b.checkConsole(t)
}
