package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/golden"
	"github.com/kbench/kbench/profiles"
)

// foldedProfile is a gzipped pprof CPU profile from folded stacks.
func foldedProfile(t *testing.T, folded string) store.Profile {
	t.Helper()
	p, err := profiles.ParseFolded(strings.NewReader(folded), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return store.Profile{Role: "client", Kind: "cpu", Data: buf.Bytes(), Bytes: int64(buf.Len()), Samples: int64(len(p.Sample))}
}

// seedCompare stores three finished producer runs, as a run's result
// would: trunk (the baseline), branch (faster, lower latency) and a third
// without profiles. It returns their ids.
func seedCompare(t *testing.T, ts *testServer) []uint {
	t.Helper()
	finished := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(label string, rate, p99, cpu float64, prof string) *store.Run {
		r := &store.Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: &finished,
			Spec:   `{"workload":"producer","params":{"num-records":1000}}`,
			Output: fmt.Sprintf("1000 records sent, %.1f records/sec (%.2f MB/sec), 1.00 ms avg latency, %.2f ms max latency.\n", rate, rate/1000, p99),
			Metrics: []store.Metric{
				{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: "higher", Help: "records sent per second"},
				{Name: "mb-per-sec", Value: rate / 1000, Unit: "MB/s", Better: "higher"},
				{Name: "record-latency-p99", Value: p99, Unit: "ms", Better: "lower"},
				{Name: "cpu-seconds", Value: cpu, Unit: "s", Better: "lower"},
				{Name: "records", Value: 1000, Unit: "records"},
			}}
		for i := 1; i <= 3; i++ {
			r.Series = append(r.Series, store.SeriesPoint{Seq: i, T: float64(i), RecordsPerSec: rate * (0.9 + 0.05*float64(i)), LatencyAvgMs: p99 / 3})
		}
		if prof != "" {
			r.Profiles = []store.Profile{foldedProfile(t, prof)}
		}
		return r
	}
	runs := []*store.Run{
		mk("trunk", 1234567.5, 12.5, 2.25, "main;produce;write 50\nmain;produce;encode 30\n"),
		mk("branch", 1500000, 9.75, 2.25, "main;produce;writev 40\nmain;produce;encode 30\n"),
		mk("other", 1000000, 20, 3, ""),
	}
	if err := ts.st.CreateRuns(context.Background(), runs); err != nil {
		t.Fatal(err)
	}
	return []uint{runs[0].ID, runs[1].ID, runs[2].ID}
}

func TestCompareAPIAndPage(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedCompare(t, ts)
	runs := fmt.Sprintf("%d,%d", ids[0], ids[1])

	rec := ts.do(t, "GET", "/api/compare?runs="+runs, "")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/compare = %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var doc struct {
		Columns []struct {
			Name     string
			Baseline bool
			Runs     []uint
		}
		Rows []struct {
			Section, Metric string
			Cells           []struct {
				Value   *float64
				Verdict string
				Change  string
			}
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Columns) != 2 || doc.Columns[0].Name != fmt.Sprintf("#%d trunk", ids[0]) || !doc.Columns[0].Baseline || doc.Columns[1].Baseline {
		t.Errorf("columns = %+v", doc.Columns)
	}
	if len(doc.Rows) != 5 || doc.Rows[0].Metric != "record-send-rate" || doc.Rows[0].Cells[1].Verdict != "better" {
		t.Errorf("rows = %+v", doc.Rows)
	}

	// hide_unchanged drops cpu-seconds (equal) and records (equal).
	rec = ts.do(t, "GET", "/api/compare?hide_unchanged=1&runs="+runs, "")
	var hidden struct {
		Rows   []json.RawMessage
		Hidden []string `json:"hidden_metrics"`
	}
	json.Unmarshal(rec.Body.Bytes(), &hidden)
	if len(hidden.Rows) != 3 || strings.Join(hidden.Hidden, ",") != "cpu-seconds,records" {
		t.Errorf("hide_unchanged: %d rows, hidden %v", len(hidden.Rows), hidden.Hidden)
	}

	// by=label names columns by label.
	rec = ts.do(t, "GET", "/api/compare?by=label&runs="+runs, "")
	if !strings.Contains(rec.Body.String(), `"name": "branch"`) {
		t.Errorf("by=label: %s", rec.Body)
	}

	// The page: repeated runs (the runs page's no-JS form) and the list
	// give the same comparison.
	for _, q := range []string{"runs=" + runs, fmt.Sprintf("runs=%d&runs=%d", ids[0], ids[1])} {
		rec = ts.do(t, "GET", "/compare?"+q, "")
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /compare?%s = %d %s", q, rec.Code, body)
		}
		for _, want := range []string{
			`<table class="comparison-table"`, ">Throughput</th>", ">Latency</th>",
			`1,234,568`, `1,500,000`, `records/s`, // thousands separators, units
			// records/s up, p99 down: better by direction, untested (single
			// runs: too few to decide, 3 more per side to test).
			`<span class="delta delta-better delta-untested" data-state="too few samples" data-more-repetitions="3">&#43;21.5% ✓?</span>`,
			`<span class="delta delta-better delta-untested" data-state="too few samples" data-more-repetitions="3">−22.0% ✓?</span>`,
			`id="suggest-repetitions"`, "Too few runs to decide: run 3 more repetitions per side",
			`href="/runs/` + fmt.Sprint(ids[0]) + `"`,
			`<form method="post" action="/reports" id="save-report-form">`, `name="runs" value="` + runs + `"`,
			`id="copy-markdown"`, `id="markdown-text"`, "## kbench comparison",
			`href="/compare?by=label&amp;runs=` + url.QueryEscape(runs) + `"`,
			`id="toggle-unchanged" href="/compare?hide_unchanged=1&amp;runs=`,
			"single runs: no significance test",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("compare page lacks %q", want)
			}
		}
		if strings.Contains(body, "style=") || regexp.MustCompile(`<script>`).MatchString(body) {
			t.Error("compare page has inline style or script")
		}
	}
	rec = ts.do(t, "GET", "/compare?hide_unchanged=1&runs="+runs, "")
	if !strings.Contains(rec.Body.String(), `id="hidden-metrics"`) || strings.Contains(rec.Body.String(), `data-metric="records"`) {
		t.Error("hide_unchanged page still shows unchanged rows")
	}

	// Bad input: 400 naming runs (or by); unknown runs: 404.
	for _, c := range []struct {
		q      string
		status int
		field  string
	}{
		{"", 400, "runs"}, {"runs=1", 400, "runs"}, {"runs=a,b", 400, "runs"}, {"runs=0,1", 400, "runs"},
		{"runs=1,1", 400, "runs"}, {"runs=1,-2", 400, "runs"}, {"runs=" + runs + "&by=colour", 400, "by"},
		{"runs=" + runs + "&hide_unchanged=maybe", 400, "hide_unchanged"},
		{fmt.Sprintf("runs=%d,999", ids[0]), 404, ""},
	} {
		rec := ts.do(t, "GET", "/api/compare?"+c.q, "")
		var e struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != c.status || e.Field != c.field {
			t.Errorf("GET /api/compare?%s = %d %s, want %d naming %q", c.q, rec.Code, rec.Body, c.status, c.field)
		}
		page := ts.do(t, "GET", "/compare?"+c.q, "")
		if page.Code != c.status || !strings.Contains(page.Body.String(), "<!DOCTYPE html>") {
			t.Errorf("GET /compare?%s = %d, want an HTML %d", c.q, page.Code, c.status)
		}
		if c.status == 400 && !strings.Contains(page.Body.String(), c.field+":") {
			t.Errorf("GET /compare?%s page does not name %s: %s", c.q, c.field, page.Body)
		}
	}
}

func TestReports(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedCompare(t, ts)

	// Through the API.
	body := fmt.Sprintf(`{"title":"Producer: trunk vs branch","runs":[%d,%d],"by":"run","notes":"Batching | rewritten."}`, ids[0], ids[1])
	rec := ts.do(t, "POST", "/api/reports", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/reports = %d %s", rec.Code, rec.Body)
	}
	var created struct{ Slug, URL string }
	json.Unmarshal(rec.Body.Bytes(), &created)
	if !regexp.MustCompile(`^[a-z2-7]{26}$`).MatchString(created.Slug) || created.URL != "/r/"+created.Slug {
		t.Fatalf("created = %+v", created)
	}
	slug := created.Slug

	// The page: title, notes, table, charts, diff flame graph, runs.
	rec = ts.do(t, "GET", "/r/"+slug, "")
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /r/%s = %d %s", slug, rec.Code, page)
	}
	for _, want := range []string{
		`<h1 id="report-title">Producer: trunk vs branch</h1>`, "Batching | rewritten.",
		`<table class="comparison-table"`, `1,500,000`, `&#43;21.5% ✓?`,
		`<svg`, "Throughput", "Average latency",
		`class="flamegraph" data-src="/api/diff?base_runs=`, `data-mode="diff"`, `format=rows`,
		fmt.Sprintf(`href="/runs/%d">run #%d branch</a>`, ids[1], ids[1]),
		`href="/r/` + slug + `.md"`, `href="/r/` + slug + `.csv"`, `href="/r/` + slug + `.json"`,
		`id="copy-markdown"`, "## Producer: trunk vs branch",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	if strings.Contains(page, "style=") || strings.Contains(page, "<script>") {
		t.Error("report page has inline style or script")
	}
	// The flame graph's data URL answers.
	m := regexp.MustCompile(`data-src="(/api/diff\?[^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no diff data URL")
	}
	if rec := ts.do(t, "GET", strings.ReplaceAll(m[1], "&amp;", "&"), ""); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"rows"`) {
		t.Errorf("diff data URL = %d %.200s", rec.Code, rec.Body)
	}

	// Exports, against golden files (the slug and time normalised).
	for _, c := range []struct{ ext, ctype string }{
		{".md", "text/markdown; charset=utf-8"}, {".csv", "text/csv; charset=utf-8"}, {".json", "application/json; charset=utf-8"},
	} {
		rec := ts.do(t, "GET", "/r/"+slug+c.ext, "")
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != c.ctype {
			t.Errorf("GET /r/%s%s = %d %q", slug, c.ext, rec.Code, rec.Header().Get("Content-Type"))
		}
		if cd := rec.Header().Get("Content-Disposition"); cd != `inline; filename="kbench-report-`+slug+c.ext+`"` {
			t.Errorf("%s Content-Disposition = %q", c.ext, cd)
		}
		got := strings.ReplaceAll(rec.Body.String(), slug, "SLUG")
		got = regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\dZ)?`).ReplaceAllString(got, "TIME")
		golden.Check(t, "report"+c.ext, got)
	}

	// A report stays correct after more runs are added.
	before := ts.do(t, "GET", "/r/"+slug+".csv", "").Body.String()
	seedCompare(t, ts)
	if after := ts.do(t, "GET", "/r/"+slug+".csv", "").Body.String(); after != before {
		t.Errorf("the report changed after new runs:\n%s\nvs\n%s", before, after)
	}

	// A run a report uses cannot be deleted; another can.
	rec = ts.do(t, "DELETE", fmt.Sprintf("/api/runs/%d", ids[0]), "")
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), slug) {
		t.Errorf("DELETE a report's run = %d %s, want 409 naming the report", rec.Code, rec.Body)
	}
	if rec := ts.do(t, "DELETE", fmt.Sprintf("/api/runs/%d", ids[2]), ""); rec.Code != http.StatusNoContent {
		t.Errorf("DELETE a free run = %d %s, want 204", rec.Code, rec.Body)
	}
	if rec := ts.do(t, "DELETE", fmt.Sprintf("/api/runs/%d", ids[2]), ""); rec.Code != http.StatusNotFound {
		t.Errorf("DELETE a deleted run = %d, want 404", rec.Code)
	}

	// Unknown reports and formats are 404.
	for _, p := range []string{"/r/nope", "/r/nope.md", "/r/" + slug + ".pdf", "/r/" + slug + ".csv/x"} {
		if rec := ts.do(t, "GET", p, ""); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}

	// Bad requests name the field.
	for _, c := range []struct{ body, field string }{
		{fmt.Sprintf(`{"runs":[%d,%d]}`, ids[0], ids[1]), "title"},
		{`{"title":"x","runs":[1]}`, "runs"},
		{`{"title":"x","runs":[]}`, "runs"},
		{fmt.Sprintf(`{"title":"x","runs":[%d,%d],"by":"colour"}`, ids[0], ids[1]), "by"},
		{`{"title":"x","runs":"1,2"}`, "runs"},
		{`{"title":"x","runs":[1,2],"extra":1}`, "extra"},
		{fmt.Sprintf(`{"title":"%s","runs":[1,2]}`, strings.Repeat("t", 201)), "title"},
	} {
		rec := ts.do(t, "POST", "/api/reports", c.body)
		var e struct{ Field string }
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != http.StatusBadRequest || e.Field != c.field {
			t.Errorf("POST /api/reports %s = %d %s, want 400 naming %s", c.body, rec.Code, rec.Body, c.field)
		}
	}
	if rec := ts.do(t, "POST", "/api/reports", `{"title":"x","runs":[1,999]}`); rec.Code != http.StatusNotFound {
		t.Errorf("report of an unknown run = %d, want 404", rec.Code)
	}

	// The form: 303 to the report; the CSRF token is required.
	form := url.Values{"title": {"From the form"}, "runs": {fmt.Sprintf("%d,%d", ids[1], ids[0])}, "by": {"label"}}
	rec = ts.formPost(t, "/reports", form)
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !regexp.MustCompile(`^/r/[a-z2-7]{26}$`).MatchString(loc) {
		t.Fatalf("POST /reports = %d %q %s", rec.Code, loc, rec.Body)
	}
	rec = ts.do(t, "GET", loc+".json", "")
	if !strings.Contains(rec.Body.String(), `"name": "branch"`) || !strings.Contains(rec.Body.String(), `"title": "From the form"`) {
		t.Errorf("form report: %s", rec.Body)
	}
	rec = ts.do(t, "POST", "/reports", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if rec.Code != http.StatusForbidden {
		t.Errorf("POST /reports without CSRF = %d, want 403", rec.Code)
	}
}

// TestRunsPageCompare follows the runs page's "Compare selected" form:
// its checkboxes send runs=ID repeatedly, newest first; the comparison
// takes the oldest as the baseline.
func TestRunsPageCompare(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedCompare(t, ts)
	page := ts.do(t, "GET", "/", "").Body.String()
	for _, want := range []string{`<form id="compare-form" class="compare-form" method="get" action="/compare">`,
		fmt.Sprintf(`name="runs" value="%d"`, ids[0]), fmt.Sprintf(`name="runs" value="%d"`, ids[1]), `id="compare-link" href="/compare"`} {
		if !strings.Contains(page, want) {
			t.Errorf("runs page lacks %q", want)
		}
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/compare?runs=%d&runs=%d", ids[1], ids[0]), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /compare = %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	if !strings.Contains(body, fmt.Sprintf(`<span class="col-name">#%d trunk</span> <span class="tag">baseline</span>`, ids[0])) {
		t.Error("the oldest ticked run is not the baseline")
	}
	if !strings.Contains(body, fmt.Sprintf(`name="runs" value="%d,%d"`, ids[0], ids[1])) {
		t.Error("the save form does not carry the runs in column order")
	}
	// A list keeps its order.
	rec = ts.do(t, "GET", fmt.Sprintf("/compare?runs=%d,%d", ids[1], ids[0]), "")
	if !strings.Contains(rec.Body.String(), fmt.Sprintf(`<span class="col-name">#%d branch</span> <span class="tag">baseline</span>`, ids[1])) {
		t.Error("runs=b,a does not make b the baseline")
	}
}
