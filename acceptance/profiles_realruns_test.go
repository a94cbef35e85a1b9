package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestE2EProfilesOfRealRuns runs the write-path lab's gather against
// per-buffer, interleaved (gather, per-buffer, per-buffer, gather), two
// short runs a side, through the real binary, then asks the run-set diff
// of their client CPU profiles: it merges both runs a side, its changes
// carry the q fields (null: two runs a side cannot decide) and the
// per-run shares, and the comparison's Profiles section and the run-set
// page render.
func TestE2EProfilesOfRealRuns(t *testing.T) {
	tier.Integration(t, "builds kbench and runs the write-path lab")
	srv := startE2EServer(t)
	params := func(strategy string) map[string]any {
		return map[string]any{"strategy": strategy, "sink": true, "duration": 1.5, "records-per-request": 16, "record-size": 256, "in-flight": 5}
	}
	var created client.Created
	srv.api(t, http.MethodPost, "/api/runs", map[string]any{"workload": "writepath", "repetitions": 2, "configs": []map[string]any{
		{"label": "gather", "params": params("gather")}, {"label": "per-buffer", "params": params("per-buffer")}}}, http.StatusCreated, &created)
	if len(created.Runs) != 4 {
		t.Fatalf("%d runs created, want 4", len(created.Runs))
	}
	var gather, perBuffer, order []uint
	var labels []string
	for _, r := range created.Runs {
		labels = append(labels, r.Label)
		order = append(order, r.ID)
		if r.Label == "gather" {
			gather = append(gather, r.ID)
		} else {
			perBuffer = append(perBuffer, r.ID)
		}
	}
	if strings.Join(labels, " ") != "gather per-buffer per-buffer gather" {
		t.Errorf("runs %v, want interleaved gather per-buffer per-buffer gather", labels)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range order {
		for {
			st := srv.runStatus(t, id)
			if st == "succeeded" {
				break
			}
			if st == "failed" || st == "canceled" || time.Now().After(deadline) {
				t.Fatalf("run %d: %s", id, st)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	ids := func(xs []uint) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, ",")
	}
	q := fmt.Sprintf("base_runs=%s&target_runs=%s&kind=cpu&role=client", ids(gather), ids(perBuffer))
	body := srv.get(t, "/api/diff?"+q+"&format=rows")
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	var d client.Diff
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the run-set diff does not decode as client.Diff: %v", err)
	}
	if fmt.Sprint(d.RunsBase) != fmt.Sprint(gather) || fmt.Sprint(d.RunsTarget) != fmt.Sprint(perBuffer) || len(d.Skipped) != 0 {
		t.Errorf("runs_base %v runs_target %v skipped %v, want %v and %v", d.RunsBase, d.RunsTarget, d.Skipped, gather, perBuffer)
	}
	if s := d.Significance; s == nil || s.Method != "welch-log-share" || s.Decided || s.RunsNeeded != 3 {
		t.Errorf("significance %+v, want welch-log-share, undecided at 2 a side", s)
	}
	if len(d.Changes) == 0 {
		t.Fatal("no function changed between gather and per-buffer")
	}
	for _, ch := range d.Changes {
		if len(ch.BaseRuns) != 2 || len(ch.TargetRuns) != 2 || len(ch.BaseRunsFlat) != 2 || len(ch.TargetRunsFlat) != 2 ||
			ch.QValue != nil || ch.Significant != nil || ch.FlatQValue != nil {
			t.Errorf("change %+v: want two runs' shares a side and null verdicts", ch)
			break
		}
	}
	for _, field := range []string{`"q_value":null`, `"significant":null`, `"flat_q_value":null`} {
		if !strings.Contains(body, field) {
			t.Errorf("the answer's changes lack %s", field)
		}
	}
	page := srv.get(t, "/compare?by=label&runs="+ids(order))
	for _, want := range []string{`id="profiles-diff-data"`, `id="profiles-banner"`, "client cpu: per-buffer against gather"} {
		if !strings.Contains(page, want) {
			t.Errorf("the comparison's Profiles section lacks %s", want)
		}
	}
	if p := srv.get(t, "/compare/profiles?"+q); !strings.Contains(p, `data-mode="diff"`) {
		t.Error("the run-set page draws no diff")
	}
}
