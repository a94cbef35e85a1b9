package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// repsResponse is the answer to POST /api/compare/repetitions.
type repsResponse struct {
	Runs          []apiRun `json:"runs"`
	ABBatch       string   `json:"ab_batch"`
	CompareURL    string   `json:"compare_url"`
	Error         string   `json:"error"`
	Field         string   `json:"field"`
	NotRerunnable []struct {
		Run    uint   `json:"run"`
		Reason string `json:"reason"`
	} `json:"not_rerunnable"`
}

func (ts *testServer) addReps(t *testing.T, body string) (int, repsResponse) {
	t.Helper()
	rec := ts.do(t, "POST", "/api/compare/repetitions", body)
	var resp repsResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return rec.Code, resp
}

func idsOf(runs []apiRun) []uint {
	var out []uint
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func idsParam(ids []uint) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ",")
}

// TestAddRepetitions: N more repetitions of each column's configuration
// are queued interleaved (A B, B A, …) in a new A/B batch, appended to the
// columns' repetition groups, from the stored specs; the answer's
// comparison holds the old runs and the new.
func TestAddRepetitions(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	held := ts.holdQueue(t)
	rec := ts.do(t, "POST", "/api/runs", `{"workload":"producer","repetitions":2,"configs":[
		{"label":"A","params":{"num-records":100,"profile":"none"}},
		{"label":"B","params":{"num-records":100,"profile":"none","record-size":64}}]}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("A/B = %d %s", rec.Code, rec.Body)
	}
	ab := decodeAB(t, rec.Body.Bytes())
	defer func() { ts.cancelAll(t, ab.Runs) }()
	old := idsOf(ab.Runs)
	specOf := map[string]string{}
	for _, r := range ab.Runs {
		specOf[r.Label] = string(r.Spec)
	}

	code, resp := ts.addReps(t, fmt.Sprintf(`{"runs":[%s],"by":"group","n":3}`, idsParam(old)))
	if code != http.StatusCreated {
		t.Fatalf("add repetitions = %d %+v", code, resp)
	}
	ab.Runs = append(ab.Runs, resp.Runs...)
	wantLabels := []string{"A", "B", "B", "A", "A", "B"}
	wantIndex := []int{3, 3, 4, 4, 5, 5}
	group := map[string]string{"A": ab.GroupIDs[0], "B": ab.GroupIDs[1]}
	if len(resp.Runs) != len(wantLabels) || resp.ABBatch == "" || resp.ABBatch == ab.ABBatch {
		t.Fatalf("%d runs in batch %q (the submission's %q), want %d in a new batch", len(resp.Runs), resp.ABBatch, ab.ABBatch, len(wantLabels))
	}
	for i, r := range resp.Runs {
		if r.Label != wantLabels[i] || r.GroupID != group[r.Label] || r.GroupIndex != wantIndex[i] || r.ABBatch != resp.ABBatch ||
			r.Warmup || string(r.Spec) != specOf[r.Label] {
			t.Errorf("new run %d: %s group %s index %d batch %s spec %s, want %s in group %s index %d with its stored spec %s",
				i, r.Label, r.GroupID, r.GroupIndex, r.ABBatch, r.Spec, wantLabels[i], group[wantLabels[i]], wantIndex[i], specOf[wantLabels[i]])
		}
	}
	added := idsOf(resp.Runs)
	if got := held.order(ts); !slices.Equal(got, append(slices.Clone(old), added...)) {
		t.Errorf("queue order %v, want the submission's %v then the new runs %v", got, old, added)
	}
	wantURL := ui.CompareURL(ui.CompareQuery{Runs: append(slices.Clone(old), added...), By: "group"})
	if resp.CompareURL != wantURL {
		t.Errorf("compare_url %q, want %q", resp.CompareURL, wantURL)
	}

	// The comparison's query, by label: the labels' groups grow again.
	q := url.Values{"runs": {idsParam(append(old, added...))}, "by": {"label"}, "hide_unchanged": {"1"}}
	code, resp = ts.addReps(t, fmt.Sprintf(`{"query":%q,"n":1}`, "/compare?"+q.Encode()))
	if code != http.StatusCreated || len(resp.Runs) != 2 {
		t.Fatalf("by the comparison's query = %d %+v", code, resp)
	}
	ab.Runs = append(ab.Runs, resp.Runs...)
	for i, r := range resp.Runs {
		if r.Label != []string{"A", "B"}[i] || r.GroupID != group[r.Label] || r.GroupIndex != 6 {
			t.Errorf("run %d: %s group %s index %d, want group %s index 6", i, r.Label, r.GroupID, r.GroupIndex, group[r.Label])
		}
	}
	if u, _ := url.Parse(resp.CompareURL); u.Query().Get("by") != "label" || u.Query().Get("hide_unchanged") != "1" {
		t.Errorf("compare_url %q does not keep the query's by and hide_unchanged", resp.CompareURL)
	}

	// The page's button does the same, and needs the CSRF token.
	form := url.Values{"runs": {idsParam(old)}, "by": {"group"}, "n": {"1"}}
	page := ts.formPost(t, "/compare/repetitions", form)
	loc := page.Header().Get("Location")
	if page.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/compare?") {
		t.Fatalf("POST /compare/repetitions = %d %q %s", page.Code, loc, page.Body)
	}
	u, _ := url.Parse(loc)
	ids, err := parseRunIDs([]string{u.Query().Get("runs")})
	if err != nil || len(ids) != len(old)+2 || !slices.Equal(ids[:len(old)], old) {
		t.Errorf("redirect to %q: want the comparison of the old runs and 2 new", loc)
	}
	for _, id := range ids[len(old):] {
		r, err := ts.st.GetRun(t.Context(), id)
		if err != nil || r.Status != rundoc.StatusQueued || r.GroupIndex != 7 {
			t.Errorf("run %d from the form: %+v %v", id, r, err)
		}
		ab.Runs = append(ab.Runs, apiRun{ID: id})
	}
	if rec := ts.do(t, "POST", "/compare/repetitions", form.Encode(), "Content-Type", "application/x-www-form-urlencoded"); rec.Code != http.StatusForbidden {
		t.Errorf("without the CSRF token = %d, want 403", rec.Code)
	}
}

// TestAddRepetitionsRefused: runs that cannot be run again are named with
// why (409; 400 naming the field runs for imported runs, which never can
// be), and nothing is queued; bad requests name their field (400).
func TestAddRepetitionsRefused(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	ctx := t.Context()
	spec := `{"workload":"producer","params":{"num-records":100,"profile":"none"}}`
	far := `{"workload":"producer","params":{"num-records":100,"profile":"none","bootstrap-server":"10.1.1.1:9092"}}`
	mk := func(label, group, spec string, source rundoc.Source, n int) []uint {
		var runs []*store.Run
		for i := 1; i <= n; i++ {
			runs = append(runs, &store.Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, Source: source, Spec: spec,
				GroupID: group, GroupIndex: i})
		}
		if err := ts.st.CreateRuns(ctx, runs); err != nil {
			t.Fatal(err)
		}
		var ids []uint
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	base := mk("base", "g-base", spec, rundoc.SourceLaunched, 2)
	imported := mk("imported", "g-imp", "", rundoc.SourceImported, 2)
	remote := mk("remote", "g-far", far, rundoc.SourceLaunched, 2)
	single := mk("single", "", spec, rundoc.SourceLaunched, 1)
	mixed := append(mk("mixed", "", spec, rundoc.SourceLaunched, 1), mk("mixed", "", strings.Replace(spec, "100", "200", 1), rundoc.SourceLaunched, 1)...)
	before, _ := ts.st.CountRuns(ctx)

	refusals := []struct {
		name string
		body string
		runs []uint // named as not re-runnable
		says string
	}{
		{"imported", fmt.Sprintf(`{"runs":[%s],"n":2}`, idsParam(append(base, imported...))), imported, "imported"},
		{"target no longer allowed", fmt.Sprintf(`{"runs":[%s],"n":2}`, idsParam(append(base, remote...))), remote, "10.1.1.1:9092"},
		{"both", fmt.Sprintf(`{"runs":[%s],"n":2}`, idsParam(append(append(base, imported...), remote...))), append(imported, remote...), "imported"},
		{"no group", fmt.Sprintf(`{"runs":[%s],"n":2}`, idsParam(append(base, single...))), single, "by label"},
		{"configurations differ in a column", fmt.Sprintf(`{"runs":[%s],"by":"label","n":2}`, idsParam(append(base, mixed...))), mixed[1:], "differs"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			code, resp := ts.addReps(t, tt.body)
			var named []uint
			for _, nr := range resp.NotRerunnable {
				named = append(named, nr.Run)
				if !strings.Contains(resp.Error, fmt.Sprintf("#%d", nr.Run)) || nr.Reason == "" {
					t.Errorf("error %q does not name run %d, or no reason", resp.Error, nr.Run)
				}
			}
			// Imported runs can never be run again: bad input naming
			// the field; the others may be again once the server allows.
			want, field := http.StatusConflict, ""
			if tt.says == "imported" {
				want, field = http.StatusBadRequest, "runs"
			}
			if code != want || resp.Field != field || !slices.Equal(named, tt.runs) || !strings.Contains(resp.Error, tt.says) {
				t.Errorf("= %d field %q named %v %q, want %d field %q naming %v and saying %q", code, resp.Field, named, resp.Error, want, field, tt.runs, tt.says)
			}
		})
	}
	bad := []struct {
		name, body, field string
	}{
		{"n missing", fmt.Sprintf(`{"runs":[%s]}`, idsParam(base)), "n"},
		{"n too large", fmt.Sprintf(`{"runs":[%s],"n":51}`, idsParam(base)), "n"},
		{"beyond one comparison", fmt.Sprintf(`{"runs":[%s],"n":25}`, idsParam(append(base, single...))), "n"},
		{"by run", fmt.Sprintf(`{"runs":[%s],"by":"run","n":1}`, idsParam(base)), "by"},
		{"one run", fmt.Sprintf(`{"runs":[%d],"n":1}`, base[0]), "runs"},
		{"query and runs", fmt.Sprintf(`{"runs":[%s],"query":"runs=%s","n":1}`, idsParam(base), idsParam(base)), "query"},
		{"bad query", `{"query":"runs=1,x","n":1}`, "query"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			code, resp := ts.addReps(t, tt.body)
			if code != http.StatusBadRequest || resp.Field != tt.field {
				t.Errorf("= %d field %q (%s), want 400 %q", code, resp.Field, resp.Error, tt.field)
			}
		})
	}
	if after, _ := ts.st.CountRuns(ctx); after != before {
		t.Errorf("%d runs stored by refused requests", after-before)
	}
	// The comparison page says why instead of offering the button.
	page := ts.do(t, "GET", "/compare?by=group&runs="+idsParam(append(base, imported...)), "").Body.String()
	if strings.Contains(page, `id="add-repetitions"`) || !strings.Contains(page, `id="not-rerunnable"`) || !strings.Contains(page, "imported") {
		t.Errorf("page of a comparison with imported runs offers the button or does not say why")
	}
	page = ts.do(t, "GET", "/compare?by=group&runs="+idsParam(base)+","+idsParam(remote[:1])+","+idsParam(remote[1:]), "").Body.String()
	if strings.Contains(page, `id="add-repetitions"`) || !strings.Contains(page, "10.1.1.1:9092") {
		t.Errorf("page of a comparison with a target no longer allowed offers the button")
	}
}

// TestAddRepetitionsSecrets: a configuration that needs a secret can be
// run again while the server still holds it (a run of it is queued), and
// its new runs hold it in memory only; once no run holds it, it is
// refused, saying so.
func TestAddRepetitionsSecrets(t *testing.T) {
	ts := newRunningTestServer(t, func(c *Config) { c.Targets = allowTargets(t, "127.0.0.1:*") })
	held := ts.holdQueue(t)
	pw := map[string]string{"A": "Pw-A-rerun-1c2d", "B": "Pw-B-rerun-3e4f"}
	target := func(label string) string {
		return fmt.Sprintf(`{"bootstrap_server":"127.0.0.1:1","security_protocol":"SASL_PLAINTEXT","sasl_mechanism":"PLAIN","sasl_username":"u","sasl_password":%q}`, pw[label])
	}
	rec := ts.do(t, "POST", "/api/runs", fmt.Sprintf(`{"workload":"producer","repetitions":2,"configs":[{"label":"A","target":%s,"params":{"num-records":100}},{"label":"B","target":%s,"params":{"num-records":100}}]}`,
		target("A"), target("B")))
	if rec.Code != http.StatusCreated {
		t.Fatalf("A/B = %d %s", rec.Code, rec.Body)
	}
	ab := decodeAB(t, rec.Body.Bytes())
	<-held.taken // the first run of A is with the worker; the others are pending
	body := fmt.Sprintf(`{"runs":[%s],"by":"group","n":1}`, idsParam(idsOf(ab.Runs)))
	code, resp := ts.addReps(t, body)
	if code != http.StatusCreated {
		t.Fatalf("while the secrets are held = %d %+v", code, resp)
	}
	for _, r := range resp.Runs {
		if got := ts.local.HeldSecrets([]uint{r.ID}, []string{"sasl.password"})["sasl.password"]; got != pw[r.Label] {
			t.Errorf("new run %d (%s) holds %q, want its configuration's secret", r.ID, r.Label, got)
		}
	}
	all := append(ab.Runs, resp.Runs...)
	ts.cancelAll(t, all)
	code, resp = ts.addReps(t, body)
	var named []uint
	for _, nr := range resp.NotRerunnable {
		named = append(named, nr.Run)
	}
	want := idsOf(ab.Runs) // those the request names
	slices.Sort(named)
	slices.Sort(want)
	if code != http.StatusConflict || !slices.Equal(named, want) || !strings.Contains(resp.Error, "secret") {
		t.Errorf("once no run holds the secrets = %d %+v, want 409 naming every run", code, resp)
	}
	for _, p := range pw {
		if strings.Contains(resp.Error, p) {
			t.Error("the answer shows a password")
		}
	}
}

// TestImportedRunsOfferNoRepetitions: a comparison of imported runs, too
// few to decide, neither suggests running more repetitions nor points to
// a way of adding them: it says imported runs cannot be run again, by run
// as by group.
func TestImportedRunsOfferNoRepetitions(t *testing.T) {
	ts := newTestServer(t, nil)
	var runs []*store.Run
	for i, rate := range []float64{1000, 1200} {
		runs = append(runs, &store.Run{Label: fmt.Sprintf("side%d", i), Workload: "producer", Status: rundoc.StatusSucceeded,
			Source: rundoc.SourceImported, Complete: true, GroupID: fmt.Sprintf("g%d", i), GroupIndex: 1,
			Metrics: []store.Metric{{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: "higher"}}})
	}
	if err := ts.st.CreateRuns(t.Context(), runs); err != nil {
		t.Fatal(err)
	}
	ids := idsParam([]uint{runs[0].ID, runs[1].ID})
	for _, by := range []string{"run", "group"} {
		body := ts.do(t, "GET", "/compare?by="+by+"&runs="+ids, "").Body.String()
		for _, bad := range []string{"more repetitions per side", `id="add-repetitions"`, `id="add-reps-by"`} {
			if strings.Contains(body, bad) {
				t.Errorf("by %s: the comparison of imported runs offers re-running them (%q)", by, bad)
			}
		}
		for _, want := range []string{`id="suggest-repetitions"`, "3 more runs per side would decide", "imported runs cannot be run again: import more",
			`id="not-rerunnable"`, "imported: kbench has no configuration"} {
			if !strings.Contains(body, want) {
				t.Errorf("by %s: the comparison of imported runs lacks %q", by, want)
			}
		}
	}
}
