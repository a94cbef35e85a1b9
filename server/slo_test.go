package server

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// sloKnee is the system seedSLO's runs measure: p99 from the intended
// time 2 ms up to 800 records/s, 2 + (rate − 800)/8 ms past it, so 10 ms
// at 864 records/s.
func sloKneeMs(rate float64) float64 {
	if rate <= 800 {
		return 2
	}
	return 2 + (rate-800)/8
}

const sloKneeTruth = 864.0

// finishSLORun finishes the queued run of a search as sloKneeMs
// measures it at its spec's throughput, with the records of its spec.
func finishSLORun(t *testing.T, ts *testServer, id uint) {
	t.Helper()
	r, err := ts.st.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	file, err := rundoc.ParseSpecFile(json.RawMessage(r.Spec))
	if err != nil {
		t.Fatal(err)
	}
	var rate float64
	var records int64
	json.Unmarshal(file.Params["throughput"], &rate)
	json.Unmarshal(file.Params["num-records"], &records)
	if err := ts.st.StartRun(t.Context(), id, r.CreatedAt); err != nil {
		t.Fatal(err)
	}
	h := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	for i := range records {
		v := sloKneeMs(rate)
		if i%200 == 0 {
			v *= 1.5 // one in 200 slower: the p99 is the base
		}
		if err := h.RecordValue(int64(v * 1000)); err != nil {
			t.Fatal(err)
		}
	}
	out := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true,
		Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: math.Min(rate, 2000), Unit: "records/s", Better: rundoc.HigherIsBetter},
			{Name: "harness-limited", Value: 0, Unit: "flag"}},
		Histograms: []rundoc.Histogram{{Kind: rundoc.HistRecordLatencyIntended, Scope: rundoc.HistogramWindow, EndS: float64(records) / rate,
			Count: h.TotalCount(), Data: h.Encode()}}}
	if err := ts.st.FinishRun(t.Context(), id, out); err != nil {
		t.Fatal(err)
	}
}

// seedSLO runs a search with max_rate 2000 on a test server without a
// worker to its end, finishing each run it queues as sloKneeMs says, and
// returns its id.
func seedSLO(t *testing.T, ts *testServer) string {
	t.Helper()
	rec := ts.do(t, "POST", "/api/presets/slo", `{"config":{"label":"knee","params":{"num-records":100,"record-size":10,"profile":["none"]}},"latency_ms":10,"precision_pct":5,"max_rate":2000}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var created client.SLOCreated
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	for range 40 {
		st, links, err := ts.st.GetSLO(t.Context(), created.SLO)
		if err != nil {
			t.Fatal(err)
		}
		if st.Phase != store.SLOSearching {
			return created.SLO
		}
		last := links[len(links)-1]
		if r, err := ts.st.GetRun(t.Context(), last.RunID); err == nil && !r.Final() {
			finishSLORun(t, ts, last.RunID)
		}
		if err := ts.launcher.AdvanceSweeps(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the search did not end")
	return ""
}

// TestSLOAPI: a search created through the API ends with its answer
// around the system's limit; GET shows every probe with its runs and
// verdicts; its page says the answer and lists the runs; a cancel of an
// ended search is a 409; unknown and malformed ids are 404s.
func TestSLOAPI(t *testing.T) {
	ts := newTestServer(t, noWorker)
	id := seedSLO(t, ts)
	var res client.SLO
	rec := ts.do(t, "GET", "/api/slos/"+id, "")
	if rec.Code != 200 {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Phase != store.SLODone || res.Outcome != "found" || !(res.Lo <= sloKneeTruth && sloKneeTruth <= res.Hi) || res.Hi/res.Lo > 1.05+1e-9 {
		t.Fatalf("answer %s/%s [%v, %v], want found around %v within 5%%", res.Phase, res.Outcome, res.Lo, res.Hi, sloKneeTruth)
	}
	if res.Percentile != 99 || res.PrecisionPct != 5 || res.Repetitions != 1 || res.MinSamples != 1000 || res.Config.Latency != rundoc.HistRecordLatencyIntended || res.Config.RateMetric != "record-send-rate" {
		t.Errorf("settings %+v", res)
	}
	if len(res.Probes) < 3 || res.Probes[0].Rate != 2000 || res.Probes[0].Pass {
		t.Fatalf("probes %+v, want the maximum 2000 first, failing", res.Probes)
	}
	for _, p := range res.Probes {
		if !p.Measured || len(p.Runs) != 1 || p.Pass != (p.Rate < sloKneeTruth) {
			t.Errorf("probe %+v, want measured with one run, pass %v", p, p.Rate < sloKneeTruth)
			continue
		}
		r := p.Runs[0]
		if r.Samples < 1000 || r.Pass != p.Pass || r.Reason == "" || r.URL == "" || r.Status != rundoc.StatusSucceeded {
			t.Errorf("run %+v", r)
		}
	}

	page := ts.do(t, "GET", "/slos/"+id, "").Body.String()
	for _, want := range []string{`id="slo-answer"`, "between", `data-verdict="pass"`, `data-verdict="fail"`, "record-latency-intended", `name="slo" value="` + id + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `http-equiv="refresh"`) || strings.Contains(page, `id="slo-cancel"`) {
		t.Error("an ended search's page reloads itself or offers to cancel")
	}
	if rec := ts.do(t, "POST", "/api/slos/"+id+"/cancel", ""); rec.Code != http.StatusConflict {
		t.Errorf("cancel of an ended search: %d %s, want 409", rec.Code, rec.Body)
	}
	for _, path := range []string{"/api/slos/0123456789ab", "/api/slos/nope", "/slos/0123456789ab"} {
		if rec := ts.do(t, "GET", path, ""); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	list := ts.do(t, "GET", "/slos", "").Body.String()
	if !strings.Contains(list, `href="/slos/`+id+`"`) || !strings.Contains(list, "p99 under 10 ms") {
		t.Error("/slos does not list the search")
	}
}

// TestSLOBadInput: bad bodies are 400s naming each field, and store
// nothing; the form shows the messages beside the fields.
func TestSLOBadInput(t *testing.T) {
	ts := newTestServer(t, noWorker)
	for _, tc := range []struct{ name, body, field string }{
		{"no latency", `{"config":{"label":"a","params":{"num-records":100}}}`, "latency_ms"},
		{"percentile 100", `{"config":{"label":"a","params":{"num-records":100}},"latency_ms":5,"percentile":100}`, "percentile"},
		{"precision", `{"config":{"label":"a","params":{"num-records":100}},"latency_ms":5,"precision_pct":0}`, "precision_pct"},
		{"min over max", `{"config":{"label":"a","params":{"num-records":100}},"latency_ms":5,"min_rate":10,"max_rate":5}`, "min_rate"},
		{"throughput set", `{"config":{"label":"a","params":{"throughput":5}},"latency_ms":5}`, "config.params.throughput"},
		{"consumer", `{"config":{"label":"a","params":{"workload":"consumer"}},"latency_ms":5}`, "config.params.workload"},
		{"no label", `{"config":{"params":{}},"latency_ms":5}`, "config.label"},
		{"unknown field", `{"config":{"label":"a"},"latency_ms":5,"latency":3}`, "latency"},
		{"repetitions", `{"config":{"label":"a"},"latency_ms":5,"repetitions":0}`, "repetitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/presets/slo", tc.body)
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), tc.field) {
				t.Errorf("got %d %s, want 400 naming %s", rec.Code, rec.Body, tc.field)
			}
		})
	}
	if n, err := ts.st.CountRuns(t.Context()); err != nil || n != 0 {
		t.Errorf("%d runs stored by refused searches (%v)", n, err)
	}

	form := url.Values{"label": {"a"}, "params": {`{"throughput": 4}`}, "percentile": {"abc"}, "latency_ms": {"10"}}
	rec := ts.formPost(t, "/slos", form)
	body := rec.Body.String()
	if rec.Code != 400 || !strings.Contains(body, `id="error-summary"`) || !strings.Contains(body, "params.throughput: is set by the search") ||
		!strings.Contains(body, "&#34;abc&#34; is not a number") {
		t.Errorf("bad form: %d, want 400 with the fields' messages:\n%s", rec.Code, body)
	}
	rec = ts.formPost(t, "/slos", url.Values{"label": {"a"}, "params": {`{"num-records": 100}`}, "latency_ms": {"10"}, "max_rate": {"500"}})
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/slos/") {
		t.Fatalf("good form: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	page := ts.do(t, "GET", rec.Header().Get("Location"), "").Body.String()
	if !strings.Contains(page, `http-equiv="refresh"`) || !strings.Contains(page, `id="slo-cancel"`) || !strings.Contains(page, "up to 500 records/s") {
		t.Error("a running search's page neither reloads, offers to cancel nor says its bounds")
	}
}

// TestReportShowsSLO: an ended search saved as a report shows its answer
// and runs on the report's page and in every export, holds its runs
// back from deletion, and a search still searching, or no search, is a
// 400 naming slo.
func TestReportShowsSLO(t *testing.T) {
	ts := newTestServer(t, noWorker)
	id := seedSLO(t, ts)
	rec := ts.do(t, "POST", "/api/reports", `{"title":"p99 under 10 ms","slo":"`+id+`"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create report: %d %s", rec.Code, rec.Body)
	}
	var created client.ReportCreated
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	page := ts.do(t, "GET", created.URL, "").Body.String()
	for _, want := range []string{`id="report-slo"`, `id="slo-answer"`, `href="/slos/` + id + `"`, `data-verdict="pass"`, `id="slo-chart"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the report's page lacks %q", want)
		}
	}
	md := ts.do(t, "GET", created.URL+".md", "").Body.String()
	if !strings.Contains(md, "### Latency target: search [") || !strings.Contains(md, "**Answer:** between") {
		t.Errorf("the Markdown lacks the search:\n%s", md)
	}
	if csv := ts.do(t, "GET", created.URL+".csv", "").Body.String(); !strings.Contains(csv, "slo,slo-lo,records/s,,found,") {
		t.Errorf("the CSV lacks the search:\n%s", csv)
	}
	var doc client.Comparison
	if err := json.Unmarshal(ts.do(t, "GET", created.URL+".json", "").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SLO == nil || doc.SLO.Outcome != "found" || !strings.HasPrefix(doc.SLO.URL, "http://") || !strings.HasPrefix(doc.SLO.Probes[0].Runs[0].URL, "http://") {
		t.Errorf("the JSON's search %+v, want the answer with absolute links", doc.SLO)
	}
	if rec := ts.do(t, "DELETE", "/api/runs/"+strconv.FormatUint(uint64(doc.SLO.Probes[0].Runs[0].ID), 10), ""); rec.Code != http.StatusConflict {
		t.Errorf("DELETE a run of the report's search: %d, want 409", rec.Code)
	}
	search := ts.do(t, "POST", "/api/presets/slo", `{"config":{"label":"a","params":{"num-records":100}},"latency_ms":5,"max_rate":100}`)
	var running client.SLOCreated
	json.Unmarshal(search.Body.Bytes(), &running)
	for _, body := range []string{`{"title":"x","slo":"` + running.SLO + `"}`, `{"title":"x","slo":"0123456789ab"}`, `{"title":"x","slo":"nope"}`} {
		if rec := ts.do(t, "POST", "/api/reports", body); rec.Code != 400 || !strings.Contains(rec.Body.String(), "slo") {
			t.Errorf("%s: %d %s, want 400 naming slo", body, rec.Code, rec.Body)
		}
	}
}
