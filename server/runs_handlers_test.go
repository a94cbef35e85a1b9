package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/store"
)

// TestCancelAsksRuns: both cancel routes hand the run to Runs.Cancel and
// answer by what it returns: the API 202, or 409 when the run is already
// final (store.ErrConflict); the form goes back to the run's page either
// way. An unknown run is a 404, and Runs is not asked about it.
func TestCancelAsksRuns(t *testing.T) {
	ts := newTestServer(t, nil)
	r := &store.Run{Label: "waiting", Workload: "producer"}
	if err := ts.st.CreateRuns(t.Context(), []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	api := fmt.Sprintf("/api/runs/%d/cancel", r.ID)
	if rec := ts.do(t, "POST", api, ""); rec.Code != http.StatusAccepted {
		t.Errorf("cancel = %d %s, want 202", rec.Code, rec.Body)
	}
	ts.fake.cancelErr = fmt.Errorf("lifecycle: run %d: %w", r.ID, store.ErrConflict)
	if rec := ts.do(t, "POST", api, ""); rec.Code != http.StatusConflict {
		t.Errorf("cancel of a final run = %d %s, want 409", rec.Code, rec.Body)
	}
	form := ts.formPost(t, fmt.Sprintf("/runs/%d/cancel", r.ID), url.Values{})
	if want := fmt.Sprintf("/runs/%d", r.ID); form.Code != http.StatusSeeOther || form.Header().Get("Location") != want {
		t.Errorf("cancel form of a final run = %d to %q, want 303 to %s", form.Code, form.Header().Get("Location"), want)
	}
	if rec := ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", r.ID+1000), ""); rec.Code != http.StatusNotFound {
		t.Errorf("cancel of an unknown run = %d, want 404", rec.Code)
	}
	if got, want := ts.fake.Canceled(), []uint{r.ID, r.ID, r.ID}; !slices.Equal(got, want) {
		t.Errorf("Runs.Cancel asked about %v, want %v", got, want)
	}
}

// TestCreateRunSubmits: a new run is stored queued and handed to
// Runs.Submit with the secrets of its target, which stay out of the
// store; a Submit that fails is an error answer, the run left queued in
// the store for the next start to submit.
func TestCreateRunSubmits(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	const pw = "Pw-fake-runs-3b9d"
	body := fmt.Sprintf(`{"workload":"producer","target":{"bootstrap_server":"127.0.0.1:1","security_protocol":"SASL_PLAINTEXT","sasl_mechanism":"PLAIN","sasl_username":"u","sasl_password":%q},"params":{"num-records":100}}`, pw)
	id := ts.createRun(t, body)
	if got := ts.fake.Submitted(); !slices.Equal(got, []uint{id}) {
		t.Errorf("submitted %v, want [%d]", got, id)
	}
	if got := ts.fake.HeldSecrets([]uint{id}, []string{"sasl.password"})["sasl.password"]; got != pw {
		t.Errorf("secret handed to Runs %q, want %q", got, pw)
	}
	ts.fake.submitErr = fmt.Errorf("lifecycle: submit: the queue is gone")
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","params":{"num-records":100}}`)
	if rec.Code < 500 {
		t.Errorf("a failed Submit = %d %s, want a server error", rec.Code, rec.Body)
	}
	queued, err := ts.st.QueuedRuns(t.Context())
	if err != nil || len(queued) != 2 {
		t.Fatalf("queued runs: %d %v, want both", len(queued), err)
	}
	for _, r := range queued {
		if strings.Contains(r.Spec, pw) {
			t.Errorf("stored spec %s holds the password", r.Spec)
		}
	}
}
