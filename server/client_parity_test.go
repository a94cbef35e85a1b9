package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/regressions/funcs"
)

// parityExcluded are the routes of the route table that answer no JSON,
// each with the reason. Keys are "METHOD path"; "ANY path" stands for the
// methods gin's Any registers.
var parityExcluded = map[string]string{
	"GET /":                               "page",
	"GET /runs/new":                       "page",
	"POST /runs":                          "form: redirects to the run's page",
	"GET /runs/:id":                       "page",
	"GET /runs/:id/live-charts":           "HTML fragment the run page polls",
	"POST /runs/:id/cancel":               "form: redirects",
	"POST /runs/:id/delete":               "form: redirects",
	"POST /runs/:id/profiles":             "form: redirects",
	"GET /import":                         "page",
	"POST /import":                        "form: redirects",
	"POST /import/csv":                    "form: redirects",
	"GET /compare":                        "page",
	"POST /reports":                       "form: redirects",
	"POST /compare/repetitions":           "form: redirects",
	"GET /history":                        "page",
	"GET /series":                         "page",
	"GET /regressions":                    "page",
	"GET /login":                          "page",
	"POST /login":                         "form: redirects",
	"POST /logout":                        "form: redirects",
	"GET /writepath":                      "page",
	"POST /writepath":                     "form: redirects",
	"GET /writepath/:batch":               "page",
	"GET /sweeps":                         "page",
	"POST /sweeps":                        "form: redirects",
	"GET /sweeps/:id":                     "page",
	"POST /sweeps/:id/cancel":             "form: redirects",
	"GET /slos":                           "page",
	"POST /slos":                          "form: redirects",
	"GET /slos/:id":                       "page",
	"POST /slos/:id/cancel":               "form: redirects",
	"GET /api/runs/:id/events":            "server-sent events",
	"GET /api/profiles/:id/download":      "download: the profile's gzipped pprof bytes",
	"GET /profiles/:id":                   "page",
	"GET /compare/profiles":               "page",
	"ANY /profiles/:id/pprof":             "pprof's web UI",
	"ANY /profiles/:id/pprof/*path":       "pprof's web UI",
	"ANY /diff/:base/:target/pprof":       "pprof's web UI",
	"ANY /diff/:base/:target/pprof/*path": "pprof's web UI",
	"ANY /diff/runs/:kind/:role/:base/:target/pprof":       "pprof's web UI",
	"ANY /diff/runs/:kind/:role/:base/:target/pprof/*path": "pprof's web UI",
	"GET /api/diff/profile.pb.gz":                          "download: a merged side's gzipped pprof bytes",
	"GET /static/*filepath":                                "static files",
	"GET /favicon.ico":                                     "icon",
	"GET /healthz":                                         "plain text ok",
}

// parityRequest is one live request of a parity case and the client type
// its answer must decode into with no field left over (nil: an answer
// without a body).
type parityRequest struct {
	method, path string
	body         []byte
	contentType  string
	status       int
	into         any
}

// parityFixture is what the cases ask about: runs, profiles and the
// server's URL.
type parityFixture struct {
	runs     []uint // seedCompare's, finished, with metrics
	profiles []uint // their profiles
	queued   uint   // a queued run (the server has no worker)
	report   string // a report's slug
	sweep    string // a sweep's id
	slo      string // a latency-target search's id
	ended    string // a search that ended, with probes measured
	// histograms is a run with window histograms and a histogram log.
	histograms uint
}

// TestClientParity: every JSON route of the route table answers, live, a
// document the client package's type decodes with no unknown field; a
// route without a case (or an exclusion, with its reason) fails, so a
// new route brings its case, and its answer's type in package client.
func TestClientParity(t *testing.T) {
	// Change points and regressions name functions (from synthetic
	// profiles of the step's runs), so that their fields are decoded.
	sets := &synthSets{}
	namer := funcs.New(sets, funcs.Options{})
	namer.Start(t.Context())
	t.Cleanup(namer.Close)
	ts := newTestServer(t, func(c *Config) {
		noWorker(c)
		c.Functions = namer
	})
	srv := httptest.NewServer(ts)
	defer srv.Close()
	c := client.New(srv.URL, "")
	ctx := t.Context()

	fx := parityFixture{runs: seedCompare(t, ts)}
	fx.histograms, _, _ = seedHistogramRun(t, ts, "histograms")
	for _, id := range fx.runs {
		ps, err := ts.st.ListProfiles(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			fx.profiles = append(fx.profiles, p.ID)
		}
	}
	if len(fx.profiles) < 2 {
		t.Fatalf("seeded %d profiles, want 2", len(fx.profiles))
	}
	// The series regressions need: a step in record-send-rate.
	stepped := stepSeries(t, ts, "parity", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), 12, "record-send-rate", "records/s", "higher", 1000, 500)
	sets.profileRuns(stepped[:6], stepped[6:])
	if f, err := namer.Wait(ctx, stepped[:6], stepped[6:]); err != nil || f.Status != wire.FunctionsNamed || len(f.Functions) == 0 {
		t.Fatalf("the step's functions: %+v, %v", f, err)
	}
	created, err := c.CreateRuns(ctx, client.CreateRuns{Workload: "producer", Label: "queued", Params: rawParams(`{"num-records":100,"profile":"none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	fx.queued = created.ID
	second, err := c.CreateRuns(ctx, client.CreateRuns{Workload: "producer", Label: "queued too", Params: rawParams(`{"num-records":200,"profile":"none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.CreateReport(ctx, client.CreateReport{Title: "parity", Runs: fx.runs[:2]})
	if err != nil {
		t.Fatal(err)
	}
	fx.report = rep.Slug
	sw, err := c.CreateSweep(ctx, client.CreateSweep{Configs: []client.SweepConfigRequest{{Label: "a", Params: rawParams(tinySweepParams)}}})
	if err != nil {
		t.Fatal(err)
	}
	fx.sweep = sw.Sweep
	search, err := c.CreateSLO(ctx, client.CreateSLO{Config: client.SweepConfigRequest{Label: "a", Params: rawParams(tinySweepParams)}, LatencyMs: 10})
	if err != nil {
		t.Fatal(err)
	}
	fx.slo = search.SLO
	fx.ended = seedSLO(t, ts)

	base, target := fx.profiles[0], fx.profiles[1]
	run, prof := fx.runs[0], fx.profiles[0]
	jsonBody := func(v string) []byte { return []byte(v) }
	get := func(path string, into any) parityRequest {
		return parityRequest{method: "GET", path: path, status: http.StatusOK, into: into}
	}
	post := func(path, body string, status int, into any) parityRequest {
		if body == "" {
			return parityRequest{method: "POST", path: path, status: status, into: into}
		}
		return parityRequest{method: "POST", path: path, body: jsonBody(body), contentType: "application/json", status: status, into: into}
	}
	upload := func(path string, status int, into any, fields map[string]string, files ...[3]string) parityRequest {
		body, ct := parityForm(t, fields, files...)
		return parityRequest{method: "POST", path: path, body: body, contentType: ct, status: status, into: into}
	}
	table, err := os.ReadFile(filepath.Join("testdata", "kafka19296_consumer.md"))
	if err != nil {
		t.Fatal(err)
	}
	output, err := os.ReadFile(filepath.Join(importDir, "consumer_summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ombResult, err := os.ReadFile(ombSample)
	if err != nil {
		t.Fatal(err)
	}
	csv := "time,commit,record-send-rate\n2024-01-01T00:00:00Z,a,100\n2024-01-02T00:00:00Z,b,110\n"
	// Answers whose lists the fixture fills, so that their elements'
	// fields are decoded too.
	history, regressions := &client.History{}, &client.Regressions{}
	cases := map[string][]parityRequest{
		"GET /api/runs": {get("/api/runs", &client.RunList{}), get("/api/runs?limit=1", &client.RunList{})},
		"POST /api/runs": {
			post("/api/runs", `{"workload":"producer","label":"one","params":{"num-records":100,"profile":"none"}}`, http.StatusCreated, &client.Created{}),
			post("/api/runs", `{"workload":"producer","label":"reps","repetitions":2,"params":{"num-records":100,"profile":"none"}}`, http.StatusCreated, &client.Created{}),
			post("/api/runs", `{"workload":"producer","repetitions":1,"configs":[{"label":"a","params":{"num-records":100,"profile":"none"}},{"label":"b","params":{"num-records":200,"profile":"none"}}]}`,
				http.StatusCreated, &client.Created{}),
		},
		"GET /api/runs/:id":          {get(fmt.Sprintf("/api/runs/%d", run), &client.Run{}), get(fmt.Sprintf("/api/runs/%d", fx.queued), &client.Run{})},
		"DELETE /api/runs/:id":       {{method: "DELETE", path: fmt.Sprintf("/api/runs/%d", fx.runs[2]), status: http.StatusNoContent}},
		"POST /api/runs/:id/cancel":  {post(fmt.Sprintf("/api/runs/%d/cancel", fx.queued), "", http.StatusAccepted, &client.Canceling{})},
		"GET /api/runs/:id/profiles": {get(fmt.Sprintf("/api/runs/%d/profiles", run), &client.Profiles{})},
		"GET /api/runs/:id/omb.json": {get(fmt.Sprintf("/api/runs/%d/omb.json", fx.histograms), &client.OMBResult{}),
			get(fmt.Sprintf("/api/runs/%d/omb.json?workload=w", run), &client.OMBResult{})},
		"GET /api/runs/:id/histograms": {get(fmt.Sprintf("/api/runs/%d/histograms", fx.histograms), &client.RunHistograms{}),
			get(fmt.Sprintf("/api/runs/%d/histograms?kind=record-latency&scope=window", fx.histograms), &client.RunHistograms{})},
		"GET /api/profiles/:id/flamegraph": {
			get(fmt.Sprintf("/api/profiles/%d/flamegraph", prof), &client.FlameGraph{}),
			get(fmt.Sprintf("/api/profiles/%d/flamegraph?format=compact", prof), &client.FlameGraph{}),
			get(fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows&width=800&search=encode", prof), &client.FlameGraph{}),
			get(fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows&search=encode&zoom=main&order=left-heavy&ignore=x&only_matching=1", prof), &client.FlameGraph{}),
			get(fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows&view=top&sort=total&limit=5", prof), &client.FlameGraph{}),
			get(fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows&view=inverted", prof), &client.FlameGraph{}),
			get(fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows&view=callers&function=main", prof), &client.FlameGraph{}),
		},
		"GET /api/profiles/:id/writepaths": {get(fmt.Sprintf("/api/profiles/%d/writepaths", prof), &client.WritePaths{})},
		"GET /api/diff": {
			get(fmt.Sprintf("/api/diff?base=%d&target=%d", base, target), &client.Diff{}),
			get(fmt.Sprintf("/api/diff?base=%d&target=%d&format=compact&normalize=total", base, target), &client.Diff{}),
			get(fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&search=encode", base, target), &client.Diff{}),
			get(fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&focus=encode&width=300", base, target), &client.Diff{}),
			get(fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&view=top&sort=delta_total", base, target), &client.Diff{}),
			get(fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&view=callees&function=main", base, target), &client.Diff{}),
			// Run sets; the queued run has no profile and is skipped.
			get(fmt.Sprintf("/api/diff?base_runs=%d,%d&target_runs=%d&kind=cpu&role=client", fx.runs[0], fx.queued, fx.runs[1]), &client.Diff{}),
			get(fmt.Sprintf("/api/diff?base_runs=%d&target_runs=%d,%d&kind=cpu&role=client&format=rows&normalize=work&search=encode", fx.runs[0], fx.runs[1], fx.runs[0]), &client.Diff{}),
			get(fmt.Sprintf("/api/diff?base_runs=%d&target_runs=%d,%d&kind=cpu&role=client&format=compact", fx.runs[0], fx.runs[1], fx.runs[0]), &client.Diff{}),
		},
		"POST /api/runs/:id/profiles": {upload(fmt.Sprintf("/api/runs/%d/profiles", run), http.StatusCreated, &client.Profiles{}, nil,
			[3]string{"profile", "a.folded", "main;produce;write 5\n"})},
		"POST /api/import": {
			upload("/api/import", http.StatusCreated, &client.Run{}, map[string]string{"label": "imported"}, [3]string{"output", "out.txt", string(output)}),
			upload("/api/import", http.StatusCreated, &client.Created{}, map[string]string{"workload": "consumer"}, [3]string{"table", "t.md", string(table)}),
			upload("/api/import", http.StatusCreated, &client.Created{}, nil, [3]string{"omb", "r.json", string(ombResult)}),
			upload("/api/import", http.StatusCreated, &client.Created{}, nil, [3]string{"omb", "a.json", string(ombResult)}, [3]string{"omb", "b.json", string(ombResult)}),
		},
		"POST /api/import/csv": {upload("/api/import/csv", http.StatusCreated, &client.Created{}, map[string]string{"series": "parity-csv", "workload": "producer"},
			[3]string{"file", "h.csv", csv})},
		"GET /api/compare": {
			get(fmt.Sprintf("/api/compare?runs=%d,%d", fx.runs[0], fx.runs[1]), &client.Comparison{}),
			get(fmt.Sprintf("/api/compare?by=label&runs=%d,%d", fx.runs[0], fx.runs[1]), &client.Comparison{}),
		},
		"GET /r/:slug": {get("/r/"+fx.report+".json", &client.Comparison{})},
		"GET /api/history": {
			get(fmt.Sprintf("/api/history?run=%d&metric=record-send-rate", run), &client.History{}),
			get(fmt.Sprintf("/api/history?run=%d&metric=record-send-rate&min_segment=2", stepped[0]), history),
		},
		"GET /api/regressions": {get("/api/regressions?min_segment=2", regressions)},
		"GET /api/functions": {get("/api/functions?base_runs="+joinUints(stepped[:6])+"&target_runs="+joinUints(stepped[6:]), &client.Functions{}),
			get("/api/functions?base_runs="+joinUints(stepped[:2])+"&target_runs="+joinUints(stepped[6:]), &client.Functions{})},
		"POST /api/reports":             {post("/api/reports", fmt.Sprintf(`{"title":"t","runs":[%d,%d]}`, fx.runs[0], fx.runs[1]), http.StatusCreated, &client.ReportCreated{})},
		"POST /api/compare/repetitions": {post("/api/compare/repetitions", fmt.Sprintf(`{"runs":[%d,%d],"by":"label","n":1}`, created.ID, second.ID), http.StatusCreated, &client.Created{})},
		"POST /api/presets/writepath":   {post("/api/presets/writepath", `{"requests":10,"repetitions":1}`, http.StatusCreated, &client.Created{})},
		"POST /api/presets/sweep":       {post("/api/presets/sweep", `{"configs":[{"label":"b","params":`+tinySweepParams+`}]}`, http.StatusCreated, &client.SweepCreated{})},
		"GET /api/sweeps/:id":           {get("/api/sweeps/"+fx.sweep, &client.Sweep{})},
		"POST /api/sweeps/:id/cancel":   {post("/api/sweeps/"+fx.sweep+"/cancel", "", http.StatusAccepted, &client.SweepCanceled{})},
		"POST /api/presets/slo":         {post("/api/presets/slo", `{"config":{"label":"b","params":`+tinySweepParams+`},"percentile":99.9,"latency_ms":5,"max_rate":1000}`, http.StatusCreated, &client.SLOCreated{})},
		"GET /api/slos/:id":             {get("/api/slos/"+fx.slo, &client.SLO{}), get("/api/slos/"+fx.ended, &client.SLO{})},
		"POST /api/slos/:id/cancel":     {post("/api/slos/"+fx.slo+"/cancel", "", http.StatusAccepted, &client.SLOCanceled{})},
	}

	// Every route of the table has a case or a reason not to.
	seen := map[string]bool{}
	for _, r := range ts.engine.Routes() {
		key := r.Method + " " + r.Path
		anyKey := "ANY " + r.Path
		switch {
		case cases[key] != nil:
			seen[key] = true
		case parityExcluded[key] != "":
			seen[key] = true
		case parityExcluded[anyKey] != "":
			seen[anyKey] = true
		default:
			t.Errorf("route %s has no parity case: add one (and its answer's type to package client), or exclude it with the reason", key)
		}
	}
	var stale []string
	for k := range cases {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	for k := range parityExcluded {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("%s is in the parity test but not in the route table", k)
	}

	keys := make([]string, 0, len(cases))
	for k := range cases {
		keys = append(keys, k)
	}
	// The cases that delete or cancel go last, the others see the fixture whole.
	sort.SliceStable(keys, func(i, j int) bool {
		mi, mj := strings.HasSuffix(keys[i], "/cancel") || strings.HasPrefix(keys[i], "DELETE"), strings.HasSuffix(keys[j], "/cancel") || strings.HasPrefix(keys[j], "DELETE")
		if mi != mj {
			return mj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		for _, req := range cases[k] {
			data, err := c.Do(ctx, req.method, req.path, req.body, req.contentType, req.status, time.Minute, 64<<20)
			if err != nil {
				t.Errorf("%s (%s %s): %v", k, req.method, req.path, err)
				continue
			}
			if req.into == nil {
				if len(bytes.TrimSpace(data)) != 0 {
					t.Errorf("%s (%s): answered %.200s, want no body", k, req.path, data)
				}
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(req.into); err != nil {
				t.Errorf("%s (%s %s): the answer does not decode into %T: %v\n%.300s", k, req.method, req.path, req.into, err, data)
			}
		}
	}
	if len(history.ChangePoints) == 0 || len(regressions.Regressions) == 0 {
		t.Errorf("the fixture's step gave %d change points and %d regressions: the cases decode no element of them", len(history.ChangePoints), len(regressions.Regressions))
	}
	if len(history.ChangePoints) > 0 && len(history.ChangePoints[0].Functions) == 0 || len(regressions.Regressions) > 0 && len(regressions.Regressions[0].Functions) == 0 {
		t.Error("the fixture's change point and regression name no function: the cases decode none")
	}
}

// parityForm is a multipart form of fields and files ({field, file
// name, content}).
func parityForm(t *testing.T, fields map[string]string, files ...[3]string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		w, err := mw.CreateFormFile(f[0], f[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f[2])); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

// rawParams is a JSON object of params as a request's Params.
func rawParams(s string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}
