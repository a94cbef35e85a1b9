package ui

import (
	"net/url"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// TestGoldenNewRunQueueClusters: on a server whose store workers share,
// the target's named clusters are those of every queue, each labelled
// with the queues whose workers name it, beside the queue field; a
// submitted cluster no longer offered is kept, marked, with its error.
func TestGoldenNewRunQueueClusters(t *testing.T) {
	withFixtureFlags(t)
	u := newTestUI(t)
	choices := []ClusterChoice{
		{Name: "lab", Queues: []string{"lab-a"}},
		{Name: "local-only", Queues: []string{"local"}},
		{Name: "prod", Queues: []string{"local", "lab-a", "lab-b"}},
	}
	values := url.Values{"workload": {"producer"}, "queue": {"lab-b"}, "target": {"cluster"}, "target.cluster": {"gone"}}
	errs := map[string]string{"target.cluster": "the workers of queue lab-b: unknown cluster gone (they name prod)"}
	v := NewRunFormClusters(values, errs, choices)
	v.AddQueueField(values, []string{"local", "lab-a", "lab-b"}, errs)
	v.CSRF = "tok"
	got := render(t, u, "new_run", v)
	for _, want := range []string{
		`<option value="lab" data-queues="lab-a">lab (queue lab-a)</option>`,
		`<option value="prod" data-queues="local lab-a lab-b">prod (queues local, lab-a, lab-b)</option>`,
		`<option value="gone" selected>gone (not one of the choices)</option>`,
		`id="f-target-cluster-error"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	golden.Check(t, "new_run_queue_clusters.html", got)

	// Without queues (SQLite), the server's clusters by name alone.
	plain := render(t, u, "new_run", NewRunFormClusters(url.Values{}, nil, []ClusterChoice{{Name: "lab"}}))
	if !strings.Contains(plain, `<option value="lab" selected>lab</option>`) || strings.Contains(plain, "(queue") {
		t.Errorf("a form without queues labels its clusters with queues")
	}
}
