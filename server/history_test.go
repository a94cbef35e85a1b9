package server

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// perfTestLine is the summary line kafka-producer-perf-test prints, at
// rate records/s of 512-byte records.
func perfTestLine(rate float64) string {
	return fmt.Sprintf("1000000 records sent, %.1f records/sec (%.2f MB/sec), 2.06 ms avg latency, 598.00 ms max latency, 2 ms 50th, 6 ms 95th, 14 ms 99th, 561 ms 99.9th.\n",
		rate, rate*512/(1024*1024))
}

// backfillKafka14020 imports the KAFKA-14020 story through POST
// /api/import: 20 runs near 115,000 records/s, then 40 near 105,000
// (±2%), a day apart, commits c0…c59 on trunk, posted in a shuffled order
// so that only their times put them in order. It returns the run ids in
// time order.
func backfillKafka14020(t *testing.T, ts *testServer) []uint {
	t.Helper()
	rng := rand.New(rand.NewPCG(14020, 1))
	t0 := time.Date(2022, 5, 1, 10, 0, 0, 0, time.UTC)
	ids := make([]uint, 60)
	for _, i := range rng.Perm(60) {
		base := 115000.0
		if i >= 20 {
			base = 105000
		}
		rate := base * (1 + 0.02*(2*rng.Float64()-1))
		rec := ts.importOutput(t, "perf.txt", []byte(perfTestLine(rate)), nil, map[string]string{
			"label": "perf", "time": t0.Add(time.Duration(i) * 24 * time.Hour).Format(time.RFC3339),
			"meta": fmt.Sprintf("commit=c%d\nbranch=trunk", i)})
		ids[i] = decodeRun(t, rec).ID
	}
	return ids
}

type historyAnswer struct {
	Series string `json:"series"`
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	Points []struct {
		RunID uint              `json:"run_id"`
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Meta  map[string]string `json:"meta"`
	} `json:"points"`
	ChangePoints []struct {
		Index        int      `json:"index"`
		RunID        uint     `json:"run_id"`
		Before       float64  `json:"before"`
		After        float64  `json:"after"`
		ChangePct    float64  `json:"change_pct"`
		PValue       *float64 `json:"p_value"`
		Direction    string   `json:"direction"`
		CommitBefore string   `json:"commit_before"`
		CommitAfter  string   `json:"commit_after"`
		CompareURL   string   `json:"compare_url"`
	} `json:"change_points"`
	Params map[string]float64 `json:"params"`
}

func (ts *testServer) history(t *testing.T, query string) historyAnswer {
	t.Helper()
	rec := ts.do(t, "GET", "/api/history?"+query, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/history?%s = %d %s", query, rec.Code, rec.Body)
	}
	var h historyAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHistoryKAFKA14020: back-filled producer-perf-test results of the
// KAFKA-14020 shape give one change point at index 20, 8.7% worse, between
// commits c19 and c20; its before/after comparison opens with the two
// segments as columns and saves as a report with the same columns.
func TestHistoryKAFKA14020(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := backfillKafka14020(t, ts)

	for _, q := range []string{fmt.Sprintf("run=%d", ids[33]), "series=" + url.QueryEscape("imported:producer:perf@trunk") + "&metric=record-send-rate"} {
		h := ts.history(t, q)
		if h.Metric != "record-send-rate" || h.Unit != "records/s" || h.Series != "imported:producer:perf@trunk" {
			t.Errorf("%s: metric %q unit %q series %q", q, h.Metric, h.Unit, h.Series)
		}
		if len(h.Points) != 60 {
			t.Fatalf("%s: %d points, want 60", q, len(h.Points))
		}
		for i, p := range h.Points {
			if p.RunID != ids[i] || p.Meta["commit"] != fmt.Sprintf("c%d", i) || (i > 0 && !p.Time.After(h.Points[i-1].Time)) {
				t.Fatalf("%s: point %d = %+v, want run %d with commit c%d in time order", q, i, p, ids[i], i)
			}
		}
		if h.Params["window"] != 50 || h.Params["max_pvalue"] != 0.001 || h.Params["min_magnitude"] != 0 {
			t.Errorf("params %v, want Otava's defaults", h.Params)
		}
		if len(h.ChangePoints) != 1 {
			t.Fatalf("%s: change points %+v, want one", q, h.ChangePoints)
		}
		cp := h.ChangePoints[0]
		if cp.Index != 20 || cp.RunID != ids[20] || cp.CommitBefore != "c19" || cp.CommitAfter != "c20" || cp.Direction != "worse" {
			t.Errorf("change point %+v, want index 20, run %d, c19..c20, worse", cp, ids[20])
		}
		if math.Abs(cp.ChangePct-(105000.0/115000-1)*100) > 1 || cp.PValue == nil || *cp.PValue >= 0.001 {
			t.Errorf("change %v%% p %v, want -8.7%% ± 1 below 0.001", cp.ChangePct, cp.PValue)
		}
	}

	// The before/after comparison: 20 runs before, the first 25 after.
	h := ts.history(t, fmt.Sprintf("run=%d", ids[0]))
	cu := h.ChangePoints[0].CompareURL
	want := make([]string, 0, 45)
	for _, id := range ids[:45] {
		want = append(want, fmt.Sprint(id))
	}
	if cu != fmt.Sprintf("/compare?at=%d&by=change&runs=%s", ids[20], url.QueryEscape(strings.Join(want, ","))) {
		t.Errorf("compare_url %q", cu)
	}
	columns := func(path string) []string {
		rec := ts.do(t, "GET", path, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, rec.Code, rec.Body)
		}
		var doc struct {
			Columns []struct {
				Name string `json:"name"`
				Runs []uint `json:"runs"`
			} `json:"columns"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range doc.Columns {
			out = append(out, fmt.Sprintf("%s:%d", c.Name, len(c.Runs)))
		}
		return out
	}
	wantCols := []string{fmt.Sprintf("before #%d:20", ids[20]), fmt.Sprintf("from #%d:25", ids[20])}
	apiURL := strings.Replace(cu, "/compare?", "/api/compare?", 1)
	if got := columns(apiURL); strings.Join(got, "|") != strings.Join(wantCols, "|") {
		t.Errorf("comparison columns %v, want %v", got, wantCols)
	}
	page := ts.do(t, "GET", cu, "")
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), fmt.Sprintf(`<input type="hidden" name="at" value="%d">`, ids[20])) {
		t.Fatalf("comparison page %d: no at in the save form\n%s", page.Code, page.Body)
	}

	// Run pages and comparison pages link their series' history.
	if !strings.Contains(page.Body.String(), fmt.Sprintf(`class="history-link" href="/history?run=%d"`, ids[0])) {
		t.Error("the comparison page does not link the history")
	}
	if rp := ts.do(t, "GET", fmt.Sprintf("/runs/%d", ids[3]), ""); !strings.Contains(rp.Body.String(), fmt.Sprintf(`class="history-link" href="/history?run=%d"`, ids[3])) {
		t.Errorf("run page %d does not link the history", rp.Code)
	}

	// One click saves it as a report, with the same columns.
	form := url.Values{"title": {"KAFKA-14020"}, "by": {"change"}, "at": {fmt.Sprint(ids[20])}, "runs": {strings.Join(want, ",")}}
	rec := ts.formPost(t, "/reports", form)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("save report = %d %s", rec.Code, rec.Body)
	}
	slug := strings.TrimPrefix(rec.Header().Get("Location"), "/r/")
	if got := columns("/r/" + slug + ".json"); strings.Join(got, "|") != strings.Join(wantCols, "|") {
		t.Errorf("report columns %v, want %v", got, wantCols)
	}
	rep := ts.do(t, "GET", "/r/"+slug, "")
	if rep.Code != http.StatusOK || !strings.Contains(rep.Body.String(), fmt.Sprintf("before #%d", ids[20])) {
		t.Errorf("report page %d", rep.Code)
	}
	// The API saves it too.
	body := fmt.Sprintf(`{"title":"t","by":"change","at":%d,"runs":[%s]}`, ids[20], strings.Join(want, ","))
	if rec := ts.do(t, "POST", "/api/reports", body, "Content-Type", "application/json"); rec.Code != http.StatusCreated {
		t.Errorf("POST /api/reports by change = %d %s", rec.Code, rec.Body)
	}

	// The page names the commits, the change and links the comparison.
	hp := ts.do(t, "GET", fmt.Sprintf("/history?run=%d", ids[5]), "")
	if hp.Code != http.StatusOK {
		t.Fatalf("history page = %d %s", hp.Code, hp.Body)
	}
	html := hp.Body.String()
	for _, want := range []string{"<code>c19..c20</code>", `class="delta-worse"`, `class="chart-mark-link" href="` + strings.ReplaceAll(cu, "&", "&amp;") + `"`,
		fmt.Sprintf(`<a href="/runs/%d"><circle class="chart-point"`, ids[59])} {
		if !strings.Contains(html, want) {
			t.Errorf("history page lacks %s", want)
		}
	}
	// A tighter p-value than this step's leaves none.
	if h := ts.history(t, fmt.Sprintf("run=%d&max_pvalue=1e-300", ids[0])); len(h.ChangePoints) != 0 || h.Params["max_pvalue"] != 1e-300 {
		t.Errorf("max_pvalue=1e-300: %+v, params %v", h.ChangePoints, h.Params)
	}
	if h := ts.history(t, fmt.Sprintf("run=%d&min_magnitude=0.1", ids[0])); len(h.ChangePoints) != 0 {
		t.Errorf("min_magnitude=0.1 (10%%) keeps %+v", h.ChangePoints)
	}
}

// TestHistoryBadInput: bad parameters are 400s naming the field; an
// unknown run or series is 404.
func TestHistoryBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	finished := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var runs []*store.Run
	for i := 0; i < 3; i++ {
		runs = append(runs, &store.Run{Label: "l", Workload: "producer", Status: rundoc.StatusSucceeded, Fingerprint: "fp1", FinishedAt: &finished,
			Meta: store.Meta{"branch": "trunk"}, RunAt: finished.Add(time.Duration(i) * time.Hour),
			Metrics: []store.Metric{{Name: "record-send-rate", Value: float64(100 + i), Unit: "records/s", Better: "higher"}}})
	}
	if err := ts.st.CreateRuns(t.Context(), runs); err != nil {
		t.Fatal(err)
	}
	id := runs[0].ID
	if h := ts.history(t, "fingerprint=fp1&branch=trunk"); h.Series != "fp1@trunk" || len(h.Points) != 3 || h.Metric != "record-send-rate" {
		t.Errorf("by fingerprint and branch: %+v", h)
	}
	for _, tt := range []struct {
		query, field string
	}{
		{"", "run"},
		{"run=abc", "run"},
		{"run=0", "run"},
		{fmt.Sprintf("run=%d&series=x", id), "run"},
		{"branch=trunk", "branch"},
		{fmt.Sprintf("run=%d&window=1", id), "window"},
		{fmt.Sprintf("run=%d&window=ten", id), "window"},
		{fmt.Sprintf("run=%d&window=-5", id), "window"},
		{fmt.Sprintf("run=%d&max_pvalue=0", id), "max_pvalue"},
		{fmt.Sprintf("run=%d&max_pvalue=1.5", id), "max_pvalue"},
		{fmt.Sprintf("run=%d&max_pvalue=NaN", id), "max_pvalue"},
		{fmt.Sprintf("run=%d&min_magnitude=-0.1", id), "min_magnitude"},
		{fmt.Sprintf("run=%d&min_magnitude=Inf", id), "min_magnitude"},
		{fmt.Sprintf("run=%d&metric=no-such-metric", id), "metric"},
	} {
		for _, path := range []string{"/api/history?", "/history?"} {
			rec := ts.do(t, "GET", path+tt.query, "")
			if rec.Code != http.StatusBadRequest || !regexp.MustCompile(`\b`+tt.field+`\b`).MatchString(rec.Body.String()) {
				t.Errorf("GET %s%s = %d %s, want 400 naming %s", path, tt.query, rec.Code, rec.Body, tt.field)
			}
		}
	}
	for _, q := range []string{"run=99999", "series=nope", "fingerprint=nope"} {
		for _, path := range []string{"/api/history?", "/history?"} {
			if rec := ts.do(t, "GET", path+q, ""); rec.Code != http.StatusNotFound {
				t.Errorf("GET %s%s = %d, want 404", path, q, rec.Code)
			}
		}
	}
	// Comparisons by change need a split among their runs, after the first.
	ids := fmt.Sprintf("%d,%d,%d", runs[0].ID, runs[1].ID, runs[2].ID)
	for _, q := range []string{"by=change&runs=" + ids, fmt.Sprintf("by=change&at=%d&runs=%s", runs[0].ID, ids),
		"by=change&at=99999&runs=" + ids, fmt.Sprintf("by=run&at=%d&runs=%s", runs[1].ID, ids)} {
		if rec := ts.do(t, "GET", "/api/compare?"+q, ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"at"`) {
			t.Errorf("GET /api/compare?%s = %d %s, want 400 naming at", q, rec.Code, rec.Body)
		}
	}
	body := fmt.Sprintf(`{"title":"t","by":"change","at":%d,"runs":[%s]}`, runs[0].ID, ids)
	if rec := ts.do(t, "POST", "/api/reports", body, "Content-Type", "application/json"); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"at"`) {
		t.Errorf("report split at the first run = %d %s", rec.Code, rec.Body)
	}
}
