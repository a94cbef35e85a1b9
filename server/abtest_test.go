package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/store"
)

// abResponse is the answer to an A/B submission.
type abResponse struct {
	Runs       []apiRun `json:"runs"`
	GroupIDs   []string `json:"group_ids"`
	ABBatch    string   `json:"ab_batch"`
	CompareURL string   `json:"compare_url"`
}

// heldQueue stops the queue's only worker once it has taken its first run,
// until release, so that a test sees what is still pending, in order.
type heldQueue struct {
	taken   chan uint
	release func()
}

func (ts *testServer) holdQueue(t *testing.T) *heldQueue {
	t.Helper()
	ts.mustExecute(t)
	gate := make(chan struct{})
	h := &heldQueue{taken: make(chan uint, 1)}
	var once sync.Once
	h.release = func() { once.Do(func() { close(gate) }) }
	ts.local.SetHook(func(p string, id uint) {
		if p == "taken" {
			select {
			case h.taken <- id:
				<-gate
			default:
			}
		}
	})
	t.Cleanup(h.release) // before the server's Close, which waits for the worker
	return h
}

// order is the queue's order: the run taken first, then those pending.
func (h *heldQueue) order(ts *testServer) []uint {
	first := <-h.taken
	return append([]uint{first}, ts.local.Pending()...)
}

// cancelAll cancels runs, so that a test does not wait for them.
func (ts *testServer) cancelAll(t *testing.T, runs []apiRun) {
	t.Helper()
	for _, r := range runs {
		ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", r.ID), "")
	}
}

func decodeAB(t *testing.T, body []byte) abResponse {
	t.Helper()
	var resp abResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return resp
}

// TestABSubmissionInterleaved: the runs of several configurations are
// stored and queued interleaved, round by round, each round in the
// reverse order of the one before (warm-up rounds first), each
// configuration's runs one repetition group under its label, all of one
// A/B batch; the answer names the groups and the comparison of them.
func TestABSubmissionInterleaved(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	held := ts.holdQueue(t)
	body := `{"workload":"producer","repetitions":2,"warmup_runs":1,"configs":[
		{"label":"A","params":{"num-records":100,"profile":"none"}},
		{"label":"B","params":{"num-records":100,"profile":"none","producer-props":["acks=1"]}},
		{"label":"C","params":{"num-records":100,"profile":"none","record-size":64}}]}`
	rec := ts.do(t, "POST", "/api/runs", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/runs with configs = %d %s", rec.Code, rec.Body)
	}
	resp := decodeAB(t, rec.Body.Bytes())
	defer ts.cancelAll(t, resp.Runs)
	type slot struct {
		label  string
		warmup bool
		index  int
	}
	want := []slot{{"A", true, 0}, {"B", true, 0}, {"C", true, 0},
		{"C", false, 1}, {"B", false, 1}, {"A", false, 1},
		{"A", false, 2}, {"B", false, 2}, {"C", false, 2}}
	if len(resp.Runs) != len(want) {
		t.Fatalf("%d runs, want %d: %s", len(resp.Runs), len(want), rec.Body)
	}
	if len(resp.GroupIDs) != 3 || resp.ABBatch == "" {
		t.Fatalf("group_ids %q ab_batch %q", resp.GroupIDs, resp.ABBatch)
	}
	groupOf := map[string]string{"A": resp.GroupIDs[0], "B": resp.GroupIDs[1], "C": resp.GroupIDs[2]}
	var ids []uint
	byLabel := map[string][]string{}
	for i, r := range resp.Runs {
		w := want[i]
		if r.Label != w.label || r.Warmup != w.warmup || r.GroupIndex != w.index || r.GroupID != groupOf[w.label] || r.ABBatch != resp.ABBatch {
			t.Errorf("run %d: %s warmup %v index %d group %s batch %s, want %+v in group %s batch %s", i, r.Label, r.Warmup, r.GroupIndex,
				r.GroupID, r.ABBatch, w, groupOf[w.label], resp.ABBatch)
		}
		if i > 0 && r.ID <= ids[i-1] {
			t.Errorf("run %d: id %d after %d: not created in queue order", i, r.ID, ids[i-1])
		}
		ids = append(ids, r.ID)
		byLabel[r.Label] = append(byLabel[r.Label], fmt.Sprint(r.ID))
	}
	if !strings.Contains(string(resp.Runs[4].Spec), `"props":{"acks":"1"}`) || !strings.Contains(string(resp.Runs[3].Spec), `"record-size":64`) {
		t.Errorf("specs do not follow their configurations: B %s C %s", resp.Runs[4].Spec, resp.Runs[3].Spec)
	}
	if got := held.order(ts); !slices.Equal(got, ids) {
		t.Errorf("queue order %v, want %v", got, ids)
	}
	wantURL := "/compare?" + url.Values{"by": {"group"}, "runs": {strings.Join(append(append(byLabel["A"], byLabel["B"]...), byLabel["C"]...), ",")}}.Encode()
	if resp.CompareURL != wantURL || rec.Header().Get("Location") != wantURL {
		t.Errorf("compare_url %q Location %q, want %q", resp.CompareURL, rec.Header().Get("Location"), wantURL)
	}
	// The comparison lists the runs still to finish, and offers to add
	// repetitions to the groups.
	page := ts.do(t, "GET", resp.CompareURL, "")
	body = page.Body.String()
	if page.Code != 200 || !strings.Contains(body, `id="compare-progress"`) || !strings.Contains(body, "0 of 9 runs finished") ||
		!strings.Contains(body, fmt.Sprintf(`<a href="/runs/%d">run #%d C</a>`, ids[8], ids[8])) || !strings.Contains(body, `id="add-repetitions"`) {
		t.Errorf("compare_url = %d, without the runs to finish or the button:\n%s", page.Code, body)
	}
}

// TestABSubmissionValidation: every bad field of an A/B submission is
// reported at once, those of a configuration named with its index.
func TestABSubmissionValidation(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"every bad field", `{"workload":"producer","repetitions":99,"configs":[
			{"label":"","params":{"num-records":100}},
			{"label":"B","params":{"throughput":"fast","num-records":0}},
			{"label":"C","target":{"bootstrap_server":"10.9.9.9:9092"}},
			{"label":"B","params":{"turbo":true}}]}`,
			[]string{"repetitions", "configs[0].label", "configs[1].params.num-records", "configs[1].params.throughput",
				"configs[2].target.bootstrap_server", "configs[3].label", "configs[3].params.turbo"}},
		{"another workload", `{"workload":"producer","configs":[{"label":"A","workload":"producer"},{"label":"B","workload":"consumer"}]}`,
			[]string{"configs[1].workload"}},
		{"one configuration", `{"workload":"producer","configs":[{"label":"A"}]}`, []string{"configs"}},
		{"bad workload", `{"workload":"sideways","configs":[{"label":"A"},{"label":"B"}]}`, []string{"workload"}},
		{"not allowed through params", `{"workload":"consumer","configs":[{"label":"A"},{"label":"B","params":{"bootstrap-server":"evil:9092"}}]}`,
			[]string{"configs[1].params.bootstrap-server"}},
		{"sasl without user", `{"workload":"producer","configs":[{"label":"A"},{"label":"B","target":{"bootstrap_server":"127.0.0.1:9092","security_protocol":"SASL_PLAINTEXT","sasl_mechanism":"PLAIN"}}]}`,
			[]string{"configs[1].target.sasl_username"}},
		{"too many runs for one comparison", `{"workload":"producer","repetitions":20,"warmup_runs":2,"configs":[{"label":"A"},{"label":"B"},{"label":"C"}]}`,
			[]string{"repetitions"}},
		{"single fields with configs", `{"workload":"producer","label":"x","params":{"num-records":5},"target":{"bootstrap_server":"127.0.0.1:9092"},
			"configs":[{"label":"A"},{"label":"B"}]}`, []string{"label", "params", "target"}},
		{"empty params with configs", `{"workload":"producer","params":{},"configs":[{"label":"A"},{"label":"B"}]}`, []string{"params"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tt.body)
			var resp struct {
				Field  string         `json:"field"`
				Errors []fieldMessage `json:"errors"`
			}
			json.Unmarshal(rec.Body.Bytes(), &resp)
			var got []string
			for _, e := range resp.Errors {
				got = append(got, e.Field)
				if !strings.HasPrefix(e.Error, e.Field+": ") {
					t.Errorf("message %q does not start with its field", e.Error)
				}
			}
			if rec.Code != http.StatusBadRequest || !slices.Equal(got, tt.fields) || resp.Field != tt.fields[0] {
				t.Errorf("= %d fields %q (first %q), want 400 %q\n%s", rec.Code, got, resp.Field, tt.fields, rec.Body)
			}
		})
	}
	if list, _, _ := ts.st.ListRuns(t.Context(), store.RunFilter{}); len(list) != 0 {
		t.Errorf("%d runs stored by invalid submissions", len(list))
	}
}

// TestABSubmissionSecrets: each configuration's SASL password stays in
// memory with its own runs, never in the store or an answer.
func TestABSubmissionSecrets(t *testing.T) {
	ts := newRunningTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	held := ts.holdQueue(t)
	pw := map[string]string{"A": "Pw-A-5e1c0d-secret", "B": "Pw-B-77aa31-secret"}
	target := func(label string) string {
		return fmt.Sprintf(`{"bootstrap_server":"127.0.0.1:1","security_protocol":"SASL_PLAINTEXT","sasl_mechanism":"PLAIN","sasl_username":"u","sasl_password":%q}`, pw[label])
	}
	body := fmt.Sprintf(`{"workload":"producer","repetitions":2,"configs":[{"label":"A","target":%s,"params":{"num-records":100}},{"label":"B","target":%s,"params":{"num-records":100}}]}`,
		target("A"), target("B"))
	rec := ts.do(t, "POST", "/api/runs", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("= %d %s", rec.Code, rec.Body)
	}
	resp := decodeAB(t, rec.Body.Bytes())
	order := held.order(ts)
	for _, r := range resp.Runs {
		if r.ID == order[0] {
			continue // taken: its secrets are with the worker
		}
		if got := ts.local.HeldSecrets([]uint{r.ID}, []string{"sasl.password"})["sasl.password"]; got != pw[r.Label] {
			t.Errorf("run %d (%s): secret in memory %q, want %q", r.ID, r.Label, got, pw[r.Label])
		}
	}
	var answers strings.Builder
	answers.Write(rec.Body.Bytes())
	for _, r := range resp.Runs {
		answers.Write(ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", r.ID), "").Body.Bytes())
		stored, err := ts.st.GetRun(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stored.Spec, "[redacted]") {
			t.Errorf("run %d: stored spec %s does not show the secret was given", r.ID, stored.Spec)
		}
	}
	ts.cancelAll(t, resp.Runs)
	held.release()
	ts.Close()
	data := ts.databaseText(t)
	if !strings.Contains(string(data), `"sasl.password":"[redacted]"`) {
		t.Error("the database's text lacks the stored specs: searching it for the passwords would prove nothing")
	}
	for _, p := range pw {
		if strings.Contains(answers.String(), p) || strings.Contains(string(data), p) || strings.Contains(ts.logs.String(), p) {
			t.Errorf("password %s appears in an answer, the database or the logs", p)
		}
	}
}
