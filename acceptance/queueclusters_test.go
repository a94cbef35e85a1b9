package acceptance

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// TestE2ENewRunWorkerClusters: on PostgreSQL the new-run form offers the
// clusters a kbench worker names beside the server's own, each labelled
// with its queue, and only the chosen queue's can be picked: typing the
// worker's queue switches the choice to its cluster, and the form
// queues a run on that queue and cluster.
func TestE2ENewRunWorkerClusters(t *testing.T) {
	e2eSkip(t)
	database := pgtest.URL(t)
	file := filepath.Join(t.TempDir(), "cluster.properties")
	if err := os.WriteFile(file, []byte("bootstrap.servers=127.0.0.1:9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, m := startE2EProcess(t, "kbench serve", e2eServingLine, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(),
		"--database", database, "--cluster", "local-only="+file)
	srv := &e2eServer{URL: m[1], http: e2eHTTPClient()}
	startE2EProcess(t, "kbench worker lab-a", e2eWorkerLine, "worker", "--database", database, "--queue", "lab-a",
		"--data", t.TempDir(), "--cluster", "lab="+file)

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
		opts := e2eEval[[]option](t, b, what, `Array.from(document.getElementById('f-target-cluster').options).map(o =>
			({value: o.value, label: o.textContent.trim(), disabled: o.disabled, selected: o.selected}))`)
		out := map[string]option{}
		for _, o := range opts {
			out[o.Value] = o
		}
		return out
	}
	got := read("read the fresh form's clusters")
	if len(got) != 2 || got["lab"].Label != "lab (queue lab-a)" || got["local-only"].Label != "local-only (queue local)" {
		t.Fatalf("clusters offered: %+v, want lab (queue lab-a) and local-only (queue local)", got)
	}
	if !got["lab"].Disabled || got["local-only"].Disabled || !got["local-only"].Selected {
		t.Errorf("clusters for queue local: %+v, want local-only chosen and lab not offered", got)
	}

	b.do(t, "choose a named cluster on queue lab-a",
		chromedp.Click(chromedp.CSS(`input[name="target"][value="cluster"]`)),
		chromedp.Clear(chromedp.ID("f-queue")),
		chromedp.SendKeys(chromedp.ID("f-queue"), "lab-a"),
	)
	got = read("read the clusters for queue lab-a")
	if got["lab"].Disabled || !got["lab"].Selected || !got["local-only"].Disabled {
		t.Errorf("clusters for queue lab-a: %+v, want lab chosen and local-only not offered", got)
	}
	b.do(t, "submit the form",
		chromedp.SendKeys(chromedp.ID("f-num-records"), "10"),
		chromedp.Click(chromedp.CSS(`#run-form button[type="submit"]`)),
	)
	b.waitFor(t, "the run's page", `document.readyState === 'complete' && /^\/runs\/\d+$/.test(location.pathname)`)
	path := e2eEval[string](t, b, "read the run's path", `location.pathname`)
	var run struct {
		Queue string `json:"queue"`
		Spec  struct {
			Params struct {
				Cluster string `json:"cluster"`
			} `json:"params"`
		} `json:"spec"`
	}
	var id uint
	fmt.Sscanf(path, "/runs/%d", &id)
	srv.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", id), nil, http.StatusOK, &run)
	if run.Queue != "lab-a" || run.Spec.Params.Cluster != "lab" {
		t.Errorf("run %d from the form: queue %q, cluster %q; want queue lab-a on cluster lab", id, run.Queue, run.Spec.Params.Cluster)
	}
	b.checkConsole(t)
}
