package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// checkWritepathRun checks what a finished write-path run stored.
func checkWritepathRun(t *testing.T, r apiRun) {
	t.Helper()
	if r.Status != rundoc.StatusSucceeded || !r.Complete || r.Workload != rundoc.Writepath {
		t.Fatalf("run %d: workload %s status %s complete %v error %q", r.ID, r.Workload, r.Status, r.Complete, r.Error)
	}
	metrics := map[string]float64{}
	for _, m := range r.Metrics {
		metrics[m.Name] = m.Value
	}
	for _, want := range []string{"requests-per-sec", "write-syscalls-per-request", "bytes-per-write-syscall"} {
		if metrics[want] <= 0 {
			t.Errorf("run %d: metric %s = %v, want > 0", r.ID, want, metrics[want])
		}
	}
	cpu := false
	for _, p := range r.Profiles {
		cpu = cpu || (p.Role == "client" && p.Kind == "cpu")
	}
	if !cpu {
		t.Errorf("run %d: no client CPU profile in %+v", r.ID, r.Profiles)
	}
}

func TestWritepathRunThroughAPI(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	id := ts.createRun(t, `{"workload":"writepath","label":"pb","params":{"sink":true,"requests":300,"strategy":"per-buffer","records-per-request":16}}`)
	r := ts.waitFinal(t, id)
	checkWritepathRun(t, r)
	for _, m := range r.Metrics {
		// 16 records + 2 headers: one write per buffer.
		if m.Name == "write-syscalls-per-request" && (m.Value < 17 || m.Value > 20) {
			t.Errorf("per-buffer: %v write syscalls per request, want about 18", m.Value)
		}
	}
	if page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), ""); page.Code != 200 || !strings.Contains(page.Body.String(), "write-syscalls-per-request") {
		t.Errorf("run page of a writepath run = %d, lacks its metrics", page.Code)
	}
	var spec struct {
		Workload rundoc.Workload
		Params   map[string]any
	}
	if err := json.Unmarshal(r.Spec, &spec); err != nil || spec.Workload != rundoc.Writepath || spec.Params["sink"] != true {
		t.Errorf("stored spec %s (%v)", r.Spec, err)
	}

	// The form takes writepath too, its flags by name.
	ok := ts.formPost(t, "/runs", url.Values{"workload": {"writepath"}, "sink": {"true"}, "requests": {"300"},
		"strategy": {"gather"}, "profile": {"none", "cpu"}, "label": {"form-gather"}})
	if ok.Code != http.StatusSeeOther {
		t.Fatalf("writepath form: %d %s", ok.Code, ok.Body)
	}
	var fid uint
	fmt.Sscanf(ok.Header().Get("Location"), "/runs/%d", &fid)
	fr := ts.waitFinal(t, fid)
	checkWritepathRun(t, fr)
	for _, m := range fr.Metrics {
		if m.Name == "write-syscalls-per-request" && m.Value > 1.5 {
			t.Errorf("gather: %v write syscalls per request, want about 1", m.Value)
		}
	}

	bad := ts.formPost(t, "/runs", url.Values{"workload": {"writepath"}, "sink": {"true"}, "strategy": {"sideways"}})
	if bad.Code != 400 || !strings.Contains(bad.Body.String(), "strategy") || !strings.Contains(bad.Body.String(), `value="sideways"`) {
		t.Errorf("bad strategy in the form: %d", bad.Code)
	}
	page := ts.do(t, "GET", "/runs/new", "")
	if !strings.Contains(page.Body.String(), `value="writepath"`) || !strings.Contains(page.Body.String(), `name="sink"`) {
		t.Error("the new-run form offers no writepath workload or sink")
	}
}

func TestWritepathAPIBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, tt := range []struct{ name, body, field string }{
		{"bad strategy", `{"workload":"writepath","params":{"strategy":"fast"}}`, "strategy"},
		{"target not allowed", `{"workload":"writepath","params":{"bootstrap-server":"10.1.2.3:9092"}}`, "bootstrap-server"},
		{"target through target", `{"workload":"writepath","target":{"bootstrap_server":"10.1.2.3:9092"}}`, "bootstrap-server"},
		{"producer flag", `{"workload":"writepath","params":{"num-records":5}}`, "num-records"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tt.body)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != 400 || resp.Field != tt.field {
				t.Errorf("got %d field %q (%s), want 400 %q", rec.Code, resp.Field, resp.Error, tt.field)
			}
		})
	}
}

type presetResponse struct {
	Batch      string   `json:"batch"`
	Runs       []apiRun `json:"runs"`
	CompareURL string   `json:"compare_url"`
}

// withoutJDK makes the preset find no JDK for the test's duration.
func withoutJDK(t *testing.T) error {
	t.Helper()
	orig := findJDK
	err := fmt.Errorf("jdk: java, javac, jfr not found in PATH: %s", jdk.Install)
	findJDK = func() error { return err }
	t.Cleanup(func() { findJDK = orig })
	return err
}

func TestWritepathPreset(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	withoutJDK(t)
	ts := newRunningTestServer(t, nil)
	rec := ts.do(t, "POST", "/api/presets/writepath", `{"records-per-request":16,"record-size":256,"requests":300,"repetitions":2,"sink":true,"in-flight":5}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("preset = %d %s", rec.Code, rec.Body)
	}
	var resp presetResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	strategies := rundoc.GoWritepathStrategies()
	if len(resp.Runs) != 2*len(strategies) {
		t.Fatalf("%d runs, want %d", len(resp.Runs), 2*len(strategies))
	}
	if resp.CompareURL != "/writepath/"+resp.Batch || !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(resp.Batch) {
		t.Errorf("compare_url %q batch %q", resp.CompareURL, resp.Batch)
	}
	groups := map[string]string{}
	for i, r := range resp.Runs {
		// Interleaved, every other round reversed: gather … kafka-go-conn,
		// then kafka-go-conn … gather.
		round, pos := i/len(strategies), i%len(strategies)
		if round%2 == 1 {
			pos = len(strategies) - 1 - pos
		}
		want := strategies[pos]
		if r.Label != want || r.Workload != rundoc.Writepath || r.GroupIndex != round+1 || r.ABBatch != "wp-"+resp.Batch {
			t.Errorf("run %d: label %s workload %s index %d batch %s, want %s, repetition %d, batch wp-%s (interleaved)", i, r.Label, r.Workload,
				r.GroupIndex, r.ABBatch, want, round+1, resp.Batch)
		}
		if i > 0 && r.ID <= resp.Runs[i-1].ID {
			t.Errorf("runs not created in order: %d after %d", r.ID, resp.Runs[i-1].ID)
		}
		if g, ok := groups[r.Label]; ok && g != r.GroupID {
			t.Errorf("strategy %s in two groups", r.Label)
		}
		groups[r.Label] = r.GroupID
		if !strings.Contains(string(r.Spec), `"strategy":"`+want+`"`) || !strings.Contains(string(r.Spec), `"sink":true`) ||
			!strings.Contains(string(r.Spec), `"requests":300`) {
			t.Errorf("run %d spec %s", i, r.Spec)
		}
	}
	if len(groups) != len(strategies) {
		t.Errorf("groups %v, want one per strategy", groups)
	}

	// While runs are unfinished the page lists them and reloads itself.
	page := ts.do(t, "GET", resp.CompareURL, "")
	if page.Code != 200 || !strings.Contains(page.Body.String(), "wp-runs") {
		t.Fatalf("result page = %d", page.Code)
	}
	for _, r := range resp.Runs {
		checkWritepathRun(t, ts.waitFinal(t, r.ID))
	}
	page = ts.do(t, "GET", resp.CompareURL, "")
	body := page.Body.String()
	if page.Code != 200 {
		t.Fatalf("result page = %d", page.Code)
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("finished batch still reloads itself")
	}
	for _, want := range []string{`id="comparison"`, `id="wp-ratios"`, `data-strategy="per-buffer"`, `data-metric="requests-per-sec"`,
		`data-metric="write-syscalls-per-request"`, `id="wp-diff-link"`, "normalize=work", `class="wp-panel" data-strategy="gather"`} {
		if !strings.Contains(body, want) {
			t.Errorf("result page lacks %s", want)
		}
	}
	// gather is the baseline column, then the others in the lab's order.
	cols := regexp.MustCompile(`<span class="col-name">([^<]+)</span>`).FindAllStringSubmatch(body, -1)
	var names []string
	for _, c := range cols {
		names = append(names, c[1])
	}
	if strings.Join(names, ",") != strings.Join(strategies, ",") {
		t.Errorf("columns %v, want %v", names, strategies)
	}
	// per-buffer needs far more write syscalls per request than gather.
	m := regexp.MustCompile(`(?s)data-strategy="per-buffer">.*?wp-ratio">[^<]*</td>.*?wp-ratio">×([0-9.]+)</td>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no syscall ratio for per-buffer in %s", body)
	}
	var ratio float64
	fmt.Sscanf(m[1], "%g", &ratio)
	if ratio < 5 {
		t.Errorf("per-buffer/gather write syscalls per request = %v, want about 18", ratio)
	}
	diff := regexp.MustCompile(`href="(/compare/profiles\?[^"]+)"`).FindStringSubmatch(body)
	if diff == nil {
		t.Fatal("no differential flame graph link")
	}
	if d := ts.do(t, "GET", strings.ReplaceAll(diff[1], "&amp;", "&"), ""); d.Code != 200 {
		t.Errorf("diff page %s = %d", diff[1], d.Code)
	}
}

func TestWritepathPresetBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, tt := range []struct{ name, body, field string }{
		{"repetitions", `{"repetitions":0}`, "repetitions"},
		{"too many repetitions", `{"repetitions":11}`, "repetitions"},
		{"records", `{"records-per-request":0}`, "records-per-request"},
		{"record size", `{"record-size":-1}`, "record-size"},
		{"requests", `{"requests":0}`, "requests"},
		{"in flight", `{"in-flight":5000}`, "in-flight"},
		{"wrong type", `{"record-size":"big"}`, "record-size"},
		{"unknown field", `{"strategy":"gather"}`, "strategy"},
		{"not json", `{"requests":`, "body"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/presets/writepath", tt.body)
			var resp struct{ Error, Field string }
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != 400 || resp.Field != tt.field {
				t.Errorf("got %d field %q (%s), want 400 %q", rec.Code, resp.Field, resp.Error, tt.field)
			}
		})
	}
	if n, _ := ts.st.CountRuns(t.Context()); n != 0 {
		t.Errorf("bad presets created %d runs", n)
	}
	for _, p := range []string{"/writepath/nothing", "/writepath/0123456789ab"} {
		if rec := ts.do(t, "GET", p, ""); rec.Code != 404 {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
}

func TestWritepathPageAndForm(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	withoutJDK(t)
	ts := newRunningTestServer(t, nil)
	page := ts.do(t, "GET", "/writepath", "")
	body := page.Body.String()
	if page.Code != 200 {
		t.Fatalf("GET /writepath = %d", page.Code)
	}
	if !strings.Contains(body, `id="wp-no-java"`) || !strings.Contains(body, "openjdk-17-jdk-headless") {
		t.Error("/writepath does not say the Java strategies are left out for want of a JDK")
	}
	for _, want := range []string{"writev", "64 ms to 2 ms", "GatheringByteChannel", `name="_csrf"`, "Write-path comparison",
		`href="/writepath" aria-current="page"`, `name="records-per-request"`, `name="sink"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/writepath lacks %q", want)
		}
	}
	bad := ts.formPost(t, "/writepath", url.Values{"requests": {"many"}, "record-size": {"128"}, "sink": {"true"}})
	if bad.Code != 400 || !strings.Contains(bad.Body.String(), `id="f-requests-error"`) || !strings.Contains(bad.Body.String(), `value="128"`) {
		t.Errorf("bad form: %d", bad.Code)
	}
	ok := ts.formPost(t, "/writepath", url.Values{"requests": {"300"}, "repetitions": {"1"}, "sink": {"true"}})
	loc := ok.Header().Get("Location")
	if ok.Code != http.StatusSeeOther || !regexp.MustCompile(`^/writepath/[0-9a-f]{12}$`).MatchString(loc) {
		t.Fatalf("form = %d %s", ok.Code, loc)
	}
	batch := strings.TrimPrefix(loc, "/writepath/")
	runs, _, err := ts.st.ListRuns(t.Context(), store.RunFilter{Workload: string(rundoc.Writepath), Limit: 50})
	if err != nil || len(runs) != len(rundoc.GoWritepathStrategies()) {
		t.Fatalf("%d runs (%v)", len(runs), err)
	}
	for _, r := range runs {
		ts.waitFinal(t, r.ID)
		if !strings.HasPrefix(r.GroupID, "wp-"+batch+"-") {
			t.Errorf("run %d group %q", r.ID, r.GroupID)
		}
	}
	// Posting without the CSRF token is refused.
	if rec := ts.do(t, "POST", "/writepath", "requests=300", "Content-Type", "application/x-www-form-urlencoded"); rec.Code != http.StatusForbidden {
		t.Errorf("no CSRF: %d", rec.Code)
	}
}

// TestWritepathPresetJava: with a JDK the preset adds the Java strategies;
// their runs hold the JVM's wall profile, and the result page has their
// rows, their write-path panels and the Java differential flame graph.
func TestWritepathPresetJava(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts kbench run")
	}
	if err := findJDK(); err != nil {
		if os.Getenv("KBENCH_REQUIRE_JDK") == "1" {
			t.Fatal(err)
		}
		t.Skipf("no JDK (set KBENCH_REQUIRE_JDK=1 to fail instead): %v", err)
	}
	ts := newRunningTestServer(t, nil)
	page := ts.do(t, "GET", "/writepath", "")
	if strings.Contains(page.Body.String(), `id="wp-no-java"`) {
		t.Error("/writepath says the Java strategies are left out, with a JDK here")
	}
	rec := ts.do(t, "POST", "/api/presets/writepath", `{"requests":300,"repetitions":1}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("preset = %d %s", rec.Code, rec.Body)
	}
	var resp presetResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range resp.Runs {
		labels = append(labels, r.Label)
	}
	if strings.Join(labels, ",") != strings.Join(rundoc.WritepathStrategies(), ",") {
		t.Fatalf("runs %v, want %v", labels, rundoc.WritepathStrategies())
	}
	for _, r := range resp.Runs {
		done := ts.waitFinal(t, r.ID)
		if !rundoc.IsJavaStrategy(r.Label) {
			continue
		}
		if done.Status != rundoc.StatusSucceeded {
			t.Fatalf("%s: %s %s", r.Label, done.Status, done.Error)
		}
		wall := false
		for _, p := range done.Profiles {
			wall = wall || (p.Role == "client" && p.Kind == rundoc.KindWall)
		}
		if !wall {
			t.Errorf("%s: no client wall profile in %+v", r.Label, done.Profiles)
		}
	}
	body := ts.do(t, "GET", resp.CompareURL, "").Body.String()
	for _, want := range []string{`data-strategy="java-gather"`, `id="wp-java-diff-link"`, `id="wp-java-diff"`,
		`class="wp-panel" data-strategy="java-gather"`, `class="wp-panel" data-strategy="java-per-buffer"`} {
		if !strings.Contains(body, want) {
			t.Errorf("result page lacks %s", want)
		}
	}
	link := regexp.MustCompile(`id="wp-java-diff-link" href="([^"]+)"`).FindStringSubmatch(body)
	if link == nil {
		t.Fatal("no Java diff link")
	}
	if d := ts.do(t, "GET", strings.ReplaceAll(link[1], "&amp;", "&"), ""); d.Code != 200 {
		t.Errorf("Java diff page %s = %d", link[1], d.Code)
	}
}

// seedWritepathBatch stores the finished runs of one preset batch: reps
// runs of each strategy, as the preset groups and labels them.
func seedWritepathBatch(t *testing.T, ts *testServer, batch string, strategies []string, reps int, params string) []uint {
	t.Helper()
	var runs []*store.Run
	for rep := 1; rep <= reps; rep++ {
		for i, s := range strategies {
			runs = append(runs, &store.Run{Label: s, Workload: rundoc.Writepath, Status: rundoc.StatusSucceeded, Complete: true,
				Spec:    `{"workload":"writepath","params":{"strategy":"` + s + `",` + params + `}}`,
				GroupID: launch.WritepathGroup(batch, s), GroupIndex: rep, ABBatch: launch.WritepathPrefix + batch,
				Metrics: []store.Metric{
					{Name: "requests-per-sec", Value: float64(100000 / (i + 1)), Unit: "requests/s", Better: "higher"},
					{Name: "requests-sent", Value: 600000, Unit: "requests"},
					{Name: "process-cpu-seconds", Value: float64(3 + i), Unit: "s", Better: "lower"},
				}})
		}
	}
	if err := ts.st.CreateRuns(t.Context(), runs); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// TestWritepathPastBatches: /writepath lists the lab's earlier batches,
// newest first, each linking to its page with its parameters and its
// runs' state.
func TestWritepathPastBatches(t *testing.T) {
	withoutJDK(t)
	ts := newTestServer(t, nil)
	if body := ts.do(t, "GET", "/writepath", "").Body.String(); !strings.Contains(body, `id="wp-past-none"`) {
		t.Error("/writepath without batches does not say there are none")
	}
	seedWritepathBatch(t, ts, "0000000000a1", []string{"gather", "per-buffer"}, 2, `"records-per-request":16,"record-size":256,"requests":20000,"in-flight":5,"sink":true`)
	seedWritepathBatch(t, ts, "0000000000b2", []string{"gather", "per-buffer", "copy"}, 1, `"records-per-request":8,"record-size":512,"duration":6,"in-flight":5,"sink":true`)
	// A run of the workload outside any batch is no batch.
	if err := ts.st.CreateRuns(t.Context(), []*store.Run{{Label: "alone", Workload: rundoc.Writepath, Status: rundoc.StatusSucceeded}}); err != nil {
		t.Fatal(err)
	}
	rec := ts.do(t, "GET", "/writepath", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /writepath = %d", rec.Code)
	}
	body := rec.Body.String()
	var batches []string
	for _, m := range regexp.MustCompile(`<tr data-batch="([0-9a-f]+)">`).FindAllStringSubmatch(body, -1) {
		batches = append(batches, m[1])
	}
	if strings.Join(batches, ",") != "0000000000b2,0000000000a1" {
		t.Fatalf("/writepath lists batches %v, want the newest first: 0000000000b2, 0000000000a1", batches)
	}
	for _, want := range []string{`<a href="/writepath/0000000000b2">0000000000b2</a>`, `<a href="/writepath/0000000000a1">0000000000a1</a>`,
		"8 × 512 B records a request, 6 s a run, 5 in flight, sink", "16 × 256 B records a request, 20,000 requests a run",
		"3 runs, all succeeded", "4 runs, all succeeded"} {
		if !strings.Contains(body, want) {
			t.Errorf("/writepath's list lacks %q", want)
		}
	}
}

// TestWritepathSaveAsReport: a finished batch's page offers "Save as
// report"; the form it holds creates a report at a permanent link that
// compares the batch's runs by strategy, gather first.
func TestWritepathSaveAsReport(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedWritepathBatch(t, ts, "0000000000c3", []string{"gather", "per-buffer"}, 2, `"records-per-request":16,"record-size":256,"duration":6,"in-flight":5,"sink":true`)
	page := ts.do(t, "GET", "/writepath/0000000000c3", "")
	body := page.Body.String()
	if page.Code != http.StatusOK {
		t.Fatalf("GET /writepath/0000000000c3 = %d", page.Code)
	}
	form := regexp.MustCompile(`(?s)<form method="post" action="(/reports)" id="save-report-form">(.*?)</form>`).FindStringSubmatch(body)
	if form == nil {
		t.Fatal("the batch's page offers no Save as report form")
	}
	fields := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="(?:hidden|text)"[^>]* name="([a-z_]+)" value="([^"]*)"`).FindAllStringSubmatch(form[2], -1) {
		if m[1] != csrfField {
			fields.Set(m[1], m[2])
		}
	}
	// gather's runs first (the baseline), then per-buffer's.
	wantRuns := fmt.Sprintf("%d,%d,%d,%d", ids[0], ids[2], ids[1], ids[3])
	if fields.Get("runs") != wantRuns || fields.Get("by") != "label" || fields.Get("title") == "" {
		t.Fatalf("save form fields %v, want runs %s by label and a title", fields, wantRuns)
	}
	rec := ts.formPost(t, form[1], fields)
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/r/") {
		t.Fatalf("save as report = %d %q %s", rec.Code, loc, rec.Body)
	}
	rep := ts.do(t, "GET", loc, "")
	rb := rep.Body.String()
	if rep.Code != http.StatusOK || !strings.Contains(rb, "Write-path comparison 0000000000c3") {
		t.Fatalf("GET %s = %d, or lacks its title", loc, rep.Code)
	}
	names := regexp.MustCompile(`<span class="col-name">([^<]+)</span>`).FindAllStringSubmatch(rb, -1)
	if len(names) != 2 || names[0][1] != "gather" || names[1][1] != "per-buffer" {
		t.Errorf("report columns %v, want gather (baseline) and per-buffer", names)
	}
	if !strings.Contains(rb, "process-cpu-seconds") {
		t.Error("the report lacks the runs' metrics")
	}
}
